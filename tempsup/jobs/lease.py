"""The worker's lease: claim queued jobs, write their frames and heartbeats, end them;
and fail the jobs of workers that died.

`WorkerLease` is the half of a queue (`tempsup.jobs.queue.BaseQueue`) that
worker processes use (`tempsup.jobs.worker` is its only caller); the web's
verbs are in `tempsup.jobs.queue`. A claim (`Claim`) is a RUNNING job under
one worker's pid, host and token; every write of the worker names the claim,
and once the job is no longer that claim's (given back, ended, or failed by
recovery) its writes are ignored ("lost").

Dead-worker recovery is here because a job's liveness is the lease's: the
claim writes the pid and host, every frame and heartbeat (`progress`) the
time, and a lease whose worker is gone (pid dead on this host, or no beat for
`heartbeat_timeout` s) has expired. `recover` fails such jobs (never a
silent re-run); workers call it between jobs, and the queue's `status` when a
visitor polls a job that looks dead.
"""

from __future__ import annotations

import os
import socket
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tempsup.errors import TempsupError
from tempsup.jobs.entries import drop_frames, get_record, get_spec, put_record
from tempsup.jobs.kinds import JobKind
from tempsup.jobs.record import ACTIVE, NORMAL, JobRecord, JobState, transition
from tempsup.jobs.store import (
    QUEUE,
    RUNNING,
    Store,
    Txn,
    frame_to_bytes,
    read_list,
    remove_from,
    run_key,
    write_list,
)

# A RUNNING job whose heartbeat is older than this is dead, whatever its pid
# says (a worker on another host, or a pid reused after a crash). Workers beat
# every few seconds from a thread, so even a minutes-long optimizer step
# never looks dead.
HEARTBEAT_TIMEOUT = 60.0
HOST = socket.gethostname()


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


class WorkerLease(ABC):
    """The worker's verbs of a queue, and the recovery of dead workers' jobs.

    A mixin of `tempsup.jobs.queue.BaseQueue`, which supplies the store, the
    clock, `heartbeat_timeout` and `_notify` (wake workers: a job was re-queued).
    """

    heartbeat_timeout: float

    @property
    @abstractmethod
    def store(self) -> Store: ...

    @abstractmethod
    def clock(self) -> float:
        """The queue's clock (`time.time`): heartbeats and record times."""

    @abstractmethod
    def _notify(self) -> None: ...

    # ---- claims and the claimed job's writes ---------------------------------------------

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
            records = {key: get_record(db, key) for key in queue}
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
                found = get_spec(db, key)
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
                    put_record(db, transition(rec, JobState.FAILED, message=msg))
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
        now = self.clock()
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
        put_record(db, rec)
        write_list(db, RUNNING, [*read_list(db, RUNNING), rec.key])
        return claim

    def _waits(self, db: Txn, found: tuple[JobKind, Any]) -> bool:
        """Whether a job needs (warm-starts from) a job that is still queued or running."""
        kind, spec = found
        needed = (get_record(db, k) for k in kind.needs(spec))
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
                updated=self.clock(),
            )
            put_record(db, rec)
            return "cancel" if rec.cancel else "ok"

        return self.store.atomic(txn)

    def progress(self, claim: Claim, step: int, rate: float | None) -> bool:
        """Heartbeat with the step reached and the measured steps/s; False if lost."""

        def txn(db: Txn) -> bool:
            rec = self._owned(db, claim)
            if rec is None:
                return False
            rec = transition(
                rec,
                JobState.RUNNING,
                step=max(rec.step, int(step)),
                rate=rate,
                updated=self.clock(),
            )
            put_record(db, rec)
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
            drop_frames(db, claim.key, rec)
            remove_from(db, RUNNING, claim.key)
            rec = transition(
                rec,
                JobState.DONE,
                step=rec.total,
                n_frames=n_frames,
                finished=self.clock(),
                run_id=claim.token,
                cancel=False,
                message=f"done: {rec.total} steps, {n_frames} frames",
            )
            put_record(db, rec)
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
            rec = transition(rec, state, finished=self.clock(), cancel=False, message=message)
            put_record(db, rec)
            return True

        return self.store.atomic(txn)

    def requeue(self, claim: Claim, message: str) -> bool:
        """Give a claimed job back (worker shut down): first in line, frames cleared."""

        def txn(db: Txn) -> bool:
            rec = self._owned(db, claim)
            if rec is None:
                return False
            drop_frames(db, claim.key, rec)
            remove_from(db, RUNNING, claim.key)
            rest = [k for k in read_list(db, QUEUE) if k != claim.key]
            write_list(db, QUEUE, [claim.key, *rest])
            rec = transition(
                rec, JobState.QUEUED, step=0, n_frames=0, token=None, pid=None, message=message
            )
            put_record(db, rec)
            return True

        done = self.store.atomic(txn)
        if done:
            self._notify()
        return done

    # ---- dead workers -----------------------------------------------------------------

    def recover(self) -> list[str]:
        """Fail RUNNING jobs whose worker is gone (pid dead on this host, or no
        heartbeat for `heartbeat_timeout` s); return their keys."""
        return self._recover_keys(None)

    def _owned(self, db: Txn, claim: Claim) -> JobRecord | None:
        rec = get_record(db, claim.key)
        if rec is None or rec.state != JobState.RUNNING or rec.token != claim.token:
            return None
        return rec

    def _is_dead(self, rec: JobRecord) -> bool:
        updated = rec.updated
        if not isinstance(updated, (int, float)) or self.clock() - updated > self.heartbeat_timeout:
            return True
        pid = rec.pid
        return rec.host == HOST and isinstance(pid, int) and not pid_alive(pid)

    def _recover_keys(self, keys: list[str] | None) -> list[str]:
        def txn(db: Txn) -> list[str]:
            dead = []
            running = read_list(db, RUNNING)
            keep = []
            for key in running:
                rec = get_record(db, key)
                if rec is None or rec.state != JobState.RUNNING:
                    continue
                if (keys is None or key in keys) and self._is_dead(rec):
                    rec = transition(
                        rec,
                        JobState.FAILED,
                        finished=self.clock(),
                        token=None,
                        cancel=False,
                        message=f"worker died at step {rec.step}",
                    )
                    put_record(db, rec)
                    dead.append(key)
                else:
                    keep.append(key)
            if keep != running:
                write_list(db, RUNNING, keep)
            return dead

        return self.store.atomic(txn)
