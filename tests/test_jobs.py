"""The job queue on both backends, with real worker processes (tempsup.jobs).

Every test that takes a `backend` runs twice: on the embedded diskcache queue
(`JobQueue`, polling `python -m tempsup.jobs.worker` processes) and on Redis +
Celery (`RedisQueue`, `celery -A tempsup.jobs.celery_app worker` processes, a real
`redis-server` on loopback that these tests start). Each test gets its own
cache directory or Redis key prefix, so tests never see each other's jobs.

Configs are tiny (batch 64, 2 seeds, one torch thread). A test that acts on a
running job (a partial read, cancel, kill -9, a stop) holds it at a gate
after its n-th frame (`tests.gate`), so that state is reached by
construction, not caught in time. Waits poll the queue until a condition
holds; the deadline only turns a hang into a failure.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import threading
import time
import types
import uuid
from collections.abc import Callable

import numpy as np
import pytest

from app.jobwords import describe
from tempsup import cli
from tempsup.analysis.sweeps import (
    SWEEP_FRAME_ARRAYS,
    TABLE_COLUMNS,
    SweepResult,
    SweepSpec,
    train_runs,
)
from tempsup.errors import TempsupError
from tempsup.io.run import ARRAYS, Run, frame
from tempsup.jobs import JobQueue, open_queue
from tempsup.jobs import queue as queue_module
from tempsup.jobs.celery_app import drain_hook
from tempsup.jobs.limits import Limits
from tempsup.jobs.queue import BaseQueue
from tempsup.jobs.record import LOW, NORMAL, JobState, JobStatus
from tempsup.jobs.redis import RedisQueue
from tempsup.jobs.store import QUEUE, StoreUnavailable, config_key, run_key, status_key
from tempsup.jobs.worker import Worker, WorkerPool
from tempsup.model.config import RunConfig, snapshot_steps
from tempsup.settings import Settings
from tempsup.training.trainer import train
from tests.gate import GATED
from tests.helpers import DEADLINE, FakeClock, follow, wait_for
from tests.services import RedisServer

TINY = {"steps": 40, "batch": 64, "seeds": 2, "snapshot_every": 10}
# 31 frames: a job a test holds at its gate (tests.gate) has many frames still to come.
LONG = {**TINY, "steps": 2400, "snapshot_every": 80}
# 21 frames, a run of a few seconds: enough to be held inside a batch with frames to come
SHORT = {"steps": 400, "snapshot_every": 20}
LIMITS = {f.name for f in dataclasses.fields(Limits)}
BACKENDS = ("diskcache", "redis")


def tiny(**changes: object) -> RunConfig:
    return RunConfig(**{**TINY, **changes})


def long(**changes: object) -> RunConfig:
    return RunConfig(**{**LONG, **changes})


def state_is(queue: BaseQueue, key: str, *states: JobState) -> Callable[[], JobStatus | None]:
    def probe() -> JobStatus | None:
        status = queue.status(key)
        return status if status is not None and status.state in states else None

    return probe


def stack(frames: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: np.stack([f[name] for f in frames]) for name in ARRAYS}


# ---- fixtures: one queue per test on each backend ---------------------------------


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


def queue_options(**given: object) -> dict[str, object]:
    """Queue options from keywords, the Limits fields among them gathered in one Limits."""
    limits = {k: v for k, v in given.items() if k in LIMITS}
    rest = {k: v for k, v in given.items() if k not in LIMITS}
    return {"limits": Limits(**limits), **rest}


@pytest.fixture
def make_queue(backend, tmp_path, request) -> Callable[..., BaseQueue]:
    """`make_queue(**options)`: a handle on this test's queue (same jobs every call)."""
    if backend == "diskcache":
        return lambda **given: JobQueue(tmp_path / "jobs", **queue_options(**given))
    server = request.getfixturevalue("redis_server")
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    notify = drain_hook(server.url, prefix)
    return lambda **given: RedisQueue(
        server.url, prefix, "WARNING", notify=notify, **queue_options(**given)
    )


@pytest.fixture
def queue(make_queue) -> BaseQueue:
    return make_queue()


