"""Time to the first drawn panel of a page opened on a phone network, and the bytes it took.

Used by tests/test_first_load_browser.py and benchmarks/first_load.py. A page is opened
in a fresh browser context (an empty cache: a student's first visit) at 390×844 with the
network throttled to `tests.pw.MID_PHONE` (about 1.6 Mbps down, 150 ms round trip).

"First drawn panel": the first moment a Plotly graph of the page has drawn into its SVG —
with `data=True`, a trace with data (a line, markers, bars or a heatmap's image); with
`data=False`, its plot area (the axes of a subplot), which is all that a page whose run
is not trained yet (the start page on a server without a worker) can show. The time is
the page's own `performance.now()` at that moment (from navigation start), noted by a
MutationObserver installed before the page's first script, so polling adds nothing.

"Interactive": the first moment Dash has drawn the page (`tests.pw.DASH_READY`).

Bytes: every response's size as received (Chromium's `encodedDataLength`: compressed
body and headers) among those finished by that moment, and all of them by the time the
measurement ends (Dash drawn, and the requests under way then).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tempsup.model.config import query_string
from tempsup.paper.presets import REGISTRY
from tests.pw import DASH_READY, PHONE, new_page, throttle

BUDGET_MS = 3000  # the issue's: first panel within 3 s on the phone network

PLOT_AREA = ".js-plotly-plot .main-svg .cartesianlayer .subplot, .js-plotly-plot .gl-container"
DATA = ", ".join(
    f".js-plotly-plot .main-svg {s}"
    for s in (
        '.scatterlayer .trace path.js-line:not([d=""])',
        ".scatterlayer .trace .points path",
        ".barlayer .point path",
        ".heatmaplayer image",
    )
)
_WATCH = """(selector => {
  const seen = () => {
    if (window.__firstPanel === undefined && document.querySelector(selector)) {
      window.__firstPanel = performance.now();
    }
    if (window.__dashDrawn === undefined && (%s)()) window.__dashDrawn = performance.now();
  };
  new MutationObserver(seen).observe(document, {subtree: true, childList: true, attributes: true});
})(%s);"""


def pages() -> dict[str, tuple[str, bool]]:
    """The issue's two first visits: name -> (path, whether the panel must show data).
    The shared link is the first preset's run (shipped: finished, so shown at once)."""
    preset = REGISTRY.presets()[0]
    link = query_string(preset.configs[preset.labels.index(preset.main)])
    return {"start page": ("/", False), "shared link": (link, True)}


@dataclass(frozen=True)
class FirstLoad:
    url: str
    ms: float  # navigation start to the first drawn panel
    interactive_ms: float  # navigation start to Dash's page drawn (`tests.pw.DASH_READY`)
    bytes_before: int  # received by then
    bytes_total: int  # received by the end of the measurement
    requests: int


def first_load(browser, url: str, data: bool, screenshot: str | None = None) -> FirstLoad:
    """Open `url` once in a fresh throttled phone context and measure its first panel."""
    page = new_page(browser, PHONE)
    try:
        page.add_init_script(_WATCH % (DASH_READY, json.dumps(DATA if data else PLOT_AREA)))
        throttle(page)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        finished: list[tuple[float, int]] = []  # (Chromium's monotonic seconds, bytes)
        clock: dict[str, float] = {}  # wall clock − monotonic clock, from the first request

        def sent(e: dict) -> None:
            clock.setdefault("offset", e["wallTime"] - e["timestamp"])

        cdp.on("Network.requestWillBeSent", sent)
        cdp.on(
            "Network.loadingFinished",
            lambda e: finished.append((e["timestamp"], int(e["encodedDataLength"]))),
        )
        page.goto(url, wait_until="commit")
        page.wait_for_function("() => window.__firstPanel !== undefined", timeout=120_000)
        ms, origin = page.evaluate("[window.__firstPanel, performance.timeOrigin]")
        if screenshot:
            page.screenshot(path=screenshot, full_page=True)
        page.wait_for_function("() => window.__dashDrawn !== undefined", timeout=120_000)
        interactive = page.evaluate("window.__dashDrawn")
        page.wait_for_timeout(200)  # responses already under way are counted in the total
        at = (origin + ms) / 1000 - clock["offset"]
        return FirstLoad(
            url=url,
            ms=ms,
            interactive_ms=interactive,
            bytes_before=sum(n for t, n in finished if t <= at),
            bytes_total=sum(n for _, n in finished),
            requests=len(finished),
        )
    finally:
        page.context.close()
