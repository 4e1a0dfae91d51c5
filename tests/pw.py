"""Playwright helpers for the phone, accessibility and class-poll browser tests.

Playwright drives the system's Chromium (the one `scripts/setup --browser`
installs; `playwright install` is never run, nothing is downloaded). It is used
where Selenium is clumsy: many cheap browser contexts in one browser (thirty
students and a teacher), the network throttled like a mid-range phone, the
colour scheme emulated and switched, and axe-core 4.x injected by
axe-playwright-python.

Every page waits on the state it asserts, for `tests.browser.PATIENCE` (its contexts'
default timeout, and Playwright's assertions'): never on a clock, and one key press or
click at a time, each followed by a wait for what it does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.browser import CHROMIUM_ARGS, DASH_IDLE, DASH_READY, PATIENCE, find_binary

PATIENCE_MS = PATIENCE * 1000

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 720}
# Chromium's network emulation for a mid-range phone (the profile):
# about 1.6 Mbps down, 750 kbps up, 150 ms round trip. Rates are bytes per second.
MID_PHONE = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1.6e6 / 8,
    "uploadThroughput": 750e3 / 8,
}
# Every Plotly graph at the selector (an element that is one, or the first graph inside
# it; at least one) drawn and settled: it shows the state tempsup/figures/view.js wants
# for this screen (dark or light, narrow or wide: its rule, `wanted`), Plotly is not
# mid-draw, and its size and plot area have stayed the same for three animation frames in
# a row (Plotly draws again when a margin grows; view.js redraws after the first plot and
# after a change of scheme or width). Poll it with `polling="raf"` (Playwright's default).
SETTLED = """(sel) => {
  const graphs = [...document.querySelectorAll(sel)].map((n) =>
    n.classList.contains('js-plotly-plot') ? n : n.querySelector('.js-plotly-plot'));
  const view = window.tempsupView;
  const settled = (gd) => {
    if (!gd || !gd._fullLayout || !gd.layout || !gd.querySelector('.main-svg')) return false;
    const source = (gd.layout._tempsupSource || gd).layout || {};
    const arrangements = source.meta && source.meta.tempsup;
    const wanted = !view ? 'light' : (view.isDark() ? 'dark' : 'light') +
      (view.isNarrow() && arrangements && arrangements.narrow ? '-narrow' : '');
    if ((gd.layout._tempsupState || 'light') !== wanted || gd._fullLayout._replotting) {
      gd._tempsupTestSeen = null;
      return false;
    }
    const r = gd.getBoundingClientRect();
    const seen = JSON.stringify([wanted, gd._fullLayout._size, r.width, r.height]);
    if (gd._tempsupTestSeen !== seen) {
      gd._tempsupTestSeen = seen;
      gd._tempsupTestFrames = 0;
      return false;
    }
    return ++gd._tempsupTestFrames >= 3;
  };
  // every graph is looked at on every poll (no early exit): each counts its own frames
  return graphs.map(settled).reduce((all, one) => all && one, graphs.length > 0);
}"""


@contextmanager
def chromium() -> Iterator[Any]:
    """The system's Chromium under Playwright, closed after."""
    from playwright.sync_api import sync_playwright

    path = find_binary("chromium", "chromium-browser", "google-chrome")
    if not path:
        raise RuntimeError("chromium is needed: run scripts/setup --browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, size: dict[str, int] = PHONE, dark: bool = False, **context: Any):
    """A page in a fresh context (its own storage: a separate 'browser' for the app) of
    `size`, in the dark or light colour scheme. Close it with `page.context.close()`."""
    ctx = browser.new_context(
        viewport=size,
        color_scheme="dark" if dark else "light",
        is_mobile=size["width"] < 600,
        has_touch=size["width"] < 600,
        **context,
    )
    ctx.set_default_timeout(PATIENCE_MS)
    return ctx.new_page()


def throttle(page, profile: dict[str, Any] = MID_PHONE) -> None:
    """Throttle `page`'s network to `profile` (Chromium's DevTools network emulation)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", profile)


def wait_dash(page, timeout_ms: float = PATIENCE_MS) -> None:
    """Wait until Dash has drawn the page's content and finished its callbacks."""
    page.wait_for_function(DASH_READY, timeout=timeout_ms)


def wait_idle(page) -> None:
    """Wait until no callback of the page is under way (every answer drawn)."""
    page.wait_for_function(DASH_IDLE)


def wait_settled(page, selector: str) -> None:
    """Wait until every Plotly graph at `selector` is drawn and settled (`SETTLED`)."""
    page.wait_for_function(SETTLED, arg=selector, polling="raf")


def until(page, predicate: Callable[[], Any], what: str, timeout: float = PATIENCE) -> Any:
    """`predicate()` (Python, about what the page's events have told the test) once it is
    truthy, the page's events taken in meanwhile (Playwright delivers them only while it
    is called: a plain sleep would not), or fail naming `what`."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        page.wait_for_timeout(50)  # hands Playwright the time to deliver the page's events
    return value


def serious_violations(page, size_note: str = "") -> list[str]:
    """axe-core 4.x's critical and serious violations on the open page, one line each,
    with every rule on."""
    from axe_playwright_python.sync_playwright import Axe

    result = Axe().run(page)
    out = []
    for v in result.response["violations"]:
        if v.get("impact") in ("critical", "serious"):
            targets = [n["target"] for n in v["nodes"]][:5]
            out.append(f"{size_note}{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {targets}")
    return out