@pytest.fixture
def pools(queue, gate):
    """`pools(n)` starts n workers for this test's queue, which stop a job at its gate
    when the test holds it (`gate`); all are stopped after the test."""
    started: list[WorkerPool] = []

    def start(n: int = 1) -> WorkerPool:
        started.append(WorkerPool(queue, n=n, threads=1, imports=GATED))
        return started[-1]

    yield start
    for pool in started:
        pool.stop()


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    """The queue's clock (`time.time` in tempsup.jobs.queue), moved by the test only."""
    fake = FakeClock()
    monkeypatch.setattr(
        queue_module, "time", types.SimpleNamespace(time=fake, monotonic=time.monotonic)
    )
    return fake


@pytest.fixture(scope="module")
def tiny_run() -> Run:
    (run,) = train_runs([tiny(seed=7)])
    return run


# ---- with worker processes ---------------------------------------------------------


def test_frames_stream_while_running_and_identical_configs_train_once(
    queue, make_queue, pools, gate
):
    config = long()
    gate.hold(config.key, after=3)
    pools(2)  # two idle workers compete for the one job
    first = queue.submit(config, client="alice")
    second = queue.submit(RunConfig.from_json(config.to_json()), client="bob")
    assert first.key == second.key == config.key
    assert first.state == JobState.QUEUED and first.position == 1
    assert describe(first) == "queued (1st in line)"
    assert second.state in (JobState.QUEUED, JobState.RUNNING)

    # held after its third frame: a read while it runs gets exactly those
    gate.wait_held(config.key)
    running = queue.status(config.key)
    # the rate reaches the record with the heartbeat (a thread, every PROGRESS_EVERY s),
    # which may come just after the third frame: a busy machine saw no ETA yet
    deadline = time.monotonic() + 10
    while running.eta_s is None and time.monotonic() < deadline:
        time.sleep(0.05)
        running = queue.status(config.key)
    assert running.state == JobState.RUNNING and running.n_frames == 3
    assert describe(running) == f"training: step {running.step}/{config.steps}"
    assert running.eta_s is not None and running.eta_s >= 0
    partial = queue.frames(config.key)
    assert [int(f["step"]) for f in partial] == [0, 80, 160]
    assert queue.frames(config.key, 2)[0]["step"] == 160  # a cursor read
    gate.open(config.key)

    # the app's dcc.Interval: status, then frames from the cursor
    def running_words(status: JobStatus, new: list) -> None:
        if status.state == JobState.RUNNING:
            assert describe(status).startswith("training: step ")

    frames, status, _ = follow(queue, config.key, running_words)
    for a, b in zip(partial, frames, strict=False):  # what streamed is what was kept
        for name in ARRAYS:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert [int(f["step"]) for f in frames] == snapshot_steps(config.steps, config.snapshot_every)
    run = queue.run(config.key)
    assert run is not None and run.n_frames == len(frames) == status.n_frames
    for name, array in stack(frames).items():
        np.testing.assert_array_equal(run.arrays[name], array, err_msg=name)
    assert status.step == status.total == config.steps
    assert status.position is None and status.eta_s is None

    # trained once: one claim by one worker, and a third submit is served from cache
    assert queue.details(config.key)["attempts"] == 1
    again = queue.submit(config, client="carol")
    assert again.state == JobState.DONE and again.n_frames == run.n_frames
    assert queue.queued() == [] and queue.running() == []

    # a fresh handle (another web process, or after a restart) sees the result
    fresh = make_queue()
    assert fresh.status(config.key) == status
    assert fresh.spec(config.key) == config
    np.testing.assert_array_equal(fresh.run(config.key)["W_h"], run["W_h"])
    assert JobStatus.from_dict(status.to_dict()) == status


