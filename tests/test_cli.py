"""The `tempsup` command line, run as a user runs it: in a subprocess.

Each call starts a Python with torch (about a second), so settings are tiny.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tempsup.analysis.sweeps import TABLE_COLUMNS
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tests.helpers import frame_shapes, run_python

ROOT = Path(__file__).resolve().parent.parent
CONSOLE_SCRIPT = Path(sys.executable).parent / "tempsup"
TINY = ["--steps", "4", "--snapshot-every", "2", "--batch", "8", "--seeds", "2", "--seq-len", "10"]


def tempsup(*args: str, cwd: Path, script: bool = False) -> subprocess.CompletedProcess:
    cmd = [str(CONSOLE_SCRIPT)] if script else [sys.executable, "-m", "tempsup.cli"]
    env = {**os.environ, "TEMPSUP_THREADS": "1"}
    return subprocess.run(
        [*cmd, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


def assert_run_file(path: Path, config: RunConfig) -> Run:
    with np.load(path, allow_pickle=False) as npz:
        F, M = config.n_snapshots, config.seeds
        n_h, n_x = config.hidden, config.inputs
        shapes = {k: npz[k].shape for k in npz.files}
        scalars = {"best": (), "best_seed": (), "config": (), "derived_version": ()}
        assert shapes == {**frame_shapes(F, M, n_h, n_x), "success": (M,), **scalars}
        assert RunConfig.from_json(str(npz["config"])) == config
    return Run.load(path)


# ---- train ------------------------------------------------------------------------------


def test_train_writes_a_run_file_and_prints_one_line(tmp_path: Path) -> None:
    result = tempsup(
        "train",
        "--model",
        "linear",
        "--k",
        "2",
        "--sparsity",
        "0.5",
        "--hidden",
        "3",
        "--inputs",
        "2",
        *TINY,
        "--out",
        "out/run.npz",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    config = RunConfig(model="linear", k=2, sparsity=0.5, hidden=3, inputs=2, steps=4,
                       snapshot_every=2, batch=8, seeds=2, seq_len=10)  # fmt: skip
    run = assert_run_file(tmp_path / "out" / "run.npz", config)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    line = lines[0]
    assert line.startswith("linear RNN: best loss ")
    assert f"{run.summary()['loss']:.4g}" in line
    assert "/2 seeds succeeded" in line
    assert "kθ = " in line and "ρ(W_h) = " in line and "‖w_0‖ = " in line
    assert line.endswith("out/run.npz")
    assert "Traceback" not in result.stderr


JSON_CONFIG = RunConfig(
    steps=4, snapshot_every=2, batch=8, seeds=2, seq_len=10, tied=False, bias=True
)


@pytest.fixture(scope="module")
def json_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """One `train --json` run (through the console script when installed), shared below."""
    cwd = tmp_path_factory.mktemp("json_run")
    result = tempsup(
        "train",
        *TINY,
        "--json",
        "--quiet",
        "--free-readout",
        "--bias",
        cwd=cwd,
        script=CONSOLE_SCRIPT.exists(),
    )
    return cwd, result


def test_train_json_and_default_file_name(json_run) -> None:
    cwd, result = json_run
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # --quiet: no progress bar
    summary = json.loads(result.stdout)
    for key in (
        "loss",
        "successes",
        "seeds",
        "swept_angle_deg",
        "spectral_radius",
        "w0_norm",
        "key",
        "seed",
        "file",
    ):
        assert key in summary, key
    assert summary["key"] == JSON_CONFIG.key
    assert summary["file"] == f"{JSON_CONFIG.key}.npz"  # default name: the config's key
    run = assert_run_file(cwd / summary["file"], JSON_CONFIG)
    assert summary["loss"] == pytest.approx(float(run.final_loss.min()))
    assert summary["seeds"] == 2 and 0 <= summary["successes"] <= 2


def test_console_script_is_installed() -> None:
    if not CONSOLE_SCRIPT.exists():
        message = "console script not installed (scripts/setup does: pip install -e .)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    result = subprocess.run(
        [str(CONSOLE_SCRIPT), "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and "train" in result.stdout and "sweep" in result.stdout


def test_warm_start(json_run, tmp_path: Path) -> None:
    cwd, first = json_run
    source = cwd / json.loads(first.stdout)["file"]
    result = tempsup(
        "train",
        *TINY,
        "--quiet",
        "--free-readout",
        "--bias",
        "--warm-start",
        str(source),
        "--out",
        "b.npz",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    a, b = Run.load(source), Run.load(tmp_path / "b.npz")
    # every seed of b starts from a's best final weights (seed 0 exactly)
    for name in ("W_x", "W_h", "W_y", "b_y"):
        np.testing.assert_allclose(b[name][0, 0], a.weights()[name], rtol=1e-6, atol=1e-7)


def test_warm_start_from_an_incompatible_run(json_run, tmp_path: Path) -> None:
    """A run file of another hidden size cannot start this run: a clear error, not a crash."""
    cwd, first = json_run
    source = cwd / json.loads(first.stdout)["file"]
    result = tempsup(
        "train", *TINY, "--quiet", "--hidden", "3", "--warm-start", str(source), cwd=tmp_path
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-2000:]
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


# ---- sweep ------------------------------------------------------------------------------


def test_sweep_writes_table_and_one_run_file_per_point(tmp_path: Path) -> None:
    result = tempsup(
        "sweep",
        "--model",
        "ssm",
        "--sparsity",
        "0.3,0.9",
        *TINY,
        "--quiet",
        "--out-dir",
        "sw",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    table = tmp_path / "sw" / "sweep.csv"
    with table.open(newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == TABLE_COLUMNS
        rows = list(reader)
    assert [float(r["sparsity"]) for r in rows] == [0.3, 0.9]
    assert {r["model"] for r in rows} == {"ssm"} and {r["k"] for r in rows} == {"3"}
    files = sorted(p.name for p in (tmp_path / "sw").glob("*.npz"))
    assert files == sorted(r["file"] for r in rows) and len(files) == 2
    for row in rows:
        config = RunConfig(
            model="ssm",
            sparsity=float(row["sparsity"]),
            steps=4,
            snapshot_every=2,
            batch=8,
            seeds=2,
            seq_len=10,
        )
        assert row["key"] == config.key and row["file"] == f"{config.key}.npz"
        run = assert_run_file(tmp_path / "sw" / row["file"], config)
        # the row is the best seed's: chosen on the expected loss (`Run.best_seed`)
        assert float(row["loss"]) == pytest.approx(float(run.final_loss[run.best]), rel=1e-5)
        assert float(row["expected_loss"]) == pytest.approx(run.best_seed.value, rel=1e-5)
        assert int(row["seeds"]) == 2
        for col in ("swept_angle_deg", "spectral_radius", "w0_norm", "expected_loss"):
            float(row[col])
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 4 and lines[-1].endswith("sweep.csv")  # 2 points, the gauge, table
    assert "kθ=" in lines[0] and "ρ=" in lines[0] and "minimum-norm gauge" in lines[2]


def test_sweep_over_k_with_a_short_sequence(tmp_path: Path) -> None:
    """The swept k values are the ones validated, not the default k = 3 (> seq_len here)."""
    result = tempsup(
        "sweep",
        "--seq-len",
        "3",
        "--k",
        "0,1",
        "--sparsity",
        "0.5",
        "--steps",
        "2",
        "--snapshot-every",
        "1",
        "--batch",
        "4",
        "--seeds",
        "1",
        "--quiet",
        "--json",
        "--out-dir",
        "sw",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["rows"]
    assert [r["k"] for r in rows] == [0, 1]


# ---- bad arguments: exit 2, one line, no traceback -------------------------------------------


BAD_ARGS = {
    "k>=T": (["train", "--k", "20", "--seq-len", "20"], "k"),
    "batch x": (["train", "--batch", "x"], "batch"),
    "model transformer": (["train", "--model", "transformer"], "model"),
    "missing warm start": (["train", *TINY, "--warm-start", "nope.npz"], "nope.npz"),
    "negative steps": (["train", "--steps", "-5"], "steps"),
    "NaN sparsity": (["train", "--sparsity", "nan"], "sparsity"),
    "sweep NaN sparsity": (["sweep", "--sparsity", "0.5,nan"], "sparsity"),
}


@pytest.mark.parametrize(("args", "word"), list(BAD_ARGS.values()), ids=list(BAD_ARGS))
def test_bad_arguments_exit_2_with_one_line(tmp_path: Path, args: list[str], word: str) -> None:
    result = tempsup(*args, "--quiet", cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "error" in lines[0] and word in lines[0]
    assert not list(tmp_path.iterdir())  # nothing written


def test_help_lists_every_config_flag(tmp_path: Path) -> None:
    result = tempsup("train", "--help", cwd=tmp_path)
    assert result.returncode == 0
    for name in RunConfig.__dataclass_fields__:
        assert "--" + name.replace("_", "-") in result.stdout, name


# ---- inspect and export: read a run file, train nothing --------------------------------------


def spiral_run(model: str = "ssm", transform: bool = False) -> Run:
    """A 3-frame, 3-seed run of hand-built weights (tied readout, k = 3, N_h = 2) through
    `tempsup.io.run.frame`, as the trainer stores it. `transform`: every frame and seed first
    goes through its own random admissible change of basis (same function, tie intact):
    a stretch orthogonal to w_k, a rotation and (half the time) a reflection for the linear
    recurrence; positive scalings of the units w_k leaves at 0 and a swap for the ReLU one."""
    from tempsup.io.run import frame
    from tempsup.model.snapshot import Snapshot
    from tempsup.theory import gauge, geometry

    cfg = RunConfig(model=model, k=3, seq_len=10, seeds=3, steps=40, snapshot_every=20)
    base = np.random.default_rng(1)
    W_x0 = np.abs(base.normal(size=(3, 2, 1)))
    W_h0 = 0.8 * base.normal(size=(3, 2, 2))
    rng = np.random.default_rng(99)
    frames = []
    for f in range(3):
        W_x, W_h = W_x0 * (1 + 0.2 * f), W_h0.copy()
        W_k = geometry.feature_directions(W_x, W_h, 4, cfg.relu_hidden)[:, 3]
        W_y = W_k.copy()
        if transform:
            for s in range(3):
                if cfg.relu_hidden:
                    d = np.exp(rng.normal(size=2))
                    d[np.abs(W_k[s, :, 0]) > 0] = 1.0
                    G = np.eye(2)[rng.permutation(2)] @ np.diag(d)
                else:
                    u = W_k[s, :, 0] / np.linalg.norm(W_k[s])
                    perp = np.array([-u[1], u[0]])
                    stretch = np.outer(u, u) + np.exp(rng.normal()) * np.outer(perp, perp)
                    Q, _ = np.linalg.qr(rng.normal(size=(2, 2)))
                    G = Q @ stretch
                assert gauge.is_admissible(G, W_k[s], cfg.relu_hidden, True)
                W_x[s], W_h[s], W_y[s] = gauge.transform(G, W_x[s], W_h[s], W_k[s])
        loss = np.array([0.3, 0.1, 0.2]) / (1 + f)
        frames.append(frame(cfg, Snapshot(20 * f, W_x, W_h, W_y, np.zeros((3, 1)), loss)))
    return Run.from_frames(cfg, frames)


# Wall-clock durations a run records about its own making (`BestSeed.seconds`: what choosing
# the best seed took): they differ between any two runs, so no change of basis keeps them.
TIMINGS = frozenset({"seconds"})


def assert_same(a, b, path: str = "") -> None:
    """Equal structure; numbers within 1e-3 (relative to their size when above 1); the
    values of TIMINGS keys only present on both sides."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a.keys() - TIMINGS:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        assert abs(a - b) <= 1e-3 * max(1.0, abs(a)), (path, a, b)
    else:
        assert a == b, (path, a, b)


