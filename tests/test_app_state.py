"""The app's pure pieces: config ↔ URL, control values ↔ config, the view store."""

from __future__ import annotations

import json

import pytest
from dash import dcc, html

from app import ids
from app.controls import FIELD_CONTROLS, config_from_controls, control_values
from app.player import controls, opening_frame
from app.urlstate import config_from_query, query_from_config
from app.view import choose_seed, empty_view, full_view, seed_options, unpacked
from tempsup.analysis.sweeps import train_runs
from tempsup.errors import TempsupError
from tempsup.model.config import DEFAULTS, RunConfig
from tests.browser import ROOT, comparable


@pytest.mark.parametrize(
    "config",
    [
        DEFAULTS,
        RunConfig(model="rnn", k=4, sparsity=0.97, hidden=3, tied=False, bias=True),
        RunConfig(model="linear", inputs=5, importance=0.5, curriculum=0.5, input_dist="constant"),
        RunConfig(warm_start="0123456789abcdef"),
    ],
)
def test_query_round_trip(config: RunConfig) -> None:
    query = query_from_config(config)
    back, errors = config_from_query(query)
    assert errors == []
    assert back == config and back.key == config.key


def test_query_always_states_the_main_fields() -> None:
    query = query_from_config(DEFAULTS)
    for name in ("model", "k", "sparsity", "hidden", "inputs"):
        assert f"{name}=" in query


@pytest.mark.parametrize(
    ("search", "field"),
    [
        ("?k=abc", "k"),
        ("?sparsity=1.5", "sparsity"),
        ("?sparsity=nan", "sparsity"),
        ("?k=50", "k"),
        ("?model=../../etc/passwd", "model"),
        ("?warm_start=/etc/passwd", "warm_start"),
        ("?tied=maybe", "tied"),
        ("?hidden=" + "9" * 100, "hidden"),
    ],
)
def test_bad_query_values_fall_back_with_a_message(search: str, field: str) -> None:
    config, errors = config_from_query(search)
    assert isinstance(config, RunConfig)
    assert getattr(config, field) == getattr(DEFAULTS, field)
    assert any(field in e for e in errors), errors


def test_unknown_and_view_parameters_are_ignored() -> None:
    config, errors = config_from_query("?model=linear&frame=3&utm=x")
    assert config.model == "linear" and errors == []


def test_valid_fields_survive_an_invalid_combination() -> None:
    # k = 25 is fine for T = 30 but not with the default T = 20: the rest is kept
    config, errors = config_from_query("?model=rnn&k=25")
    assert config.model == "rnn" and config.k == DEFAULTS.k
    assert errors


def test_controls_round_trip() -> None:
    config = RunConfig(model="linear", k=5, sparsity=0.5, tied=False, curriculum=0.3)
    *values, options = control_values(config)
    assert config_from_controls(values, options) == config


def test_controls_refuse_empty_and_bad_values() -> None:
    *values, options = control_values(DEFAULTS)
    values[1] = None  # k cleared in its box
    with pytest.raises(TempsupError, match="k"):
        config_from_controls(values, options)
    values[1] = 3.0  # number inputs may send floats for integers
    assert config_from_controls(values, options).k == 3


@pytest.fixture(scope="module")
def small_run():
    config = RunConfig(model="ssm", steps=60, snapshot_every=20, batch=64, seeds=3)
    (run,) = train_runs([config])
    return run


@pytest.mark.parametrize(
    ("field", "typed", "value"),
    [("k", "5", 5), ("hidden", 8.0, 8), ("sparsity", " 0.5 ", 0.5), ("tied", "off", False),
     ("bias", "yes", True), ("curriculum", "none", None), ("curriculum", "", None),
     ("warm_start", "off", None), ("model", "rnn", "rnn"), ("lr", 0.5, 0.5)],
)  # fmt: skip
def test_a_box_a_link_and_compare_read_a_value_alike(field: str, typed, value) -> None:
    """Strings (a link, a pasted Compare link) and numbers (a box) become a config's values
    through one function, `RunConfig.field_value`."""
    from app.urlstate import parse_value

    assert RunConfig.field_value(field, typed) == value
    assert type(RunConfig.field_value(field, typed)) is type(value)
    if isinstance(typed, str):  # a link
        assert parse_value(field, typed) == value
        config, errors = config_from_query(f"?{field}={typed.strip()}")
        assert errors == [] and getattr(config, field) == value
    values = control_values(DEFAULTS)  # a box (or a control) of the explorer
    names = [f for _, f in FIELD_CONTROLS]
    if field in names:
        values[names.index(field)] = typed
        assert getattr(config_from_controls(values[:-1], values[-1]), field) == value