def test_cancel_queued_and_running_jobs(queue, pools, gate):
    pool = pools(1)
    running, waiting = long(seed=1), long(seed=2, batch=48)  # two batch keys: one at a time
    gate.hold(running.key, after=2)
    queue.submit(running)
    assert queue.submit(waiting).position == 2
    gate.wait_held(running.key)

    cancelled = queue.cancel(waiting.key)
    assert cancelled.state == JobState.CANCELLED and cancelled.position is None
    assert queue.frames(waiting.key) == []

    flagged = queue.cancel(running.key)  # held: the worker sees it at its next frame
    assert flagged.state == JobState.RUNNING and flagged.cancelling, flagged
    assert describe(flagged) == f"cancelling at step {flagged.step}/2400"
    gate.open(running.key)
    status = wait_for("the cancel", state_is(queue, running.key, JobState.CANCELLED))
    assert status.n_frames == 3  # the two held ones, and the one that saw the flag
    assert describe(status) == "cancelled at step 160/2400; press Train to restart"
    kept = queue.frames(running.key)
    assert len(kept) == status.n_frames
    assert [int(f["step"]) for f in kept] == [80 * i for i in range(len(kept))]
    assert queue.run(running.key) is None
    worker_pid = queue.details(running.key)["pid"]
    assert worker_pid in pool.pids

    # the same worker moves on to the next job
    nxt = tiny()
    queue.submit(nxt)
    wait_for("the next job", state_is(queue, nxt.key, JobState.DONE))
    assert queue.details(nxt.key)["pid"] == worker_pid

    # submitting a cancelled config again queues it afresh
    gate.hold(running.key, after=1)
    again = queue.submit(running)
    assert again.state == JobState.QUEUED and again.n_frames == 0
    gate.wait_held(running.key)

    # stopping the pool (an app restart) gives the running job back, first in line
    pool.stop()
    assert queue.status(running.key).state == JobState.QUEUED
    assert queue.queued() == [running.key]
    details = queue.details(running.key)
    assert details["n_frames"] == 0 and details["attempts"] == 2
    assert re.fullmatch(r"worker stopped at step \d+; re-queued", details["message"])
    assert queue.frames(running.key) == []


def test_queued_runs_of_one_batch_key_train_together_and_each_equals_its_run_alone(
    queue, pools, gate
):
    """A classroom's jobs: runs that differ only in seed, k or sparsity, queued while the
    worker is busy, are claimed in one go and trained as one batch; each stored run is
    the run trained alone, and a job cancelled inside the batch ends while the others
    finish. A run of another shape waits for its own turn."""
    pool = pools(1)
    blocker = long(hidden=3)
    gate.hold(blocker.key, after=1)
    queue.submit(blocker)
    gate.wait_held(blocker.key)
    together = [
        tiny(seed=5, **SHORT),
        tiny(seed=6, k=2, **SHORT),
        tiny(seed=7, sparsity=0.8, **SHORT),
    ]
    other = tiny(batch=48)  # another batch key
    for i, cfg in enumerate([*together, other]):
        queue.submit(cfg, client=f"student {i}")
    assert queue.queued() == [*(c.key for c in together), other.key]
    dropped = together[2]
    gate.hold(dropped.key, after=2)  # holds the whole batch after its second frame
    queue.cancel(blocker.key)
    gate.open(blocker.key)
    wait_for("the blocker's end", state_is(queue, blocker.key, JobState.CANCELLED))

    gate.wait_held(dropped.key)
    assert queue.queued() == [other.key]  # the three were claimed at once, the other was not
    started = [queue.details(c.key)["started"] for c in together]
    assert max(started) - min(started) < 1.0  # one claim
    assert {queue.details(c.key)["pid"] for c in together} == set(pool.pids)
    assert all(queue.status(c.key).state == JobState.RUNNING for c in together)
    queue.cancel(dropped.key)
    gate.open(dropped.key)

    wait_for("the other job", state_is(queue, other.key, JobState.DONE))
    status = queue.status(dropped.key)
    assert status.state == JobState.CANCELLED and status.n_frames == 3
    kept = [c for c in together if c is not dropped]
    for cfg in kept:
        (alone,) = train_runs([cfg])  # trained here, in this process, on its own
        stored = queue.run(cfg.key)
        assert stored is not None and stored.n_frames == alone.n_frames == 21
        for name in ("W_x", "W_h", "W_y", "loss"):
            np.testing.assert_allclose(
                stored.arrays[name], alone.arrays[name], rtol=1e-4, atol=1e-6
            )
    assert queue.details(other.key)["started"] >= max(
        queue.details(c.key)["finished"] for c in kept
    )


