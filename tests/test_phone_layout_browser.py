"""The animation's four panels on a phone, and dark mode, on every surface that draws them.

At 390 px the lesson (two runs, side by side on a wide screen), a static-site preset
page and the HTML export stack the panels one above the other (the narrow arrangement
the figure carries, applied by tempsup/figures/view.js): measured in the browser, each
panel's plot area is the width of the screen and below the one before, and no subplot
title, legend box or tick label leaves the screen or lies over another panel's title or
plot area (tick labels of one axis do not overprint each other either), every text a
trace draws (the corner texts) lies inside its own panel on a phone and side by side on a
wide screen, the play and pause buttons leave the slider's frame label clear, and Plotly's
toolbar, always shown on a touch screen, covers no part of the figure's title. At 1280 px the
2 × 2 grid is kept. Under a dark system scheme the export's and the site's plots are
dark, and switching the scheme back to light redraws them, and the app's server-drawn
lesson animation, light.

The standalone pages are written from a shipped full-preset run; the app is the
session's shipped-runs server (`shipped_app`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tempsup.figures.animation import export_html
from tempsup.paper import shipped
from tempsup.paper.presets import presets
from tempsup.teaching import site
from tests.pw import DESKTOP, PHONE, new_page, wait_dash, wait_settled

pytestmark = pytest.mark.browser

PRESET = "spiral-sink"  # one run: a small preset page
SIDE_BY_SIDE = 3  # the lesson's step 3 compares two runs (dense beside sparse)

# The figure's parts in page pixels: each panel's plot area (from Plotly's axis offsets and
# lengths, or a 3-D scene's domain), the subplot titles, the legend boxes and the tick
# labels by panel (the subplot group holding them names its axes).
MEASURE = """(gd) => {
  const full = gd._fullLayout, at = gd.getBoundingClientRect();
  const rect = (l, t, w, h) => ({left: at.left + l, top: at.top + t, right: at.left + l + w,
                                 bottom: at.top + t + h});
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  const panels = {};
  Object.keys(full._plots || {}).forEach((id) => {
    const p = full._plots[id];
    panels[id] = rect(p.xaxis._offset, p.yaxis._offset, p.xaxis._length, p.yaxis._length);
  });
  Object.keys(full).filter((k) => /^scene\\d*$/.test(k)).forEach((k) => {
    const d = full[k].domain, s = full._size;
    panels[k] = rect(s.l + d.x[0] * s.w, s.t + (1 - d.y[1]) * s.h,
                     (d.x[1] - d.x[0]) * s.w, (d.y[1] - d.y[0]) * s.h);
  });
  const titles = [...gd.querySelectorAll('.infolayer .annotation')].map(box);
  const legends = [...gd.querySelectorAll('.infolayer > g')]
    .filter((g) => /^legend\\d*$/.test(g.getAttribute('class')))
    .map((g) => box(g.querySelector('rect.bg') || g));
  const ticks = [];
  gd.querySelectorAll('.cartesianlayer .subplot').forEach((sp) => {
    const id = [...sp.classList].find((c) => c !== 'subplot');
    sp.querySelectorAll('.xaxislayer-above text, .yaxislayer-above text').forEach((t) => {
      const b = box(t);
      if (b.right > b.left && t.textContent) ticks.push(Object.assign(b, {
        panel: id, axis: t.parentNode.getAttribute('class'), text: t.textContent}));
    });
  });
  const texts = [];  // the text traces' words drawn in a panel (corner texts, labels)
  gd.querySelectorAll('.cartesianlayer .subplot').forEach((sp) => {
    const id = [...sp.classList].find((c) => c !== 'subplot');
    sp.querySelectorAll('.scatterlayer .textpoint text').forEach((t) => {
      const b = box(t);
      if (b.right > b.left && t.textContent) texts.push(Object.assign(b, {
        panel: id, text: t.textContent}));
    });
  });
  const bar = gd.querySelector('.modebar');
  const current = gd.querySelector('.slider-group > text.slider-label');  // "frame … of …"
  const player = {label: current && box(current),
                  buttons: [...gd.querySelectorAll('.updatemenu-button')].map(box)};
  return {panels, titles, legends, ticks, texts, player, width: window.innerWidth,
          title: box(gd.querySelector('.gtitle')), modebar: bar && box(bar),
          paper: getComputedStyle(gd.querySelector('.main-svg')).backgroundColor};
}"""


def meet(a: dict, b: dict, slack: float = 1.0) -> bool:
    return (
        a["left"] < b["right"] - slack
        and b["left"] < a["right"] - slack
        and a["top"] < b["bottom"] - slack
        and b["top"] < a["bottom"] - slack
    )


def check_stacked(found: dict, where: str) -> None:
    """Four full-width panels one above the other, and every title, legend and tick label
    on the screen and clear of the other panels and of every title."""
    panels = sorted(found["panels"].items(), key=lambda kv: kv[1]["top"])
    width = found["width"]
    assert len(panels) == 4, f"{where}: {len(panels)} panels"
    for (name, p), (_, below) in zip(panels, panels[1:], strict=False):
        assert p["bottom"] <= below["top"], f"{where}: panel {name} runs into the next"
    for name, p in panels:
        assert p["right"] - p["left"] > 0.6 * width, f"{where}: panel {name} is narrow: {p}"
    title, bar = found["title"], found["modebar"]
    assert title["left"] >= -1 and title["right"] <= width + 1, f"{where}: the title is cut"
    assert not (bar and meet(title, bar)), f"{where}: the toolbar covers the title"
    titles, legends = found["titles"], found["legends"]
    assert len(titles) >= 4 and legends, f"{where}: {len(titles)} titles, {len(legends)} legends"
    for kind, items in (("title", titles), ("legend", legends), ("tick label", found["ticks"])):
        for item in items:
            label = f"{where}: {kind} {item.get('text', '')!r} at {item}"
            assert item["left"] >= -1 and item["right"] <= width + 1, f"{label} leaves the screen"
            for name, p in panels:
                if item.get("panel") != name:
                    assert not meet(item, p), f"{label} lies over panel {name}"
            for other in titles:
                if other is not item:
                    assert not meet(item, other), f"{label} lies over a title at {other}"
    for i, a in enumerate(legends):
        assert not any(meet(a, b) for b in legends[i + 1 :]), f"{where}: legends overlap"
    check_texts_inside(found, where)
    check_player(found, where)
    ticks = found["ticks"]
    for i, a in enumerate(ticks):
        for b in ticks[i + 1 :]:
            if a["panel"] == b["panel"] and a["axis"] == b["axis"]:
                assert not meet(a, b, 0), f"{where}: {a['text']} overprints {b['text']}"


def check_player(found: dict, where: str) -> None:
    """The slider's "frame … of …" label is clear of the play and pause buttons."""
    label, buttons = found["player"]["label"], found["player"]["buttons"]
    assert label and len(buttons) == 2, f"{where}: player {found['player']}"
    for b in buttons:
        assert not meet(label, b), f"{where}: a button at {b} covers the frame label {label}"


