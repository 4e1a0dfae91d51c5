"""The sweep over m as a job (tempsup.bows.sweeps, kind "bows-sweep"): spec, registry, worker.

Fast: the spec's validation, identity and JSON; the kind found by name in a
fresh process (a worker that never imported the lab); the batch cut back into
per-point runs identical to `train_runs`; and one tiny sweep trained end to
end by a real worker process, its frames read while it runs, its result and
every point's own "bows" job read back by another queue handle.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tempsup.bows import analysis
from tempsup.bows.config import BowsConfig
from tempsup.bows.figures import export_sweep_html, sweep_figure
from tempsup.bows.run import TABLE_COLUMNS, BowsRun, train_runs
from tempsup.bows.sweeps import (
    MAX_POINTS,
    SWEEP_FRAME_ARRAYS,
    BowsSweepResult,
    BowsSweepSpec,
    load_point_runs,
    progress_figure,
    stream_sweep,
    sweep_frame,
    sweep_result,
)
from tempsup.errors import TempsupError
from tempsup.jobs import JobQueue
from tempsup.jobs.kinds import get_kind, kind_of
from tempsup.jobs.record import JobState
from tempsup.jobs.worker import WorkerPool
from tempsup.model.config import snapshot_steps
from tests.helpers import follow

BASE = BowsConfig(n_samples=512, epochs=4, snapshot_every=2, seeds=2)  # 8 steps, 5 frames


# ---- the spec ---------------------------------------------------------------------------


def test_spec_identity_and_json():
    spec = BowsSweepSpec(BASE, ms=[6, 2], weight_decays=(6, 0.0))
    assert spec.ms == (2, 6) and spec.weight_decays == (0.0, 6.0)  # sorted, typed
    assert [(c.weight_decay, c.m) for c in spec.configs] == [(0.0, 2), (0.0, 6), (6.0, 2), (6.0, 6)]
    assert spec.steps == BASE.steps == 8 and spec.n_snapshots == 5
    assert spec.work == pytest.approx(sum(c.work for c in spec.configs))
    assert spec.point_keys == [c.key for c in spec.configs]
    assert BowsSweepSpec.from_json(spec.to_json()) == spec
    # the key hashes the points: order and the base's own m / weight decay do not matter
    assert BowsSweepSpec(BASE.replace(m=3, weight_decay=1.0), (2, 6), (0, 6)).key == spec.key
    assert BowsSweepSpec(BASE, (2, 6), (0, 1)).key != spec.key
    single = BowsSweepSpec(BASE, (BASE.m,))
    assert single.weight_decays == (BASE.weight_decay,)
    assert single.key != BASE.key  # a kind tag: never the key of the point's own run
    assert kind_of(spec).name == "bows-sweep" and kind_of(BASE).name == "bows"
    assert get_kind("bows-sweep").frame_names == SWEEP_FRAME_ARRAYS


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"ms": ()}, "ms expected a non-empty list of numbers"),
        ({"ms": "2, 6"}, "ms expected a non-empty list of numbers"),
        ({"ms": (2, 2)}, "ms expected distinct values"),
        ({"ms": (2, 2.5)}, "ms expected integers, got 2.5"),
        ({"ms": (2, True)}, "ms expected integers, got True"),
        ({"ms": (2, float("nan"))}, "ms expected integers, got nan"),
        ({"weight_decays": (1.0, float("inf"))}, "weight_decays expected numbers, got inf"),
        ({"weight_decays": (1, 1.0)}, "weight_decays expected distinct values"),
        ({"ms": (2, 13)}, r"a point is invalid: m: expected an integer in \[1, 12\]"),
        ({"weight_decays": (-1,)}, r"a point is invalid: weight_decay: expected a number"),
        (
            {"ms": tuple(range(1, 12)), "weight_decays": (0, 1, 2, 3)},
            f"expected at most {MAX_POINTS} points .* got 11 × 4 = 44",
        ),
        # every point alone is allowed, the batch of them is not
        ({"base": BASE.replace(batch=65536, seeds=16), "ms": (6, 12)}, "bows sweep too large"),
        (
            {"base": BASE.replace(epochs=100_000, n_samples=2560, seeds=16), "ms": (6, 8)},
            "bows sweep too long: 2 points need 2.75e\\+12",
        ),
        ({"base": BASE.to_dict()}, "base expected a BowsConfig, got dict"),
    ],
)
def test_spec_refusals_name_the_problem(changes, message):
    fields = {"base": BASE, "ms": (2, 6), "weight_decays": (1.0,), **changes}
    with pytest.raises(TempsupError, match=message):
        BowsSweepSpec(**fields)


def test_spec_from_json_is_strict():
    for text, message in [
        ("[1, 2]", "expected a mapping, got list"),
        ('{"base": {}, "points": []}', "expected fields base, ms"),
        ("{not json", "expected JSON"),
        ('{"base": {"m": 99}, "ms": [2]}', "m: expected an integer"),
    ]:
        with pytest.raises(TempsupError, match=message):
            BowsSweepSpec.from_json(text)


def test_a_fresh_process_finds_the_kind_by_name_and_by_spec():
    """A worker (or web process) that imported only the job kinds."""
    code = (
        "import sys\n"
        "from tempsup.jobs.kinds import get_kind, kind_of\n"
        "from tempsup.bows.sweeps import BowsSweepSpec\n"
        "from tempsup.bows.config import BowsConfig\n"
        "assert 'torch' not in sys.modules\n"
        "spec = BowsSweepSpec(BowsConfig(), (2, 6))\n"
        "assert kind_of(spec).name == 'bows-sweep'\n"
        "assert get_kind('bows').name == 'bows'\n"
        "assert 'torch' not in sys.modules\n"
        "print('ok')\n"
    )
    for first in ("get_kind('bows-sweep')", "kind_of(BowsSweepSpec(BowsConfig(), (2,)))"):
        out = subprocess.run(
            [sys.executable, "-c", code.replace("assert kind_of", f"{first}\nassert kind_of", 1)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


# ---- the batch, in this process ---------------------------------------------------------


def test_stream_frames_cut_back_into_the_runs_of_train_runs():
    spec = BowsSweepSpec(BASE, (2, 6), (0.0, 6.0))
    kept = list(stream_sweep(spec))
    published = [sweep_frame(spec, f) for f in kept]
    assert [int(f["step"]) for f in published] == snapshot_steps(spec.steps, BASE.snapshot_every)
    for f in published:
        assert sorted(f) == sorted(SWEEP_FRAME_ARRAYS)
        assert all(f[n].shape == (4,) for n in SWEEP_FRAME_ARRAYS[1:])
    result = sweep_result(spec, kept, published)
    expected = train_runs(spec.configs)  # the same batch, the existing way
    assert len(result.runs) == 4
    for got, want in zip(result.runs, expected, strict=True):
        assert got.config == want.config and got.arrays["W"].shape[2] == want.config.m
        for name, array in want.arrays.items():
            if array.dtype.kind == "f":
                np.testing.assert_allclose(got.arrays[name], array, rtol=1e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(got.arrays[name], array, err_msg=name)
    # the last published frame is the table: best seed, its loss and the claims' numbers
    last = published[-1]
    for i, (row, run) in enumerate(zip(result.rows, result.runs, strict=True)):
        assert set(TABLE_COLUMNS) - {"file"} <= set(row) and row["key"] == run.config.key
        assert row["seed"] == last["best_seed"][i] == run.best
        for name in ("loss", "pca_overlap", "antipodal_fraction", "paired_fraction"):
            np.testing.assert_allclose(row[name], last[name][i], rtol=1e-5, err_msg=name)
        np.testing.assert_allclose(  # the sweep's shortcut equals the analysis measure
            last["pca_overlap"][i],
            analysis.pca_overlap(run.weights()["W"], run["cov"]),
            rtol=1e-5,
        )
    # the stored result round-trips; damaged bytes are refused with a clear message
    back = BowsSweepResult.from_bytes(result.to_bytes())
    assert back.spec == spec and back.keys == spec.point_keys and back.rows == result.rows
    assert back.n_frames == len(kept) and back.runs is None
    for a, b in zip(back.frames(), published, strict=True):
        for name in SWEEP_FRAME_ARRAYS:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    with pytest.raises(TempsupError, match="expected a tempsup bows sweep result"):
        BowsSweepResult.from_bytes(b"\x00garbage")
    fig = progress_figure(spec, last)
    assert len(fig.data) == 3 * len(spec.weight_decays)  # 3 measures × each weight decay


# ---- a real worker process --------------------------------------------------------------


def test_sweep_job_streams_summaries_and_stores_every_point(tmp_path, monkeypatch):
    queue = JobQueue(tmp_path / "jobs")
    spec = BowsSweepSpec(BASE.replace(epochs=40, snapshot_every=20), (2, 6), (1.0,))
    status = queue.submit(spec, client="teacher")
    assert (status.kind, status.key, status.total) == ("bows-sweep", spec.key, spec.steps)
    assert queue.spec(spec.key) == spec

    monkeypatch.setenv("TEMPSUP_WORKER_LOGLEVEL", "WARNING")
    with WorkerPool(queue.copy(), n=1, threads=1):
        frames, status, _ = follow(queue, spec.key)  # the lab page polling with a cursor
    assert [int(f["step"]) for f in frames] == snapshot_steps(spec.steps, 20)
    assert all(f["paired_fraction"].shape == (2,) for f in frames)

    other = JobQueue(tmp_path / "jobs")  # another process's handle reads it back
    result = other.result(spec.key)
    assert isinstance(result, BowsSweepResult) and result.keys == spec.point_keys
    assert [(r["m"], r["weight_decay"]) for r in result.rows] == [(2, 1.0), (6, 1.0)]
    for key, config in zip(result.keys, spec.configs, strict=True):  # each point is a bows job
        point = other.status(key)
        assert point.state == JobState.DONE and point.kind == "bows"
        run = other.result(key)
        assert isinstance(run, BowsRun) and run.config == config
        assert run.n_frames == config.n_snapshots
        assert other.submit(config).state == JobState.DONE  # the lab opens it at once
    runs = load_point_runs(other, result)
    assert [r.config for r in runs] == spec.configs
    assert len(sweep_figure(runs).data) > 0 and "tempsup-bows-sweep" in export_sweep_html(runs)
    assert other.submit(spec).state == JobState.DONE and other.queued() == []


def test_the_lab_page_builds_the_sweep_from_its_controls():
    from app.pages.lab import build_sweep

    spec = build_sweep("circular", 2, "relu", 1.0, 10.0, 3, 2, None, "2, 6", "0, 1")
    assert spec.ms == (2, 6) and spec.weight_decays == (0.0, 1.0)
    assert spec.base.epochs == 3 and spec.base.seeds == 2
    with pytest.raises(TempsupError, match="bottlenecks m"):
        build_sweep("circular", 2, "relu", 1.0, 10.0, 3, 2, None, "2, x", "1")
    with pytest.raises(TempsupError, match="m: expected an integer"):
        build_sweep("circular", 2, "relu", 1.0, 10.0, 3, 2, None, "2, 40", "1")