def test_killed_worker_is_failed_by_recover_and_retried(queue, pools, gate):
    pool = pools(1)
    config = long(seed=3)
    gate.hold(config.key, after=2)
    queue.submit(config, client="alice")
    gate.wait_held(config.key)
    pid = queue.details(config.key)["pid"]
    (process,) = [p for p in pool.processes if p.pid == pid]
    os.kill(pid, signal.SIGKILL)  # kill -9 mid-job
    process.wait(timeout=DEADLINE)
    before = queue.details(config.key)
    assert before["state"] == "running", f"the job ended before the kill: {before}"

    assert queue.recover() == [config.key]  # never stuck "running"
    assert queue.recover() == []
    status = queue.status(config.key)
    assert status.state == JobState.FAILED
    assert describe(status) == f"worker died at step {status.step}; press Train to retry"
    assert len(queue.frames(config.key)) == status.n_frames == 2  # frames so far are kept
    assert queue.details(config.key)["attempts"] == 1  # not silently re-run

    gate.open(config.key)
    assert pool.check() == 1  # a new worker replaces the dead one
    assert pool.start() is pool and pool.check() == 0 and len(pool.pids) == 1
    retried = queue.retry(config.key)
    assert retried.state in (JobState.QUEUED, JobState.RUNNING)
    done = wait_for("the retried job", state_is(queue, config.key, JobState.DONE, JobState.FAILED))
    assert done.state == JobState.DONE, done.message
    assert done.n_frames == config.n_snapshots
    assert queue.details(config.key)["attempts"] == 2
    assert queue.details(config.key)["client"] == "alice"


def test_sweep_job_streams_point_summaries_and_stores_every_point(queue, make_queue, pools, gate):
    pools(1)
    spec = SweepSpec(tiny(steps=300, snapshot_every=10), sparsities=(0.9, 0.5))
    gate.hold(spec.key, after=2)
    status = queue.submit(spec, client="teacher")
    assert (status.kind, status.key, status.total) == ("sweep", spec.key, 300)
    assert queue.spec(spec.key) == spec

    gate.wait_held(spec.key)  # a read while the sweep runs
    partial = queue.frames(spec.key)
    assert queue.status(spec.key).state == JobState.RUNNING
    assert [int(f["step"]) for f in partial] == [0, 10]
    gate.open(spec.key)
    frames, status, _ = follow(queue, spec.key)  # a phase page polling
    for a, b in zip(partial, frames, strict=False):
        for name in SWEEP_FRAME_ARRAYS:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert [int(f["step"]) for f in frames] == snapshot_steps(300, 10)
    for f in frames:
        assert sorted(f) == sorted(SWEEP_FRAME_ARRAYS)
        assert all(f[name].shape == (2,) for name in SWEEP_FRAME_ARRAYS[1:])
        assert np.all((f["successes"] >= 0) & (f["successes"] <= 2))

    result = make_queue().result(spec.key)  # another process reads it
    assert isinstance(result, SweepResult) and queue.run(spec.key) is None
    assert result.keys == spec.point_keys == [c.key for c in spec.configs]
    assert [r["sparsity"] for r in result.rows] == [0.5, 0.9]
    assert all(set(TABLE_COLUMNS) <= set(row) for row in result.rows)
    last = frames[-1]
    for i, row in enumerate(result.rows):  # the last frame is the table
        assert row["key"] == result.keys[i]
        assert row["successes"] == last["successes"][i]
        np.testing.assert_allclose(row["swept_angle_deg"], last["swept_angle_deg"][i], rtol=1e-5)
        np.testing.assert_allclose(row["spectral_radius"], last["spectral_radius"][i], rtol=1e-5)
    # finished frames come from the stored result, the same as streamed
    for a, b in zip(queue.frames(spec.key), frames, strict=True):
        for name in SWEEP_FRAME_ARRAYS:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)

    for key, config in zip(result.keys, spec.configs, strict=True):  # each point is a run job
        point = queue.status(key)
        assert point.state == JobState.DONE and point.kind == "run"
        run = queue.run(key)
        assert run.config == config and run.n_frames == config.n_snapshots
        assert queue.submit(config).state == JobState.DONE  # the explorer opens it at once
    assert queue.details(spec.key)["attempts"] == 1
    assert queue.submit(spec).state == JobState.DONE and queue.queued() == []


# ---- in this process (the worker side driven by hand where needed) ------------------


