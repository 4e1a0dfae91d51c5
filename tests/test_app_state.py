"""The app's pure pieces: config ↔ URL, control values ↔ config, the view store."""

from __future__ import annotations

import json

import pytest

from app.controls import config_from_controls, control_values
from app.urlstate import config_from_query, query_from_config
from app.view import choose_seed, empty_view, full_view, seed_options
from tempsup.config import DEFAULTS, RunConfig
from tempsup.errors import TempsupError
from tempsup.sweep import train_runs
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


def test_full_view_is_json_with_one_entry_per_frame(small_run) -> None:
    view = full_view(small_run, small_run.best)
    json.dumps(view)  # the store must be plain JSON
    assert view["n"] == small_run.n_frames == len(view["steps"])
    for panel, frames in view["frames"].items():
        assert len(frames) == view["n"], panel
        assert len(view["base"][panel]) >= len(view["moving"][panel])
        assert all(len(f) == len(view["moving"][panel]) for f in frames)


def test_seed_choice_and_options(small_run) -> None:
    assert choose_seed(small_run, None) == small_run.best
    assert choose_seed(small_run, 99) == small_run.best
    assert choose_seed(small_run, 1) == 1
    options = seed_options(small_run)
    assert [o["value"] for o in options] == [0, 1, 2]
    assert "(best)" in options[small_run.best]["label"]


def test_empty_view_shape() -> None:
    view = empty_view("nothing yet")
    assert view["n"] == 0 and view["message"] == "nothing yet"


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
    from tempsup.run import Run

    seed = small_run.best
    full = full_view(small_run, seed)
    frames, lines = {p: [] for p in full["frames"]}, []
    for n in range(1, small_run.n_frames + 1):  # one frame per poll
        part = Run(small_run.config, {k: v[:n] for k, v in small_run.arrays.items()})
        for panel, traces in frame_data(part, seed, 0, n - 1).items():
            frames[panel] += traces
        lines += status_lines(part, seed, 0, n - 1)
    assert lines == full["summaries"]
    base = full["base"]
    for panel, per_frame in frames.items():
        for f, traces in enumerate(per_frame):
            for j, idx in enumerate(full["moving"][panel]):
                merged = {**base[panel][idx], **full["frames"][panel][f][j]}
                assert comparable(panel, traces[j]) == comparable(panel, merged), (panel, f)


def test_a_cancelled_run_has_a_view_of_its_own(small_run) -> None:
    from tempsup.run import Run

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
