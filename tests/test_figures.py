"""Figures: hand-built runs whose geometry is known exactly, checked trace by trace.

No server, no browser: the figures are pure data → go.Figure (style.md §5).
The central run has W_h = 0.8·rotation(90°), W_x = e1 and the tied readout
W_y = w_3 (k = 3), so w_s = 0.8^s · rotation(90 s)·e1 and a_s is 0 or negative
for every s ≠ 3.
"""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import plotly.offline
import pytest

from tempsup import figures
from tempsup.core.palette import ROLE_COLORS, empty_figure
from tempsup.errors import TempsupError
from tempsup.figures._common import n_ages
from tempsup.figures.directions import half_plane_polygon, plane_in_cube
from tempsup.figures.panel import at_corners
from tempsup.io.run import Run, derived
from tempsup.model.config import RunConfig
from tempsup.theory import gauge, geometry
from tests.helpers import rot


def make_run(
    W_h: np.ndarray,
    W_x: np.ndarray,
    W_y: np.ndarray | None = None,
    frames: int = 3,
    seeds: int = 2,
    b: float = 0.0,
    grow: bool = True,
    **config,
) -> Run:
    """A run whose every frame and seed holds these weights (W_x scaled by 1 + f/10 if grow).

    `W_y=None` means tied: W_y := W_{s=k}, computed like the trainer does.
    """
    N_h, N_x = W_x.shape
    cfg = RunConfig(
        hidden=N_h,
        inputs=N_x,
        seeds=seeds,
        steps=20 * max(frames - 1, 1),
        snapshot_every=20,
        tied=W_y is None,
        **config,
    )
    F, M = frames, seeds
    scale = (1.0 + np.arange(F) / 10.0 if grow else np.ones(F))[:, None, None, None]
    Wx = np.broadcast_to(W_x, (F, M, N_h, N_x)) * scale
    Wh = np.broadcast_to(W_h, (F, M, N_h, N_h)).copy()
    if W_y is None:
        Wy = geometry.feature_directions(Wx, Wh, cfg.k + 1, cfg.relu_hidden)[..., cfg.k, :, :]
    else:
        Wy = np.broadcast_to(W_y, (F, M, N_h, N_x)).copy()
    b_y = np.full((F, M, N_x), b)
    loss = np.exp(-np.arange(F))[:, None] * (1.0 + np.arange(M))[None, :]  # seed 0 is the best
    arrays = {
        "step": np.arange(F) * 20,
        "W_x": Wx,
        "W_h": Wh,
        "W_y": Wy,
        "b_y": b_y,
        "loss": loss,
        **derived(cfg, cfg.steps, Wx, Wh, Wy, b_y),
    }
    return Run(cfg, arrays)


E1 = np.array([[1.0], [0.0]])
SPIRAL = 0.8 * rot(90)


@pytest.fixture(scope="module")
def ssm() -> Run:
    return make_run(SPIRAL, E1, model="ssm", k=3)


def canon(run: Run, frame: int = -1, seed: int = 0) -> dict[str, np.ndarray]:
    """One frame's weights in the canonical gauge: the basis the directions panel draws."""
    cfg = run.config
    w = run.weights(frame, seed)
    return gauge.canonical(w["W_x"], w["W_h"], w["W_y"], w["b_y"], cfg.k, cfg.relu_hidden, cfg.tied)


def by_name(traces: list[dict], start: str) -> dict:
    (hit,) = [t for t in traces if t.get("name", "").startswith(start)]
    return hit


def tips(trace: dict, dims: str = "xy") -> np.ndarray:
    """Arrow tips of a role trace: the point before each gap."""
    cols = [trace[d] for d in dims]
    return np.array([[c[i - 1] for c in cols] for i, v in enumerate(cols[0]) if v is None])


# ---- directions ---------------------------------------------------------------------------


def test_directions_one_trace_per_role_with_the_geometry_directions(ssm):
    traces = figures.frame_traces("directions", ssm, None, -1)
    k, n = 3, n_ages(3)
    c = canon(ssm)  # drawn in the canonical gauge: w_y along +h_1
    w = geometry.feature_directions(c["W_x"], c["W_h"], n, False)[:, :, 0]
    expected = {"intermediate": range(0, k), "output": [k], "old": range(k + 1, n)}
    for role, ages in expected.items():
        trace = by_name(traces, role)
        assert trace["line"]["color"] == ROLE_COLORS[role]
        assert trace["marker"]["symbol"] == "arrow" and trace["marker"]["angleref"] == "previous"
        got = tips(trace)
        assert len(got) == len(ages), role
        np.testing.assert_allclose(got, w[list(ages)], rtol=1e-3, atol=1e-6)
        assert [c[0] for c in trace["customdata"] if c[0] is not None] == list(ages)
    assert "s=0" in by_name(traces, "intermediate")["text"]
    readout = by_name(traces, "readout")
    np.testing.assert_allclose([readout["x"][1], readout["y"][1]], w[k], rtol=1e-3, atol=1e-6)
    assert readout["x"][1] > 0 and readout["y"][1] == 0.0
    a = [c[1] for c in by_name(traces, "intermediate")["customdata"] if c[0] is not None]
    raw = geometry.summary(ssm["W_x"][-1, 0], ssm["W_h"][-1, 0], None, None, 3, False)
    np.testing.assert_allclose(a, raw["a"][:k], rtol=1e-3, atol=1e-6)  # a_s is gauge-free