def test_refusals_name_the_limit(make_queue):
    queue = make_queue(max_queue=3, max_per_client=2, max_work=tiny().work * 10)
    with pytest.raises(TempsupError, match=r"job too large: .*1\.54e\+07.* at most 6\.14e\+06"):
        queue.submit(tiny(steps=1000), client="a")

    a1, a2 = tiny(seed=1), tiny(seed=2)
    assert queue.submit(a1, client="a").position == 1
    assert queue.submit(a2, client="a").position == 2
    with pytest.raises(TempsupError, match="too many active jobs: expected at most 2 .* have 2"):
        queue.submit(tiny(seed=3), client="a")
    assert queue.submit(a1, client="a").position == 1  # dedupe: no new job, no refusal
    assert queue.submit(a1, client="b").key == a1.key

    queue.submit(tiny(seed=4), client="b")
    with pytest.raises(TempsupError, match=r"queue full: 3 jobs are waiting \(at most 3\)"):
        queue.submit(tiny(seed=5), client="c")
    assert queue.queued() == [a1.key, a2.key, tiny(seed=4).key]

    queue.cancel(a1.key)  # frees a place in line and one of a's slots
    assert describe(queue.status(a2.key)) == "queued (1st in line)"
    assert describe(queue.submit(tiny(seed=3), client="a")) == "queued (3rd in line)"

    with pytest.raises(TempsupError, match="expected a RunConfig or SweepSpec.*, got dict"):
        queue.submit(tiny().to_dict())
    with pytest.raises(TempsupError, match="max_queue expected an integer >= 1, got 0"):
        make_queue(max_queue=0)
    with pytest.raises(TempsupError, match="max_rate expected an integer >= 1, got 0"):
        make_queue(max_rate=0)
    with pytest.raises(TempsupError, match="retry: expected the key of a known job"):
        queue.retry("0123456789abcdef")


def test_rate_limit_per_client(make_queue, clock):
    queue = make_queue(max_rate=3, max_per_client=10, rate_window=60.0)
    for seed in range(3):
        queue.submit(tiny(seed=20 + seed), client="eager")
        clock.advance(10.0)  # started at t = 0, 10 and 20
    queue.submit(tiny(seed=20), client="eager")  # a dedupe hit starts no job: not counted
    with pytest.raises(TempsupError, match=r"too many new jobs: expected at most 3 per 60 s per "
                       r"user, you started 3; try again in 30 s"):  # fmt: skip
        queue.submit(tiny(seed=30), client="eager")  # at t = 30
    assert queue.submit(tiny(seed=30), client="other").state == JobState.QUEUED
    clock.advance(29.5)  # t = 59.5: the first start is still inside the window
    with pytest.raises(TempsupError, match="try again in 1 s"):
        queue.submit(tiny(seed=31), client="eager")
    clock.advance(1.0)  # t = 60.5: the window has slid past it
    assert queue.submit(tiny(seed=31), client="eager").state == JobState.QUEUED
    with pytest.raises(TempsupError, match="try again in 10 s"):  # t = 10, 20, 60.5 in the window
        queue.submit(tiny(seed=32), client="eager")


def test_concurrent_submits_are_atomic(make_queue):
    """Many web threads at once: one job per config, limits exact (diskcache's lock,
    Redis's WATCH/MULTI)."""
    queue = make_queue(max_per_client=3, max_queue=50)
    results: list[object] = []
    lock = threading.Lock()

    def submit(config: RunConfig, client: str) -> None:
        handle = queue.copy()  # one handle per thread, like one per web process
        try:
            outcome: object = handle.submit(config, client=client).key
        except TempsupError as exc:
            outcome = exc
        with lock:
            results.append(outcome)

    same = [threading.Thread(target=submit, args=(tiny(seed=40), f"c{i}")) for i in range(12)]
    mine = [threading.Thread(target=submit, args=(tiny(seed=50 + i), "greedy")) for i in range(8)]
    for t in (*same, *mine):
        t.start()
    for t in (*same, *mine):
        t.join()
    keys = [r for r in results if isinstance(r, str)]
    refusals = [r for r in results if isinstance(r, TempsupError)]
    assert keys.count(tiny(seed=40).key) == 12  # identical configs share one job
    assert len(refusals) == 5 and all("too many active jobs" in str(r) for r in refusals)
    assert sorted(queue.queued()) == sorted({*keys})
    assert len(queue.queued()) == 4


def test_dead_worker_on_another_host_is_found_by_its_heartbeat(make_queue, clock):
    queue = make_queue(heartbeat_timeout=30.0)
    config = tiny(seed=60)
    queue.submit(config)
    claim = queue.claim(pid=999_999_999)  # a worker that beats, then vanishes
    assert queue.progress(claim, 5, 100.0)
    rec = queue.details(config.key)
    assert rec["state"] == "running" and queue.running() == [config.key]

    def elsewhere(db):  # claimed by a process on another machine: its pid means nothing here
        text = db.text(status_key(config.key))
        db.set(status_key(config.key), text.replace(f'"host": "{rec["host"]}"', '"host": "w9"'))

    queue.store.atomic(elsewhere)
    clock.advance(29.0)
    assert queue.status(config.key).state == JobState.RUNNING  # heartbeat still fresh
    clock.advance(2.0)  # 31 s since the last beat
    status = queue.status(config.key)  # polling finds it dead: failed, not re-run
    assert status.state == JobState.FAILED and status.message.startswith("worker died at step 5")
    assert queue.put_frame(claim, 0, {}) == "lost"  # a late write of the vanished worker
    assert queue.running() == [] and queue.queued() == []


