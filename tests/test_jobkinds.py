"""Job kinds (tempsup.jobs.kinds) and the sweep spec, in this process: no worker processes.

The end-to-end sweep job with real workers is in test_jobs.py; here: the
SweepSpec's validation and identity, a kind registered from outside (the way
tempsup.bows registers its own) trained by a Worker, and entries written
before job kinds existed.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import numpy as np
import pytest

from tempsup.analysis.sweeps import MAX_POINTS, SweepResult, SweepSpec
from tempsup.errors import TempsupError
from tempsup.io.run import ARRAYS
from tempsup.jobs import JobQueue, kinds
from tempsup.jobs.kinds import RUN_ARRAYS, JobKind, get_kind, kind_of, register_kind
from tempsup.jobs.limits import Limits
from tempsup.jobs.record import JobState
from tempsup.jobs.store import config_key, status_key
from tempsup.jobs.worker import Worker
from tempsup.model.config import RunConfig

BASE = RunConfig(steps=20, batch=32, seeds=2, snapshot_every=10)


def test_run_arrays_match_the_run_module():
    assert RUN_ARRAYS == ARRAYS


def test_sweep_spec_identity_and_json():
    spec = SweepSpec(BASE, sparsities=[0.9, 0.1, 0.5], ks=(3, 1))
    assert spec.sparsities == (0.1, 0.5, 0.9) and spec.ks == (1, 3)  # sorted
    assert [(c.k, c.sparsity) for c in spec.configs] == [
        (k, s) for k in (1, 3) for s in (0.1, 0.5, 0.9)
    ]
    assert spec.steps == 20 and spec.work == pytest.approx(6 * BASE.work)
    assert SweepSpec.from_json(spec.to_json()) == spec
    # the key hashes the points: order and the base's own sparsity/k do not matter
    same = SweepSpec(BASE.replace(sparsity=0.3, k=2), (0.5, 0.9, 0.1), (1, 3))
    assert same.key == spec.key
    assert SweepSpec(BASE, (0.1, 0.5)).key != spec.key
    single = SweepSpec(BASE, (BASE.sparsity,))
    assert single.ks == (BASE.k,) and single.key != BASE.key  # a kind tag: never a run's key
    assert kind_of(spec).name == "sweep" and kind_of(BASE).name == "run"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"sparsities": ()}, "sparsities expected a non-empty list of numbers"),
        ({"sparsities": "0.5"}, "sparsities expected a non-empty list of numbers"),
        ({"sparsities": (0.5, 0.5)}, "sparsities expected distinct values"),
        ({"sparsities": (0.5, float("nan"))}, "sparsities expected numbers, got nan"),
        ({"sparsities": (0.5, True)}, "sparsities expected numbers, got True"),
        ({"sparsities": (1.5,)}, r"a point is invalid: sparsity: expected a number in \[0, 1\)"),
        ({"ks": (1.5,)}, "ks expected integers, got 1.5"),
        ({"ks": (25,)}, r"a point is invalid: k: expected an integer in \[0, 19\]"),
        (
            {"sparsities": tuple(i / 100 for i in range(21)), "ks": (1, 2)},
            f"expected at most {MAX_POINTS} points .* got 21 × 2 = 42",
        ),
        ({"base": BASE.replace(batch=65536, seeds=64)}, "sweep too large"),
        ({"base": BASE.replace(steps=200_000, batch=1700, hidden=32)}, "sweep too long"),
        ({"base": BASE.to_dict()}, "base expected a RunConfig, got dict"),
    ],
)
def test_sweep_spec_refusals_name_the_problem(changes, message):
    with pytest.raises(TempsupError, match=message):
        SweepSpec(**{"base": BASE, "sparsities": (0.5, 0.9), **changes})


def test_sweep_spec_from_json_is_strict():
    for text, message in [
        ("[1, 2]", "expected a mapping, got list"),
        ('{"base": {}, "points": []}', "expected fields base, sparsities"),
        ("{not json", "expected JSON"),
    ]:
        with pytest.raises(TempsupError, match=message):
            SweepSpec.from_json(text)
    with pytest.raises(TempsupError, match="stored sweep|sweep result"):
        SweepResult.from_bytes(b"garbage")


# ---- a kind registered from outside -------------------------------------------------


@dataclass(frozen=True)
class Counting:
    """A toy spec: count to `steps`, one frame per step."""

    steps: int
    start: float = 0.0

    @property
    def key(self) -> str:
        return f"count-{self.steps}-{self.start}"

    @property
    def work(self) -> float:
        return float(self.steps)

    def to_json(self) -> str:
        return json.dumps({"steps": self.steps, "start": self.start})

    @classmethod
    def from_json(cls, text: str) -> Counting:
        return cls(**json.loads(text))


@dataclass
class Counted:
    spec: Counting
    values: np.ndarray

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, values=self.values, spec=np.asarray(self.spec.to_json()))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> Counted:
        with np.load(io.BytesIO(data)) as npz:
            return cls(Counting.from_json(str(npz["spec"])), npz["values"])


def _count(spec: Counting, init, on_step):
    for step in range(spec.steps + 1):
        if on_step is not None and step:
            on_step(step)
        yield {"step": np.asarray(step), "value": np.asarray(spec.start + step, dtype=float)}


COUNTING = JobKind(
    name="counting",
    spec_type=Counting,
    spec_from_json=Counting.from_json,
    stream=_count,
    result=lambda spec, kept, _: Counted(spec, np.array([f["value"] for f in kept])),
    load=Counted.from_bytes,
    result_key=lambda result: result.spec.key,
    frames_of=lambda result, start: [
        {"step": np.asarray(i), "value": result.values[i]} for i in range(start, len(result.values))
    ],
    n_frames=lambda result: len(result.values),
    frame_names=("step", "value"),
)


@pytest.fixture
def counting():
    """The toy kind, registered for one test only (kind lists in messages stay as they were)."""
    register_kind(COUNTING)
    yield COUNTING
    kinds._KINDS.pop(COUNTING.name, None)


def test_a_registered_kind_shares_the_queue(tmp_path, counting):
    assert get_kind("counting") is COUNTING
    with pytest.raises(TempsupError, match="already the spec of kind 'counting'"):
        register_kind(JobKind(**{**COUNTING.__dict__, "name": "counting2"}))
    with pytest.raises(TempsupError, match="job kind: expected one of run, sweep, .*got 'nope'"):
        get_kind("nope")

    queue = JobQueue(tmp_path, limits=Limits(max_work=100))
    spec = Counting(steps=4, start=10.0)
    status = queue.submit(spec, client="lab")
    assert status.kind == "counting" and status.total == 4 and status.state == JobState.QUEUED
    with pytest.raises(TempsupError, match="job too large"):  # the same limits
        queue.submit(Counting(steps=1000))
    assert Worker(tmp_path).run(once=True) == 1
    status = queue.status(spec.key)
    assert status.state == JobState.DONE and status.n_frames == 5, status
    assert [float(f["value"]) for f in queue.frames(spec.key, 2)] == [12.0, 13.0, 14.0]
    assert list(queue.result(spec.key).values) == [10.0, 11.0, 12.0, 13.0, 14.0]
    assert queue.run(spec.key) is None  # not a run
    assert queue.spec(spec.key) == spec


def test_entries_written_before_job_kinds_are_runs(tmp_path):
    queue = JobQueue(tmp_path)
    config = BASE.replace(seed=5)
    queue.submit(config)
    rec = json.loads(queue.cache.get(status_key(config.key)))
    del rec["kind"]  # an old record and an old config entry (plain RunConfig JSON)
    queue.cache.set(status_key(config.key), json.dumps(rec))
    queue.cache.set(config_key(config.key), config.to_json())
    fresh = JobQueue(tmp_path)
    assert fresh.status(config.key).kind == "run"
    assert fresh.spec(config.key) == config
    assert Worker(tmp_path).run(once=True) == 1
    assert fresh.run(config.key).config == config
