"""The worker's side of the job queue, driven by hand: every field each transition writes.

claim, put_frame, progress, finish, end, requeue (the worker's lease), cancel, retry (the
web's) and put_result (the results store) on the embedded diskcache queue in this process,
no worker processes: each test checks the whole stored record after a transition against
the values worked out here, the lines (queued, running) and what a stale claim may still
do. The suite's tests/test_jobs.py runs the same queue through real workers on both
backends; these are the fast checks mutation testing runs (scripts/mutation record,
transitions).
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import types
from pathlib import Path

import pytest

from tempsup.analysis.sweeps import SweepSpec
from tempsup.bows.config import BowsConfig
from tempsup.bows.data import text_sha256
from tempsup.errors import TempsupError
from tempsup.io.run import Run, frame
from tempsup.jobs import JobQueue, lease
from tempsup.jobs.entries import get_record, spec_entry
from tempsup.jobs.kinds import get_kind
from tempsup.jobs.lease import HEARTBEAT_TIMEOUT, pid_alive
from tempsup.jobs.record import LOW, NORMAL, JobRecord, JobState, new_record, transition
from tempsup.jobs.store import (
    QUEUE,
    RUNNING,
    config_key,
    read_list,
    run_key,
    status_key,
    write_list,
)
from tempsup.model.config import RunConfig
from tempsup.training.trainer import train
from tests.helpers import FakeClock, wait_for

TINY = {"steps": 40, "batch": 64, "seeds": 2, "snapshot_every": 10}  # 5 frames


def tiny(seed: int) -> RunConfig:
    return RunConfig(**{**TINY, "seed": seed})


@pytest.fixture(scope="module")
def frames() -> list[dict]:
    """The 5 frames of one tiny run (any job's frames will do: the queue stores bytes)."""
    config = tiny(1)
    return [frame(config, snap) for snap in train(config)]


@pytest.fixture
def queue(tmp_path) -> JobQueue:
    notified: list[int] = []
    q = JobQueue(tmp_path / "jobs", notify=lambda: notified.append(1))
    q.notified = notified  # type: ignore[attr-defined]
    yield q
    q.close()


def record(queue: JobQueue, key: str) -> dict:
    rec = queue.details(key)
    assert rec is not None, key
    return rec


def between(before: float, value: float | None) -> bool:
    """`value` is a time.time() taken after `before` and before now."""
    return value is not None and before <= value <= time.time()


def test_a_new_record_is_a_queued_job_with_nothing_done_yet() -> None:
    rec = new_record("k" * 16, "run", 40, "alice")
    assert rec == JobRecord(key="k" * 16, kind="run", state=JobState.QUEUED, total=40,
                            client="alice")  # fmt: skip
    assert (rec.attempts, rec.priority, rec.submitted, rec.step, rec.n_frames) == (0, 0, None, 0, 0)
    assert (rec.cancel, rec.message, rec.token, rec.pid, rec.started) == (
        False,
        "",
        None,
        None,
        None,
    )
    low = new_record("k" * 16, "bows", 9, "bob", attempts=3, priority=LOW, now=12.5)
    assert (low.kind, low.total, low.client, low.attempts, low.priority, low.submitted) == (
        "bows", 9, "bob", 3, 1, 12.5
    )  # fmt: skip
    for bad in (2, -1, None):
        with pytest.raises(TempsupError) as refusal:
            new_record("k" * 16, "run", 1, "x", priority=bad)
        assert str(refusal.value) == f"priority: expected one of (0, 1), got {bad!r}"


def test_a_refused_transition_says_which_are_allowed() -> None:
    done = transition(new_record("k" * 16, "run", 1, "x"), JobState.DONE)
    with pytest.raises(TempsupError) as refusal:
        transition(done, JobState.RUNNING)
    assert str(refusal.value) == (
        f"job {'k' * 16}: cannot go from done to running; allowed: done, failed"
    )


def test_a_record_without_a_state_is_missing() -> None:
    rec = new_record("k" * 16, "run", 1, "x")
    text = rec.to_json()
    data = json.loads(text)
    assert data == {**dataclasses.asdict(rec), "state": "queued"}  # its fields, nothing else
    assert JobRecord.from_json(text, "k" * 16) == rec
    del data["state"]
    assert JobRecord.from_json(json.dumps(data), "k" * 16) is None


def test_claim_makes_the_first_job_in_line_running_under_its_process(queue) -> None:
    first, second = tiny(11), tiny(12)
    queue.submit(first, client="alice")
    queue.submit(second, client="bob")
    assert queue.notified == [1, 1]
    before = time.time()
    claim = queue.claim(pid=4321)
    assert (claim.key, claim.spec, claim.kind) == (first.key, first, get_kind("run"))
    rec = record(queue, first.key)
    assert rec["state"] == "running" and rec["client"] == "alice"
    assert (rec["pid"], rec["host"], rec["token"]) == (4321, socket.gethostname(), claim.token)
    assert len(claim.token) == 32 and int(claim.token, 16) >= 0
    assert (rec["attempts"], rec["step"], rec["n_frames"]) == (1, 0, 0)
    assert (rec["rate"], rec["cancel"], rec["message"], rec["finished"]) == (None, False, "", None)
    assert between(before, rec["started"]) and rec["updated"] == rec["started"]
    assert rec["submitted"] <= rec["started"]
    assert queue.running() == [first.key] and queue.queued() == [second.key]
    other = queue.claim()  # without a pid: this process
    assert other.key == second.key and other.token != claim.token
    assert record(queue, second.key)["pid"] == os.getpid()
    assert queue.running() == [first.key, second.key] and queue.queued() == []
    assert queue.claim() is None and queue.claim_batch(0) == []


def test_put_frame_and_progress_move_a_running_job_forward(queue, frames) -> None:
    config = tiny(13)
    queue.submit(config)
    claim = queue.claim()
    before = time.time()
    assert queue.put_frame(claim, 0, frames[0]) == "ok"
    assert queue.put_frame(claim, 2, frames[2]) == "ok"
    assert queue.put_frame(claim, 1, frames[1]) == "ok"  # late: counts stay at the most
    rec = record(queue, config.key)
    assert (rec["state"], rec["n_frames"], rec["step"]) == ("running", 3, 20)
    assert between(before, rec["updated"]) and rec["updated"] >= rec["started"]
    assert [int(f["step"]) for f in queue.frames(config.key)] == [0, 10, 20]

    before = time.time()
    assert queue.progress(claim, 25, 12.5)
    rec = record(queue, config.key)
    assert (rec["step"], rec["rate"], rec["n_frames"]) == (25, 12.5, 3)
    assert between(before, rec["updated"])
    assert queue.progress(claim, 7, None)  # an older count never lowers the step
    rec = record(queue, config.key)
    assert (rec["step"], rec["rate"], rec["state"]) == (25, None, "running")
    status = queue.status(config.key)
    assert (status.step, status.n_frames, status.eta_s) == (25, 3, None)


def test_finish_stores_the_result_and_ends_the_lease(queue, frames) -> None:
    config = tiny(1)  # the frames' own config: its result is checked against the job
    queue.submit(config)
    claim = queue.claim()
    assert queue.put_frame(claim, 0, frames[0]) == "ok"
    assert queue.progress(claim, 30, 4.0)
    queue.cancel(config.key)  # asked to stop, and finished before it heard
    before = time.time()
    run = Run.from_frames(config, frames)
    assert queue.finish(claim, run)
    assert queue.store.frames(config.key, 0, 1) == [None]  # the frame entries are dropped
    rec = record(queue, config.key)
    assert rec["state"] == "done" and rec["step"] == config.steps == 40
    assert (rec["n_frames"], rec["run_id"], rec["cancel"]) == (5, claim.token, False)
    assert rec["message"] == "done: 40 steps, 5 frames"
    assert between(before, rec["finished"]) and rec["attempts"] == 1
    assert queue.running() == [] and queue.queued() == []
    served = queue.frames(config.key)  # from the stored result now, every frame
    assert [int(f["step"]) for f in served] == [0, 10, 20, 30, 40]
    assert queue.result(config.key).n_frames == 5
    status = queue.status(config.key)
    assert (status.state, status.message, status.position) == (JobState.DONE, rec["message"], None)
    # the lease is over: every later write of this claim is refused
    assert queue.put_frame(claim, 5, frames[0]) == "lost"
    assert not queue.progress(claim, 41, 1.0)
    assert not queue.finish(claim, run)
    assert not queue.end(claim, JobState.FAILED, "late")
    assert not queue.requeue(claim, "late")
    assert record(queue, config.key) == rec


@pytest.mark.parametrize("state", [JobState.FAILED, JobState.CANCELLED])
def test_end_keeps_the_frames_and_says_why(queue, frames, state) -> None:
    config = tiny(15)
    queue.submit(config)
    claim = queue.claim()
    for i in range(2):
        assert queue.put_frame(claim, i, frames[i]) == "ok"
    before = time.time()
    assert queue.end(claim, state, "it broke")
    rec = record(queue, config.key)
    assert (rec["state"], rec["message"], rec["cancel"]) == (state.value, "it broke", False)
    assert (rec["n_frames"], rec["step"], rec["token"]) == (2, 10, claim.token)
    assert between(before, rec["finished"])
    assert queue.running() == [] and queue.queued() == []
    assert [int(f["step"]) for f in queue.frames(config.key)] == [0, 10]
    status = queue.status(config.key)
    assert (status.state, status.message, status.active) == (state, "it broke", False)
    assert not queue.end(claim, state, "again")  # no longer this worker's
    assert queue.put_frame(claim, 2, frames[2]) == "lost"


@pytest.mark.parametrize("state", [JobState.DONE, JobState.RUNNING, JobState.QUEUED])
def test_end_refuses_a_state_that_is_not_an_end(queue, state) -> None:
    config = tiny(16)
    queue.submit(config)
    claim = queue.claim()
    with pytest.raises(TempsupError, match="end: expected state failed or cancelled, got"):
        queue.end(claim, state, "no")
    assert record(queue, config.key)["state"] == "running"


def test_requeue_puts_the_job_first_in_line_with_nothing_kept(queue, frames) -> None:
    config, waiting = tiny(17), tiny(18)
    queue.submit(config, client="alice")
    claim = queue.claim(pid=77)
    queue.submit(waiting)
    assert queue.put_frame(claim, 0, frames[0]) == "ok"
    assert queue.progress(claim, 5, 2.0)
    queue.cancel(config.key)
    queue.notified.clear()
    assert queue.requeue(claim, "worker stopped")
    assert queue.store.frames(config.key, 0, 1) == [None]  # the frame entries are dropped
    assert queue.notified == [1]  # the workers are woken: a job is in line
    rec = record(queue, config.key)
    assert (rec["state"], rec["message"], rec["client"]) == ("queued", "worker stopped", "alice")
    assert (rec["step"], rec["n_frames"], rec["token"], rec["pid"]) == (0, 0, None, None)
    assert rec["attempts"] == 1  # the claim counted; the next one counts again
    assert queue.queued() == [config.key, waiting.key] and queue.running() == []
    assert queue.frames(config.key) == []
    status = queue.status(config.key)
    assert (status.state, status.position, status.message) == (JobState.QUEUED, 1, "")
    assert not queue.requeue(claim, "twice")  # the old claim is stale now
    assert queue.notified == [1]
    again = queue.claim()
    assert again.key == config.key and again.token != claim.token
    rec = record(queue, config.key)  # what the last claim left is cleared
    assert (rec["attempts"], rec["rate"], rec["cancel"], rec["message"]) == (2, None, False, "")
    assert (rec["step"], rec["n_frames"], rec["token"]) == (0, 0, again.token)
    assert queue.put_frame(again, 0, frames[0]) == "ok"


def test_cancel_stops_a_queued_job_at_once_and_flags_a_running_one(queue) -> None:
    running, waiting = tiny(19), tiny(20)
    queue.submit(running)
    queue.submit(waiting)
    claim = queue.claim()
    status = queue.cancel(waiting.key)
    assert (status.state, status.message) == (JobState.CANCELLED, "cancelled before it started")
    rec = record(queue, waiting.key)
    assert (rec["state"], rec["message"]) == ("cancelled", "cancelled before it started")
    assert queue.queued() == []

    status = queue.cancel(running.key)  # the worker stops at its next frame
    assert (status.state, status.cancelling, status.active) == (JobState.RUNNING, True, True)
    rec = record(queue, running.key)
    assert (rec["state"], rec["cancel"], rec["token"]) == ("running", True, claim.token)
    assert queue.cancel(running.key) == status  # asked twice: the same
    assert queue.end(claim, JobState.CANCELLED, "cancelled at step 0")
    ended = record(queue, running.key)
    assert (ended["state"], ended["cancel"]) == ("cancelled", False)
    assert queue.cancel(running.key).state == JobState.CANCELLED  # ended jobs stay as they are
    assert record(queue, running.key) == ended
    assert queue.cancel("0123456789abcdef") is None


def test_a_cancelled_running_job_hears_it_at_its_next_frame(queue, frames) -> None:
    config = tiny(21)
    queue.submit(config)
    claim = queue.claim()
    assert queue.put_frame(claim, 0, frames[0]) == "ok"
    queue.cancel(config.key)
    assert queue.put_frame(claim, 1, frames[1]) == "cancel"
    assert record(queue, config.key)["n_frames"] == 2
    assert queue.progress(claim, 12, None)  # still its lease until it ends
    assert record(queue, config.key)["cancel"] is True


def test_a_finished_job_is_not_cancelled(queue, frames) -> None:
    config = tiny(1)
    queue.submit(config)
    claim = queue.claim()
    assert queue.finish(claim, Run.from_frames(config, frames))
    done = record(queue, config.key)
    assert queue.cancel(config.key).state == JobState.DONE
    assert record(queue, config.key) == done


def test_retry_queues_an_ended_job_again_for_its_client(queue, frames) -> None:
    config = tiny(23)
    queue.submit(config, client="alice", priority=LOW)
    claim = queue.claim()
    assert queue.put_frame(claim, 0, frames[0]) == "ok"
    assert queue.end(claim, JobState.FAILED, "it broke")

    def leftovers(db) -> None:  # entries an ended job should not have: all go on a retry
        db.set(run_key(config.key), b"a result that was unreadable")
        write_list(db, RUNNING, [config.key])

    queue.store.atomic(leftovers)
    queue.notified.clear()
    before = time.time()
    status = queue.retry(config.key)
    assert queue.store.frames(config.key, 0, 1) == [None]
    assert queue.store.view().data(run_key(config.key)) is None and queue.running() == []
    assert (status.state, status.position, status.message) == (JobState.QUEUED, 1, "")
    rec = record(queue, config.key)
    assert (rec["state"], rec["client"], rec["priority"]) == ("queued", "alice", LOW)
    assert (rec["attempts"], rec["step"], rec["n_frames"], rec["message"]) == (1, 0, 0, "")
    assert (rec["token"], rec["pid"], rec["finished"], rec["started"]) == (None, None, None, None)
    assert between(before, rec["submitted"])
    assert queue.queued() == [config.key] and queue.notified == [1]
    assert queue.retry(config.key) == status  # active: returned as it is

    claim = queue.claim()
    assert record(queue, config.key)["attempts"] == 2
    assert queue.end(claim, JobState.CANCELLED, "stop")
    queue.retry(config.key, client="bob")
    rec = record(queue, config.key)
    assert (rec["state"], rec["client"], rec["priority"]) == ("queued", "bob", LOW)


def test_retry_refuses_an_unknown_job_and_an_unreadable_config(queue) -> None:
    with pytest.raises(TempsupError, match="retry: expected the key of a known job, got 'nope'"):
        queue.retry("nope")
    config = tiny(24)
    queue.submit(config, priority=NORMAL)
    claim = queue.claim()
    assert queue.end(claim, JobState.FAILED, "it broke")
    queue.store.atomic(lambda db: db.set(config_key(config.key), b"{damaged"))
    with pytest.raises(TempsupError, match=f"retry: the stored config of job {config.key} is"):
        queue.retry(config.key)
    assert record(queue, config.key)["state"] == "failed"


def test_put_result_stores_a_done_job_from_any_state(queue, frames) -> None:
    """A result stored directly (presets, sweep points) makes its job DONE, whatever the job
    was: a fresh record of the local client, or the old one's client and attempts; the lines
    let go of it, a worker's frames and lease are dropped, every put names a new result."""
    config, running, waiting = tiny(1), tiny(31), tiny(32)
    before = time.time()
    queue.put_run(Run.from_frames(config, frames))
    rec = record(queue, config.key)
    assert (rec["state"], rec["kind"], rec["client"], rec["priority"]) == (
        "done",
        "run",
        "local",
        0,
    )
    assert (rec["total"], rec["step"], rec["n_frames"], rec["attempts"]) == (40, 40, 5, 0)
    assert rec["message"] == "done: 40 steps, 5 frames (stored run)"
    assert len(rec["run_id"]) == 32 and int(rec["run_id"], 16) >= 0
    assert between(before, rec["finished"]) and rec["submitted"] == rec["finished"]
    assert (rec["started"], rec["updated"], rec["pid"], rec["host"], rec["token"]) == (None,) * 5
    assert (rec["rate"], rec["cancel"]) == (None, False)
    assert queue.spec(config.key) == config and queue.result(config.key).n_frames == 5
    queue.put_run(Run.from_frames(config, frames[:3]))  # stored again: a new result
    again = record(queue, config.key)
    assert (again["n_frames"], again["message"]) == (3, "done: 40 steps, 3 frames (stored run)")
    assert again["run_id"] != rec["run_id"] and queue.result(config.key).n_frames == 3

    queue.submit(running, client="alice")
    queue.submit(waiting, client="bob")
    claim = queue.claim(pid=55)
    for i in range(2):
        assert queue.put_frame(claim, i, frames[i]) == "ok"
    for spec in (running, waiting):
        queue.put_run(Run.from_frames(spec, frames[:4]))
    assert queue.running() == [] and queue.queued() == []
    rec = record(queue, running.key)
    assert (rec["state"], rec["client"], rec["attempts"], rec["n_frames"]) == (
        "done",
        "alice",
        1,
        4,
    )
    assert (rec["pid"], rec["host"], rec["token"], rec["started"], rec["rate"]) == (None,) * 5
    assert queue.store.frames(running.key, 0, 2) == [None, None]  # the worker's frames dropped
    assert queue.put_frame(claim, 2, frames[2]) == "lost"  # its lease is over
    assert not queue.finish(claim, Run.from_frames(running, frames))
    assert [int(f["step"]) for f in queue.frames(running.key)] == [0, 10, 20, 30]
    rec = record(queue, waiting.key)
    assert (rec["state"], rec["client"], rec["attempts"]) == ("done", "bob", 0)
    assert queue.status(waiting.key).state == JobState.DONE


def test_put_result_refuses_the_result_of_another_job(queue, frames) -> None:
    config, other = tiny(1), tiny(33)
    with pytest.raises(TempsupError) as refusal:
        queue.put_result(other, Run.from_frames(config, frames))
    assert str(refusal.value) == (
        f"put_result: expected a result of job {other.key}, got one of {config.key}"
    )
    assert queue.details(other.key) is None and queue.spec(other.key) is None


def proc_state(pid: int) -> str | None:
    """The state letter of process `pid` (R, S, Z, ...), None if there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def test_pid_alive_tells_a_running_process_from_a_gone_or_zombie_one(tmp_path, monkeypatch) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert not pid_alive(gone.pid)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        assert pid_alive(sleeper.pid)

        def unreadable(path: str) -> types.SimpleNamespace:
            def read_text() -> str:
                raise OSError(errno.ENOENT, "no /proc", path)

            return types.SimpleNamespace(read_text=read_text)

        with monkeypatch.context() as patch:
            patch.setattr(lease, "Path", unreadable)  # a system without /proc
            assert pid_alive(sleeper.pid)
    finally:
        sleeper.terminate()
        sleeper.wait()
    assert sleeper.returncode == -signal.SIGTERM  # the question (kill with 0) sent no signal
    named = tmp_path / "z) Z"  # a command name with ") Z" in it: the state follows the last ")"
    named.symlink_to(shutil.which("true"))
    zombie = subprocess.Popen([str(named)])  # exits, and stays a zombie until waited for
    try:
        wait_for("the child to exit", lambda: proc_state(zombie.pid) == "Z")
        assert not pid_alive(zombie.pid)
    finally:
        zombie.wait()

    def refused(error: OSError):
        def kill(pid: int, sig: int) -> None:
            raise error

        return kill

    monkeypatch.setattr(os, "kill", refused(PermissionError(errno.EPERM, "not yours")))
    assert pid_alive(12345)  # another user's process: alive
    monkeypatch.setattr(os, "kill", refused(OSError(errno.EINVAL, "no")))
    assert not pid_alive(12345)


def test_recover_fails_only_the_jobs_whose_worker_is_gone(queue, monkeypatch, request) -> None:
    """A worker is gone when its pid is dead on this host or its last beat is older than the
    timeout; its job is FAILED (never re-run) and taken off the running line. `status`
    recovers the job polled only, `recover` every one."""
    clock = FakeClock()
    monkeypatch.setattr(queue, "clock", clock)
    configs = [tiny(41 + i) for i in range(4)]
    for i, config in enumerate(configs):
        queue.submit(config, client=f"visitor {i}")
    a, b, c, d = (config.key for config in configs)
    gone = subprocess.Popen(["true"])
    gone.wait()
    alive = subprocess.Popen(["sleep", "60"])
    request.addfinalizer(lambda: (alive.kill(), alive.wait()))
    claim_a = queue.claim(pid=gone.pid)  # its worker died
    queue.claim(pid=alive.pid)  # b: alive
    queue.claim(pid=gone.pid)  # c: claimed on another host, where this pid means nothing
    queue.claim(pid=gone.pid)  # d: dead too

    def elsewhere(db) -> None:
        text = db.text(status_key(c))
        db.set(status_key(c), text.replace(f'"host": "{socket.gethostname()}"', '"host": "w9"'))
        write_list(db, RUNNING, ["0123456789abcdef", *read_list(db, RUNNING)])  # no such job

    queue.store.atomic(elsewhere)
    assert queue.progress(claim_a, 7, 3.0)
    queue.cancel(a)
    clock.advance(1.0)
    status = queue.status(a)  # polled: found dead
    assert (status.state, status.message) == (JobState.FAILED, "worker died at step 7")
    rec = record(queue, a)
    assert (rec["state"], rec["token"], rec["cancel"], rec["finished"]) == (
        "failed",
        None,
        False,
        clock.now,
    )
    assert (rec["pid"], rec["step"]) == (gone.pid, 7)
    assert queue.running() == [b, c, d]  # d is found when it is polled, or by recover
    assert record(queue, d)["state"] == "running"
    assert queue.put_frame(claim_a, 0, {"step": 0}) == "lost"

    assert queue.recover() == [d]
    assert record(queue, d)["message"] == "worker died at step 0"
    assert queue.running() == [b, c]
    clock.advance(HEARTBEAT_TIMEOUT - 1.0)  # the last beats are exactly the timeout old
    assert queue.recover() == [] and queue.status(c).state == JobState.RUNNING
    clock.advance(0.5)
    assert queue.recover() == [b, c]  # silent too long: gone, wherever they run
    assert queue.running() == [] and queue.queued() == []
    assert [record(queue, key)["state"] for key in (a, b, c, d)] == ["failed"] * 4
    assert alive.poll() is None  # asked about, never signalled


# ---- lines, entries and results that went wrong ---------------------------------------------


def test_a_job_whose_config_cannot_be_read_fails_when_its_turn_comes(queue) -> None:
    """Its config entry damaged, or holding another job's spec: the job is FAILED when a
    worker reaches it (never trained as something else), and the worker goes on in line.
    As a would-be companion of a batch it just waits for its turn."""
    good, damaged, swapped, mate, extra = (tiny(51 + i) for i in range(5))
    for i, config in enumerate((good, damaged, swapped, mate)):
        queue.submit(config, client=f"visitor {i}")

    def damage(db) -> None:
        db.set(config_key(damaged.key), "{damaged")
        db.set(config_key(swapped.key), spec_entry(get_kind("run"), extra))

    queue.store.atomic(damage)
    claims = queue.claim_batch(2)
    assert [c.key for c in claims] == [good.key, mate.key]
    assert queue.queued() == [damaged.key]  # unreadable: not a companion, still in line
    why = "the stored config of this job is unreadable; submit it again"
    rec = record(queue, swapped.key)
    assert (rec["state"], rec["message"], rec["attempts"]) == ("failed", why, 0)
    queue.submit(extra, client="visitor 4")
    claim = queue.claim()
    assert claim.key == extra.key and claim.spec == extra  # after failing the damaged one
    rec = record(queue, damaged.key)
    assert (rec["state"], rec["message"], rec["token"]) == ("failed", why, None)
    assert queue.queued() == [] and queue.running() == [good.key, mate.key, extra.key]


def test_claims_skip_line_entries_of_jobs_no_longer_queued(queue, frames) -> None:
    finished, waiting = tiny(1), tiny(56)
    queue.put_run(Run.from_frames(finished, frames))
    queue.submit(waiting)
    line = [finished.key, "0123456789abcdef", waiting.key]  # done; no record at all; queued
    queue.store.atomic(lambda db: write_list(db, QUEUE, line))
    assert queue.claim_batch(0) == [] and queue.queued() == line  # asked for none: untouched
    claim = queue.claim()
    assert claim.key == waiting.key and queue.queued() == []
    assert record(queue, finished.key)["state"] == "done"


def test_jobs_without_a_batch_key_are_claimed_one_at_a_time(queue) -> None:
    sweeps = [SweepSpec(base=tiny(57 + i), sparsities=(0.5, 0.9)) for i in range(2)]
    for spec in sweeps:
        queue.submit(spec)
    assert [c.key for c in queue.claim_batch(2)] == [sweeps[0].key]
    assert queue.queued() == [sweeps[1].key]


def test_status_puts_a_queued_job_missing_from_the_line_back_at_its_end(queue) -> None:
    lost, waiting = tiny(58), tiny(59)
    queue.submit(lost)
    queue.submit(waiting)
    queue.store.atomic(lambda db: write_list(db, QUEUE, [waiting.key]))
    queue.notified.clear()
    assert queue.status(lost.key).position == 2
    assert queue.queued() == [waiting.key, lost.key] and queue.notified == [1]


def test_submit_queues_once_for_the_local_client_and_checks_untrusted_specs(queue) -> None:
    config = tiny(60)
    status = queue.submit(config)
    assert record(queue, config.key)["client"] == "local"
    assert queue.submit(config, client="bob") == status  # queued already: as it is
    assert queue.notified == [1] and record(queue, config.key)["client"] == "local"
    from_file = RunConfig(**{**TINY, "seed": 61, "warm_start": "runs/start.npz"})
    assert queue.submit(from_file).state == JobState.QUEUED  # this machine's own file: trusted
    untrusted = JobQueue(queue.directory, trust_specs=False)  # what a web server opens
    other = RunConfig(**{**TINY, "seed": 62, "warm_start": "runs/start.npz"})
    with pytest.raises(TempsupError, match="warm_start: expected the 16-character key of a"):
        untrusted.submit(other)
    assert untrusted.details(other.key) is None
    digest = text_sha256("a text never uploaded")
    text = BowsConfig(structure="text", text_sha256=digest, vocab=8, window=2, m=2, epochs=1,
                      seeds=1, n_samples=64, batch=32, snapshot_every=1)  # fmt: skip
    with pytest.raises(TempsupError) as refusal:
        queue.submit(text)
    assert str(refusal.value) == (
        f"text_sha256: the job store holds no text {digest[:16]}…; upload it again"
    )


def test_submit_verifies_a_finished_result_before_promising_it(queue, frames) -> None:
    config = tiny(1)
    queue.put_run(Run.from_frames(config, frames))
    queue.store.atomic(lambda db: db.set(run_key(config.key), b"\x00garbage"))
    status = queue.submit(config)  # its result is unreadable: computed again
    assert (status.state, status.position) == (JobState.QUEUED, 1)
    assert queue.queued() == [config.key]


def test_an_unreadable_result_fails_its_job_and_says_why(queue, frames) -> None:
    config, other = tiny(1), tiny(63)
    run = Run.from_frames(config, frames)
    try:
        get_kind("run").load(b"\x00garbage")
    except TempsupError as exc:
        damaged = str(exc)
    for entry, problem in [
        (None, "it is missing"),
        (Run.from_frames(other, frames).to_bytes(), f"it holds job {other.key}"),
        (b"\x00garbage", damaged),
    ]:
        queue.put_run(run)
        queue.store.atomic(
            lambda db, entry=entry: (
                db.delete(run_key(config.key))
                if entry is None
                else db.set(run_key(config.key), entry)
            )
        )
        assert queue.result(config.key) is None
        rec = record(queue, config.key)
        assert (rec["state"], rec["message"]) == (
            "failed",
            f"the stored result is unreadable ({problem})",
        )
    queue.put_run(run)
    stale = get_record(queue.store.view(), config.key)
    queue.put_run(run)  # stored again since that record was read
    queue.store.atomic(lambda db: db.delete(run_key(config.key)))
    assert queue.results.load(stale) is None
    assert record(queue, config.key)["state"] == "done"  # a stale reader fails nothing
    assert queue.result(config.key) is None and record(queue, config.key)["state"] == "failed"