def test_put_run_is_served_from_cache_after_restart(make_queue, tiny_run):
    run, config = tiny_run, tiny_run.config
    make_queue().put_run(run)

    queue = make_queue(max_work=1.0)  # a fresh process: nothing in memory
    status = queue.submit(config)  # served from cache: no limit applies, nothing queued
    assert status.state == JobState.DONE and status.n_frames == run.n_frames
    assert queue.queued() == []
    assert [int(f["step"]) for f in queue.frames(config.key)] == list(run["step"])
    assert len(queue.frames(config.key, 3)) == run.n_frames - 3
    assert queue.frames(config.key, run.n_frames) == []
    for name, array in stack(queue.frames(config.key)).items():
        np.testing.assert_array_equal(run.arrays[name], array, err_msg=name)
    assert queue.status("no-such-key") is None and queue.frames("no-such-key") == []


def test_damaged_entries_are_missing_not_crashes(make_queue):
    queue = make_queue()
    raw = queue.store.view()  # writes below damage entries on purpose
    config = tiny(seed=8)
    queue.submit(config)
    claim = queue.claim()  # the worker side of the interface, driven by hand
    assert claim.key == config.key and queue.claim() is None
    frames = [frame(config, snap) for snap in train(config)]
    for i, f in enumerate(frames):
        assert queue.put_frame(claim, i, f) == "ok"
    assert len(queue.frames(config.key)) == 5

    raw.set_frame(config.key, 2, b"garbage", 5)  # a damaged frame ends the read
    assert [int(f["step"]) for f in queue.frames(config.key)] == [0, 10]
    assert [int(f["step"]) for f in queue.frames(config.key, 3)] == [30, 40]

    assert queue.finish(claim, Run.from_frames(config, frames))
    assert queue.put_frame(claim, 5, frames[-1]) == "lost"  # a finished job takes no writes
    assert len(queue.frames(config.key)) == 5  # now served from the run

    raw.set(run_key(config.key), b"\x00garbage")  # a damaged result
    fresh = make_queue()
    assert fresh.run(config.key) is None
    status = fresh.status(config.key)
    assert status.state == JobState.FAILED
    assert "stored result is unreadable" in status.message
    assert describe(status).endswith("; press Train to retry")
    assert fresh.submit(config).state == JobState.QUEUED  # recomputed
    Worker(fresh).run(once=True)
    assert fresh.run(config.key).n_frames == 5

    raw.set(config_key(config.key), "not a config")  # a damaged config entry
    assert fresh.spec(config.key) is None
    assert fresh.submit(config).state == JobState.DONE and fresh.spec(config.key) == config

    raw.set(status_key(config.key), "{not json")  # a damaged status record
    assert fresh.status(config.key) is None and fresh.frames(config.key) == []
    assert fresh.submit(config).state == JobState.QUEUED

    raw.set(QUEUE, b"\xff")  # a damaged queue: the job is put back in line
    assert fresh.status(config.key).position == 1 and fresh.queued() == [config.key]


# ---- one backend -----------------------------------------------------------------------


def test_cli_worker_once_and_warm_starts(tmp_path):
    cache_dir = tmp_path / "jobs"
    queue = JobQueue(cache_dir)
    base = tiny(seed=9)
    queue.submit(base)
    assert cli.main(["worker", "--cache", str(cache_dir), "--once"]) == 0
    assert queue.status(base.key).state == JobState.DONE

    file = queue.run(base.key).save(tmp_path / "base.npz")
    by_key, by_file = tiny(seed=10, warm_start=base.key), tiny(seed=11, warm_start=str(file))
    missing = tiny(seed=12, warm_start="nowhere.npz")
    for config in (by_key, by_file, missing):
        queue.submit(config, client=config.warm_start)
    worker = Worker(cache_dir)
    assert sum(worker.run(once=True) for _ in range(3)) == 3
    assert queue.status(by_key.key).state == JobState.DONE
    assert queue.status(by_file.key).state == JobState.DONE
    failed = queue.status(missing.key)
    assert failed.state == JobState.FAILED
    assert "warm_start: expected a finished run key or a run file path" in failed.message
    assert Worker(cache_dir).run(once=True) == 0  # nothing left: --once returns


