"""A job's record: its states, the one table of allowed state changes, and what a client sees.

Every change of a job's stored record goes through `transition(record, state,
**changes)`, which refuses a change the table `TRANSITIONS` does not list, so
the life of a job reads in one place:

    (new) -> QUEUED -> RUNNING -> DONE
                  \\          \\-> FAILED, CANCELLED (frames kept), QUEUED (worker stopped)
                   \\-> CANCELLED (before it started)
    FAILED, CANCELLED -> QUEUED (submitted again); DONE -> FAILED (result unreadable)

and any state -> DONE when a finished result is stored directly (`put_result`:
presets, sweep points; a worker still holding the job is fenced off by its token).
Records are stored as JSON; a record that cannot be read is a missing one.
This module knows no store, no kind and no wording: the app words a status
(`app.jobwords`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from tempsup.errors import TempsupError


class JobState(str, Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE = (JobState.QUEUED, JobState.RUNNING)

# Priorities: workers take every NORMAL job before any LOW one (the presets the
# server pre-trains in the background wait behind what visitors ask for).
NORMAL, LOW = 0, 1
PRIORITIES = (NORMAL, LOW)

_Q, _R, _D, _F, _C = (JobState.QUEUED, JobState.RUNNING, JobState.DONE, JobState.FAILED,
                      JobState.CANCELLED)  # fmt: skip

# state -> the states it may change to (a RUNNING job stays RUNNING while it reports progress).
TRANSITIONS: dict[JobState, frozenset[JobState]] = {
    _Q: frozenset({_R, _C, _F, _D}),  # claimed; cancelled; config unreadable; stored directly
    _R: frozenset({_R, _D, _F, _C, _Q}),  # progress; finished; failed/died; cancelled; requeued
    _D: frozenset({_F, _D}),  # its result is unreadable; stored again
    _F: frozenset({_Q, _D}),  # submitted again; stored directly
    _C: frozenset({_Q, _D}),
}


@dataclass(frozen=True)
class JobRecord:
    """The stored record of one job (status:{key} in the store)."""

    key: str  # spec.key: the job id
    kind: str  # the job kind's name ("run", "sweep", "bows", ...)
    state: JobState
    total: int  # spec.steps
    client: str  # who asked (a browser session): per-client limits
    step: int = 0  # optimizer steps done
    n_frames: int = 0  # frames stored so far
    message: str = ""  # why it ended (failed, cancelled, stored), without advice
    priority: int = NORMAL
    submitted: float | None = None  # times (time.time) of the record's life
    started: float | None = None
    finished: float | None = None
    updated: float | None = None  # the claiming worker's last heartbeat
    pid: int | None = None  # the claiming worker (pid on host), and its fencing token
    host: str | None = None
    token: str | None = None
    rate: float | None = None  # measured steps per second while RUNNING
    cancel: bool = False  # the user asked a RUNNING job to stop
    run_id: str | None = None  # names the stored result (a decoded-result cache key)
    attempts: int = 0  # claims so far

    def to_json(self) -> str:
        return json.dumps({**dataclasses.asdict(self), "state": self.state.value})

    @classmethod
    def from_json(cls, text: str, key: str) -> JobRecord | None:
        """The record of job `key` stored as `text`; None if it is not a readable one."""
        try:
            data = json.loads(text)
            data["state"] = JobState(data["state"])
            data.setdefault("kind", "run")  # records of older versions: every job was a run
            data.setdefault("priority", NORMAL)
            names = {f.name for f in dataclasses.fields(cls)}
            rec = cls(**{k: v for k, v in data.items() if k in names})
        except (ValueError, TypeError, KeyError):
            return None
        ints = (rec.step, rec.total, rec.n_frames, rec.attempts, rec.priority)
        if any(isinstance(v, bool) or not isinstance(v, int) for v in ints):
            return None
        if rec.key != key or rec.n_frames < 0:
            return None
        return rec


def new_record(key: str, kind: str, total: int, client: str, *, attempts: int = 0,
               priority: int = NORMAL, now: float | None = None) -> JobRecord:  # fmt: skip
    """A freshly QUEUED job (the only way a record is born)."""
    if priority not in PRIORITIES:
        raise TempsupError(f"priority: expected one of {PRIORITIES}, got {priority!r}")
    return JobRecord(key=key, kind=kind, state=JobState.QUEUED, total=total, client=client,
                     attempts=attempts, priority=priority, submitted=now)  # fmt: skip


def transition(record: JobRecord, state: JobState, **changes: Any) -> JobRecord:
    """`record` moved to `state` with `changes`; TempsupError if TRANSITIONS forbids it."""
    if state not in TRANSITIONS[record.state]:
        raise TempsupError(
            f"job {record.key}: cannot go from {record.state.value} to {state.value}; "
            f"allowed: {', '.join(sorted(s.value for s in TRANSITIONS[record.state]))}"
        )
    return dataclasses.replace(record, state=state, **changes)


@dataclass(frozen=True)
class JobStatus:
    """What a client may know about one job; `to_dict` is JSON-able (a dcc.Store).

    `message` is the record's reason (why a job failed or was cancelled); the
    app words the rest (place in line, progress) from the fields.
    """

    key: str  # spec.key (RunConfig.key for a run)
    state: JobState
    step: int  # optimizer steps done
    total: int  # spec.steps
    n_frames: int  # frames stored so far
    position: int | None  # 1-based place in the queue while QUEUED, else None
    eta_s: float | None  # seconds left while RUNNING (measured step rate), else None
    message: str  # the record's reason, "" while active
    kind: str = "run"  # the job kind (tempsup.jobs.kinds): "run", "sweep", ...
    cancelling: bool = False  # RUNNING, and asked to stop at its next frame

    @property
    def active(self) -> bool:
        """Queued or running: more frames may still come."""
        return self.state in ACTIVE

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["state"] = self.state.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobStatus:
        return cls(**{**data, "state": JobState(data["state"])})