def test_half_space_polygon_lies_where_the_readout_is_silent():
    ry, b, R = np.array([0.3, -0.7]), 0.25, 2.0
    poly = np.array(half_plane_polygon(R, ry, b))
    assert np.all(poly @ ry + b <= 1e-9)
    inside = poly[:-1].mean(axis=0)
    assert geometry.in_half_space(inside, ry, b)
    assert half_plane_polygon(R, np.zeros(2), 1.0) == []  # dead readout, positive bias: nothing
    assert len(half_plane_polygon(R, np.zeros(2), 0.0)) == 5  # dead readout: everything is free


def test_half_space_trace_is_on_the_free_side_of_the_run_readout(ssm):
    traces = figures.frame_traces("directions", ssm, None, 0)
    half = by_name(traces, "interference-free half-space")
    pts = np.array([half["x"], half["y"]]).T
    w_y = canon(ssm, 0)["W_y"][:, 0]  # tied w_3, canonical: along +h_1 -> free side h_1 <= 0
    assert np.all(pts @ w_y <= 1e-6)
    assert geometry.in_half_space(pts[:-1].mean(axis=0), w_y)
    assert half["fill"] == "toself"


def test_half_space_reaches_past_the_panel_and_autoscale_stops_at_it(ssm):
    """Filled far past the panel's square, so a page that draws the panel on a wider scale
    (Compare) still shows a half-plane; autoscale stays at the square all the same."""
    from tempsup.figures.directions import HALF_SPACE_REACH

    layout = figures.panel_layout("directions", ssm, None)
    lo, hi = layout["xaxis"]["range"]
    half = by_name(figures.frame_traces("directions", ssm, None, -1), "interference-free")
    reach = max(abs(v) for v in half["x"] + half["y"])
    assert reach == pytest.approx(HALF_SPACE_REACH * hi, rel=1e-3) and HALF_SPACE_REACH >= 5
    for axis in ("xaxis", "yaxis"):
        assert layout[axis]["autorangeoptions"] == {"clipmin": lo, "clipmax": hi}


@pytest.mark.parametrize("panel, name", [("directions", "count"), ("eigen", "spectrum summary")])
def test_a_corner_text_sits_at_the_top_left_corner_and_says_so(ssm, panel, name):
    """At the corner of the panel's own axes, and marked with its inset, by which the page
    keeps it at the corner of the axes it draws (assets/tempsup.js atCorners)."""
    from tempsup.figures._common import CORNER_INSET

    layout = figures.panel_layout(panel, ssm, None)
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    text = by_name(figures.frame_traces(panel, ssm, None, -1), name)
    assert text["meta"] == {"corner": CORNER_INSET}
    assert text["x"][0] == pytest.approx(x0 + CORNER_INSET * (x1 - x0), rel=1e-3)
    assert text["y"][0] == pytest.approx(y1 - CORNER_INSET * (y1 - y0), rel=1e-3)
    assert text["textposition"] == "bottom right"


def test_half_space_with_a_bias_shifts_the_boundary():
    run = make_run(SPIRAL, E1, W_y=np.array([[1.0], [0.0]]), model="ssm", bias=True, b=0.3)
    half = by_name(figures.frame_traces("directions", run, None, -1), "interference-free")
    r = canon(run)["W_y"][0, 0]  # canonical: w_y = (r, 0), r > 0 -> {h : r h_1 + 0.3 <= 0}
    assert max(half["x"]) == pytest.approx(-0.3 / r, abs=1e-3)
    assert "+ b" in half["name"]


def test_count_of_directions_in_the_half_space(ssm):
    text = by_name(figures.frame_traces("directions", ssm, None, -1), "count")["text"][0]
    assert text.startswith("6 of 6 directions in the<br>interference-free half-space")
    assert "(3 of 3 intermediate)" in text
    # untied readout along e1: a_s = 1, 0, -0.64, 0, 0.41, 0, -0.26 -> s = 1, 2, 5, 6 are free
    run = make_run(SPIRAL, E1, W_y=np.array([[1.0], [0.0]]), model="ssm")
    text = by_name(figures.frame_traces("directions", run, None, -1), "count")["text"][0]
    assert text.startswith("4 of 6 directions") and "(2 of 3 intermediate)" in text
    # ReLU recurrence: w_3 = W_h ReLU((-0.64, 0)) = 0, so every older direction is 0 and free
    run = make_run(SPIRAL, E1, W_y=np.array([[1.0], [0.0]]), model="rnn")
    text = by_name(figures.frame_traces("directions", run, None, -1), "count")["text"][0]
    assert text.startswith("5 of 6 directions")