def test_open_queue_picks_the_backend_from_the_settings(tmp_path):
    env = {"TEMPSUP_CACHE": str(tmp_path / "jobs"), "TEMPSUP_MAX_PER_MINUTE": "7"}
    queue = open_queue(Settings.from_env(env))
    assert isinstance(queue, JobQueue) and queue.directory == tmp_path / "jobs"
    limits = queue.limits
    assert (limits.max_work, limits.max_queue, limits.max_per_client, limits.max_rate) == (
        2e12, 50, 3, 7,
    )  # fmt: skip
    # a web server's queue never lets a client point a worker at a file
    refused = r"warm_start: expected the 16-character key of a finished run \(this server"
    with pytest.raises(TempsupError, match=refused + r" does not read files\), got '/etc/passwd'"):
        queue.submit(tiny(warm_start="/etc/passwd"))
    with pytest.raises(TempsupError, match="got '../run.npz'"):
        queue.submit(SweepSpec(tiny(warm_start="../run.npz"), (0.5, 0.9)))
    assert queue.submit(tiny(warm_start="0123456789abcdef")).state == JobState.QUEUED
    env = {
        "TEMPSUP_MAX_PER_MINUTE": "off",
        "TEMPSUP_MAX_QUEUE": "5",
        "TEMPSUP_REDIS_PREFIX": "demo:",
        "TEMPSUP_REDIS_URL": "redis://127.0.0.1:1/0",
    }  # fmt: skip - nothing listens
    queue = open_queue(Settings.from_env(env))
    assert isinstance(queue, RedisQueue) and queue.prefix == "demo:"
    assert queue.limits.max_queue == 5 and queue.limits.max_rate is None
    with pytest.raises(StoreUnavailable, match="job store unavailable: cannot use Redis at "
                       "redis://127.0.0.1:1/0"):  # fmt: skip
        queue.status("0123456789abcdef")


def test_redis_restart_mid_job_is_reported_and_the_job_completes(tmp_path, gate):
    """Redis restarts while a job trains: the web side reports the outage, the
    worker retries its writes, and the job finishes once Redis is back (AOF on)."""
    with RedisServer(tmp_path / "redis", persist=True) as server:
        notify = drain_hook(server.url, "restart:")
        queue = RedisQueue(server.url, "restart:", "WARNING", notify=notify)
        config = long(seed=70)
        gate.hold(config.key, after=3)
        with WorkerPool(queue, n=1, imports=GATED) as pool:
            queue.submit(config, client="alice")
            gate.wait_held(config.key)
            server.stop()
            with pytest.raises(StoreUnavailable, match="job store unavailable.*try again"):
                queue.status(config.key)
            gate.open(config.key)  # the worker trains on while Redis is down, retrying writes
            time.sleep(1.0)
            server.start()
            done = wait_for(
                "the job after the restart",
                state_is(queue, config.key, JobState.DONE, JobState.FAILED),
            )
            assert done.state == JobState.DONE, done.message
            assert queue.details(config.key)["attempts"] == 1  # the same claim carried on
            assert len(queue.frames(config.key)) == config.n_snapshots
            assert len(pool.pids) == 1  # the worker survived the outage
            nxt = tiny(seed=71)  # and still takes new jobs
            queue.submit(nxt)
            assert wait_for("a job after the restart", state_is(queue, nxt.key, JobState.DONE))


def test_an_uploaded_text_is_named_by_its_hash_and_read_from_the_store(make_queue):
    """The lab's text travels as content in the job store (any backend), never as a path."""
    from tempsup.bows.config import BowsConfig
    from tempsup.bows.data import text_sha256

    queue = make_queue(trust_specs=False)  # what a web server opens
    text = "the cat sat on the mat\nthe dog ran to the cat\na bird sang on the mat\n" * 10
    small = {"m": 2, "epochs": 1, "seeds": 1, "n_samples": 64, "batch": 32, "snapshot_every": 1}
    config = BowsConfig(structure="text", text_sha256=text_sha256(text), vocab=8, window=2, **small)
    with pytest.raises(TempsupError, match=r"text_sha256: the job store holds no text"):
        queue.submit(config)  # named, but never uploaded
    assert queue.queued() == []
    assert queue.put_blob(text.encode()) == config.text_sha256
    assert queue.submit(config).state == JobState.QUEUED
    assert Worker(queue.copy()).run(once=True) == 1
    status = queue.status(config.key)
    assert status.state == JobState.DONE, status
    assert set(queue.result(config.key).labels) <= set(text.split())
    with pytest.raises(TempsupError, match="upload: expected at most"):
        queue.put_blob(b"x" * 2_000_001)


