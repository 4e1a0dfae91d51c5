"""The first visit on a phone network: the bytes before the first drawn panel, and that
panel the page's own.

The issue's budget: on a mid-range phone network (Chromium's emulation, about 1.6 Mbps
down and 150 ms round trip: `tests.pw.MID_PHONE`) at 390 px, the first panel is drawn
within 3 s of navigation, for the start page and for a shared link with its run (a
shipped preset's configuration, whose finished run the page shows at once). The time is
measured by `benchmarks/first_load.py`, not asserted here: on a shared machine it says
as much about the other processes as about the page. What the network makes slow is
asserted instead, the bytes received before the first panel (10.0 MB before
app.delivery, 0.66 MB before the first paint, now the HTML, the CSS and plotly.js),
which do not depend on how busy the machine is: the page asks for Dash's scripts only
once the panel is drawn. "First drawn panel" and the bytes are defined in
`tests.firstload`: for the link, a trace with data drawn; for the start page, whose
example run this server (no training worker) never trains, the first panel's plot area.
Each page is opened in a fresh context (an empty cache).

The explorer's first panel comes inside its HTML and is drawn as soon as the 2-D
plotly.js has arrived, before Dash's scripts (app.delivery `first_paint`); it must be
the page's own panel: Dash's page draws the same figure in its place.

Time (also when Dash has drawn the page: "interactive") and bytes are printed (`-s`).
"""

from __future__ import annotations

import contextlib
import json

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.firstload import DATA, FirstLoad, first_load, pages
from tests.pw import PHONE, new_page, throttle, wait_dash, wait_settled

pytestmark = pytest.mark.browser

# Bytes received before the first panel (brotli): the HTML with the panel's figure, the
# CSS and the 2-D plotly.js (335 kB); Dash's scripts and the layout come after it.
BYTES_BUDGET = 450_000


PAGES = pages()


@pytest.fixture(scope="module")
def loads(pw_browser, shipped_app) -> dict[str, FirstLoad]:
    out = {}
    for name, (path, data) in PAGES.items():
        out[name] = first_load(pw_browser, shipped_app + path, data)
        r = out[name]
        print(
            f"\nfirst load, {name} ({path}): first panel {r.ms:.0f} ms, "
            f"interactive {r.interactive_ms:.0f} ms, "
            f"{r.bytes_before / 1e3:.0f} kB before it, {r.bytes_total / 1e3:.0f} kB "
            f"in {r.requests} responses by the end"
        )
    return out


@pytest.mark.parametrize("name", PAGES)
def test_first_load_bytes(loads, name):
    r = loads[name]
    assert r.bytes_before <= BYTES_BUDGET, (
        f"{name}: {r.bytes_before / 1e3:.0f} kB before the first panel "
        f"(budget {BYTES_BUDGET / 1e3:.0f} kB)"
    )


# A panel's traces and axes, as a page drew them.
DRAWN = """(gd) => JSON.stringify({
  data: gd.data.map((t) => ({type: t.type, mode: t.mode, name: t.name, x: t.x, y: t.y})),
  title: gd.layout.title, x: gd.layout.xaxis.range, y: gd.layout.yaxis.range,
  bg: gd._fullLayout.paper_bgcolor})"""
DASH_PANEL = "#page-content .card.panel .js-plotly-plot"
# Dash's panel draws what `first` (a DRAWN) says
SAME = f"""(first) => {{ const gd = document.querySelector('{DASH_PANEL}');
  return !!(gd && gd.data && gd.layout && gd._fullLayout) && ({DRAWN})(gd) === first; }}"""


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("name", PAGES)
def test_the_first_panel_is_the_pages_own(pw_browser, shipped_app, name, dark):
    """The panel drawn first (on the phone network, before Dash's scripts) is the one
    Dash's page then draws in its place: the same traces, axes and colours; Dash's page
    replaces it, and the page logs no error."""
    page = new_page(pw_browser, PHONE, dark=dark)
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        throttle(page)
        page.goto(shipped_app + PAGES[name][0], wait_until="commit")
        wait_settled(page, "#tempsup-first-panel")  # drawn (its ranges are Plotly's own)
        first = page.evaluate(f"({DRAWN})(document.getElementById('tempsup-first-panel'))")
        assert not page.evaluate("!!document.querySelector('#page-content')")  # Dash not yet
        wait_dash(page)
        # Dash draws its panel empty, then its figure, then (dark) in the dark scheme: until
        # it draws what the first panel showed (if ever: the assertion says how they differ)
        with contextlib.suppress(PlaywrightTimeoutError):
            page.wait_for_function(SAME, arg=first)
        wait_settled(page, DASH_PANEL)
        drawn = page.evaluate(f"({DRAWN})(document.querySelector('{DASH_PANEL}'))")
        gone = page.evaluate("!document.getElementById('tempsup-first-panel')")
    finally:
        page.context.close()
    assert json.loads(first) == json.loads(drawn)
    assert gone and not errors, errors


def test_a_3d_figure_loads_the_full_plotly(pw_browser, shipped_app):
    """The 2-D bundle draws the shared link's panels; a 3-D figure (a network with a 3-D
    hidden state) on one of them loads the full plotly.js once and draws with it, keeping
    the listeners Dash put on the graph; the page logs no error."""
    page = new_page(pw_browser, PHONE)
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(shipped_app + PAGES["shared link"][0])
        wait_dash(page)
        page.wait_for_selector(DATA)
        out = page.evaluate(
            """async () => {
              const full = () => !!document.querySelector('script[src*="package_data/plotly"]');
              const gds = [...document.querySelectorAll('.js-plotly-plot')];
              const gd = gds[0], lite = gd._tempsupPlotly;
              const before = Object.keys(gd._ev._events).sort();
              const fullBefore = full();
              await window.Plotly.react(gd, [
                {type: 'scatter3d', x: [0, 1, 0], y: [0, 0, 1], z: [1, 0, 0], mode: 'markers'},
                {type: 'mesh3d', x: [0, 1, 0], y: [0, 0, 1], z: [1, 0, 0]},
              ], {});
              return {
                fullBefore, fullAfter: full(), before, after: Object.keys(gd._ev._events).sort(),
                canvas: !!gd.querySelector('.gl-container canvas'),
                moved: gd._tempsupPlotly !== lite,
                othersLite: gds.slice(1).every(g => g._tempsupPlotly === lite),
              };
            }"""
        )
    finally:
        page.context.close()
    assert not out["fullBefore"] and out["fullAfter"], out
    assert out["canvas"] and out["moved"] and out["othersLite"], out
    assert out["before"] and out["after"] == out["before"], out
    assert not errors, errors
