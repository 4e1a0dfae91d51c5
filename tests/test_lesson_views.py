"""Every lesson step and gallery card shows what it promises (issue 22, item 4).

The vector preset's k = 0 run draws all five features' directions in five colours on a
pentagon; the W_yᵀW_k heatmap's subtitle says what its cells show; lesson step 4
animates dense and sparse, step 6 k = 0 and larger k (side by side on a wide screen,
stacked on a phone); no two gallery cards show the same picture, and the pentagon card's
is the k = 0 run's directions. The figures are read from the shipped preset runs; the
browser tests start one server that installs them (TEMPSUP_PRESETS=full) and trains
nothing (no worker).
"""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from tempsup import figures
from tempsup.analysis.measures import PENTAGON_DEG, PENTAGON_NORMS
from tempsup.figures._common import canonical_weights, select
from tempsup.paper import shipped
from tempsup.paper.presets import preset, presets
from tests.browser import driver_session, set_viewport, settled, wait_for


def _run(name: str, label: str):
    run = shipped.load(preset(name).config(label))
    assert run is not None, f"no shipped run for {name} {label}"
    return run


def arrow_tips(traces: list[dict]) -> list[tuple[np.ndarray, str]]:
    """Every arrow a directions figure draws: its tip (the point before each gap of a
    scatter drawn with arrow markers) and its colour (the marker's, per point or whole)."""
    out = []
    for t in traces:
        marker = t.get("marker") or {}
        if t.get("type") != "scatter" or marker.get("symbol") != "arrow":
            continue
        xs, ys = list(t["x"]), list(t["y"])
        colors = marker.get("color")
        for i, x in enumerate(xs):
            end = i + 1 == len(xs) or xs[i + 1] is None
            if x is not None and end and i > 0:
                c = colors[i] if isinstance(colors, (list, tuple)) else colors
                out.append((np.array([x, ys[i]], dtype=float), c or t["line"]["color"]))
    return out


