"""The job queue: submit a spec, stream its frames while it trains, read its result.

A spec is any kind of `tempsup.jobs.kinds` (a `RunConfig`, a `SweepSpec`, a
bows config or sweep); every kind shares this queue, its limits, cancel and
dedupe. One job per spec: the job id is `spec.key`, so identical specs share
one job and one cached result (a shared link replays instantly). Web
processes call `submit`, `status`, `frames(key, cursor)`, `result`/`run`,
`cancel`; worker processes (`tempsup.jobs.worker`) `claim` queued jobs,
`put_frame` as they train, and `finish`, `end` or `requeue` them.

    status = queue.submit(SweepSpec(base, sparsities=(0.1, 0.5, 0.9)), client)
    frames = queue.frames(status.key, cursor)   # dicts of SWEEP_FRAME_ARRAYS, one value per point
    result = queue.result(status.key)           # SweepResult once DONE: .rows, .keys
    run = queue.run(result.keys[i])             # point i's Run, stored DONE when the sweep finished

Two backends share every line of this logic (`BaseQueue`) and differ only in
their `tempsup.jobs.store.Store`: `JobQueue` (one diskcache directory shared
by every process on the machine; workers poll) and
`tempsup.jobs.redis.RedisQueue` (Redis, workers woken by Celery).

Every read-modify-write is atomic, so two workers never claim the same job and
limits hold under concurrent submits. Every change of a record goes through
`tempsup.jobs.record.transition`. A worker's writes carry the claim's token:
once a job is re-queued or recovered, a stale worker's writes are ignored. A
dead worker (pid gone on this host, or no heartbeat for `heartbeat_timeout`
s) leaves its job FAILED, never silently re-run. An entry that cannot be read
is treated as missing: a damaged frame ends a cursor read early, a damaged
result marks the job FAILED so that the next `submit` recomputes it.

Jobs have a priority: workers claim NORMAL jobs (what visitors ask for) before
LOW ones (presets the server trains in the background); LOW jobs come from
the server itself, so the per-client limits do not count them and they do
not fill the queue for visitors. `claim_batch` lets a worker take the first
job in line together with later jobs that train in one batch with it (same
kind, batch key and priority: `tempsup.jobs.kinds.JobKind.batch_key`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import sys
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import diskcache
import numpy as np

from tempsup.config import RunConfig
from tempsup.errors import TempsupError
from tempsup.jobs.disk import DiskStore
from tempsup.jobs.kinds import JobKind, check_untrusted, get_kind, kind_of, text_digest
from tempsup.jobs.limits import Limits
from tempsup.jobs.record import (
    ACTIVE,
    LOW,
    NORMAL,
    JobRecord,
    JobState,
    JobStatus,
    new_record,
    transition,
)
from tempsup.jobs.store import (
    QUEUE,
    RUNNING,
    Store,
    Txn,
    blob_key,
    config_key,
    frame_from_bytes,
    frame_to_bytes,
    read_list,
    remove_from,
    run_key,
    status_key,
    write_list,
)
from tempsup.run import Run

# A RUNNING job whose heartbeat is older than this is dead, whatever its pid
# says (a worker on another host, or a pid reused after a crash). Workers beat
# every few seconds from a thread, so even a minutes-long optimizer step
# never looks dead.
HEARTBEAT_TIMEOUT = 60.0
# Decoded finished runs kept per queue handle: a replay reads the same run a few times.
RUN_CACHE_SIZE = 4
# The largest blob (an uploaded text) the store takes.
MAX_BLOB = 2_000_000
HOST = socket.gethostname()
Imports = tuple[str, ...]  # modules a worker process imports first
Command = tuple[list[str], dict[str, str]]  # a worker's command line and extra environment


@dataclass(frozen=True)
class Claim:
    """A worker's hold on one RUNNING job; `token` fences stale writers."""

    key: str
    spec: Any  # a RunConfig, SweepSpec, ... (see `kind`)
    token: str
    kind: JobKind


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists on this host and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:  # a killed child not yet reaped by its parent still answers kill(0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def _spec_entry(kind: JobKind, spec: Any) -> str:
    return json.dumps({"kind": kind.name, "spec": spec.to_json()})