@pytest.mark.parametrize(("field", "typed"), [("k", "three"), ("tied", "maybe"), ("k", "3.5")])
def test_a_value_no_field_could_hold_names_the_field(field: str, typed: str) -> None:
    with pytest.raises(TempsupError, match=rf"^{field}: expected .*, got '{typed}'"):
        RunConfig.field_value(field, typed)
    _, errors = config_from_query(f"?{field}={typed}")
    assert errors and errors[0].startswith(f"{field}: expected")


def test_full_view_is_json_with_one_entry_per_frame(small_run) -> None:
    view = full_view(small_run, small_run.best)
    json.dumps(view)  # the store must be plain JSON
    assert view["n"] == small_run.n_frames == len(view["steps"])
    for panel, frames in view["frames"].items():
        assert len(frames) == view["n"], panel
        assert isinstance(view["base"][panel], str)  # a finished run's base is JSON text
        assert len(unpacked(view["base"][panel])) >= len(view["moving"][panel])
        assert all(len(unpacked(f)) == len(view["moving"][panel]) for f in frames)


def test_seed_choice_and_options(small_run) -> None:
    assert choose_seed(small_run, None) == small_run.best
    assert choose_seed(small_run, 99) == small_run.best
    assert choose_seed(small_run, 1) == 1
    options = seed_options(small_run)
    assert [o["value"] for o in options] == [0, 1, 2]
    label = options[small_run.best]["label"]  # says why it is best
    assert f"seed {small_run.best} — best ({small_run.best_seed.reason}" in label
    assert sum("— best" in o["label"] for o in options) == 1


def test_empty_view_shape() -> None:
    from tempsup.bows.figures import lab
    from tempsup.figures import rnn

    view = empty_view("nothing yet")
    assert view["n"] == 0 and view["message"] == "nothing yet"
    assert tuple(view["frames"]) == rnn.PANEL_SET.names  # the registry's panels, no frames
    assert tuple(empty_view("press Train", lab.PANEL_SET)["frames"]) == lab.PANEL_SET.names


def test_the_web_process_never_imports_torch() -> None:
    """Torch belongs to the workers: the app and everything it reads stay without it."""
    import subprocess
    import sys

    code = "import sys, app; assert 'torch' not in sys.modules, 'app imported torch'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_status_lines_are_per_frame_and_match_the_eigen_panel(small_run) -> None:
    from tempsup import figures

    seed = small_run.best
    view = full_view(small_run, seed)
    assert view["summaries"] == figures.status_lines(small_run, seed)
    assert len(view["summaries"]) == small_run.n_frames
    for f in range(small_run.n_frames):
        line = view["summaries"][f]
        assert line.startswith(f"seed {seed}: loss {small_run['loss'][f, seed]:.4g} ")
        rho = line.split("ρ(W_h) = ")[1].split(" ")[0]
        corner = figures.frame_traces("eigen", small_run, seed, f)[-1]["text"][0]
        assert f"ρ(W<sub>h</sub>) = {rho} " in corner
    assert view["summaries"][0] != view["summaries"][-1]


def test_streamed_chunks_add_up_to_the_full_view(small_run) -> None:
    """What poll appends frame by frame equals what full_view builds at the end."""
    from app.view import frame_data, status_lines
    from tempsup.io.run import Run

    seed = small_run.best
    full = full_view(small_run, seed)
    frames, lines = {p: [] for p in full["frames"]}, []
    for n in range(1, small_run.n_frames + 1):  # one frame per poll
        part = Run(small_run.config, {k: v[:n] for k, v in small_run.arrays.items()})
        for panel, traces in frame_data(part, seed, 0, n - 1).items():
            frames[panel] += traces
        lines += status_lines(part, seed, 0, n - 1)
    assert lines == full["summaries"]
    base = {panel: unpacked(traces) for panel, traces in full["base"].items()}
    template = full.get("template") or {}  # its frames' reference, as the page merges them
    for panel, per_frame in frames.items():
        for f, traces in enumerate(per_frame):
            for j, idx in enumerate(full["moving"][panel]):
                under = (template.get(panel) or [{}] * (j + 1))[j]
                merged = {**base[panel][idx], **under, **unpacked(full["frames"][panel][f])[j]}
                assert comparable(panel, traces[j]) == comparable(panel, merged), (panel, f)


