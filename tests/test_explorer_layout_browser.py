"""The explorer's panels seen together: on a laptop's screen and on a phone, both schemes.

- 1280 × 900 with a trained run on screen: the player's scrubber and the four panels'
  graphs all lie inside the window (nothing to scroll to), the panels a 2 × 2 grid, each
  plot area big enough to read (its figure drawn compact for its cell, assets/panel-grid.js)
  and every panel within the margins its figure declares (Plotly widened none: no second
  draw); the same after the system turns dark (the plots redraw in their dark colours).
- 390 × 844, light and dark: pressing Train folds the settings away and the first
  panel's top is on the first screen; one tap on the settings' summary opens them again.

Geometry is measured in the browser (bounding boxes, Plotly's own layout). The app is the
session's shipped-runs server (`shipped_app`: every preset's run on screen at once, no
training worker: Train on a trained config serves it).
"""

from __future__ import annotations

import pytest

from app.urlstate import query_from_config
from tempsup.paper.presets import presets
from tests.pw import PHONE, new_page, wait_dash, wait_settled

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 900}
# a shipped run with several features: the directions panel's legend at its longest
PRESET = next(p for p in presets(False) if p.name == "vector-all-or-none")
EXPLORER = "/" + query_from_config(PRESET.config("k=2"))
SCRUBBER = ".card.player [role='slider']"
GRAPHS = ".panels .js-plotly-plot"
SMALLEST_PLOT = 120  # px: the least side of a plot area at 1280 × 900 (measured: 154 and more)

# Every panel holds the run's traces and is drawn in the colours the scheme asks.
DRAWN = """(dark) => { const graphs = [...document.querySelectorAll('.panels .js-plotly-plot')];
  return graphs.length === 4 && graphs.every((g) => g.data && g.data.length &&
    g._fullLayout && g.querySelector('.main-svg') &&
    ((g.layout._tempsupState || 'light') === (dark ? 'dark' : 'light'))); }"""
# Boxes in window pixels: the scrubber, each graph, and each graph's plot area and margins.
MEASURE = """(scrubber) => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  const graphs = [...document.querySelectorAll('.panels .js-plotly-plot')].map((g) => {
    const f = g._fullLayout;
    return Object.assign(box(g), {panel: JSON.parse(g.parentNode.id).panel,
      plot: [f.xaxis._length, f.yaxis._length], declared: f.margin, used: f._size}); });
  return {scrubber: box(document.querySelector(scrubber)), graphs: graphs,
          width: innerWidth, height: innerHeight, scrolled: scrollY};
}"""


def check_one_screen(found: dict, where: str) -> None:
    """The scrubber and the four graphs inside the window, the graphs a 2 × 2 grid, each
    plot readable and within its declared margins."""
    width, height = found["width"], found["height"]
    assert found["scrolled"] == 0, f"{where}: the page scrolled by {found['scrolled']}"
    for name, b in [("scrubber", found["scrubber"])] + [(g["panel"], g) for g in found["graphs"]]:
        inside = b["top"] >= 0 and b["left"] >= 0 and b["bottom"] <= height + 0.5
        assert inside and b["right"] <= width + 0.5, f"{where}: {name} at {b} leaves the window"
    graphs = sorted(found["graphs"], key=lambda g: (round(g["top"]), g["left"]))
    top, bottom = graphs[:2], graphs[2:]
    for left, right in (top, bottom):
        assert abs(left["top"] - right["top"]) < 1, f"{where}: a row is not level: {top}"
        assert left["right"] <= right["left"], f"{where}: not side by side: {left}, {right}"
    assert max(g["bottom"] for g in top) <= min(g["top"] for g in bottom), f"{where}: rows meet"
    for g in graphs:
        assert min(g["plot"]) >= SMALLEST_PLOT, f"{where}: {g['panel']}'s plot is {g['plot']}"
        pushed = {s: (g["declared"][s], g["used"][s]) for s in "lrtb"
                  if abs(g["used"][s] - g["declared"][s]) > 1}  # fmt: skip
        assert not pushed, f"{where}: {g['panel']}'s margins widened: {pushed}"


def test_the_player_and_the_four_panels_fit_one_laptop_screen(pw_browser, shipped_app) -> None:
    page = new_page(pw_browser, LAPTOP)
    try:
        page.goto(shipped_app + EXPLORER)
        wait_dash(page)
        page.wait_for_function(DRAWN, arg=False)
        wait_settled(page, GRAPHS)  # measured once Plotly has laid every graph out
        check_one_screen(page.evaluate(MEASURE, SCRUBBER), "1280 × 900, light")
        page.emulate_media(color_scheme="dark")
        page.wait_for_function(DRAWN, arg=True)
        wait_settled(page, GRAPHS)
        check_one_screen(page.evaluate(MEASURE, SCRUBBER), "1280 × 900, dark")
    finally:
        page.context.close()


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_train_folds_the_settings_on_a_phone(pw_browser, shipped_app, dark) -> None:
    page = new_page(pw_browser, PHONE, dark=dark)
    try:
        page.goto(shipped_app + EXPLORER)
        wait_dash(page)
        page.wait_for_function(DRAWN, arg=dark)
        settings = page.locator("details.settings")
        first = page.locator(".panels .card.panel").first
        assert settings.evaluate("(d) => d.open"), "the settings start open"
        assert first.bounding_box()["y"] > PHONE["height"], "nothing to fold: already in view"
        page.get_by_role("button", name="Train").click()
        page.wait_for_function("() => !document.querySelector('details.settings').open")
        top = first.bounding_box()["y"]
        assert top < PHONE["height"], f"the first panel starts at {top} px, below the screen"
        assert page.evaluate("() => scrollY") == 0
        model = page.locator("#ctl-model input").first
        assert not model.is_visible(), "the settings are folded"
        page.locator("details.settings > summary").tap()  # one tap opens them again
        model.wait_for(state="visible")
        assert settings.evaluate("(d) => d.open")
    finally:
        page.context.close()