def _parse_spec_entry(text: str) -> tuple[JobKind, Any] | None:
    """(kind, spec) of a stored config entry, or None if it cannot be read."""
    try:
        data = json.loads(text)
        if isinstance(data, dict) and set(data) == {"kind", "spec"}:
            kind = get_kind(str(data["kind"]))
            return kind, kind.spec_from_json(data["spec"])
        return get_kind("run"), RunConfig.from_dict(data)  # written before job kinds
    except (TempsupError, TypeError, ValueError):
        return None


class BaseQueue(ABC):
    """The queue's logic over a `Store`; `JobQueue` and `RedisQueue` supply the store.

    `limits` (`tempsup.jobs.limits.Limits`) bound what clients may queue. With
    `trust_specs` off (what a web server opens) every spec is checked by
    `tempsup.jobs.kinds.check_untrusted`: warm starts only from job keys,
    content only by its hash. `notify()` is called after jobs were queued
    (the Redis backend sends a Celery task; diskcache workers poll).
    """

    backend = "base"

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
        trust_specs: bool = True,
        notify: Callable[[], None] | None = None,
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise TempsupError(f"queue: limits expected a Limits, got {type(limits).__name__}")
        self.limits = limits or Limits()
        self.heartbeat_timeout = float(heartbeat_timeout)
        self.trust_specs = bool(trust_specs)
        self.notify_hook = notify
        self._runs: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._runs_lock = threading.Lock()  # web processes poll from several threads

    @property
    def options(self) -> dict[str, Any]:
        """What `copy` passes on: a new handle behaves like this one."""
        return {
            "limits": self.limits,
            "heartbeat_timeout": self.heartbeat_timeout,
            "trust_specs": self.trust_specs,
            "notify": self.notify_hook,
        }

    # ---- what a backend provides ------------------------------------------------------

    @property
    @abstractmethod
    def store(self) -> Store: ...

    @abstractmethod
    def copy(self) -> BaseQueue:
        """A new handle on the same queue (for another thread: handles are not shared)."""
        ...

    @abstractmethod
    def worker_command(self, threads: int = 1, poll: float = 0.2, imports: Imports = ()) -> Command:
        """The command line and extra environment of one worker process for this queue
        (`imports`: modules the worker imports first, e.g. to register more job kinds)."""

    def _notify(self) -> None:
        """Jobs were queued: wake the workers (the notify hook, if any)."""
        if self.notify_hook is not None:
            self.notify_hook()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> BaseQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the public interface -------------------------------------------------------

    def submit(self, spec: Any, client: str = "local", priority: int = NORMAL) -> JobStatus:
        """Queue `spec` unless its job exists; return its status.

        DONE, QUEUED and RUNNING jobs are returned as they are (a DONE job is
        served from the cache); FAILED and CANCELLED ones are queued again.
        Raises TempsupError when the job is larger than `max_work`, the client
        has too many active jobs or queued too many lately, the queue is full,
        an untrusted spec carries what it may not, or content it names by hash
        is not stored. LOW-priority jobs (the server's own) skip the client limits.
        """
        kind = kind_of(spec)
        client = str(client)
        if not self.trust_specs:
            check_untrusted(spec)
        missing = [d for d in kind.blobs(spec) if self.store.view().data(blob_key(d)) is None]
        if missing:
            raise TempsupError(
                f"text_sha256: the job store holds no text {missing[0][:16]}…; upload it again"
            )
        key = spec.key
        view = self.store.view()
        rec = self._record(view, key)
        # Verify a finished result before promising it (outside the lock: decoding is slow).
        done = rec is not None and rec.state == JobState.DONE
        if done and self._load_result(rec) is not None and self._spec(view, key) is not None:
            return self._status(view, rec)

        def txn(db: Txn) -> tuple[JobStatus, bool]:
            rec = self._record(db, key)
            if rec is not None and rec.state in (*ACTIVE, JobState.DONE):
                if self._spec(db, key) is None:  # a damaged config entry: rewrite it
                    db.set(config_key(key), _spec_entry(kind, spec))
                return self._status(db, rec), False
            now = time.time()
            if priority == NORMAL:
                self._check_limits(db, spec, client, now)
            rec = self._enqueue(db, kind, spec, client, rec, priority, now)
            return self._status(db, rec), True

        status, queued = self.store.atomic(txn)
        if queued:
            self._notify()
        return status

    def status(self, key: str) -> JobStatus | None:
        """The job's status, or None if there is no such job (or its record is unreadable)."""
        view = self.store.view()
        rec = self._record(view, key)
        if rec is None:
            return None
        if rec.state == JobState.RUNNING and self._is_dead(rec):
            self._recover_keys([key])
            rec = self._record(view, key)
        elif rec.state == JobState.QUEUED and key not in read_list(view, QUEUE):

            def txn(db: Txn) -> None:  # the queue entry was damaged: put the job back in line
                now = self._record(db, key)
                queue = read_list(db, QUEUE)
                if now is not None and now.state == JobState.QUEUED and key not in queue:
                    write_list(db, QUEUE, [*queue, key])

            self.store.atomic(txn)
            self._notify()
        return None if rec is None else self._status(view, rec)

    def frames(self, key: str, start: int = 0) -> list[dict[str, np.ndarray]]:
        """Frames `start`, `start + 1`, ... stored so far, in order (a cursor read).

        Works while the job runs and after it ends; a damaged frame ends the
        read early (the cursor stays there). Unknown jobs have no frames.
        """
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise TempsupError(f"frames: start expected an integer >= 0, got {start!r}")
        rec = self._record(self.store.view(), key)
        if rec is None or start >= rec.n_frames:
            return []
        kind = get_kind(rec.kind)
        if rec.state == JobState.DONE:
            result = self._load_result(rec)
            return [] if result is None else kind.frames_of(result, start)
        out = []
        for i, data in enumerate(self.store.frames(key, start, rec.n_frames), start):
            frame = None
            if data is not None:
                try:
                    frame = frame_from_bytes(data, kind.frame_names)
                except TempsupError:
                    frame = None
            if frame is None:
                now = self._record(self.store.view(), key)
                if now is not None and now.state == JobState.DONE:
                    return out + self.frames(key, i)  # finished in between: frames moved
                break
            out.append(frame)
        return out

    def spec(self, key: str) -> Any:
        """The job's spec (RunConfig, SweepSpec, ...), or None if unknown or unreadable."""
        found = self._spec(self.store.view(), key)
        return None if found is None else found[1]

    def result(self, key: str) -> Any:
        """The result of a DONE job (a Run, a SweepResult, ...), else None;
        a damaged one marks the job FAILED so that `submit` recomputes it."""
        rec = self._record(self.store.view(), key)
        if rec is None or rec.state != JobState.DONE:
            return None
        return self._load_result(rec)

    def run(self, key: str) -> Run | None:
        """The finished Run of a DONE run job, else None (other kinds: use `result`)."""
        rec = self._record(self.store.view(), key)
        if rec is None or rec.state != JobState.DONE or rec.kind != "run":
            return None
        return self._load_result(rec)

    def cancel(self, key: str) -> JobStatus | None:
        """QUEUED: cancelled at once. RUNNING: flagged; the worker stops at its next
        frame and keeps the frames so far. Finished jobs are left as they are."""

        def txn(db: Txn) -> JobStatus | None:
            rec = self._record(db, key)
            if rec is None:
                return None
            if rec.state == JobState.QUEUED:
                remove_from(db, QUEUE, key)
                rec = transition(rec, JobState.CANCELLED, message="cancelled before it started")
                self._put_record(db, rec)
            elif rec.state == JobState.RUNNING and not rec.cancel:
                rec = transition(rec, JobState.RUNNING, cancel=True)
                self._put_record(db, rec)
            return self._status(db, rec)

        return self.store.atomic(txn)

    def retry(self, key: str, client: str | None = None) -> JobStatus:
        """Queue a FAILED or CANCELLED job again (same limits as `submit`).

        Active or finished jobs are returned unchanged.
        """
        rec = self._record(self.store.view(), key)
        if rec is None:
            raise TempsupError(f"retry: expected the key of a known job, got {key!r}")
        spec = self.spec(key)
        if spec is None:
            raise TempsupError(f"retry: the stored config of job {key} is unreadable; submit it")
        return self.submit(spec, client if client is not None else rec.client, rec.priority)

    def put_run(self, run: Run) -> None:
        """Store a finished run directly (presets, CLI results, sweep points): its job is DONE."""
        self.put_result(run.config, run)

    def put_result(self, spec: Any, result: Any) -> None:
        """Store a finished result of `spec` directly: its job is DONE."""
        kind = kind_of(spec)
        key = spec.key
        if kind.result_key(result) != key:
            raise TempsupError(
                f"put_result: expected a result of job {key}, got one of {kind.result_key(result)}"
            )
        data = result.to_bytes()
        n_frames = kind.n_frames(result)
        run_id = uuid.uuid4().hex

        def txn(db: Txn) -> None:
            old = self._record(db, key)
            self._drop_frames(db, key, old)
            db.set(config_key(key), _spec_entry(kind, spec))
            db.set(run_key(key), data)
            remove_from(db, QUEUE, key)
            remove_from(db, RUNNING, key)
            now = time.time()
            fresh = new_record(key, kind.name, spec.steps, old.client if old else "local",
                               attempts=old.attempts if old else 0, now=now)  # fmt: skip
            fields = {f.name: getattr(fresh, f.name) for f in dataclasses.fields(fresh)}
            del fields["state"]  # from whatever state it was in, through the table
            rec = transition(
                old or fresh,
                JobState.DONE,
                **{**fields, "step": spec.steps, "n_frames": n_frames, "finished": now,
                   "run_id": run_id,
                   "message": f"done: {spec.steps} steps, {n_frames} frames (stored {kind.name})"},
            )  # fmt: skip
            self._put_record(db, rec)

        self.store.atomic(txn)

    def put_blob(self, data: bytes) -> str:
        """Store content a spec may name (an uploaded text); return its sha256 digest."""
        if not isinstance(data, bytes) or len(data) > MAX_BLOB:
            size = len(data) if isinstance(data, bytes) else type(data).__name__
            raise TempsupError(f"upload: expected at most {MAX_BLOB} bytes, got {size}")
        digest = text_digest(data)
        self.store.view().set(blob_key(digest), data)
        return digest

    def blob(self, digest: str) -> bytes | None:
        """Stored content by its sha256 digest, or None."""
        return self.store.view().data(blob_key(digest))

    def recover(self) -> list[str]:
        """Fail RUNNING jobs whose worker is gone (pid dead on this host, or no
        heartbeat for `heartbeat_timeout` s); return their keys."""
        return self._recover_keys(None)

    def details(self, key: str) -> dict[str, Any] | None:
        """The raw status record (claiming pid and host, attempts, client, times): diagnostics."""
        rec = self._record(self.store.view(), key)
        if rec is None:
            return None
        return {**dataclasses.asdict(rec), "state": rec.state.value}

    def queued(self) -> list[str]:
        """Keys of the QUEUED jobs, oldest first."""
        return read_list(self.store.view(), QUEUE)

    def running(self) -> list[str]:
        """Keys of the RUNNING jobs."""
        return read_list(self.store.view(), RUNNING)

    # ---- the worker side (tempsup.jobs.worker) ---------------------------------------

    def claim(self, pid: int | None = None) -> Claim | None:
        """Atomically take the first NORMAL job in line (else the first LOW one) that
        does not start from a job still active: it becomes RUNNING under this process."""
        claims = self.claim_batch(1, pid)
        return claims[0] if claims else None

    def claim_batch(self, limit: int, pid: int | None = None) -> list[Claim]:
        """`claim`, plus up to `limit` − 1 more queued jobs that train in one batch with it.

        Jobs batch when their kind says so (`JobKind.batch_key`: equal and not None,
        e.g. runs that differ only in seed, k, sparsity or curriculum) and they have
        the first's priority (a user's job is not slowed by background presets); they
        are taken in line order, each RUNNING with its own token. Empty: nothing to claim.
        """

        def txn(db: Txn) -> list[Claim]:
            queue = read_list(db, QUEUE)
            original = list(queue)
            records = {key: self._record(db, key) for key in queue}
            queued = [
                k for k in queue if (r := records[k]) is not None and r.state == JobState.QUEUED
            ]
            queue = [k for k in queue if k in queued]  # drop entries of jobs no longer queued
            claims: list[Claim] = []
            batch: str | None = None
            first_priority = NORMAL
            for key in sorted(queued, key=lambda k: records[k].priority):  # stable: FIFO within
                if len(claims) >= limit:
                    break
                rec = records[key]
                found = self._spec(db, key)
                if claims and (
                    found is None
                    or found[0] is not claims[0].kind
                    or batch is None
                    or rec.priority != first_priority
                    or found[0].batch_key(found[1]) != batch
                ):
                    continue  # not a companion of the first: it waits for its own turn
                if found is not None and found[1].key == key and self._waits(db, found):
                    continue  # it starts from a job still queued or running: stays in line
                queue.remove(key)
                if found is None or found[1].key != key:
                    msg = "the stored config of this job is unreadable; submit it again"
                    self._put_record(db, transition(rec, JobState.FAILED, message=msg))
                    continue
                claims.append(self._take(db, rec, found, pid))
                if len(claims) == 1:  # a user's job never waits for background (LOW) ones
                    batch, first_priority = found[0].batch_key(found[1]), rec.priority
            if queue != original:
                write_list(db, QUEUE, queue)
            return claims

        if limit < 1 or not read_list(self.store.view(), QUEUE):  # idle workers poll: lock-free
            return []
        return self.store.atomic(txn)

    def _take(self, db: Txn, rec: JobRecord, found: tuple[JobKind, Any], pid: int | None) -> Claim:
        """A queued job becomes RUNNING under this process (pid) with a fresh token."""
        now = time.time()
        claim = Claim(rec.key, found[1], uuid.uuid4().hex, found[0])
        rec = transition(
            rec,
            JobState.RUNNING,
            pid=os.getpid() if pid is None else pid,
            host=HOST,
            token=claim.token,
            attempts=rec.attempts + 1,
            started=now,
            updated=now,
            step=0,
            n_frames=0,
            rate=None,
            cancel=False,
            message="",
        )
        self._put_record(db, rec)
        write_list(db, RUNNING, [*read_list(db, RUNNING), rec.key])
        return claim

    def _waits(self, db: Txn, found: tuple[JobKind, Any]) -> bool:
        """Whether a job needs (warm-starts from) a job that is still queued or running."""
        kind, spec = found
        needed = (self._record(db, k) for k in kind.needs(spec))
        return any(r is not None and r.state in ACTIVE for r in needed)

    def put_frame(self, claim: Claim, index: int, frame: dict[str, np.ndarray]) -> str:
        """Store frame `index` of a claimed job. Returns "ok", "cancel" (the user
        asked to stop) or "lost" (the job is no longer this worker's)."""
        data = frame_to_bytes(frame)

        def txn(db: Txn) -> str:
            rec = self._owned(db, claim)
            if rec is None:
                return "lost"
            db.set_frame(claim.key, index, data, rec.n_frames)
            rec = transition(
                rec,
                JobState.RUNNING,
                n_frames=max(rec.n_frames, index + 1),
                step=max(rec.step, int(frame["step"])),
                updated=time.time(),
            )
            self._put_record(db, rec)
            return "cancel" if rec.cancel else "ok"

        return self.store.atomic(txn)

    def progress(self, claim: Claim, step: int, rate: float | None) -> bool:
        """Heartbeat with the step reached and the measured steps/s; False if lost."""

        def txn(db: Txn) -> bool:
            rec = self._owned(db, claim)
            if rec is None:
                return False
            rec = transition(
                rec, JobState.RUNNING, step=max(rec.step, int(step)), rate=rate, updated=time.time()
            )
            self._put_record(db, rec)
            return True

        return self.store.atomic(txn)

    def finish(self, claim: Claim, result: Any) -> bool:
        """Store the finished result; its frames are now served from it. False if lost."""
        data = result.to_bytes()
        n_frames = claim.kind.n_frames(result)

        def txn(db: Txn) -> bool:
            rec = self._owned(db, claim)
            if rec is None:
                return False
            db.set(run_key(claim.key), data)
            self._drop_frames(db, claim.key, rec)
            remove_from(db, RUNNING, claim.key)
            rec = transition(
                rec,
                JobState.DONE,
                step=rec.total,
                n_frames=n_frames,
                finished=time.time(),
                run_id=claim.token,
                cancel=False,
                message=f"done: {rec.total} steps, {n_frames} frames",
            )
            self._put_record(db, rec)
            return True

        return self.store.atomic(txn)

    def end(self, claim: Claim, state: JobState, message: str) -> bool:
        """End a claimed job as FAILED or CANCELLED, keeping its frames. False if lost."""
        if state not in (JobState.FAILED, JobState.CANCELLED):
            raise TempsupError(f"end: expected state failed or cancelled, got {state!r}")

        def txn(db: Txn) -> bool:
            rec = self._owned(db, claim)
            if rec is None:
                return False
            remove_from(db, RUNNING, claim.key)
            rec = transition(rec, state, finished=time.time(), cancel=False, message=message)
            self._put_record(db, rec)
            return True

        return self.store.atomic(txn)

    def requeue(self, claim: Claim, message: str) -> bool:
        """Give a claimed job back (worker shut down): first in line, frames cleared."""

        def txn(db: Txn) -> bool:
            rec = self._owned(db, claim)
            if rec is None:
                return False
            self._drop_frames(db, claim.key, rec)
            remove_from(db, RUNNING, claim.key)
            rest = [k for k in read_list(db, QUEUE) if k != claim.key]
            write_list(db, QUEUE, [claim.key, *rest])
            rec = transition(
                rec, JobState.QUEUED, step=0, n_frames=0, token=None, pid=None, message=message
            )
            self._put_record(db, rec)
            return True

        done = self.store.atomic(txn)
        if done:
            self._notify()
        return done

    # ---- records ----------------------------------------------------------------------

    def _record(self, db: Txn, key: str) -> JobRecord | None:
        text = db.text(status_key(key))
        return None if text is None else JobRecord.from_json(text, key)

    def _put_record(self, db: Txn, rec: JobRecord) -> None:
        db.set(status_key(rec.key), rec.to_json())

    def _owned(self, db: Txn, claim: Claim) -> JobRecord | None:
        rec = self._record(db, claim.key)
        if rec is None or rec.state != JobState.RUNNING or rec.token != claim.token:
            return None
        return rec

    def _spec(self, db: Txn, key: str) -> tuple[JobKind, Any] | None:
        """The stored (kind, spec) of a job; None if missing or unreadable."""
        text = db.text(config_key(key))
        return None if text is None else _parse_spec_entry(text)

    def _drop_frames(self, db: Txn, key: str, rec: JobRecord | None) -> None:
        db.drop_frames(key, rec.n_frames if rec is not None else 0)

    def _load_result(self, rec: JobRecord) -> Any:
        """The DONE job's result; if its entry is missing or damaged the job becomes
        FAILED (so `submit` recomputes it) and None is returned."""
        key = rec.key
        slot = (key, str(rec.run_id))
        with self._runs_lock:
            if slot in self._runs:
                self._runs.move_to_end(slot)
                return self._runs[slot]
        data = self.store.view().data(run_key(key))
        problem = "it is missing"
        result = None
        if data is not None:
            try:
                kind = get_kind(rec.kind)
                result = kind.load(data)
                if kind.result_key(result) != key:
                    problem, result = f"it holds job {kind.result_key(result)}", None
            except TempsupError as exc:
                problem = str(exc)
        if result is None:

            def txn(db: Txn) -> None:
                now = self._record(db, key)
                same = now is not None and now.run_id == rec.run_id
                if same and now.state == JobState.DONE:
                    msg = f"the stored result is unreadable ({problem})"
                    self._put_record(db, transition(now, JobState.FAILED, message=msg))

            self.store.atomic(txn)
            return None
        with self._runs_lock:
            self._runs[slot] = result
            while len(self._runs) > RUN_CACHE_SIZE:
                self._runs.popitem(last=False)
        return result

    # ---- submit and recover -----------------------------------------------------------

    def _check_limits(self, db: Txn, spec: Any, client: str, now: float) -> None:
        queue = read_list(db, QUEUE)
        mine = waiting = 0
        for key in (*queue, *read_list(db, RUNNING)):
            rec = self._record(db, key)
            if rec is None or rec.state not in ACTIVE or rec.priority != NORMAL:
                continue
            mine += rec.client == client
            waiting += rec.state == JobState.QUEUED and key in queue
        self.limits.check(spec, waiting, mine, self.limits.recent(db, client, now), now)

    def _enqueue(self, db: Txn, kind: JobKind, spec: Any, client: str, old: JobRecord | None,
                 priority: int, now: float) -> JobRecord:  # fmt: skip
        key = spec.key
        self._drop_frames(db, key, old)
        db.delete(run_key(key))
        db.set(config_key(key), _spec_entry(kind, spec))
        remove_from(db, RUNNING, key)
        queue = read_list(db, QUEUE)
        if key not in queue:
            write_list(db, QUEUE, [*queue, key])
        if priority == NORMAL:
            self.limits.count(db, client, now)
        attempts = old.attempts if old is not None else 0
        rec = new_record(key, kind.name, spec.steps, client, attempts=attempts,
                         priority=priority, now=now)  # fmt: skip
        if old is not None:  # a FAILED or CANCELLED job queued again: through the table
            fields = {f.name: getattr(rec, f.name) for f in dataclasses.fields(rec)}
            del fields["state"]
            rec = transition(old, JobState.QUEUED, **fields)
        self._put_record(db, rec)
        return rec

    def _is_dead(self, rec: JobRecord) -> bool:
        updated = rec.updated
        if not isinstance(updated, (int, float)) or time.time() - updated > self.heartbeat_timeout:
            return True
        pid = rec.pid
        return rec.host == HOST and isinstance(pid, int) and not pid_alive(pid)

    def _recover_keys(self, keys: list[str] | None) -> list[str]:
        def txn(db: Txn) -> list[str]:
            dead = []
            running = read_list(db, RUNNING)
            keep = []
            for key in running:
                rec = self._record(db, key)
                if rec is None or rec.state != JobState.RUNNING:
                    continue
                if (keys is None or key in keys) and self._is_dead(rec):
                    rec = transition(
                        rec,
                        JobState.FAILED,
                        finished=time.time(),
                        token=None,
                        cancel=False,
                        message=f"worker died at step {rec.step}",
                    )
                    self._put_record(db, rec)
                    dead.append(key)
                else:
                    keep.append(key)
            if keep != running:
                write_list(db, RUNNING, keep)
            return dead

        return self.store.atomic(txn)

    # ---- status -----------------------------------------------------------------------

    def _position(self, db: Txn, rec: JobRecord) -> int:
        """1-based place in line: jobs that a worker takes before this one, plus one."""
        queue = read_list(db, QUEUE)
        if rec.key not in queue:
            return len(queue) + 1
        ahead = queue[: queue.index(rec.key)]
        if rec.priority == NORMAL:  # LOW jobs ahead wait behind this one
            return 1 + sum(self._priority(db, k) == NORMAL for k in ahead)
        behind = queue[queue.index(rec.key) + 1 :]
        return 1 + len(ahead) + sum(self._priority(db, k) == NORMAL for k in behind)

    def _priority(self, db: Txn, key: str) -> int | None:
        rec = self._record(db, key)
        return None if rec is None else rec.priority

    def _status(self, db: Txn, rec: JobRecord) -> JobStatus:
        position = eta = None
        if rec.state == JobState.QUEUED:
            position = self._position(db, rec)
        elif rec.state == JobState.RUNNING:
            rate, updated = rec.rate, rec.updated
            if isinstance(rate, (int, float)) and rate > 0 and isinstance(updated, (int, float)):
                eta = max(0.0, (rec.total - rec.step) / rate - (time.time() - updated))
        return JobStatus(
            key=rec.key,
            state=rec.state,
            step=rec.step,
            total=rec.total,
            n_frames=rec.n_frames,
            position=position,
            eta_s=eta,
            message="" if rec.state in ACTIVE else rec.message,
            kind=rec.kind,
            cancelling=rec.state == JobState.RUNNING and rec.cancel,
        )


