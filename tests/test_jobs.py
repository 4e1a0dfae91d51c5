"""The job queue on both backends, with real worker processes (tempsup.jobs, tempsup.worker).

Every test that takes a `backend` runs twice: on the embedded diskcache queue
(`JobQueue`, polling `python -m tempsup.worker` processes) and on Redis +
Celery (`RedisQueue`, `celery -A tempsup.celery_app worker` processes, a real
`redis-server` on loopback that these tests start). Each test gets its own
cache directory or Redis key prefix, so tests never see each other's jobs.

Configs are tiny (batch 64, 2 seeds, one torch thread). `LONG` jobs take a
few seconds, so a test can act on them while they run; they are only waited
out where the test needs the finished run. Waits poll the queue until a
condition holds; the deadline only turns a hang into a failure.
"""

from __future__ import annotations

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

from tempsup import cli
from tempsup import jobs as jobs_module
from tempsup.config import RunConfig, snapshot_steps
from tempsup.errors import TempsupError
from tempsup.jobs import (
    QUEUE,
    BaseQueue,
    JobQueue,
    JobState,
    JobStatus,
    StoreUnavailable,
    config_key,
    open_queue,
    run_key,
    status_key,
)
from tempsup.jobs_redis import RedisQueue
from tempsup.run import ARRAYS, Run, frame
from tempsup.sweep import SWEEP_FRAME_ARRAYS, TABLE_COLUMNS, SweepResult, SweepSpec, train_runs
from tempsup.train import train
from tempsup.worker import Worker, WorkerPool
from tests.helpers import DEADLINE, FakeClock, follow, wait_for
from tests.services import RedisServer

TINY = {"steps": 40, "batch": 64, "seeds": 2, "snapshot_every": 10}
# ~1 ms a step on one thread: 2-3 s of training, 31 frames streamed. A test acts on a
# LONG job while it runs (cancel, kill -9, a partial read): seconds, not a sub-second race.
LONG = {**TINY, "steps": 2400, "snapshot_every": 80}
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


def running_with_frames(queue: BaseQueue, key: str, n: int) -> Callable[[], JobStatus | None]:
    def probe() -> JobStatus | None:
        status = queue.status(key)
        assert status is not None and status.state in (JobState.QUEUED, JobState.RUNNING), status
        return status if status.state == JobState.RUNNING and status.n_frames >= n else None

    return probe


def stack(frames: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: np.stack([f[name] for f in frames]) for name in ARRAYS}


# ---- fixtures: one queue per test on each backend ---------------------------------


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def make_queue(backend, tmp_path, request) -> Callable[..., BaseQueue]:
    """`make_queue(**limits)`: a handle on this test's queue (same jobs every call)."""
    if backend == "diskcache":
        return lambda **limits: JobQueue(tmp_path / "jobs", **limits)
    server = request.getfixturevalue("redis_server")
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    return lambda **limits: RedisQueue(server.url, prefix, **limits)


@pytest.fixture
def queue(make_queue) -> BaseQueue:
    return make_queue()


@pytest.fixture
def pools(queue, monkeypatch):
    """`pools(n)` starts n workers for this test's queue; all are stopped after the test."""
    started: list[WorkerPool] = []

    def start(n: int = 1) -> WorkerPool:
        started.append(WorkerPool(queue, n=n, threads=1))
        return started[-1]

    monkeypatch.setenv("TEMPSUP_WORKER_LOGLEVEL", "WARNING")
    yield start
    for pool in started:
        pool.stop()


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    """The queue's clock (`time.time` in tempsup.jobs), moved by the test only."""
    fake = FakeClock()
    monkeypatch.setattr(
        jobs_module, "time", types.SimpleNamespace(time=fake, monotonic=time.monotonic)
    )
    return fake


@pytest.fixture(scope="module")
def tiny_run() -> Run:
    (run,) = train_runs([tiny(seed=7)])
    return run


# ---- with worker processes ---------------------------------------------------------


def test_frames_stream_while_running_and_identical_configs_train_once(queue, make_queue, pools):
    pools(2)  # two idle workers compete for the one job
    config = long()
    first = queue.submit(config, client="alice")
    second = queue.submit(RunConfig.from_json(config.to_json()), client="bob")
    assert first.key == second.key == config.key
    assert first.state == JobState.QUEUED and first.position == 1
    assert first.message == "queued (1st in line)"
    assert second.state in (JobState.QUEUED, JobState.RUNNING)

    etas = []

    def running(status: JobStatus, new: list) -> None:
        if status.state == JobState.RUNNING:
            assert status.message.startswith("training: step ")
            etas.append(status.eta_s)

    # the app's dcc.Interval: status, then frames from the cursor
    frames, status, partial_reads = follow(queue, config.key, running)
    assert partial_reads > 0, "no frame was read while the job was running"
    assert any(eta is not None and eta >= 0 for eta in etas), etas
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
    assert fresh.config(config.key) == config
    np.testing.assert_array_equal(fresh.run(config.key)["W_h"], run["W_h"])
    assert JobStatus.from_dict(status.to_dict()) == status