def test_linear_model_has_no_half_space():
    run = make_run(SPIRAL, E1, model="linear")
    names = [t["name"] for t in figures.frame_traces("directions", run)]
    assert not any("interference-free" in n or n == "count" for n in names)
    assert len(names) == 4  # three roles and the readout
    assert "interference-free" not in json.dumps(figures.frame_traces("projections", run))


def test_axis_ranges_cover_every_frame(ssm):
    layout = figures.panel_layout("directions", ssm, None)
    longest = max(np.abs(canon(ssm, f)["W_x"]).max() for f in range(ssm.n_frames))  # w_0 grows
    lo, hi = layout["xaxis"]["range"]
    assert hi >= longest and lo <= -longest and layout["yaxis"]["range"] == [lo, hi]
    assert layout["yaxis"]["scaleanchor"] == "x"


def test_three_hidden_units_give_a_3d_view():
    W_h = np.diag([0.5, 0.6, 0.7]) + 0.2 * np.eye(3, k=1)
    run = make_run(W_h, np.array([[1.0], [0.5], [0.2]]), model="ssm")
    traces = figures.frame_traces("directions", run)
    assert {t["type"] for t in traces} == {"scatter3d", "mesh3d"}
    mesh = traces[0]
    assert mesh["type"] == "mesh3d" and "directions in the interference-free" in mesh["name"]
    P = np.array([mesh["x"], mesh["y"], mesh["z"]]).T
    w_y = canon(run)["W_y"][:, 0]
    np.testing.assert_allclose(P @ w_y, 0.0, atol=1e-3 * np.abs(P).max())  # the boundary plane
    assert "scene" in figures.panel_layout("directions", run, None)


def test_plane_in_cube_is_a_closed_ordered_polygon():
    P = plane_in_cube(1.0, np.array([0.0, 0.0, 1.0]), -0.5)  # z = 0.5: a square
    assert P.shape == (4, 3) and np.allclose(P[:, 2], 0.5)
    angles = np.unwrap(np.arctan2(P[:, 1], P[:, 0]))
    assert np.all(np.diff(angles) > 0) or np.all(np.diff(angles) < 0)
    assert plane_in_cube(1.0, np.array([0.0, 0.0, 1.0]), -5.0).shape == (0, 3)


def test_many_hidden_units_are_projected_onto_readout_and_output_direction():
    rng = np.random.default_rng(1)
    W_h = 0.4 * rng.normal(size=(5, 5))
    W_x = rng.normal(size=(5, 1))
    W_y = rng.normal(size=(5, 1))
    run = make_run(W_h, W_x, W_y=W_y, model="ssm")
    layout = figures.panel_layout("directions", run, None)
    assert "projection onto span(w<sub>y</sub>, w<sub>k</sub>)" in layout["title"]["text"]
    traces = figures.frame_traces("directions", run)
    w = geometry.feature_directions(run["W_x"][-1, 0], run["W_h"][-1, 0], n_ages(3), False)
    a = (w[:, :, 0] @ W_y[:, 0])[:3]
    # e1 is along w_y, so the first coordinate times |w_y| (canonical) is a_s exactly
    along = tips(by_name(traces, "intermediate"))[:, 0] * np.linalg.norm(canon(run)["W_y"])
    np.testing.assert_allclose(along, a, rtol=2e-3, atol=1e-4)