class JobQueue(BaseQueue):
    """Jobs in one diskcache directory (`tempsup.jobs.disk.DiskStore`), shared by web
    processes and workers on one machine (the embedded default). Options: see `BaseQueue`."""

    backend = "diskcache"

    def __init__(self, directory: str | Path, **options: Any) -> None:
        super().__init__(**options)
        self.directory = Path(directory)
        self._store = DiskStore(self.directory)

    @property
    def store(self) -> DiskStore:
        return self._store

    @property
    def cache(self) -> diskcache.Cache:
        """The diskcache itself (diagnostics and tests)."""
        return self._store.cache

    def copy(self) -> JobQueue:
        return JobQueue(self.directory, **self.options)

    def worker_command(self, threads: int = 1, poll: float = 0.2, imports: Imports = ()) -> Command:
        cmd = [
            sys.executable, "-m", "tempsup.jobs.worker", "--cache", str(self.directory),
            "--threads", str(threads), "--poll", str(poll),
        ]  # fmt: skip
        return [*cmd, *(arg for module in imports for arg in ("--import", module))], {}

    def __repr__(self) -> str:
        return f"JobQueue({str(self.directory)!r})"


__all__ = ["LOW", "NORMAL", "BaseQueue", "Claim", "Command", "Imports", "JobQueue", "pid_alive"]
