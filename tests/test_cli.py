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

from tempsup.config import RunConfig
from tempsup.run import Run
from tempsup.sweep import TABLE_COLUMNS

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
        assert shapes == {
            "step": (F,),
            "W_x": (F, M, n_h, n_x),
            "W_h": (F, M, n_h, n_h),
            "W_y": (F, M, n_h, n_x),
            "b_y": (F, M, n_x),
            "loss": (F, M),
            "terms": (F, M, 4),
            "success": (M,),
            "best": (),
            "config": (),
        }
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
    config = RunConfig(
        model="linear",
        k=2,
        sparsity=0.5,
        hidden=3,
        inputs=2,
        steps=4,
        snapshot_every=2,
        batch=8,
        seeds=2,
        seq_len=10,
    )
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
        assert float(row["loss"]) == pytest.approx(float(run.final_loss.min()), rel=1e-5)
        assert int(row["seeds"]) == 2
        for col in ("swept_angle_deg", "spectral_radius", "w0_norm", "expected_loss"):
            float(row[col])
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 3 and lines[-1].endswith("sweep.csv")
    assert "kθ=" in lines[0] and "ρ=" in lines[0]


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
    "model gru": (["train", "--model", "gru"], "model"),
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
