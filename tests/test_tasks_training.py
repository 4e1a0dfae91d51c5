"""Issue 43 end to end: the tasks and persistence in the config, training, the run's
derived numbers, the summary, the CLI and the API (tempsup.model.tasks' wiring).

Runs are tiny (200 steps, 2 seeds, batch 128) and trained once per module.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tempsup
from tempsup import cli
from tempsup.analysis.sweeps import train_runs
from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.io.tasks_frame import CUED_LINEAR_WARNING, MONTE_CARLO
from tempsup.model import tasks
from tempsup.model.config import RunConfig, importance_weights, query_string
from tempsup.theory import geometry, tasks_mc

# Keys computed before the task fields existed: configs that leave them at their
# defaults must keep them (caches, share links and shipped runs depend on it).
KEYS_BEFORE = {
    "dc5425a9b552301d": {},
    "aa2d5841712d20ad": {"model": "linear", "k": 5, "objective": "expected"},
    "e1e3daaaf5d0e864": {"model": "rnn", "inputs": 3, "seed": 4, "curriculum": 0.5},
}
TASKS = {
    "recall": {"persistence": 0.5},
    "multi": {"task": "multi", "ks": (2, 5)},
    "sum": {"task": "sum", "window": 3, "persistence": 0.5},
    "cued": {"task": "cued", "ks": (1, 3)},
}
MODELS = ("linear", "ssm", "rnn", "gru")
SMALL = {"steps": 200, "snapshot_every": 100, "seeds": 2, "batch": 128}


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, str], Run]:
    """One run of every task and model, trained once."""
    out = {}
    for task, fields in TASKS.items():
        for model in MODELS:
            (out[task, model],) = train_runs([RunConfig(model=model, **SMALL, **fields)])
    return out


# ---- the config ----------------------------------------------------------------------


@pytest.mark.parametrize("key", KEYS_BEFORE)
def test_keys_of_configs_without_tasks_hold(key: str) -> None:
    fields = KEYS_BEFORE[key]
    assert RunConfig(**fields).key == key
    explicit = {"task": "recall", "ks": None, "window": 1, "persistence": 0.0}
    assert RunConfig(**fields, **explicit).key == key
    if "objective" not in fields:  # gradient flow on E[L] is for recall at q = 0
        assert RunConfig(**fields, persistence=0.25).key != key


def test_multi_and_cued_derive_k_and_a_free_readout() -> None:
    cfg = RunConfig(task="multi", ks=[2, 5])
    assert (cfg.k, cfg.ks, cfg.tied, cfg.n_out, cfg.n_in) == (5, (2, 5), False, 2, 1)
    cued = RunConfig(task="cued", ks=(1, 3, 5), inputs=2)
    assert (cued.k, cued.n_in, cued.n_out) == (5, 5, 2)


@pytest.mark.parametrize(
    "fields",
    [
        {"task": "multi", "ks": (2, 5), "inputs": 2, "persistence": 0.3},
        {"task": "cued", "ks": (1, 3)},
        {"task": "sum", "window": 4, "k": 2},
    ],
)
def test_json_round_trip_keeps_config_and_key(fields: dict) -> None:
    cfg = RunConfig(**fields)
    back = RunConfig.from_json(cfg.to_json())
    assert back == cfg and back.key == cfg.key
    assert json.loads(cfg.to_json())["ks"] == (list(cfg.ks) if cfg.ks else None)


def test_field_value_reads_delays_as_typed() -> None:
    assert RunConfig.field_value("ks", "2,5") == (2, 5)
    assert RunConfig.field_value("ks", "[1, 3, 5]") == (1, 3, 5)
    assert RunConfig.field_value("ks", [2, 5.0]) == (2, 5)
    assert RunConfig.field_value("ks", "none") is None
    assert RunConfig.field_value("persistence", "0.5") == 0.5
    assert RunConfig.field_value("window", "3") == 3
    with pytest.raises(TempsupError, match="ks: expected delays"):
        RunConfig.field_value("ks", "2,x")
    cfg = RunConfig(task="multi", ks=(2, 5))
    assert "ks=2%2C5" in query_string(cfg)


BAD = [
    ({"task": "multi"}, "ks: task 'multi' needs its delays"),
    ({"task": "recall", "ks": (2,)}, "ks: task 'recall' has one delay"),
    ({"window": 3}, "window: only task 'sum' has a window"),
    ({"task": "sum", "window": 0}, "window: expected an integer >= 1"),
    ({"task": "sum", "k": 15, "window": 6}, "window: k \\+ window − 1 = 20"),
    ({"task": "multi", "ks": (2, 2)}, "ks: expected distinct delays"),
    ({"task": "multi", "ks": (2, 30)}, "ks: every delay must be smaller than seq_len"),
    ({"persistence": 1.0}, "persistence: expected a number in \\[0, 1\\)"),
    ({"persistence": -0.1}, "persistence"),
    ({"task": "echo"}, "task: expected one of recall, multi, sum, cued"),
    ({"model": "linear", "objective": "expected", "persistence": 0.5}, "objective: 'expected'"),
]


@pytest.mark.parametrize(("fields", "message"), BAD)
def test_validation_names_the_field(fields: dict, message: str) -> None:
    with pytest.raises(TempsupError, match=message):
        RunConfig(**fields)


# ---- training and the derived numbers -------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("model", MODELS)
def test_every_task_trains_and_reports_its_expected_loss(runs, task: str, model: str) -> None:
    run = runs[task, model]
    cfg = run.config
    assert run["W_y"].shape[-1] == cfg.n_out and run["W_x"].shape[-1] == cfg.n_in
    loss = run["loss"]
    assert np.isfinite(loss).all() and loss[-1].mean() < loss[0].mean()
    s = run.summary()
    assert s["expected_loss"] is not None and s["expected_loss"] > 0
    assert (s["task"], s["ks"], s["window"], s["persistence"]) == (
        cfg.task, list(cfg.delays), cfg.window, cfg.persistence,
    )  # fmt: skip
    back = Run.from_bytes(run.to_bytes())
    assert back.config == cfg and back.summary()["expected_loss"] == s["expected_loss"]


def test_relu_readouts_and_cued_say_monte_carlo(runs) -> None:
    for (task, model), run in runs.items():
        s = run.summary()
        exact = model == "linear" and task != "cued"
        assert s["expected_loss_method"] == ("closed form" if exact else MONTE_CARLO)
        assert (s["expected_loss_se"] > 0) is not exact
        assert (s["temporal_term"] is not None) is exact
    assert CUED_LINEAR_WARNING in runs["cued", "linear"].summary()["warnings"]
    assert CUED_LINEAR_WARNING not in runs["cued", "rnn"].summary()["warnings"]


@pytest.mark.parametrize("task", ["recall", "multi", "sum"])
def test_linear_closed_form_equals_monte_carlo_of_the_same_weights(runs, task: str) -> None:
    run = runs[task, "linear"]
    cfg = run.config.replace(persistence=0.5) if task == "multi" else run.config
    w = {n: run[n][-1].astype(float) for n in ("W_x", "W_h", "W_y", "b_y")}
    A = geometry.projections(w["W_y"], geometry.feature_directions(w["W_x"], w["W_h"], 20, False))
    imp = tasks.output_importance(cfg.task, cfg.delays, importance_weights(cfg))
    mean, se = tasks_mc.monte_carlo_loss(
        A, cfg.task, cfg.delays, cfg.p, cfg.input_dist, cfg.seq_len, window=cfg.window,
        q=cfg.persistence, importance=imp, readout="linear", sequences=16384,
    )  # fmt: skip
    from tempsup.io.run import derived

    exact = derived(cfg, cfg.steps, w["W_x"], w["W_h"], w["W_y"], w["b_y"])["expected_loss"]
    assert cfg.persistence == 0.5
    assert np.all(np.abs(exact - mean) < 4 * se), (exact, mean, se)


def test_recall_at_q0_is_todays_run_bit_for_bit() -> None:
    base = {"model": "ssm", "steps": 30, "snapshot_every": 10, "seeds": 2, "batch": 64}
    (today,) = train_runs([RunConfig(**base)])
    (explicit,) = train_runs([RunConfig(**base, task="recall", persistence=0.0, window=1)])
    assert set(today.arrays) == set(explicit.arrays)
    assert "temporal_term" not in today.arrays
    for name, value in today.arrays.items():
        np.testing.assert_array_equal(value, explicit.arrays[name], err_msg=name)
    assert today.summary()["expected_loss_method"].startswith("exact by convolution")


def test_persistent_inputs_at_q0_are_todays_draw() -> None:
    import torch

    from tempsup.model.data import sample_inputs

    a, b = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    p = torch.tensor([0.1, 0.1])
    x = sample_inputs(a, p, 16, 10, 2, "uniform")
    y = tasks.persistent_inputs(b, p, 16, 10, 2, "uniform", 0.0)
    assert torch.equal(x, y) and torch.equal(a.get_state(), b.get_state())


# ---- the CLI and the API ----------------------------------------------------------------

TINY = ["--steps", "20", "--snapshot-every", "10", "--batch", "32", "--seeds", "2", "--quiet"]


@pytest.mark.parametrize(
    ("flags", "expect"),
    [
        (["--task", "multi", "--k", "2,5", "--model", "linear"], {"task": "multi", "ks": (2, 5)}),
        (["--task", "cued", "--delays", "1,3,5", "--model", "rnn"], {"ks": (1, 3, 5)}),
        (["--task", "sum", "--window", "3"], {"task": "sum", "window": 3}),
        (["--persistence", "0.5", "--k", "4"], {"persistence": 0.5, "k": 4}),
    ],
)
def test_cli_trains_every_task(tmp_path: Path, capsys, flags: list, expect: dict) -> None:
    out = tmp_path / "run.npz"
    assert cli.main(["train", *flags, *TINY, "--json", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    run = Run.load(out)
    assert all(getattr(run.config, name) == value for name, value in expect.items())
    assert summary["expected_loss"] is not None and summary["task"] == run.config.task


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--window", "3"], "window: only task 'sum' has a window"),
        (["--k", "2,5"], "--k: task 'recall' has one delay"),
        (["--task", "multi"], "ks: task 'multi' needs its delays"),
        (["--task", "cued", "--k", "1,3", "--delays", "1,2"], "name different delays"),
        (["--persistence", "1"], "persistence: expected a number in [0, 1)"),
        (["--delays", "2,5"], "ks: task 'recall' has one delay"),
    ],
)
def test_cli_refuses_bad_combinations_in_one_line(capsys, flags: list, message: str) -> None:
    assert cli.main(["train", *flags, *TINY]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_api_trains_a_task() -> None:
    cfg = tempsup.RunConfig(model="ssm", task="sum", window=2, persistence=0.3, **SMALL)
    run = tempsup.train(cfg, progress=False)
    s = run.summary()
    assert s["expected_loss"] is not None and s["expected_loss_method"] == MONTE_CARLO
    run2 = tempsup.train(model="linear", task="multi", ks=(1, 4), progress=False, **SMALL)
    assert run2.summary()["expected_loss_method"] == "closed form"