def test_low_priority_jobs_wait_behind_every_normal_one(make_queue):
    """The server's own jobs (presets) go to workers only when no visitor's job waits,
    and neither count against a visitor's limits nor fill the queue for them."""
    queue = make_queue(max_queue=2, max_per_client=1)
    low = [tiny(seed=80 + i) for i in range(3)]
    for config in low:  # more than max_queue and max_per_client allow a visitor
        assert queue.submit(config, client="presets", priority=LOW).state == JobState.QUEUED
    visitor = tiny(seed=90)
    status = queue.submit(visitor, client="alice")
    assert status.position == 1  # ahead of the three that were queued before it
    assert [queue.status(c.key).position for c in low] == [2, 3, 4]
    assert describe(queue.status(low[0].key)) == "queued (2nd in line)"
    with pytest.raises(TempsupError, match="too many active jobs"):
        queue.submit(tiny(seed=91), client="alice")  # alice's own limit still holds
    assert queue.submit(tiny(seed=92), client="bob").position == 2
    with pytest.raises(TempsupError, match=r"queue full: 2 jobs are waiting"):
        queue.submit(tiny(seed=93), client="carol")
    order = []
    while (claim := queue.claim()) is not None:
        order.append(claim.key)
        assert queue.details(claim.key)["priority"] == (LOW if claim.spec in low else NORMAL)
    assert order == [visitor.key, tiny(seed=92).key, *[c.key for c in low]]


def test_a_job_that_starts_from_an_active_job_waits_for_it(make_queue):
    """A warm start names a job by key: while that job is queued or running, the job
    stays in line (presets are queued all at once, their sources first)."""
    queue = make_queue()
    source = tiny(seed=95)
    warm = tiny(seed=96, warm_start=source.key)
    queue.submit(warm, client="presets", priority=LOW)  # queued first, claimed second
    queue.submit(source, client="presets", priority=LOW)
    claim = queue.claim()
    assert claim.key == source.key
    assert queue.claim() is None  # its source is running: it waits, still queued
    assert queue.status(warm.key).state == JobState.QUEUED and queue.queued() == [warm.key]
    assert queue.finish(claim, train_runs([source])[0])
    Worker(queue.copy()).run(once=True)  # now it trains, from the finished source
    assert queue.status(warm.key).state == JobState.DONE
    orphan = tiny(seed=97, warm_start="0123456789abcdef")  # no such job: not waited for
    queue.submit(orphan)
    Worker(queue.copy()).run(once=True)
    failed = queue.status(orphan.key)
    assert failed.state == JobState.FAILED and "warm_start:" in failed.message


def test_claim_batch_takes_companions_of_one_batch_key_and_one_priority(make_queue):
    """claim_batch: the first job in line, then later ones of its batch key and priority,
    in line order, up to the limit; another shape, a warm start or a background job stays
    in line."""
    queue = make_queue(max_per_client=20)
    first = tiny(seed=1)
    other_shape = tiny(seed=2, hidden=3)
    mates = [tiny(seed=3, k=2), tiny(seed=4, sparsity=0.7), tiny(seed=5)]
    background = tiny(seed=6)
    warm = tiny(seed=7, warm_start="0123456789abcdef")
    for cfg in [first, other_shape, *mates, warm]:
        queue.submit(cfg)
    queue.submit(background, client="presets", priority=LOW)
    claims = queue.claim_batch(3)
    assert [c.key for c in claims] == [first.key, mates[0].key, mates[1].key]
    assert len({c.token for c in claims}) == 3
    assert all(queue.status(c.key).state == JobState.RUNNING for c in claims)
    assert queue.queued() == [other_shape.key, mates[2].key, warm.key, background.key]
    (alone,) = queue.claim_batch(8)  # the next in line has no companion left
    assert alone.key == other_shape.key
    assert [c.key for c in queue.claim_batch(8)] == [mates[2].key]  # not the background job
    assert queue.claim_batch(0) == []
    queue.close()