def test_a_cancelled_run_has_a_view_of_its_own(small_run) -> None:
    from tempsup.io.run import Run

    part = Run(small_run.config, {k: v[:2] for k, v in small_run.arrays.items()})
    assert full_view(part, 0)["n"] == 2 and full_view(small_run, 0)["n"] == small_run.n_frames


def test_view_from_query() -> None:
    from app.urlstate import view_from_query

    config = RunConfig(seeds=4, steps=100, snapshot_every=10)  # 11 frames
    request, errors = view_from_query("?model=ssm&view_seed=3&frame=11", config)
    assert request == {"key": config.key, "seed": 3, "frame": 10} and errors == []
    assert view_from_query("?model=ssm", config) == (None, [])
    request, errors = view_from_query("?view_seed=4&frame=12", config)
    assert request is None
    assert errors == [
        "view_seed: expected an integer in [0, 3], got '4'",
        "frame: expected an integer in [1, 11], got '12'",
    ]


@pytest.mark.parametrize(
    ("href", "kept"),
    [
        ("https://tempsup.example.org/?k=3", True),
        ("http://10.0.0.5:8050/?k=3", True),
        ("http://127.0.0.1:8050/?k=3", False),
        ("http://localhost:8050/?k=3", False),
        ("http://[::1]:8050/", False),
        ("http://0.0.0.0:8050/", False),
        ("javascript:alert(1)", False),
        (None, False),
    ],
)
def test_only_a_link_others_can_open_goes_into_an_export(href, kept) -> None:
    from app.urlstate import public_link

    assert public_link(href) == (href if kept else None)


def test_a_refused_control_names_what_is_kept() -> None:
    from app.controls import refused

    *values, _ = control_values(DEFAULTS)
    values[3] = 5000  # hidden
    with pytest.raises(TempsupError) as exc:
        RunConfig(hidden=5000)
    text = refused(exc.value, values, DEFAULTS)
    assert text == f"Not applied: {exc.value} (kept hidden = 2)"


# ---- captions and the directions panel's projection (issue 14, item 9) -------------------


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_the_directions_caption_says_what_w_s_is_for_each_model(model: str) -> None:
    from app.panels import directions_explanation

    text = directions_explanation(RunConfig(model=model)).why
    if model == "rnn":
        assert "rectified impulse response w_0 = W_x, w_s = W_h ReLU(w_{s−1})" in text
        assert "w_s = W_h^s W_x" not in text and "arrives alone" in text
    else:
        assert "w_s = W_h^s W_x" in text and "impulse response" not in text
    if model == "linear":  # a linear readout has no free half-space
        assert "no free half-space" in text and "invisible" not in text
    else:  # "invisible" only for a lone input, and the caption says when it fails
        assert "invisible to the readout if it arrives alone" in text
        assert "composition interference" in text
    assert "drawn as a projection" not in text  # N_h = 2 is drawn as it is


@pytest.mark.parametrize("tied", [True, False])
def test_the_directions_caption_names_the_projection_axes(tied: bool) -> None:
    from app.panels import directions_explanation

    text = directions_explanation(RunConfig(model="ssm", hidden=6, tied=tied)).why
    assert "N_h = 6 is drawn as a projection: x is along w_y" in text
    assert "the same in every frame" in text
    if tied:
        assert "w_y = w_k" in text and "spread most at the last frame" in text
    else:
        assert "last frame's w_k" in text
    assert "bias" not in text
    assert "+ b ≤ 0" in directions_explanation(DEFAULTS.replace(bias=True)).why


def test_the_caption_follows_the_config_store() -> None:
    from dash import no_update

    from app.controls import config_store
    from app.panels import directions_explanation, update_captions

    config = RunConfig(model="rnn", hidden=5)
    store = update_captions(config_store(config, autostart=False))
    assert store["key"] == config.key
    assert store["captions"]["directions"] == directions_explanation(config).to_dict()
    assert update_captions({"config": {"model": "nope"}}) is no_update
    assert update_captions(None) is no_update