REQUIRED = (
    "seed", "frame", "step", "loss", "expected_loss", "terms", "a", "eigenvalues",
    "spectral_radius", "swept_angle_deg", "w0_norm", "gauge",
)  # fmt: skip


@pytest.mark.parametrize("model", ["ssm", "rnn"])
def test_inspect_is_the_same_after_any_admissible_change_of_basis(
    tmp_path: Path, model: str
) -> None:
    spiral_run(model).save(tmp_path / "run.npz")
    spiral_run(model, transform=True).save(tmp_path / "moved.npz")
    raw = Run.load(tmp_path / "moved.npz")
    w0 = np.linalg.norm(Run.load(tmp_path / "run.npz")["W_x"][-1, :, :, 0], axis=-1)
    assert not np.allclose(np.linalg.norm(raw["W_x"][-1, :, :, 0], axis=-1), w0, rtol=1e-2)
    for extra in ([], ["--seed", "2", "--frame", "1"], ["--seed", "1", "--frame", "-2"]):
        out = []
        for name in ("run.npz", "moved.npz"):
            result = tempsup("inspect", name, "--json", *extra, cwd=tmp_path)
            assert result.returncode == 0, result.stderr
            out.append(json.loads(result.stdout))
        a, b = out
        assert set(REQUIRED) <= set(a)
        assert set(a["terms"]) == {"task", "mean_correction", "projection", "composition"}
        assert len(a["a"]) == 10 and len(a["eigenvalues"]) == 2
        assert a["gauge"] == "minimum-norm" and "w0_norm" in a["gauge_dependent"]
        assert "a" in a["gauge_free"] and "eigenvalues" in a["gauge_free"]
        assert_same(a, b)
    assert a["seed"] == 1 and a["frame"] == 2 and a["step"] == 20  # frames count from 1


