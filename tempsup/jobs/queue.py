"""The job queue: submit a spec, stream its frames while it trains, read its result.

A spec is any kind of `tempsup.jobs.kinds` (a `RunConfig`, a `SweepSpec`, a
bows config or sweep); every kind shares this queue, its limits, cancel and
dedupe. One job per spec: the job id is `spec.key`, so identical specs share
one job and one cached result (a shared link replays instantly). Web
processes call `submit`, `status`, `frames(key, cursor)`, `result`/`run`,
`cancel`: this module. Worker processes (`tempsup.jobs.worker`) `claim`
queued jobs, `put_frame` as they train, and `finish`, `end` or `requeue`
them: the queue's worker lease (`tempsup.jobs.lease.WorkerLease`, which also
fails the jobs of dead workers). Finished results are stored and read back
by the queue's results store (`tempsup.jobs.results.Results`).

    status = queue.submit(SweepSpec(base, sparsities=(0.1, 0.5, 0.9)), client)
    frames = queue.frames(status.key, cursor)   # dicts of SWEEP_FRAME_ARRAYS, one value per point
    result = queue.result(status.key)           # SweepResult once DONE: .rows, .keys
    run = queue.run(result.keys[i])             # point i's Run, stored DONE when the sweep finished

Two backends share every line of this logic (`BaseQueue`) and differ only in
their `tempsup.jobs.store.Store`: `JobQueue` (one diskcache directory shared
by every process on the machine, `tempsup.jobs.disk`; workers poll) and
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
import sys
import time
from abc import abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

import diskcache
import numpy as np

from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.jobs.disk import DiskStore
from tempsup.jobs.entries import drop_frames, get_record, get_spec, put_record, spec_entry
from tempsup.jobs.kinds import JobKind, check_untrusted, get_kind, kind_of, text_digest
from tempsup.jobs.lease import HEARTBEAT_TIMEOUT, Claim, WorkerLease, pid_alive
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
from tempsup.jobs.results import Results
from tempsup.jobs.store import (
    QUEUE,
    RUNNING,
    Store,
    Txn,
    blob_key,
    config_key,
    frame_from_bytes,
    read_list,
    remove_from,
    run_key,
    write_list,
)

# The largest blob (an uploaded text) the store takes.
MAX_BLOB = 2_000_000
Imports = tuple[str, ...]  # modules a worker process imports first
Command = tuple[list[str], dict[str, str]]  # a worker's command line and extra environment


class BaseQueue(WorkerLease):
    """The queue's logic over a `Store`; `JobQueue` and `RedisQueue` supply the store.

    `limits` (`tempsup.jobs.limits.Limits`) bound what clients may queue. With
    `trust_specs` off (what a web server opens) every spec is checked by
    `tempsup.jobs.kinds.check_untrusted`: warm starts only from job keys,
    content only by its hash. `notify()` is called after jobs were queued
    (the Redis backend sends a Celery task; diskcache workers poll).
    `heartbeat_timeout`: see `tempsup.jobs.lease`.
    """

    backend = "base"

    def __init__(
        self,
        store: Store,
        *,
        limits: Limits | None = None,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
        trust_specs: bool = True,
        notify: Callable[[], None] | None = None,
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise TempsupError(f"queue: limits expected a Limits, got {type(limits).__name__}")
        self._store = store
        self.limits = limits or Limits()
        self.heartbeat_timeout = float(heartbeat_timeout)
        self.trust_specs = bool(trust_specs)
        self.notify_hook = notify
        self.results = Results(store, self.clock)

    @property
    def options(self) -> dict[str, Any]:
        """What `copy` passes on: a new handle behaves like this one."""
        return {
            "limits": self.limits,
            "heartbeat_timeout": self.heartbeat_timeout,
            "trust_specs": self.trust_specs,
            "notify": self.notify_hook,
        }

    @property
    def store(self) -> Store:
        return self._store

    def clock(self) -> float:
        """`time.time`, looked up at each call: one clock for every record time,
        heartbeat, rate window and ETA of the queue, its lease and its results."""
        return time.time()

    # ---- what a backend provides ------------------------------------------------------

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
        rec = get_record(view, key)
        # Verify a finished result before promising it (outside the lock: decoding is slow).
        done = rec is not None and rec.state == JobState.DONE
        if done and self.results.load(rec) is not None and get_spec(view, key) is not None:
            return self._status(view, rec)

        def txn(db: Txn) -> tuple[JobStatus, bool]:
            rec = get_record(db, key)
            if rec is not None and rec.state in (*ACTIVE, JobState.DONE):
                if get_spec(db, key) is None:  # a damaged config entry: rewrite it
                    db.set(config_key(key), spec_entry(kind, spec))
                return self._status(db, rec), False
            now = self.clock()
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
        rec = get_record(view, key)
        if rec is None:
            return None
        if rec.state == JobState.RUNNING and self._is_dead(rec):
            self._recover_keys([key])
            rec = get_record(view, key)
        elif rec.state == JobState.QUEUED and key not in read_list(view, QUEUE):

            def txn(db: Txn) -> None:  # the queue entry was damaged: put the job back in line
                now = get_record(db, key)
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
        rec = get_record(self.store.view(), key)
        if rec is None or start >= rec.n_frames:
            return []
        kind = get_kind(rec.kind)
        if rec.state == JobState.DONE:
            result = self.results.load(rec)
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
                now = get_record(self.store.view(), key)
                if now is not None and now.state == JobState.DONE:
                    return out + self.frames(key, i)  # finished in between: frames moved
                break
            out.append(frame)
        return out

    def spec(self, key: str) -> Any:
        """The job's spec (RunConfig, SweepSpec, ...), or None if unknown or unreadable."""
        found = get_spec(self.store.view(), key)
        return None if found is None else found[1]

    def result(self, key: str) -> Any:
        """The result of a DONE job (a Run, a SweepResult, ...), else None;
        a damaged one marks the job FAILED so that `submit` recomputes it."""
        rec = get_record(self.store.view(), key)
        if rec is None or rec.state != JobState.DONE:
            return None
        return self.results.load(rec)

    def run(self, key: str) -> Run | None:
        """The finished Run of a DONE run job, else None (other kinds: use `result`)."""
        rec = get_record(self.store.view(), key)
        if rec is None or rec.state != JobState.DONE or rec.kind != "run":
            return None
        return self.results.load(rec)

    def cancel(self, key: str) -> JobStatus | None:
        """QUEUED: cancelled at once. RUNNING: flagged; the worker stops at its next
        frame and keeps the frames so far. Finished jobs are left as they are."""

        def txn(db: Txn) -> JobStatus | None:
            rec = get_record(db, key)
            if rec is None:
                return None
            if rec.state == JobState.QUEUED:
                remove_from(db, QUEUE, key)
                rec = transition(rec, JobState.CANCELLED, message="cancelled before it started")
                put_record(db, rec)
            elif rec.state == JobState.RUNNING and not rec.cancel:
                rec = transition(rec, JobState.RUNNING, cancel=True)
                put_record(db, rec)
            return self._status(db, rec)

        return self.store.atomic(txn)

    def retry(self, key: str, client: str | None = None) -> JobStatus:
        """Queue a FAILED or CANCELLED job again (same limits as `submit`).

        Active or finished jobs are returned unchanged.
        """
        rec = get_record(self.store.view(), key)
        if rec is None:
            raise TempsupError(f"retry: expected the key of a known job, got {key!r}")
        spec = self.spec(key)
        if spec is None:
            raise TempsupError(f"retry: the stored config of job {key} is unreadable; submit it")
        return self.submit(spec, client if client is not None else rec.client, rec.priority)

    def put_run(self, run: Run) -> None:
        """Store a finished run directly (presets, CLI results, sweep points): its job is DONE."""
        self.results.put(run.config, run)

    def put_result(self, spec: Any, result: Any) -> None:
        """Store a finished result of `spec` directly: its job is DONE."""
        self.results.put(spec, result)

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

    def details(self, key: str) -> dict[str, Any] | None:
        """The raw status record (claiming pid and host, attempts, client, times): diagnostics."""
        rec = get_record(self.store.view(), key)
        if rec is None:
            return None
        return {**dataclasses.asdict(rec), "state": rec.state.value}

    def queued(self) -> list[str]:
        """Keys of the QUEUED jobs, oldest first."""
        return read_list(self.store.view(), QUEUE)

    def running(self) -> list[str]:
        """Keys of the RUNNING jobs."""
        return read_list(self.store.view(), RUNNING)

    # ---- submit -----------------------------------------------------------------------

    def _check_limits(self, db: Txn, spec: Any, client: str, now: float) -> None:
        queue = read_list(db, QUEUE)
        mine = waiting = 0
        for key in (*queue, *read_list(db, RUNNING)):
            rec = get_record(db, key)
            if rec is None or rec.state not in ACTIVE or rec.priority != NORMAL:
                continue
            mine += rec.client == client
            waiting += rec.state == JobState.QUEUED and key in queue
        self.limits.check(spec, waiting, mine, self.limits.recent(db, client, now), now)

    def _enqueue(self, db: Txn, kind: JobKind, spec: Any, client: str, old: JobRecord | None,
                 priority: int, now: float) -> JobRecord:  # fmt: skip
        key = spec.key
        drop_frames(db, key, old)
        db.delete(run_key(key))
        db.set(config_key(key), spec_entry(kind, spec))
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
        put_record(db, rec)
        return rec

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
        rec = get_record(db, key)
        return None if rec is None else rec.priority

    def _status(self, db: Txn, rec: JobRecord) -> JobStatus:
        position = eta = None
        if rec.state == JobState.QUEUED:
            position = self._position(db, rec)
        elif rec.state == JobState.RUNNING:
            rate, updated = rec.rate, rec.updated
            if isinstance(rate, (int, float)) and rate > 0 and isinstance(updated, (int, float)):
                eta = max(0.0, (rec.total - rec.step) / rate - (self.clock() - updated))
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
        self.directory = Path(directory)
        self._disk = DiskStore(self.directory)
        super().__init__(self._disk, **options)

    @property
    def store(self) -> DiskStore:
        return self._disk

    @property
    def cache(self) -> diskcache.Cache:
        """The diskcache itself (diagnostics and tests)."""
        return self._disk.cache

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


# Claim and pid_alive live with the lease (tempsup.jobs.lease); they are named here too,
# as they were before the lease had a module of its own.
__all__ = ["LOW", "NORMAL", "BaseQueue", "Claim", "Command", "Imports", "JobQueue", "pid_alive"]