def _tied_frames(n_frames: int = 4, n: int = 6, n_h: int = 5, k: int = 2, seed: int = 0):
    """Directions (F, n, N_h) that change from frame to frame, with the tied readout
    w_y = w_k fixed along h_1 (as the canonical gauge of a linear recurrence draws it)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n_frames, n, n_h))
    w[:, k] = 0.0
    w[:, k, 0] = 1.5
    return w, w[:, k].copy(), k


def test_the_tied_projection_keeps_its_second_axis_in_every_frame() -> None:
    import numpy as np

    from tempsup.figures.directions import _coords, _plane_basis, second_axis

    w, w_y, k = _tied_frames()
    fixed = second_axis(w[-1], w_y[-1], k, tied=True)
    bases = np.stack([_plane_basis(w_y[f], w[f], k, fixed) for f in range(len(w))])
    np.testing.assert_allclose(bases, np.broadcast_to(bases[-1], bases.shape), atol=1e-12)
    # the second axis is the others' widest spread orthogonal to w_y at the last frame
    perp = np.delete(w[-1], k, axis=0)
    perp[:, 0] = 0.0
    top = np.linalg.svd(perp)[2][0]
    assert abs(abs(bases[-1, 1] @ top) - 1) < 1e-9
    assert (perp @ bases[-1, 1])[np.abs(perp @ bases[-1, 1]).argmax()] > 0  # signed
    pts, ry = _coords(w, w_y, k, tied=True)
    # x along w_y: ‖w_y‖·x is a_s = w_yᵀw_s exactly, in every frame
    a = np.einsum("fh,fnh->fn", w_y, w)
    np.testing.assert_allclose(pts[..., 0] * np.linalg.norm(w_y, axis=-1)[:, None], a)
    np.testing.assert_allclose(ry[:, 1], 0.0, atol=1e-12)


def test_the_untied_projection_is_the_last_frames_span_of_w_y_and_w_k() -> None:
    import numpy as np

    from tempsup.figures.directions import _coords, second_axis

    w, w_y, k = _tied_frames(seed=1)
    w[:, k] = np.random.default_rng(3).normal(size=w[:, k].shape)  # untied: w_k ≠ w_y
    v = second_axis(w[-1], w_y[-1], k, tied=False)
    e1 = w_y[-1] / np.linalg.norm(w_y[-1])
    np.testing.assert_allclose(v, w[-1, k] - (w[-1, k] @ e1) * e1)
    pts, _ = _coords(w, w_y, k, tied=False)
    e2 = v / np.linalg.norm(v)
    np.testing.assert_allclose(pts[0, :, 1], w[0] @ e2, atol=1e-12)  # frame 0, the same axis


def test_the_projection_title_names_both_axes() -> None:
    from tempsup.figures.directions import SECOND_AXIS, _projection_note

    assert "w<sub>y</sub> = w<sub>k</sub> (tied)" in _projection_note(5, True)
    assert "span(w<sub>y</sub>, w<sub>k</sub>)" in _projection_note(5, False)
    assert "widest spread" in SECOND_AXIS[True] and "w<sub>k</sub>" in SECOND_AXIS[False]
    assert all("last frame" in _projection_note(5, t) for t in (True, False))


# ---- the correlations lab (issue 14, item 12) ---------------------------------------------


def _nodes(component) -> list:
    """A Dash component tree in pre-order: every component and every string."""
    if isinstance(component, str):
        return [component]
    out = [component]
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None:
            out += _nodes(child)
    return out


def _texts(component) -> list[str]:
    """Every string and every link target inside a Dash component tree."""
    return [n if isinstance(n, str) else getattr(n, "href", None) or "" for n in _nodes(component)]


def test_the_lab_cites_its_own_paper_and_defines_the_legend_letters() -> None:
    from app.pages.lab import PAPER_URL, layout
    from tempsup.bows.figures.sweep import MEASURE_NOTES, MEASURES

    texts = " ".join(_texts(layout()))
    assert PAPER_URL == "https://arxiv.org/abs/2603.09972" and PAPER_URL in texts
    assert "Prieto, Stevinson, Barsbey et al." in texts
    for (_, label, _), note in zip(MEASURES, MEASURE_NOTES, strict=True):
        letter = label.split()[0]  # "(a)", "(b)", "(c)"
        assert note.startswith(letter + " ") and note in texts


def test_the_feature_angle_is_drawn_on_a_cyclic_scale_plotly_js_knows() -> None:
    from plotly.colors import cyclical

    from tempsup.bows.figures._common import CYCLIC

    # spelled out (plotly.js has no named cyclic scale), and the ends agree: 0° = 360°
    assert isinstance(CYCLIC, list) and [c for _, c in CYCLIC] == list(cyclical.Phase)
    assert CYCLIC[0][0] == 0 and CYCLIC[-1][0] == 1 and CYCLIC[0][1] == CYCLIC[-1][1]


def test_no_page_imports_another_page() -> None:
    """Pages arrange shared parts (app/*.py); a helper two pages need lives in one of those,
    never in a page the other imports."""
    import ast

    pages = sorted((ROOT / "app" / "pages").glob("*.py"))
    names = {f"app.pages.{p.stem}" for p in pages if p.stem != "__init__"}
    for path in pages:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {
            f"app.pages.{a.name}"
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module == "app.pages"
            for a in n.names
        }
        assert not (imported & names) - {f"app.pages.{path.stem}"}, path.name


def _text_of(component) -> str:
    """Every string in a Dash component tree, in order."""
    if isinstance(component, str):
        return component
    children = getattr(component, "children", None)
    if children is None:
        return ""
    if not isinstance(children, (list, tuple)):
        children = [children]
    return "".join(_text_of(c) for c in children if c is not None)


def test_a_gallery_card_shows_each_claims_numbers_and_criterion_unfolded() -> None:
    from dash import html

    from app.pages.gallery import claim_rows
    from tempsup.paper.preset import ClaimResult

    result = ClaimResult(
        claim="W_h is a spiral sink",
        measured={"spectral_radius": 0.8123456, "angles": {"k_arg_deg": [91.2, 88.0]}},
        successes=3,
        seeds=8,
        held=True,
        criterion="a complex pair with |λ| < 1",
    )
    rows = claim_rows((result,))
    text = _text_of(rows)
    assert "(3 of 8 seeds)" in text
    assert "measured: spectral_radius = 0.8123; angles k_arg_deg = [91.2, 88]" in text
    assert "criterion: a complex pair with |λ| < 1" in text

    def folded(component) -> bool:  # nothing is hidden in a <details>
        if isinstance(component, html.Details):
            return True
        children = getattr(component, "children", None)
        children = children if isinstance(children, (list, tuple)) else [children]
        return any(folded(c) for c in children if c is not None and not isinstance(c, str))

    assert not folded(rows)


def test_a_gallery_thumbnail_moves_corner_notes_out_of_the_plot(small_run) -> None:
    """At card size a note inside the plot is cut off: it becomes the caption, in plain text."""
    from tempsup import figures
    from tempsup.figures.thumbnail import plain, thumbnail

    inside = [t["text"][0] for t in figures.frame_traces("directions", small_run)
              if t.get("mode") == "text"]  # fmt: skip
    assert inside  # the SSM's count of interference-free directions
    fig, notes = thumbnail(small_run)
    assert not [t for t in fig["data"] if t.get("mode") == "text"]
    assert notes == tuple(plain(t) for t in inside)
    assert all("<" not in note for note in notes)
    assert plain("a<br>b w<sub>y</sub>ᵀh <b>c</b>") == "a b w_yᵀh c"


def test_a_large_heatmap_thumbnail_shows_colours_not_a_number_per_cell() -> None:
    from tempsup.figures.thumbnail import THUMB_CELL_TEXT, thumbnail

    def heatmap(inputs: int) -> dict:
        config = RunConfig(model="ssm", inputs=inputs, steps=20, snapshot_every=20, batch=16,
                           seeds=1)  # fmt: skip
        (run,) = train_runs([config])
        fig, _ = thumbnail(run)
        (trace,) = [t for t in fig["data"] if t["type"] == "heatmap"]
        return trace

    assert heatmap(THUMB_CELL_TEXT).get("texttemplate")  # small: the values are readable
    assert not heatmap(THUMB_CELL_TEXT + 1).get("texttemplate")


def test_a_page_polls_slowly_while_its_job_waits_behind_others(tmp_path) -> None:
    """A waiting job's page polls every WAITING_POLL_MS (its place in line is all that
    changes); the job next in line and a running one poll at POLL_MS while few jobs are
    active and few pages poll, and slower (up to MAX_STREAM_POLL_MS) as more jobs stream
    or more pages poll at once."""
    from app.jobfollow import FAST_PAGES
    from app.pages.explorer import (
        FAST_STREAMS,
        MAX_STREAM_POLL_MS,
        POLL_MS,
        WAITING_POLL_MS,
        active_jobs,
        poll_interval,
    )
    from tempsup.jobs import JobQueue

    queue = JobQueue(tmp_path / "jobs")
    configs = [RunConfig(steps=40, batch=32, seeds=1, hidden=h) for h in (2, 3, 4)]
    statuses = [queue.submit(c, client=f"page {i}") for i, c in enumerate(configs)]
    assert [s.position for s in statuses] == [1, 2, 3]
    assert active_jobs(queue) == 3
    assert [poll_interval(queue.status(c.key), active_jobs(queue)) for c in configs] == [
        POLL_MS, WAITING_POLL_MS, WAITING_POLL_MS,
    ]  # fmt: skip
    assert WAITING_POLL_MS > POLL_MS
    claim = queue.claim()  # the first starts; the second is next in line now
    assert claim is not None and claim.key == configs[0].key
    assert active_jobs(queue) == 3
    assert [poll_interval(queue.status(c.key), active_jobs(queue)) for c in configs] == [
        POLL_MS, POLL_MS, WAITING_POLL_MS,
    ]  # fmt: skip
    running = queue.status(configs[0].key)
    periods = [poll_interval(running, n) for n in (1, FAST_STREAMS, 2 * FAST_STREAMS, 1000)]
    assert periods == [POLL_MS, POLL_MS, 2 * POLL_MS, MAX_STREAM_POLL_MS]
    # and as more pages poll the web process (app.audience), whatever the jobs
    by_pages = [poll_interval(running, 1, p) for p in (0, 1, FAST_PAGES, 2 * FAST_PAGES, 1e4)]
    assert by_pages == [POLL_MS, POLL_MS, POLL_MS, 2 * POLL_MS, MAX_STREAM_POLL_MS]
    assert poll_interval(running, 2 * FAST_STREAMS, FAST_PAGES) == 2 * POLL_MS  # the slower
    waiting = queue.status(configs[2].key)
    assert poll_interval(waiting, 1, 1e4) == WAITING_POLL_MS
    queue.close()


def test_every_menu_shows_a_word_before_any_callback_runs() -> None:
    """A menu's button is named by what it shows: a chosen option or a placeholder.
    A page is checked (axe) as soon as it is drawn, before its callbacks answer,
    so the layout itself must never leave a menu blank."""
    from app.pages import ordered

    menus = [
        (page.path, node)
        for page in ordered()
        for node in _nodes(page.layout())
        if isinstance(node, dcc.Dropdown)
    ]
    assert len(menus) >= 3
    for path, menu in menus:
        shown = {o["value"] if isinstance(o, dict) else o for o in menu.options or []}
        placeholder = getattr(menu, "placeholder", None)
        assert placeholder or menu.value in shown, f"{path}: menu {menu.id} starts blank"


def test_a_page_with_its_run_inside_opens_on_the_frame_it_shows(small_run) -> None:
    """The scrubber starts where `follow` (assets/tempsup.js) would put it, so a shared
    link's panels are drawn once, at that frame, and not first at frame 1."""
    view = full_view(small_run, small_run.best)
    last = view["n"] - 1
    assert opening_frame(view) == last
    assert opening_frame(view, {"key": view["key"], "seed": None, "frame": 2}) == 2
    assert opening_frame(view, {"key": view["key"], "seed": 1, "frame": 10**6}) == last
    assert opening_frame(view, {"key": "another run", "seed": None, "frame": 2}) == last
    assert opening_frame(view, {"key": view["key"], "seed": 1, "frame": None}) == last
    assert opening_frame(empty_view("training…")) == 0
    for request, frame in ((None, last), ({"key": view["key"], "frame": 1}, 1)):
        slider = _scrubber(controls(ids.EXPLORER, view, request))
        assert (slider.value, slider.max) == (frame, last)
    slider = _scrubber(controls(ids.EXPLORER))
    assert (slider.value, slider.max) == (0, 0)


def _scrubber(children: list) -> dcc.Slider:
    (slider,) = [n for n in _nodes(html.Div(children)) if isinstance(n, dcc.Slider)]
    return slider