def test_inspect_prints_lines_and_labels_the_gauge(tmp_path: Path) -> None:
    run = spiral_run("ssm")
    run.save(tmp_path / "run.npz")
    result = tempsup("inspect", "run.npz", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert f"seed {run.best} of 3 (best" in text and "frame 3 of 3 (step 40)" in text
    assert "gauge-free" in text and "minimum-norm gauge" in text and "kθ = " in text
    summary = run.summary()
    assert f"ρ(W_h) = {summary['spectral_radius']:.4g}" in text
    assert f"‖w_0‖ = {summary['w0_norm']:.4g}" in text  # the same canonical numbers as train


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["--seed", "3"], "seed: expected an integer in [0, 2] or best, got '3'"),
        (["--seed", "worst"], "seed: expected an integer in [0, 2]"),
        (["--frame", "4"], "frame: expected an integer in 1 … 3 (or -1 … -3 from the last)"),
        (["--frame", "0"], "frame: expected an integer in 1 … 3"),
        (["--frame", "-4"], "frame: expected an integer in 1 … 3"),
    ],
)
def test_inspect_out_of_range_exits_2_with_one_line(
    tmp_path: Path, args: list[str], word: str
) -> None:
    spiral_run("ssm").save(tmp_path / "run.npz")
    result = tempsup("inspect", "run.npz", *args, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == "" and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and word in lines[0], result.stderr


def test_inspect_a_file_that_is_not_a_run(tmp_path: Path) -> None:
    (tmp_path / "junk.npz").write_bytes(b"not an archive")
    for args in (["inspect", "junk.npz"], ["inspect", "missing.npz"]):
        result = tempsup(*args, cwd=tmp_path)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


def test_export_writes_the_standalone_animation(tmp_path: Path) -> None:
    run = spiral_run("ssm")
    run.save(tmp_path / "run.npz")
    result = tempsup("export", "run.npz", "--html", "out/page.html", "--seed", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "out/page.html" in result.stdout
    page = (tmp_path / "out" / "page.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") or "<html" in page[:500]
    assert "Plotly.newPlot" in page and 'id="tempsup-animation"' in page
    assert "<script src=" not in page  # plotly.js inlined: works offline
    assert "seed 2 of 3" in page and run.config.key in page
    bad = tempsup("export", "run.npz", "--html", "x.html", "--seed", "7", cwd=tmp_path)
    assert bad.returncode == 2 and "seed: expected an integer in [0, 2]" in bad.stderr
    assert not (tmp_path / "x.html").exists()
    missing = tempsup("export", "run.npz", cwd=tmp_path)
    assert missing.returncode == 2 and "--html" in missing.stderr


def test_help_and_the_config_load_no_torch() -> None:
    """`tempsup --help` answers without torch's import (over a second of a command's start):
    the CLI, the config and the tasks' shapes are torch-free (issue 44)."""
    code = (
        "import sys, contextlib, io\n"
        "import tempsup.cli, tempsup.model.config, tempsup.model.task_shapes\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    tempsup.cli.main(['--help'])\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    run_python(code)