def test_cancel_queued_and_running_jobs(queue, pools):
    pool = pools(1)
    running, waiting = long(seed=1), long(seed=2)
    queue.submit(running)
    assert queue.submit(waiting).position == 2
    wait_for("the first job to stream frames", running_with_frames(queue, running.key, 2))

    cancelled = queue.cancel(waiting.key)
    assert cancelled.state == JobState.CANCELLED and cancelled.position is None
    assert queue.frames(waiting.key) == []

    flagged = queue.cancel(running.key)
    assert flagged.state in (JobState.RUNNING, JobState.CANCELLED), flagged
    status = wait_for("the cancel", state_is(queue, running.key, JobState.CANCELLED))
    assert 2 <= status.n_frames < running.n_snapshots
    assert re.fullmatch(r"cancelled at step \d+/2400; press Train to restart", status.message)
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
    again = queue.submit(running)
    assert again.state == JobState.QUEUED and again.n_frames == 0
    wait_for("the job to run again", running_with_frames(queue, running.key, 1))

    # stopping the pool (an app restart) gives the running job back, first in line
    pool.stop()
    assert queue.status(running.key).state == JobState.QUEUED
    assert queue.queued() == [running.key]
    details = queue.details(running.key)
    assert details["n_frames"] == 0 and details["attempts"] == 2
    assert re.fullmatch(r"worker stopped at step \d+; re-queued", details["message"])
    assert queue.frames(running.key) == []


def test_killed_worker_is_failed_by_recover_and_retried(queue, pools):
    pool = pools(1)
    config = long(seed=3)
    queue.submit(config, client="alice")
    wait_for("the job to stream frames", running_with_frames(queue, config.key, 2))
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
    assert status.message == f"worker died at step {status.step}; press Train to retry"
    assert len(queue.frames(config.key)) == status.n_frames >= 2  # frames so far are kept
    assert queue.details(config.key)["attempts"] == 1  # not silently re-run

    assert pool.check() == 1  # a new worker replaces the dead one
    assert pool.start() is pool and pool.check() == 0 and len(pool.pids) == 1
    retried = queue.retry(config.key)
    assert retried.state in (JobState.QUEUED, JobState.RUNNING)
    done = wait_for("the retried job", state_is(queue, config.key, JobState.DONE, JobState.FAILED))
    assert done.state == JobState.DONE, done.message
    assert done.n_frames == config.n_snapshots
    assert queue.details(config.key)["attempts"] == 2
    assert queue.details(config.key)["client"] == "alice"


def test_sweep_job_streams_point_summaries_and_stores_every_point(queue, make_queue, pools):
    pools(1)
    spec = SweepSpec(tiny(steps=300, snapshot_every=10), sparsities=(0.9, 0.5))
    status = queue.submit(spec, client="teacher")
    assert (status.kind, status.key, status.total) == ("sweep", spec.key, 300)
    assert queue.spec(spec.key) == spec and queue.config(spec.key) == spec

    frames, status, partial_reads = follow(queue, spec.key)  # a phase page polling
    assert partial_reads > 0, "no frame was read while the sweep was running"
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
    assert queue.status(a2.key).message == "queued (1st in line)"
    assert queue.submit(tiny(seed=3), client="a").message == "queued (3rd in line)"

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
    assert fresh.submit(config).state == JobState.QUEUED  # recomputed
    Worker(fresh).run(once=True)
    assert fresh.run(config.key).n_frames == 5

    raw.set(config_key(config.key), "not a config")  # a damaged config entry
    assert fresh.config(config.key) is None
    assert fresh.submit(config).state == JobState.DONE and fresh.config(config.key) == config

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


def test_open_queue_picks_the_backend_from_the_environment(monkeypatch, tmp_path):
    for name in ("TEMPSUP_MAX_WORK", "TEMPSUP_MAX_QUEUE", "TEMPSUP_MAX_PER_CLIENT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TEMPSUP_REDIS_URL", raising=False)
    monkeypatch.setenv("TEMPSUP_CACHE", str(tmp_path / "jobs"))
    monkeypatch.setenv("TEMPSUP_MAX_PER_MINUTE", "7")
    queue = open_queue()
    assert isinstance(queue, JobQueue) and queue.directory == tmp_path / "jobs"
    assert (queue.max_work, queue.max_queue, queue.max_per_client, queue.max_rate) == (
        2e12, 50, 3, 7,
    )  # fmt: skip
    # a web server's queue never lets a client point a worker at a file
    refused = r"warm_start: expected the 16-character key of a finished run \(this server"
    with pytest.raises(TempsupError, match=refused + r" does not read files\), got '/etc/passwd'"):
        queue.submit(tiny(warm_start="/etc/passwd"))
    with pytest.raises(TempsupError, match="got '../run.npz'"):
        queue.submit(SweepSpec(tiny(warm_start="../run.npz"), (0.5, 0.9)))
    assert queue.submit(tiny(warm_start="0123456789abcdef")).state == JobState.QUEUED
    monkeypatch.setenv("TEMPSUP_MAX_PER_MINUTE", "off")
    monkeypatch.setenv("TEMPSUP_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens there
    monkeypatch.setenv("TEMPSUP_REDIS_PREFIX", "demo:")
    queue = open_queue(max_queue=5)
    assert isinstance(queue, RedisQueue) and queue.prefix == "demo:" and queue.max_queue == 5
    assert queue.max_rate is None
    with pytest.raises(StoreUnavailable, match="job store unavailable: cannot use Redis at "
                       "redis://127.0.0.1:1/0"):  # fmt: skip
        queue.status("0123456789abcdef")


def test_redis_restart_mid_job_is_reported_and_the_job_completes(tmp_path, monkeypatch):
    """Redis restarts while a job trains: the web side reports the outage, the
    worker retries its writes, and the job finishes once Redis is back (AOF on)."""
    monkeypatch.setenv("TEMPSUP_WORKER_LOGLEVEL", "WARNING")
    with RedisServer(tmp_path / "redis", persist=True) as server:
        queue = RedisQueue(server.url, "restart:")
        config = long(seed=70)
        with WorkerPool(queue, n=1) as pool:
            queue.submit(config, client="alice")
            wait_for("the job to stream frames", running_with_frames(queue, config.key, 3))
            server.stop()
            with pytest.raises(StoreUnavailable, match="job store unavailable.*try again"):
                queue.status(config.key)
            time.sleep(1.0)  # the worker trains on, retrying its writes
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