def feature_arrows(traces: list[dict], W: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """For each column of W (2, N_x), the drawn arrow whose tip it is; fails naming the
    features not drawn."""
    tips = arrow_tips(traces)
    found, missing = [], []
    for j in range(W.shape[1]):
        hits = [(p, c) for p, c in tips if np.allclose(p, W[:, j], rtol=2e-3, atol=2e-3)]
        (found if hits else missing).append(hits[0] if hits else "ABCDEFGHIJ"[j])
    assert not missing, f"features {', '.join(missing)} have no arrow in the directions panel"
    return found


def gaps_deg(points: np.ndarray) -> np.ndarray:
    angles = np.sort(np.degrees(np.arctan2(points[:, 1], points[:, 0])))
    return np.diff(np.concatenate([angles, angles[:1] + 360]))


def test_the_k0_vector_run_draws_all_five_features_on_a_pentagon_in_five_colours() -> None:
    run = _run("vector-all-or-none", "k=0")
    assert run.config.inputs == 5 and run.config.k == 0 and run.config.hidden == 2
    W = canonical_weights(select(run, None))["W_x"][-1]  # (2, 5): w_0 of each feature, drawn
    for feature in (0, 3):  # whichever feature the menu highlights
        traces = figures.frame_traces("directions", run, None, -1, feature=feature)
        arrows = feature_arrows(traces, W)
        colors = [c for _, c in arrows]
        assert len(set(colors)) == 5, f"five features, colours {colors}"
    tips = np.array([p for p, _ in arrows])
    gaps = gaps_deg(tips)
    assert np.all(np.abs(gaps - 72) <= PENTAGON_DEG), f"gaps {gaps.round(1)}° are no pentagon"
    norms = np.linalg.norm(tips, axis=1)
    assert norms.min() >= PENTAGON_NORMS * norms.max()


def test_the_heatmap_subtitle_says_what_its_cells_show() -> None:
    for name, label in [("vector-all-or-none", f"k={k}") for k in range(5)] + [
        ("vector-diagonal", "N_h=5")
    ]:
        run = _run(name, label)
        fig = figures.panel_figure("projections", run)
        (heat,) = [t for t in fig.data if t.type == "heatmap"]
        cells = np.round(np.array(heat.z, dtype=float), 2)  # as the cells print them
        off = cells[~np.eye(len(cells), dtype=bool)]
        subtitle = fig.layout.title.text.split("<br>")[-1]
        said = re.search(r"diagonal (\d+) of (\d+) positive", subtitle)
        assert said, f"{name} {label}: the subtitle does not say what is drawn: {subtitle!r}"
        assert (int(said[1]), int(said[2])) == (int((np.diag(cells) > 0).sum()), len(cells))
        if "≤ 0" in subtitle:
            assert off.max() <= 0, f"{name} {label}: {subtitle!r} above off-diagonal {off.max()}"
        else:
            many = re.search(r"(\d+) of (\d+) off-diagonal > 0, largest (-?[\d.]+)", subtitle)
            assert many, subtitle
            assert int(many[1]) == int((off > 0).sum()) and int(many[2]) == off.size
            assert float(many[3]) == pytest.approx(off.max(), abs=0.006)


def test_every_compared_run_and_every_card_picture_exists_and_no_two_cards_share_one() -> None:
    from tempsup.paper.presets import thumbnail_choice
    from tempsup.teaching import lesson

    for quick in (True, False):
        by_name = {p.name: p for p in presets(quick)}
        for item in lesson.STEPS:
            assert set(item.shown) <= set(by_name[item.preset].labels), item.slug
        pictures = []
        for p in by_name.values():
            label, panel = thumbnail_choice(p)
            assert label in p.labels and panel in {*figures.PANEL_SET.names, "summary"}
            if panel == "summary":
                assert p.figure is not None, p.name
            pictures.append(p.name if panel == "summary" else (p.config(label).key, panel))
        assert len(set(pictures)) == len(pictures), "two cards show the same run's panel"
    assert thumbnail_choice(preset("vector-all-or-none")) == ("k=0", "directions")
    shown = {s.slug: s.shown for s in lesson.STEPS}
    assert set(shown["phase-transition"]) == {"dense", "sparse"}
    assert "k=0" in shown["all-or-none"] and len(shown["all-or-none"]) >= 2


# ---- in the browser ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(shipped_app) -> str:
    """The session's server of the shipped full presets' runs (no worker)."""
    return shipped_app


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with driver_session(tmp_path_factory.mktemp("views-browser")) as driver:
        yield driver


def reveal(driver, url: str, step: int) -> list[dict]:
    """Open a lesson step, answer, reveal; the animations shown: title and box of each."""
    driver.get(f"{url}/lesson?step={step}")

    clicked = []

    def answer() -> bool:  # found again on every try: the step's body may be redrawn
        shown = "#lesson-answer .held, #lesson-answer .not-held"
        if driver.find_elements("css selector", shown):
            return True
        if not clicked or driver.find_elements("css selector", "#lesson-answer .error"):
            driver.find_elements("css selector", "#lesson-choice input")[0].click()
            driver.find_element("css selector", "#lesson-reveal").click()
            clicked.append(True)
        return False

    wait_for(answer, what=f"step {step} answered")
    script = """
      const graphs = document.querySelectorAll('#lesson-answer .dash-graph').length;
      const plots = [...document.querySelectorAll('#lesson-answer .js-plotly-plot')];
      if (!graphs || plots.length < graphs) return null;  // some not drawn yet
      return plots.map(gd => {
        const r = gd.getBoundingClientRect();
        const box = e => e.getBoundingClientRect();
        const slider = gd.querySelector('.slider-group'), legend = gd.querySelector('.legend');
        return {title: gd.layout.title.text, x: r.left, y: r.top + window.scrollY,
                w: r.width, data: JSON.stringify(gd.data),
                sliderBottom: slider && box(slider).bottom, legendTop: legend && box(legend).top,
                entries: [...gd.querySelectorAll('.legend .traces')].map(t => {
                  const b = box(t), text = box(t.querySelector('.legendtext'));
                  return {left: b.left, top: Math.round(b.top), textRight: text.right};
                })};
      });"""

    def graphs():
        found = driver.execute_script(script)
        return found if found and all(g["title"] for g in found) else None

    return settled(graphs, what=f"step {step}'s animations, laid out")


@pytest.mark.browser
def test_lesson_steps_animate_the_runs_they_compare_side_by_side_and_stacked_on_a_phone(
    server, browser
) -> None:
    set_viewport(browser, 1280, 720)
    shown = reveal(browser, server, 4)
    titles = [g["title"] for g in shown]
    assert any("S = 0.3" in t for t in titles) and any("S = 0.9" in t for t in titles), titles
    assert shown[0]["y"] == shown[1]["y"] and shown[0]["x"] < shown[1]["x"], "not side by side"
    for g in shown:  # in a half-width column the legend clears the slider, entries each other
        assert g["legendTop"] >= g["sliderBottom"], (g["title"], g["legendTop"], g["sliderBottom"])
        rows: dict[int, list[dict]] = {}
        for entry in g["entries"]:
            rows.setdefault(entry["top"], []).append(entry)
        for row in rows.values():
            row.sort(key=lambda e: e["left"])
            for a, b in itertools.pairwise(row):
                assert a["textRight"] <= b["left"], ("legend entries overlap", g["title"], a, b)
    shown = reveal(browser, server, 6)
    titles = [g["title"] for g in shown]
    ks = {int(m[1]) for t in titles if (m := re.search(r"k = (\d+)", t))}
    assert 0 in ks and max(ks) > 0, titles
    # the k = 0 animation draws all five features' directions in five colours
    (k0,) = [g for g in shown if re.search(r"k = 0\b", g["title"])]
    run = _run("vector-all-or-none", "k=0")
    W = canonical_weights(select(run, None))["W_x"][-1]
    data = [t for t in json.loads(k0["data"]) if t.get("xaxis", "x") == "x"]  # directions cell
    assert len({c for _, c in feature_arrows(data, W)}) == 5
    set_viewport(browser, 390, 844)
    shown = reveal(browser, server, 4)
    assert len(shown) == 2 and shown[0]["x"] == shown[1]["x"] and shown[1]["y"] > shown[0]["y"]
    assert max(g["w"] for g in shown) <= 390, "a phone's animation is wider than the screen"


@pytest.mark.browser
def test_gallery_cards_show_different_pictures_and_the_pentagon_card_the_k0_run(
    server, browser
) -> None:
    from tempsup.figures.thumbnail import thumbnail

    set_viewport(browser, 1280, 720)
    browser.get(f"{server}/gallery")
    n = len(presets())
    script = """
      return [...document.querySelectorAll('.preset')].map(card => {
        const gd = card.querySelector('.thumb .js-plotly-plot');
        return [card.id, gd && gd.data ? JSON.stringify(gd.data) : null];
      });"""

    def every_picture():
        found = browser.execute_script(script)
        return found if len(found) == n and all(d for _, d in found) else None

    cards = wait_for(every_picture, what="every card's picture")
    pictures = dict(cards)
    assert len(set(pictures.values())) == n, "two gallery cards show the same picture"
    drawn = json.loads(pictures["preset-vector-all-or-none"])
    run = _run("vector-all-or-none", "k=0")
    W = canonical_weights(select(run, None))["W_x"][-1]
    arrows = feature_arrows(drawn, W)  # the k = 0 run's five directions, not a heatmap
    assert len({c for _, c in arrows}) == 5
    expected, _ = thumbnail(run, "directions")
    assert [t.get("type") for t in drawn] == [t.get("type") for t in expected["data"]]