def check_texts_inside(found: dict, where: str) -> None:
    """Every word a text trace draws (the corner texts: the half-space count, the spectrum's
    numbers, the terms' sum) lies inside its own panel's plot area: none is cut off."""
    assert found["texts"], f"{where}: no text drawn in a panel"
    for t in found["texts"]:
        p = found["panels"][t["panel"]]
        inside = t["left"] >= p["left"] - 1 and t["right"] <= p["right"] + 1
        inside = inside and t["top"] >= p["top"] - 1 and t["bottom"] <= p["bottom"] + 1
        assert inside, f"{where}: {t['text']!r} at {t} leaves its panel {p}"


def check_grid(found: dict, where: str) -> None:
    """The 2 × 2 grid: two rows of two panels side by side (a panel with a locked aspect
    is centred in its cell, so cells are compared by their centres)."""
    centre = [((p["left"] + p["right"]) / 2, (p["top"] + p["bottom"]) / 2, p)
              for p in found["panels"].values()]  # fmt: skip
    assert len(centre) == 4, where
    centre.sort(key=lambda c: c[1])
    top, bottom = sorted(centre[:2]), sorted(centre[2:])
    for row in (top, bottom):
        assert row[0][2]["right"] <= row[1][2]["left"], f"{where}: not side by side: {row}"
    assert max(c[1] for c in top) < min(c[2]["top"] for c in bottom), f"{where}: rows overlap"
    check_texts_inside(found, where)
    check_player(found, where)


def brightness(color: str) -> float:
    """0 (black) … 255 (white) of a computed 'rgb(…)' colour."""
    return sum(float(v) for v in color[color.index("(") + 1 : -1].split(",")[:3]) / 3


