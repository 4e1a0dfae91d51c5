"""The public Python API (`import tempsup`): its names, and that each verb is the CLI's.

A number read in a notebook must be the number the CLI and the app report: the
summary is `tempsup inspect --json` of the saved file, the figures are the
panels the app draws, the export is `tempsup export`'s page.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tempsup
from tempsup.errors import TempsupError
from tempsup.figures import PANEL_SET
from tests.helpers import run_python

ROOT = Path(__file__).resolve().parent.parent
TINY = {"steps": 60, "seeds": 2, "snapshot_every": 20, "batch": 64}


@pytest.fixture(scope="module")
def run():
    return tempsup.train(tempsup.RunConfig(model="ssm", sparsity=0.8, **TINY), progress=False)


def test_public_names_resolve_and_say_what_they_are() -> None:
    """Every name of `__all__` loads, is documented, and `dir()` lists just those."""
    assert sorted(dir(tempsup)) == sorted(tempsup.__all__)
    for name in tempsup.__all__:
        value = getattr(tempsup, name)
        if name != "__version__":
            assert (value.__doc__ or "").strip(), f"tempsup.{name} has no docstring"
    for name in tempsup.bows.__all__:
        assert (getattr(tempsup.bows, name).__doc__ or "").strip()
    with pytest.raises(AttributeError, match="no attribute 'trainer_loop'"):
        _ = tempsup.trainer_loop


def test_import_is_light_and_names_survive_submodule_imports() -> None:
    """`import tempsup` loads no torch; importing the training module does not replace the
    public train() by the module of a similar name."""
    code = (
        "import sys, tempsup; assert 'torch' not in sys.modules, 'torch imported';"
        "import tempsup.training.trainer, tempsup.analysis.sweeps;"
        "import tempsup.bows.trainer, tempsup.bows.sweeps;"
        "assert callable(tempsup.train) and callable(tempsup.sweep), tempsup.train;"
        "assert callable(tempsup.bows.train) and callable(tempsup.bows.sweep)"
    )
    run_python(code)


def test_summary_is_what_inspect_prints(run, tmp_path: Path) -> None:
    path = run.save(tmp_path / "r.npz")
    for seed, frame in ((None, -1), (1, 2)):
        args = ["--frame", str(frame)] + ([] if seed is None else ["--seed", str(seed)])
        out = subprocess.run(
            [sys.executable, "-m", "tempsup.cli", "inspect", str(path), "--json", *args],
            capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == json.loads(json.dumps(run.summary(seed, frame)))
    assert tempsup.load(path).summary() == run.summary()


def test_figures_are_the_apps_panels(run) -> None:
    """`figure(panel, seed, frame)` numbers frames from 1 like every surface and draws the
    app's panel at that frame; the animation has one frame per snapshot."""
    assert run.panels == tuple(PANEL_SET.names)
    for panel in run.panels:
        fig = run.figure(panel, seed=1, frame=2)
        want = PANEL_SET.panel_figure(panel, run, 1, 1)
        assert fig.to_plotly_json() == want.to_plotly_json()
    assert len(run.animation().frames) == run.n_frames
    with pytest.raises(TempsupError, match="panel: expected one of directions"):
        run.figure("weights")
    with pytest.raises(TempsupError, match=r"frame: expected an integer in 1 … 4"):
        run.figure("eigen", frame=0)


def test_export_html_is_the_cli_export(run, tmp_path: Path) -> None:
    path = run.save(tmp_path / "r.npz")
    written = run.export_html(tmp_path / "deep" / "api.html")
    cli = [sys.executable, "-m", "tempsup.cli", "export", str(path), "--html"]
    out = subprocess.run([*cli, str(tmp_path / "c.html")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert written.read_text() == (tmp_path / "c.html").read_text()


def test_train_takes_a_config_or_fields_and_refuses_bad_ones() -> None:
    cfg = tempsup.RunConfig(model="linear", **TINY)
    a = tempsup.train(cfg, progress=False, sparsity=0.5)
    assert a.config == cfg.replace(sparsity=0.5)
    warm = tempsup.train(cfg, progress=False, init=a)
    np.testing.assert_allclose(warm["W_h"][0, 0], a.weights()["W_h"], rtol=1e-6, atol=1e-7)
    with pytest.raises(TempsupError, match="hidden"):
        tempsup.train(hidden=0, progress=False)
    with pytest.raises(TempsupError, match="expected a RunConfig"):
        tempsup.train({"model": "ssm"}, progress=False)  # type: ignore[arg-type]


def test_sweep_is_k_major_and_refuses_a_single_number() -> None:
    runs = tempsup.sweep(
        tempsup.RunConfig(model="linear", **TINY), sparsity=[0.2, 0.6], k=[1, 2], progress=False
    )
    assert [(r.config.k, r.config.sparsity) for r in runs] == [
        (1, 0.2),
        (1, 0.6),
        (2, 0.2),
        (2, 0.6),
    ]
    with pytest.raises(TempsupError, match="lists of values"):
        tempsup.sweep(sparsity=0.3, progress=False)  # type: ignore[arg-type]


def test_progress_bar_draws_only_when_asked(capsys) -> None:
    cfg = tempsup.RunConfig(model="linear", **TINY)
    tempsup.train(cfg, progress=False)
    assert capsys.readouterr().err == ""
    tempsup.train(cfg, progress=True)
    err = capsys.readouterr().err
    assert "linear k=3 S=0.9" in err and "60/60" in err


def test_the_lab_through_the_api(tmp_path: Path) -> None:
    """`tempsup.bows` trains, sweeps, loads and draws like `tempsup bows …`; a lab run file
    given to `tempsup.load` says where it belongs."""
    small = {"epochs": 4, "seeds": 2, "n_samples": 512, "batch": 128, "snapshot_every": 4}
    run = tempsup.bows.train(progress=False, m=2, **small)
    path = run.save(tmp_path / "lab.npz")
    assert tempsup.bows.load(path).summary() == run.summary()
    assert set(run.panels) >= {"matrices", "columns", "loss"}
    assert run.figure("loss").data and len(run.animation().frames) == run.n_frames
    runs = tempsup.bows.sweep(run.config, m=[2, 3], progress=False)
    assert [r.config.m for r in runs] == [2, 3]
    with pytest.raises(TempsupError, match="tempsup.bows.load"):
        tempsup.load(path)