def test_vector_input_draws_every_feature_and_highlights_the_chosen_one_and_a_heatmap():
    rng = np.random.default_rng(2)
    W_x, W_h, W_y = rng.normal(size=(2, 3)), 0.5 * rot(40), rng.normal(size=(2, 3))
    run = make_run(W_h, W_x, W_y=W_y, model="rnn")
    traces = figures.frame_traces("directions", run, None, -1, feature=1)
    c = canon(run)
    w_c = geometry.feature_directions(c["W_x"], c["W_h"], n_ages(3), True)  # (n, N_h, N_x)
    np.testing.assert_allclose(
        tips(by_name(traces, "w<sub>k</sub> of B (highlighted)"))[0], w_c[3, :, 1], rtol=1e-3
    )
    # every feature's w_k, each in its own colour; the chosen one's other ages by role
    arrows = [t for t in traces if t.get("legendgroup") in ("picked", "features")]
    assert len(arrows) == 3 and len({t["line"]["color"] for t in arrows}) == 3
    for j, t in enumerate(arrows):
        np.testing.assert_allclose(tips(t)[0], w_c[3, :, j], rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(tips(by_name(traces, "highlighted feature: intermediate")),
                               w_c[:3, :, 1], rtol=1e-3, atol=1e-4)  # fmt: skip
    w = geometry.feature_directions(run["W_x"][-1, 0], W_h, n_ages(3), True)
    assert "B: every" in figures.panel_layout("directions", run, None, feature=1)["title"]["text"]
    (heat,) = figures.frame_traces("projections", run, None, -1)
    assert heat["type"] == "heatmap" and heat["x"] == ["A", "B", "C"]
    np.testing.assert_allclose(heat["z"], W_y.T @ w[3], rtol=1e-3, atol=1e-4)
    assert heat["zmin"] == -heat["zmax"]  # centred on 0
    with pytest.raises(TempsupError, match="feature"):
        figures.frame_traces("directions", run, None, -1, feature=3)


# ---- loss, projections, eigen ---------------------------------------------------------------


def test_loss_cursor_sits_at_the_frame_step(ssm):
    layout = figures.panel_layout("loss", ssm, None)
    for f in (0, 1, -1):
        traces = figures.frame_traces("loss", ssm, None, f)
        cursor = by_name(traces, "current step")
        step = int(ssm["step"][f])
        assert cursor["x"] == [step, step]
        low, high = layout["yaxis"]["range"]  # symlog units: from below the axis (and a
        assert cursor["y"][0] < low - 10  # wider one) up to the curves' top, under the label
        curves = [t for t in traces if t.get("mode") == "lines" and "seeds" not in t["name"]]
        top = max(y for t in curves if t is not cursor for y in t["y"] if y is not None)
        assert top <= cursor["y"][1] < high
        clip = layout["yaxis"]["autorangeoptions"]  # autoscale stops at the axis's range
        assert [clip["clipmin"], clip["clipmax"]] == [low, high]
        dot = by_name(traces, "current loss")
        assert dot["x"] == [step] and dot["customdata"] == pytest.approx([ssm["loss"][f, 0]], 1e-3)
    assert "type" not in layout["yaxis"]  # linear in symlog units, labelled in the values
    assert layout["yaxis"]["ticktext"][0] == "0"
    assert "exact to second order in p" in layout["title"]["text"]
    assert "first-order" not in layout["title"]["text"]
    names = [t["name"] for t in figures.frame_traces("loss", ssm)]
    assert "other seeds (measured)" in names and "task" in names
    assert "mean correction" in names and "composition interference" in names
    assert "expected loss E[L]" in names and "remainder (3+ inputs)" in names


def test_loss_panel_says_how_much_of_the_loss_the_terms_explain(ssm):
    """The label in the corner is the frame's Σ terms / E[L]: its words move with the frame,
    its place is the top-left corner of the axes (of the frames so far), not the cursor."""
    from tempsup.figures.loss import LABEL_INSET, x_range

    for f in (0, -1):
        label = by_name(figures.frame_traces("loss", ssm, None, f), "explained")
        want = 100 * ssm["terms"][f, 0].sum() / ssm["expected_loss"][f, 0]
        assert label["text"] == [f"four terms:<br>{want:.1f} % of E[L]"]
        x0, x1 = x_range(int(ssm["step"][f]))
        assert label["x"] == [pytest.approx(x0 + LABEL_INSET * (x1 - x0), rel=1e-3)]
        assert label["meta"] == {"corner": LABEL_INSET} and label["textposition"] == "bottom right"
    moving = figures.moving_traces("loss", ssm, 0)
    traces = figures.frame_traces("loss", ssm, None, -1)
    assert [traces[i]["name"] for i in moving] == ["current step", "current loss", "explained"]


def test_the_label_in_the_corner_hangs_in_a_band_above_every_curve(ssm):
    """The label (three lines hanging from the axis top) must not be drawn over the loss,
    which sits at the top of the curves' range once trained: the axis leaves a band above
    them at least a fifth of the plot's height, and its ticks stay the curves' own."""
    from tempsup.figures.loss import LABEL_ROOM

    layout = figures.panel_layout("loss", ssm, None)
    low, high = layout["yaxis"]["range"]
    traces = figures.frame_traces("loss", ssm, None, -1)
    moving = set(figures.moving_traces("loss", ssm, 0))
    # every curve of the shown seed (the others may leave the range, as they always could)
    curves = [t for i, t in enumerate(traces) if i not in moving and "other seeds" not in t["name"]]
    top = max(y for t in curves for y in t["y"] if y is not None)
    label = by_name(traces, "explained")
    assert label["y"][0] > top and label["textposition"].startswith("bottom")  # hangs down
    assert (high - top) / (high - low) >= LABEL_ROOM / (1 + LABEL_ROOM) - 1e-3 >= 0.2
    assert max(layout["yaxis"]["tickvals"]) <= top + 0.1 * (high - low)  # no tick in the band


# The label's three lines, as a share of the plot's height: 3 × 15 px of the shortest
# plot a loss panel gets (a phone's stacked panel, 270 px: tempsup.figures.animation NARROW).
LABEL_HEIGHT = 3 * 15 / 270


def test_the_label_never_touches_the_cursor(ssm):
    """At every frame, as the page and the export draw it (corners placed on the axes
    drawn): the label stays in its corner whatever the step (it does not follow the
    cursor), and its lines end above the cursor's top, so the two never meet; once the
    cursor has moved a third of the way along, they are apart sideways too."""
    layout = figures.panel_layout("loss", ssm, None)
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    places = set()
    for f in range(ssm.n_frames):
        data = figures.panel_figure("loss", ssm, None, f).to_plotly_json()["data"]
        label, cursor = by_name(data, "explained"), by_name(data, "current step")
        places.add((label["x"][0], label["y"][0]))
        bottom = label["y"][0] - LABEL_HEIGHT * (y1 - y0)  # its last line's foot
        assert cursor["y"][1] < bottom, (f, cursor["y"], label["y"])
        if (cursor["x"][0] - x0) / (x1 - x0) > 1 / 3:
            assert abs(cursor["x"][0] - label["x"][0]) > 0.25 * (x1 - x0), f
    xs, ys = zip(*places, strict=True)  # one place, the top-left corner, in every frame
    assert max(xs) - min(xs) <= 1e-3 * (x1 - x0) and max(ys) - min(ys) <= 1e-3 * (y1 - y0)
    assert xs[0] - x0 < 0.05 * (x1 - x0) and y1 - ys[0] < 0.05 * (y1 - y0)


def test_at_most_five_loss_curves_are_drawn_and_the_rest_are_one_click_away(ssm):
    """Nine legend entries, five drawn when the panel opens (the measured loss and the four
    terms); E[L], the sum, the remainder and the other seeds are in the legend, hidden
    (Plotly's "legendonly": one click shows them)."""
    from tempsup.io.run import TERM_NAMES

    traces = figures.frame_traces("loss", ssm, None, -1)
    entries = [t for t in traces if t.get("showlegend", True)]
    drawn = [t["name"] for t in entries if t.get("visible", True) is True]
    hidden = [t["name"] for t in entries if t.get("visible") == "legendonly"]
    assert len(drawn) <= 5 and len(drawn) + len(hidden) == len(entries) == 9
    assert drawn == ["measured loss (seed 0)", *TERM_NAMES]
    assert set(hidden) == {"other seeds (measured)", "expected loss E[L]",
                           "sum of the four terms", "remainder (3+ inputs)"}  # fmt: skip


def test_loss_panel_of_the_linear_model_draws_no_remainder():
    run = make_run(SPIRAL, E1, model="linear")
    names = [t["name"] for t in figures.frame_traces("loss", run)]
    assert "expected loss E[L]" in names and not any("remainder" in n for n in names)
    label = by_name(figures.frame_traces("loss", run, None, -1), "explained")
    assert label["text"] == ["four terms:<br>100.0 % of E[L]"]


def test_loss_title_for_the_linear_model():
    run = make_run(SPIRAL, E1, model="linear")
    title = figures.panel_layout("loss", run, None)["title"]["text"]
    assert "exact: linear model" in title


def test_projection_bars_by_role(ssm):
    traces = figures.frame_traces("projections", ssm, None, -1)
    out = by_name(traces, "output")
    a_k = float(np.sum(ssm["W_y"][-1, 0, :, 0] ** 2))  # tied: a_k = |w_k|²
    assert out["x"] == [3] and out["y"][0] == pytest.approx(a_k, rel=1e-3)
    assert out["marker"]["line"]["width"] > 0  # s = k outlined
    assert by_name(traces, "intermediate")["x"] == [0, 1, 2]
    band = by_name(traces, "interference-free")
    assert max(band["y"]) == 0.0  # a_s <= 0 is free without a bias
    layout = figures.panel_layout("projections", ssm, None)
    low, high = layout["yaxis"]["range"]  # the band fills the axis (and a wider one) below 0
    assert min(band["y"]) < low - 5 * (high - low)
    clip = layout["yaxis"]["autorangeoptions"]  # autoscale stops at the axis's range
    assert [clip["clipmin"], clip["clipmax"]] == [low, high]
    assert layout["yaxis"]["zeroline"] and layout["shapes"][0]["y0"] == 1  # target a_k = 1


def test_eigen_panel_summary(ssm):
    traces = figures.frame_traces("eigen", ssm, None, 0)
    now = by_name(traces, "eigenvalues of")
    np.testing.assert_allclose(sorted(now["y"]), [-0.8, 0.8], atol=1e-4)
    np.testing.assert_allclose(now["x"], [0, 0], atol=1e-4)
    text = by_name(traces, "spectrum summary")["text"][0]
    assert "ρ(W<sub>h</sub>) = 0.8" in text and "kθ = 270°" in text
    # frame 0: W_x = e1, but the canonical gauge stretches it by (0.64 / 1.64)^(1/4)
    assert "‖w<sub>0</sub>‖ = 0.79" in text and "gauge" in text
    layout = figures.panel_layout("eigen", ssm, None)
    assert layout["shapes"][0]["type"] == "circle"


# ---- the contract with the app ------------------------------------------------------------


@pytest.mark.parametrize("panel", figures.PANELS)
def test_figure_is_traces_plus_layout(ssm, panel):
    layout = figures.panel_layout(panel, ssm, 1)
    json.dumps(layout)
    for f in (0, 2):
        data = figures.frame_traces(panel, ssm, 1, f)
        json.dumps(data)  # plain JSON: no numpy anywhere
        fig = figures.panel_figure(panel, ssm, 1, f)
        placed = at_corners(data, layout)  # corner texts on the whole run's axes
        want = go.Figure({"data": placed, "layout": layout}).to_plotly_json()
        assert fig.to_plotly_json() == want
    assert figures.all_frame_traces(panel, ssm, 1) == [
        figures.frame_traces(panel, ssm, 1, f) for f in range(ssm.n_frames)
    ]


@pytest.mark.parametrize("panel", figures.PANELS)
def test_only_moving_traces_change(ssm, panel):
    moving = set(figures.moving_traces(panel, ssm))
    frames = figures.all_frame_traces(panel, ssm)
    for i in range(len(frames[0])):
        if i not in moving:
            assert all(fr[i] == frames[0][i] for fr in frames), (panel, i)
    assert any(fr[i] != frames[0][i] for fr in frames for i in moving)  # W_x grows


def test_seed_none_is_the_best_seed(ssm):
    assert figures.frame_traces("loss", ssm, None) == figures.frame_traces("loss", ssm, ssm.best)


def test_bad_arguments_say_what_was_expected(ssm):
    with pytest.raises(TempsupError, match="panel: expected one of directions"):
        figures.panel_figure("spectrum", ssm)
    with pytest.raises(TempsupError, match=r"seed: expected an integer in \[0, 1\]"):
        figures.frame_traces("loss", ssm, 5, 0)
    with pytest.raises(TempsupError, match="frame"):
        figures.frame_traces("loss", ssm, 0, 3)


def test_empty_figure():
    fig = empty_figure("no run yet")
    assert len(fig.data) == 0
    assert fig.layout.annotations[0].text == "no run yet"
    assert figures.empty_figure is empty_figure


# ---- animation and export -------------------------------------------------------------------


@pytest.fixture(scope="module")
def long_run() -> Run:
    rng = np.random.default_rng(3)
    return make_run(0.9 * rot(100) + 0.05 * rng.normal(size=(2, 2)), E1, frames=100, seeds=8)


def test_animation_has_one_lean_frame_per_snapshot(long_run):
    fig = figures.animation_figure(long_run)
    assert len(fig.frames) == 100
    assert [fr.name for fr in fig.frames] == [str(f) for f in range(100)]
    assert len(fig.layout.sliders[0].steps) == 100
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["▶ play", "❚❚ pause"]
    loss_cursor = [i for i, t in enumerate(fig.data) if t.name == "current step"]
    frame = fig.frames[7]
    assert set(loss_cursor) <= set(frame.traces)
    assert "other seeds (measured)" not in {fig.data[i].name for i in frame.traces}
    assert frame.layout is None or frame.layout.to_plotly_json() == {}
    step7 = int(long_run["step"][7])
    (cursor,) = [d for i, d in zip(frame.traces, frame.data, strict=True) if i in loss_cursor]
    assert list(cursor.x) == [step7, step7]


def test_export_is_offline_small_and_complete(long_run):
    link = "https://tempsup.example/run?key=abc&seed=0"
    page = figures.export_html(long_run, None, link)
    overhead = len(page) - len(plotly.offline.get_plotlyjs())
    assert overhead < 1_000_000, f"export adds {overhead} bytes beyond plotly.js"
    assert not re.search(r"<script[^>]*\ssrc=", page)  # everything inlined: works offline
    assert plotly.offline.get_plotlyjs()[:2000] in page
    assert long_run.config.to_json() in page
    assert 'href="https://tempsup.example/run?key=abc&amp;seed=0"' in page
    for f in range(100):
        assert f'"name":"{f}"' in page


@pytest.mark.parametrize(("hidden", "inputs"), [(3, 1), (3, 2), (4, 5)])
def test_animation_and_export_of_wide_models(hidden: int, inputs: int) -> None:
    """N_h > 2 draws the directions as a projection with its own margins: the grid must
    still build (it once failed with "multiple values for keyword argument 'margin'")."""
    rng = np.random.default_rng(hidden * 10 + inputs)
    W_h = 0.5 * rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    run = make_run(W_h, rng.standard_normal((hidden, inputs)), frames=3)
    fig = figures.animation_figure(run)
    assert len(fig.frames) == 3 and fig.layout.margin.b == 230
    assert "Plotly.newPlot" in figures.export_html(run, None, None)


# ---- rounding and the canonical-gauge memo --------------------------------------------


def test_rnd_is_the_four_digit_decimal_as_python_parses_it():
    """The array route gives exactly float(f"{v:.4g}") (None for NaN and ±inf), also at
    ties, powers of ten, subnormals, huge values, float32 inputs and signed zeros."""
    import math

    from tempsup.figures._common import rnd

    rng = np.random.default_rng(7)
    x = rng.standard_normal(200_000) * 10.0 ** rng.uniform(-320, 307, 200_000)
    for d in range(6):  # short decimals, as losses and weights often are
        x[d::30] = np.round(rng.standard_normal(x[d::30].size), d)
    x[::7] = 10.0 ** rng.integers(-30, 30, x[::7].size)
    x[::11] = rng.standard_normal(x[::11].size).astype(np.float32)
    x[::13] = rng.integers(0, 20000, x[::13].size) + 0.5  # exact ties of the 4th digit
    x[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 9999.5, 5e-324, 1.2345]
    got = rnd(x)
    want = [float(f"{v:.4g}") if math.isfinite(v) else None for v in x.tolist()]
    assert got == want
    assert [math.copysign(1, v) for v in got[3:5]] == [-1.0, 1.0]
    assert rnd(np.float32(0.1)) == 0.1 and rnd(np.nan) is None
    assert rnd([[1.23456, np.nan], [2.0, 3.0]]) == [[1.235, None], [2.0, 3.0]]
    # a few values take the string route: the same numbers, nested as ndarray.tolist()
    for shape in [(), (1,), (5,), (0,), (2, 3), (0, 3), (3, 0), (2, 2, 3), (4, 1, 2)]:
        a = np.asarray(rng.standard_normal(shape) * 10.0 ** rng.uniform(-5, 5, shape))
        a[a > 1.5] = np.nan
        digits = [float(f"{v:.4g}") if math.isfinite(v) else None for v in a.ravel().tolist()]
        want = np.array(digits, dtype=object).reshape(shape).tolist()
        assert rnd(a) == want, shape
    # a short list of plain floats (a polygon's corners) takes no array: the same numbers
    few = [float(v) for v in x[:64]]
    assert rnd(few) == [float(f"{v:.4g}") if math.isfinite(v) else None for v in few]
    assert [math.copysign(1, v) for v in rnd(few)[3:5]] == [-1.0, 1.0]


def test_canonical_weights_are_computed_once_per_frame_and_equal_the_batched_solve(
    monkeypatch,
):
    """A streaming page rebuilds its Run each poll: the frames seen before come from the
    memo (by content), only the new ones are solved, and the result is the solve of all."""
    from tempsup.figures import _common

    rng = np.random.default_rng(3)
    run = make_run(0.9 * rot(50), rng.standard_normal((2, 1)), frames=6, model="rnn", k=2)
    cfg = run.config
    want = gauge.canonical(
        run["W_x"][:, 1], run["W_h"][:, 1], run["W_y"][:, 1], run["b_y"][:, 1],
        cfg.k, cfg.relu_hidden, cfg.tied,
    )  # fmt: skip
    solved = []
    real = gauge.canonical
    monkeypatch.setattr(
        _common.gauge, "canonical", lambda W_x, *a: solved.append(len(W_x)) or real(W_x, *a)
    )
    for n in (2, 5, 6):  # polls that see 2, then 5, then all 6 frames (fresh arrays each time)
        part = Run(cfg, {k: np.array(v[:n]) for k, v in run.arrays.items()})
        got = _common.canonical_weights(_common.select(part, 1))
        for name in ("W_x", "W_h", "W_y", "G"):
            np.testing.assert_allclose(got[name], want[name][:n], rtol=1e-9, atol=1e-12)
    assert solved == [2, 3, 1]
    _common.canonical_weights(_common.select(part, 1))  # the same arrays: no solve, no hashing
    assert solved == [2, 3, 1]


# ---- each frame drawn from the frames up to it (`PanelSet.causal`) ----------------------


CAUSAL_RUNS = {
    "ssm": lambda: make_run(SPIRAL, E1, model="ssm", k=3, frames=12),
    "ssm, bias, free readout": lambda: make_run(
        SPIRAL, E1, W_y=np.array([[1.0], [0.5]]), model="ssm", bias=True, b=0.2, frames=12
    ),
    "linear": lambda: make_run(SPIRAL, E1, model="linear", frames=12),
    "ReLU RNN, N_h = 1": lambda: make_run(
        np.array([[0.6]]), np.array([[1.0]]), model="rnn", k=1, frames=12
    ),
}


@pytest.mark.parametrize("name", CAUSAL_RUNS)
def test_a_frame_is_drawn_from_the_frames_up_to_it_alone(name):
    """What a frame shows (every moving trace of every panel, and its status line) is the
    same drawn from the run's first f + 1 frames as from the whole run: a frame streamed in
    while the job trains is the finished run's frame, so the finished view can take the
    streamed frames (app.view). The run's weights grow, so the whole run's axes are wider
    than its first frames' (the test would not notice a frame drawn on the run's axes)."""
    run = CAUSAL_RUNS[name]()
    assert figures.PANEL_SET.causal(run.config)
    first = run.first_frames(1)
    layouts = [figures.panel_layout("directions", r, 0) for r in (first, run)]
    assert layouts[0]["xaxis"]["range"] != layouts[1]["xaxis"]["range"]
    for f in range(run.n_frames):
        prefix = run.first_frames(f + 1)
        for panel in figures.PANELS:
            whole = figures.frame_traces(panel, run, 0, f)
            alone = figures.frame_traces(panel, prefix, 0, f)
            moving = figures.moving_traces(panel, run, 0)
            moving_alone = figures.moving_traces(panel, prefix, 0)
            assert [whole[i] for i in moving] == [alone[i] for i in moving_alone], (panel, f)
        assert figures.status_line(run, 0, f) == figures.status_line(prefix, 0, f)


@pytest.mark.parametrize(
    "config",
    [
        RunConfig(model="rnn", hidden=3),  # the 3-D plane is cut at the whole run's cube
        RunConfig(model="rnn", hidden=5),  # the projection's second axis: the last frame's
        RunConfig(hidden=2, inputs=3, tied=False, k=0),  # the heatmap's scale: the run's
    ],
)
def test_panels_drawn_with_the_whole_run_say_so(config):
    assert not figures.PANEL_SET.causal(config)
    assert figures.PANEL_SET.causal(config.replace(hidden=2, inputs=1, tied=True))


def test_the_correlations_lab_draws_its_frames_with_the_whole_run():
    from tempsup.bows import figures as bows_figures
    from tempsup.bows.config import BowsConfig

    assert not bows_figures.PANEL_SET.causal(BowsConfig())


def test_texts_hanging_from_a_corner_are_drawn_at_the_whole_runs_corner():
    """A frame places the count, the spectrum's summary and the loss label on the axes of
    the frames up to it; a figure (the notebook's, the report's, the export's) moves them
    to the whole run's axes, as the page does (assets/tempsup.js atCorners)."""
    from tempsup.figures._common import CORNER_INSET
    from tempsup.figures.animation import animation_json
    from tempsup.figures.loss import LABEL_INSET

    run = CAUSAL_RUNS["ssm"]()
    for panel, name, inset, both in (
        ("directions", "count", CORNER_INSET, True),  # the arrows grow: moved
        ("eigen", "spectrum summary", CORNER_INSET, True),  # ρ < 1 throughout: at the corner
        ("loss", "explained", LABEL_INSET, True),  # the curves' range grows: moved
    ):
        layout = figures.panel_layout(panel, run, 0)
        (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]
        drawn = by_name(figures.frame_traces(panel, run, 0, 0), name)
        shown = by_name(figures.panel_figure(panel, run, 0, 0).to_plotly_json()["data"], name)
        assert shown["y"][0] == pytest.approx(y1 - inset * (y1 - y0), rel=1e-3)
        moved = drawn["y"][0] != pytest.approx(shown["y"][0], rel=1e-3)
        assert moved == (panel != "eigen"), panel
        if both:
            assert shown["x"][0] == pytest.approx(x0 + inset * (x1 - x0), rel=1e-3)
        else:
            assert shown["x"] == drawn["x"]
    # the export's frame 0: the count at the corner of the directions panel's axes
    fig = animation_json(run, 0)
    layout = figures.panel_layout("directions", run, 0)
    (x0, x1), (y0, y1) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    (index,) = [i for i, t in enumerate(fig["data"]) if t.get("name") == "count"]
    first = fig["frames"][0]
    moving = dict(zip(first["traces"], first["data"], strict=True))
    count = {**fig["data"][index], **moving.get(index, {})}  # as the frame shows it
    assert count["x"][0] == pytest.approx(x0 + CORNER_INSET * (x1 - x0), rel=1e-3)
    assert count["y"][0] == pytest.approx(y1 - CORNER_INSET * (y1 - y0), rel=1e-3)


def test_the_half_space_boundary_passes_through_its_foot_exactly():
    """The boundary nearest the origin is a vertex of the polygon: drawn with 4 digits, the
    far corners alone would put the boundary off by 0.05 % of their distance."""
    ry, b, R = np.array([0.3, -0.7]), 0.25, 100.0
    poly = half_plane_polygon(R, ry, b)
    foot = -b * ry / (ry @ ry)
    assert any(np.allclose(p, foot, atol=1e-12) for p in poly)
    assert np.all(np.array(poly) @ ry + b <= 1e-9)