def measure(page, selector: str) -> dict:
    """The figure at `selector` once view.js has drawn it as the screen asks (it redraws
    after the first plot) and Plotly has settled it (it redraws when a margin grows)."""
    page.locator(selector).first.scroll_into_view_if_needed()
    wait_settled(page, selector)
    return page.eval_on_selector(selector, MEASURE)


def screenshot(page, selector: str, name: str) -> None:
    """The figure as a picture in $TEMPSUP_SHOTS, when it is set (to look at)."""
    shots = os.environ.get("TEMPSUP_SHOTS")
    if shots:
        page.locator(selector).first.screenshot(path=str(Path(shots) / f"{name}.png"))


@pytest.fixture(scope="module")
def standalone(tmp_path_factory) -> dict[str, str]:
    """The export of the preset's run and the static site's page of the preset, as files."""
    preset = next(p for p in presets(False) if p.name == PRESET)
    runs = shipped.available(preset.configs)
    out = tmp_path_factory.mktemp("standalone")
    (out / "export.html").write_text(export_html(runs[preset.main_key]), encoding="utf-8")
    site.write_assets(out)
    page = site.write_preset(out, preset, preset.check(runs), runs)
    return {
        "export": ((out / "export.html").as_uri(), "#tempsup-animation"),
        "site": (page.as_uri(), "#run-0"),
    }


@pytest.mark.parametrize("surface", ["export", "site"])
def test_standalone_pages_stack_on_a_phone_and_follow_the_scheme(
    pw_browser, standalone, surface
) -> None:
    url, sel = standalone[surface]
    page = new_page(pw_browser, PHONE, dark=True)
    try:
        page.goto(url)
        found = measure(page, sel)
        screenshot(page, sel, f"test-{surface}-phone-dark")
        check_stacked(found, f"{surface}, phone, dark")
        assert brightness(found["paper"]) < 60, f"{surface}: paper {found['paper']} in dark"
        page.emulate_media(color_scheme="light")
        found = measure(page, sel)
        screenshot(page, sel, f"test-{surface}-phone-light")
        assert brightness(found["paper"]) > 200, f"{surface}: paper {found['paper']} in light"
        check_stacked(found, f"{surface}, phone, light")
        page.set_viewport_size(DESKTOP)
        found = measure(page, sel)
        screenshot(page, sel, f"test-{surface}-desktop-light")
        check_grid(found, f"{surface}, desktop")
    finally:
        page.context.close()


def reveal(page, base: str, step: int) -> None:
    page.goto(f"{base}/lesson?step={step}")
    wait_dash(page)
    page.locator(".lesson-step input[type=radio]").first.check()
    page.get_by_role("button", name="Reveal").click()
    page.wait_for_selector(".lesson-run .js-plotly-plot .main-svg")


def test_the_lessons_animations_stack_on_a_phone_in_both_schemes(pw_browser, shipped_app) -> None:
    page = new_page(pw_browser, PHONE, dark=True)
    try:
        reveal(page, shipped_app, SIDE_BY_SIDE)
        wait_settled(page, ".lesson-run")  # every run's animation drawn
        graphs = page.locator(".lesson-run .js-plotly-plot")
        assert graphs.count() == 2, "step 3 shows two runs"
        for i in range(2):
            sel = f".lesson-run:nth-of-type({i + 1}) .js-plotly-plot"
            found = measure(page, sel)
            screenshot(page, sel, f"test-lesson-{i}-phone-dark")
            check_stacked(found, f"lesson step 3, run {i + 1}, phone, dark")
            assert brightness(found["paper"]) < 60, f"lesson: paper {found['paper']} in dark"
        page.emulate_media(color_scheme="light")  # the server drew it: light again
        for i in range(2):
            sel = f".lesson-run:nth-of-type({i + 1}) .js-plotly-plot"
            found = measure(page, sel)
            assert brightness(found["paper"]) > 200, f"lesson: paper {found['paper']} in light"
            check_stacked(found, f"lesson step 3, run {i + 1}, phone, light")
        screenshot(page, ".lesson-run .js-plotly-plot", "test-lesson-phone-light")
        page.set_viewport_size(DESKTOP)  # side by side, each run its 2 × 2 grid
        for i in range(2):
            sel = f".lesson-run:nth-of-type({i + 1}) .js-plotly-plot"
            check_grid(measure(page, sel), f"lesson step 3, run {i + 1}, desktop")
        screenshot(page, ".lesson-runs", "test-lesson-desktop-light")
    finally:
        page.context.close()
