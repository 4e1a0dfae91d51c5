"""The job queue: submit a spec, stream its frames while it trains, read its result.

A spec is a `RunConfig` (result: a `Run`), a `tempsup.sweep.SweepSpec` (result:
a `SweepResult`) or any kind registered in `tempsup.jobkinds`; every kind
shares this queue, its limits, cancel and dedupe. One job per spec: the job id
is `spec.key`, so identical specs share one job and one cached result (a
shared link replays instantly). Web processes call `submit`, `status`,
`frames(key, cursor)`, `result`/`run`, `cancel`; separate worker processes
(`tempsup.worker`) claim queued jobs, train them and write frames back as
they go (architecture.md, "Jobs").

Sweeps, for a phase diagram:

    status = queue.submit(SweepSpec(base, sparsities=(0.1, 0.5, 0.9)), client)
    frames = queue.frames(status.key, cursor)   # dicts of SWEEP_FRAME_ARRAYS, one value per point
    result = queue.result(status.key)           # SweepResult once DONE: .rows, .keys
    run = queue.run(result.keys[i])             # point i's Run, stored DONE when the sweep finished

Two backends share every line of the queue's logic (`BaseQueue`) and differ
only in their `Store`, the few primitives the logic needs (read, write,
delete, frames, and an atomic read-modify-write):

- `JobQueue` (the default): one diskcache directory shared by every web and
  worker process on the machine; atomic = `cache.transact()`, an SQLite
  write lock; workers poll it (`python -m tempsup.worker`).
- `tempsup.jobs_redis.RedisQueue`: Redis as the store (atomic = WATCH/MULTI,
  retried on conflict) and Celery as the dispatcher; workers are
  `celery -A tempsup.celery_app worker` on any machine that reaches Redis.

`open_queue()` picks one from the environment: `TEMPSUP_REDIS_URL` set →
Redis + Celery, else diskcache in `$TEMPSUP_CACHE`. Layout (names are
prefixed in Redis; values are JSON text or bytes, never pickles):

    queue                 JSON list of QUEUED keys, oldest first (the FIFO)
    running               JSON list of RUNNING keys (what `recover` inspects)
    status:{key}          JSON status record: kind, state, step, n_frames, client,
                          pid/host/token of the claiming worker, heartbeat...
    config:{key}          JSON {"kind": name, "spec": spec.to_json()} (an entry
                          without a kind, written by older versions, is a RunConfig)
    frame:{key}:{i}       published frame i as `np.savez` bytes (in Redis: one list
                          `frames:{key}`), while running and kept after a failure or
                          cancel; dropped once the job is DONE
    run:{key}             result.to_bytes() of a DONE job; its frames are served from it
    rate:{client hash}    JSON list of the times a client queued a job (the rate limit)

Every read-modify-write is atomic, so two workers never claim the same job and
limits hold under concurrent submits. A worker's writes carry the claim's
token: once a job is re-queued or recovered, a stale worker's writes are
ignored. A dead worker (pid gone on this host, or no heartbeat for
`heartbeat_timeout` s) leaves its job FAILED, never silently re-run. An entry
that cannot be read is treated as missing: a damaged frame ends a cursor read
early, a damaged result marks the job FAILED so that the next `submit`
recomputes it. A store that cannot be reached raises `StoreUnavailable` (a
TempsupError that says so).

Limits for a public demo, each refusal a TempsupError that explains itself:
`max_work` (job size in multiply-adds), `max_queue` (jobs waiting),
`max_per_client` (active jobs per browser) and `max_rate` new jobs per
client per `rate_window` seconds.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import socket
import sys
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import diskcache
import numpy as np

from tempsup.config import RunConfig
from tempsup.errors import TempsupError
from tempsup.jobkinds import RUN_ARRAYS, JobKind, get_kind, kind_of

if TYPE_CHECKING:  # tempsup.run imports torch; web processes need not load it to poll
    from tempsup.run import Run
    from tempsup.sweep import SweepSpec

# A RUNNING job whose heartbeat is older than this is dead, whatever its pid
# says (a worker on another host, or a pid reused after a crash). Workers beat
# every few seconds from a thread, so even a minutes-long optimizer step
# never looks dead.
HEARTBEAT_TIMEOUT = 60.0
# Decoded finished runs kept per queue handle: a replay reads the same run a few times.
RUN_CACHE_SIZE = 4
# The rate limit's window: `max_rate` new jobs per client per this many seconds.
RATE_WINDOW = 60.0
HOST = socket.gethostname()

QUEUE = "queue"
RUNNING = "running"
# A warm start named by a finished job's key (what a web client may ask for).
RUN_KEY = re.compile(r"^[0-9a-f]{16}$")

T = TypeVar("T")


class StoreUnavailable(TempsupError):
    """The job store (Redis) cannot be reached; the operation may be retried."""


def default_cache_dir() -> Path:
    """`$TEMPSUP_CACHE`, else `<repo>/cache/jobs` (runtime data stays under cache/)."""
    env = os.environ.get("TEMPSUP_CACHE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "cache" / "jobs"


def status_key(key: str) -> str:
    return f"status:{key}"


def config_key(key: str) -> str:
    return f"config:{key}"


def frame_key(key: str, index: int) -> str:
    return f"frame:{key}:{index}"


def run_key(key: str) -> str:
    return f"run:{key}"


def rate_key(client: str) -> str:
    digest = hashlib.sha256(client.encode("utf-8", "surrogatepass")).hexdigest()
    return f"rate:{digest[:16]}"


class JobState(str, Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE = (JobState.QUEUED, JobState.RUNNING)


@dataclass(frozen=True)
class JobStatus:
    """What a client may know about one job; `to_dict` is JSON-able (a dcc.Store)."""

    key: str  # spec.key (RunConfig.key for a run)
    state: JobState
    step: int  # optimizer steps done
    total: int  # spec.steps
    n_frames: int  # frames stored so far
    position: int | None  # 1-based place in the queue while QUEUED, else None
    eta_s: float | None  # seconds left while RUNNING (measured step rate), else None
    message: str  # human-readable: "queued (2nd in line)", "training: step 340/2000", error
    kind: str = "run"  # the job kind (tempsup.jobkinds): "run", "sweep", ...

    @property
    def active(self) -> bool:
        """Queued or running: more frames may still come."""
        return self.state in ACTIVE

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["state"] = self.state.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobStatus:
        return cls(**{**data, "state": JobState(data["state"])})


@dataclass(frozen=True)
class Claim:
    """A worker's hold on one RUNNING job; `token` fences stale writers."""

    key: str
    spec: Any  # a RunConfig, SweepSpec, ... (see `kind`)
    token: str
    kind: JobKind

    @property
    def config(self) -> Any:
        """The spec (a RunConfig for a run job)."""
        return self.spec


# ---- frames as bytes ---------------------------------------------------------------


def frame_to_bytes(frame: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **frame)
    return buf.getvalue()


def frame_from_bytes(data: bytes, names: tuple[str, ...] = RUN_ARRAYS) -> dict[str, np.ndarray]:
    """Decode a stored frame holding the arrays `names`; TempsupError if it is not one."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except Exception as exc:  # numpy raises many types for damaged data
        raise TempsupError(f"stored frame: expected np.savez bytes ({exc})") from None
    missing = [name for name in names if name not in arrays]
    if missing:
        raise TempsupError(f"stored frame: missing {', '.join(missing)}")
    return {name: arrays[name] for name in names}


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


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# ---- the storage a backend provides ------------------------------------------------


class Txn(Protocol):
    """Reads and writes of one store; inside `Store.atomic` they form one transaction.

    `text`/`data` return None for a missing entry and for one that cannot be
    read as text (JSON) or bytes: a damaged entry is a missing one.
    """

    def text(self, name: str) -> str | None: ...
    def data(self, name: str) -> bytes | None: ...
    def set(self, name: str, value: str | bytes) -> None: ...
    def delete(self, name: str) -> None: ...
    def set_frame(self, key: str, index: int, data: bytes, stored: int) -> None: ...
    def drop_frames(self, key: str, stored: int) -> None: ...


class Store(Protocol):
    def view(self) -> Txn:
        """Reads and writes outside a transaction (each one atomic by itself)."""
        ...

    def atomic(self, fn: Callable[[Txn], T]) -> T:
        """Run `fn` as one transaction: all its writes or none; it may run more than once."""
        ...

    def frames(self, key: str, start: int, stop: int) -> list[bytes | None]:
        """Stored frames start..stop-1 of a job (None where missing)."""
        ...

    def close(self) -> None: ...


class DiskTxn:
    """Direct reads and writes of a diskcache; inside `transact()` they are one transaction."""

    def __init__(self, cache: diskcache.Cache) -> None:
        self.cache = cache

    def _get(self, name: str, kind: type) -> Any:
        try:
            value = self.cache.get(name)
        except Exception:  # a damaged entry (unreadable file, bad pickle) is a missing one
            return None
        return value if isinstance(value, kind) else None

    def text(self, name: str) -> str | None:
        return self._get(name, str)

    def data(self, name: str) -> bytes | None:
        return self._get(name, bytes)

    def set(self, name: str, value: str | bytes) -> None:
        self.cache.set(name, value)

    def delete(self, name: str) -> None:
        self.cache.delete(name)

    def set_frame(self, key: str, index: int, data: bytes, stored: int) -> None:
        self.cache.set(frame_key(key, index), data)

    def drop_frames(self, key: str, stored: int) -> None:
        for i in range(stored):
            self.cache.delete(frame_key(key, i))


class DiskStore:
    """A diskcache directory, reopened after a fork (SQLite handles must not cross one)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._cache: diskcache.Cache | None = None
        self._cache_pid = -1
        # One Cache per process, made once: threads of a web worker opening it at the
        # same moment would race on its settings writes ("database is locked") and a
        # half-made one could keep the SQLite lock until collected.
        self._open_lock = threading.Lock()

    @property
    def cache(self) -> diskcache.Cache:
        cache = self._cache
        if cache is not None and self._cache_pid == os.getpid():
            return cache
        with self._open_lock:
            if self._cache is None or self._cache_pid != os.getpid():
                # eviction off: a culled queue or status entry would lose jobs silently
                self._cache = diskcache.Cache(str(self.directory), eviction_policy="none")
                self._cache_pid = os.getpid()
            return self._cache

    def view(self) -> DiskTxn:
        return DiskTxn(self.cache)

    def atomic(self, fn: Callable[[Txn], T]) -> T:
        with self.cache.transact(retry=True):
            return fn(DiskTxn(self.cache))

    def frames(self, key: str, start: int, stop: int) -> list[bytes | None]:
        view = self.view()
        return [view.data(frame_key(key, i)) for i in range(start, stop)]

    def close(self) -> None:
        if self._cache is not None and self._cache_pid == os.getpid():
            self._cache.close()
        self._cache = None


# ---- the queue ---------------------------------------------------------------------


def _positive_int(owner: str, name: str, value: Any, allow_none: bool = False) -> None:
    if allow_none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TempsupError(f"{owner}: {name} expected an integer >= 1, got {value!r}")


class BaseQueue(ABC):
    """The queue's logic over a `Store`; `JobQueue` and `RedisQueue` supply the store.

    `max_queue` bounds the jobs waiting in total, `max_per_client` the queued or
    running jobs one client (a browser session) may own, `max_work` the size of
    a job (`spec.work`, multiply-adds) this server accepts (None = only the
    hard limits of the spec), `max_rate` the jobs one client may queue per
    `rate_window` seconds (None = no rate limit). With `warm_start_files`
    off (what `open_queue` gives a web server) a spec may warm-start only
    from a job key, never from a file path on the worker's disk.
    """

    backend = "base"

    def __init__(
        self,
        *,
        max_queue: int = 50,
        max_per_client: int = 3,
        max_work: float | None = None,
        max_rate: int | None = None,
        rate_window: float = RATE_WINDOW,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
        warm_start_files: bool = True,
    ) -> None:
        owner = type(self).__name__
        _positive_int(owner, "max_queue", max_queue)
        _positive_int(owner, "max_per_client", max_per_client)
        _positive_int(owner, "max_rate", max_rate, allow_none=True)
        if max_work is not None and not (
            isinstance(max_work, (int, float)) and not isinstance(max_work, bool) and max_work > 0
        ):
            raise TempsupError(f"{owner}: max_work expected a positive number, got {max_work!r}")
        self.max_queue = max_queue
        self.max_per_client = max_per_client
        self.max_work = None if max_work is None else float(max_work)
        self.max_rate = max_rate
        self.rate_window = float(rate_window)
        self.heartbeat_timeout = float(heartbeat_timeout)
        self.warm_start_files = bool(warm_start_files)
        self._runs: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._runs_lock = threading.Lock()  # web processes poll from several threads

    @property
    def limits(self) -> dict[str, Any]:
        return {
            "max_queue": self.max_queue,
            "max_per_client": self.max_per_client,
            "max_work": self.max_work,
            "max_rate": self.max_rate,
            "rate_window": self.rate_window,
            "heartbeat_timeout": self.heartbeat_timeout,
            "warm_start_files": self.warm_start_files,
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
    def worker_command(
        self, threads: int = 1, parent: int | None = None, poll: float = 0.2
    ) -> tuple[list[str], dict[str, str]]:
        """The command line and extra environment of one worker process for this queue."""
        ...

    def _notify(self) -> None:  # noqa: B027 - a hook: most backends need nothing here
        """Jobs were queued: wake the workers (diskcache workers poll: nothing to do)."""

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> BaseQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the public interface -------------------------------------------------------

    def submit(self, spec: RunConfig | SweepSpec | Any, client: str = "local") -> JobStatus:
        """Queue `spec` (a RunConfig, SweepSpec, ...) unless its job exists; return its status.

        DONE, QUEUED and RUNNING jobs are returned as they are (a DONE job is
        served from the cache); FAILED and CANCELLED ones are queued again.
        Raises TempsupError when the job is larger than `max_work`, the client
        has too many active jobs or queued too many lately, or the queue is full.
        """
        kind = kind_of(spec)
        client = str(client)
        self._check_warm_start(spec)
        key = spec.key
        view = self.store.view()
        rec = self._record(view, key)
        # Verify a finished result before promising it (outside the lock: decoding is slow).
        done = rec is not None and rec["state"] == JobState.DONE
        if done and self._load_result(rec) is not None and self._spec(view, key) is not None:
            return self._status(view, rec)

        def txn(db: Txn) -> tuple[JobStatus, bool]:
            rec = self._record(db, key)
            if rec is not None and rec["state"] in (*ACTIVE, JobState.DONE):
                if self._spec(db, key) is None:  # a damaged config entry: rewrite it
                    db.set(config_key(key), _spec_entry(kind, spec))
                return self._status(db, rec), False
            self._check_limits(db, spec, client)
            rec = self._enqueue(db, kind, spec, client, rec)
            return self._status(db, rec, self._list(db, QUEUE)), True

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
        if rec["state"] == JobState.RUNNING and self._is_dead(rec):
            self._recover_keys([key])
            rec = self._record(view, key)
        elif rec["state"] == JobState.QUEUED and key not in self._list(view, QUEUE):

            def txn(db: Txn) -> None:  # the queue entry was damaged: put the job back in line
                now = self._record(db, key)
                queue = self._list(db, QUEUE)
                if now is not None and now["state"] == JobState.QUEUED and key not in queue:
                    self._put_list(db, QUEUE, [*queue, key])

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
        if rec is None or start >= rec["n_frames"]:
            return []
        kind = _kind(rec)
        if rec["state"] == JobState.DONE:
            result = self._load_result(rec)
            return [] if result is None else kind.frames_of(result, start)
        out = []
        for i, data in enumerate(self.store.frames(key, start, rec["n_frames"]), start):
            frame = None
            if data is not None:
                try:
                    frame = frame_from_bytes(data, kind.frame_names)
                except TempsupError:
                    frame = None
            if frame is None:
                now = self._record(self.store.view(), key)
                if now is not None and now["state"] == JobState.DONE:
                    return out + self.frames(key, i)  # finished in between: frames moved
                break
            out.append(frame)
        return out

    def spec(self, key: str) -> Any:
        """The job's spec (RunConfig, SweepSpec, ...), or None if unknown or unreadable."""
        found = self._spec(self.store.view(), key)
        return None if found is None else found[1]

    def config(self, key: str) -> Any:
        """Same as `spec` (the name from when every job was a RunConfig)."""
        return self.spec(key)

    def result(self, key: str) -> Any:
        """The result of a DONE job (a Run, a SweepResult, ...), else None;
        a damaged one marks the job FAILED so that `submit` recomputes it."""
        rec = self._record(self.store.view(), key)
        if rec is None or rec["state"] != JobState.DONE:
            return None
        return self._load_result(rec)

    def run(self, key: str) -> Run | None:
        """The finished Run of a DONE run job, else None (other kinds: use `result`)."""
        rec = self._record(self.store.view(), key)
        if rec is None or rec["state"] != JobState.DONE or rec.get("kind", "run") != "run":
            return None
        return self._load_result(rec)

    def cancel(self, key: str) -> JobStatus | None:
        """QUEUED: cancelled at once. RUNNING: flagged; the worker stops at its next
        frame and keeps the frames so far. Finished jobs are left as they are."""

        def txn(db: Txn) -> JobStatus | None:
            rec = self._record(db, key)
            if rec is None:
                return None
            if rec["state"] == JobState.QUEUED:
                self._remove(db, QUEUE, key)
                rec.update(state=JobState.CANCELLED, message="cancelled before it started")
                self._put_record(db, rec)
            elif rec["state"] == JobState.RUNNING and not rec["cancel"]:
                rec["cancel"] = True
                self._put_record(db, rec)
            return self._status(db, rec, self._list(db, QUEUE))

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
        return self.submit(spec, client if client is not None else rec["client"])

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
            self._remove(db, QUEUE, key)
            self._remove(db, RUNNING, key)
            rec = self._new_record(key, kind, spec, (old or {}).get("client", "local"), old)
            rec.update(
                state=JobState.DONE,
                step=spec.steps,
                n_frames=n_frames,
                finished=time.time(),
                run_id=run_id,
                message=f"done: {spec.steps} steps, {n_frames} frames (stored {kind.name})",
            )
            self._put_record(db, rec)

        self.store.atomic(txn)

    def recover(self) -> list[str]:
        """Fail RUNNING jobs whose worker is gone (pid dead on this host, or no
        heartbeat for `heartbeat_timeout` s); return their keys."""
        return self._recover_keys(None)

    def details(self, key: str) -> dict[str, Any] | None:
        """The raw status record (claiming pid and host, attempts, client, times): diagnostics."""
        rec = self._record(self.store.view(), key)
        return None if rec is None else {**rec, "state": rec["state"].value}

    def queued(self) -> list[str]:
        """Keys of the QUEUED jobs, oldest first."""
        return self._list(self.store.view(), QUEUE)

    def running(self) -> list[str]:
        """Keys of the RUNNING jobs."""
        return self._list(self.store.view(), RUNNING)

    # ---- the worker side (tempsup.worker) -------------------------------------------

    def claim(self, pid: int | None = None) -> Claim | None:
        """Atomically take the oldest QUEUED job: it becomes RUNNING under this process."""
        if not self._list(self.store.view(), QUEUE):  # idle workers poll: stay lock-free
            return None

        def txn(db: Txn) -> Claim | None:
            queue = self._list(db, QUEUE)
            original = list(queue)
            claim = None
            while queue and claim is None:
                key = queue.pop(0)
                rec = self._record(db, key)
                if rec is None or rec["state"] != JobState.QUEUED:
                    continue
                found = self._spec(db, key)
                if found is None or found[1].key != key:
                    rec.update(
                        state=JobState.FAILED,
                        message="the stored config of this job is unreadable; submit it again",
                    )
                    self._put_record(db, rec)
                    continue
                now = time.time()
                claim = Claim(key, found[1], uuid.uuid4().hex, found[0])
                rec.update(
                    state=JobState.RUNNING,
                    pid=os.getpid() if pid is None else pid,
                    host=HOST,
                    token=claim.token,
                    attempts=rec["attempts"] + 1,
                    started=now,
                    updated=now,
                    step=0,
                    n_frames=0,
                    rate=None,
                    cancel=False,
                    message="",
                )
                self._put_record(db, rec)
                self._put_list(db, RUNNING, [*self._list(db, RUNNING), key])
            if queue != original:
                self._put_list(db, QUEUE, queue)
            return claim

        return self.store.atomic(txn)

    def put_frame(self, claim: Claim, index: int, frame: dict[str, np.ndarray]) -> str:
        """Store frame `index` of a claimed job. Returns "ok", "cancel" (the user
        asked to stop) or "lost" (the job is no longer this worker's)."""
        data = frame_to_bytes(frame)

        def txn(db: Txn) -> str:
            rec = self._owned(db, claim)
            if rec is None:
                return "lost"
            db.set_frame(claim.key, index, data, rec["n_frames"])
            rec["n_frames"] = max(rec["n_frames"], index + 1)
            rec["step"] = max(rec["step"], int(frame["step"]))
            rec["updated"] = time.time()
            self._put_record(db, rec)
            return "cancel" if rec["cancel"] else "ok"

        return self.store.atomic(txn)

    def progress(self, claim: Claim, step: int, rate: float | None) -> bool:
        """Heartbeat with the step reached and the measured steps/s; False if lost."""

        def txn(db: Txn) -> bool:
            rec = self._owned(db, claim)
            if rec is None:
                return False
            rec["step"] = max(rec["step"], int(step))
            rec["rate"] = rate
            rec["updated"] = time.time()
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
            self._remove(db, RUNNING, claim.key)
            rec.update(
                state=JobState.DONE,
                step=rec["total"],
                n_frames=n_frames,
                finished=time.time(),
                run_id=claim.token,
                cancel=False,
                message=f"done: {rec['total']} steps, {n_frames} frames",
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
            self._remove(db, RUNNING, claim.key)
            rec.update(state=state, finished=time.time(), cancel=False, message=message)
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
            self._remove(db, RUNNING, claim.key)
            self._put_list(db, QUEUE, [claim.key, *self._without(db, QUEUE, claim.key)])
            rec.update(
                state=JobState.QUEUED, step=0, n_frames=0, token=None, pid=None, message=message
            )
            self._put_record(db, rec)
            return True

        done = self.store.atomic(txn)
        if done:
            self._notify()
        return done

    # ---- records ----------------------------------------------------------------------

    def _record(self, db: Txn, key: str) -> dict[str, Any] | None:
        text = db.text(status_key(key))
        if text is None:
            return None
        try:
            rec = json.loads(text)
            rec["state"] = JobState(rec["state"])
            for name in ("step", "total", "n_frames", "attempts"):
                if isinstance(rec[name], bool) or not isinstance(rec[name], int):
                    return None
            if rec["key"] != key or rec["n_frames"] < 0:
                return None
        except (ValueError, TypeError, KeyError):
            return None
        return rec

    def _put_record(self, db: Txn, rec: dict[str, Any]) -> None:
        db.set(status_key(rec["key"]), json.dumps({**rec, "state": rec["state"].value}))

    def _new_record(
        self, key: str, kind: JobKind, spec: Any, client: str, old: dict[str, Any] | None
    ) -> dict[str, Any]:
        return {
            "key": key,
            "kind": kind.name,
            "state": JobState.QUEUED,
            "step": 0,
            "total": spec.steps,
            "n_frames": 0,
            "client": client,
            "message": "",
            "submitted": time.time(),
            "started": None,
            "finished": None,
            "updated": None,
            "pid": None,
            "host": None,
            "token": None,
            "rate": None,
            "cancel": False,
            "run_id": None,
            "attempts": (old or {}).get("attempts", 0),
        }

    def _owned(self, db: Txn, claim: Claim) -> dict[str, Any] | None:
        rec = self._record(db, claim.key)
        if rec is None or rec["state"] != JobState.RUNNING or rec.get("token") != claim.token:
            return None
        return rec

    def _list(self, db: Txn, name: str) -> list[str]:
        text = db.text(name)
        try:
            items = json.loads(text) if text is not None else []
        except ValueError:
            return []
        return [k for k in items if isinstance(k, str)] if isinstance(items, list) else []

    def _put_list(self, db: Txn, name: str, items: list[str]) -> None:
        db.set(name, json.dumps(items))

    def _without(self, db: Txn, name: str, key: str) -> list[str]:
        return [k for k in self._list(db, name) if k != key]

    def _remove(self, db: Txn, name: str, key: str) -> None:
        items = self._list(db, name)
        if key in items:
            self._put_list(db, name, [k for k in items if k != key])

    def _spec(self, db: Txn, key: str) -> tuple[JobKind, Any] | None:
        """The stored (kind, spec) of a job; None if missing or unreadable."""
        text = db.text(config_key(key))
        return None if text is None else _parse_spec_entry(text)

    def _drop_frames(self, db: Txn, key: str, rec: dict[str, Any] | None) -> None:
        db.drop_frames(key, (rec or {}).get("n_frames", 0))

    def _load_result(self, rec: dict[str, Any]) -> Any:
        """The DONE job's result; if its entry is missing or damaged the job becomes
        FAILED (so `submit` recomputes it) and None is returned."""
        key = rec["key"]
        slot = (key, str(rec["run_id"]))
        with self._runs_lock:
            if slot in self._runs:
                self._runs.move_to_end(slot)
                return self._runs[slot]
        data = self.store.view().data(run_key(key))
        problem = "it is missing"
        result = None
        if data is not None:
            try:
                kind = _kind(rec)
                result = kind.load(data)
                if kind.result_key(result) != key:
                    problem, result = f"it holds job {kind.result_key(result)}", None
            except TempsupError as exc:
                problem = str(exc)
        if result is None:

            def txn(db: Txn) -> None:
                now = self._record(db, key)
                same = now is not None and now["run_id"] == rec["run_id"]
                if same and now["state"] == JobState.DONE:
                    now.update(
                        state=JobState.FAILED,
                        message=f"the stored result is unreadable ({problem}); "
                        "press Train to recompute it",
                    )
                    self._put_record(db, now)

            self.store.atomic(txn)
            return None
        with self._runs_lock:
            self._runs[slot] = result
            while len(self._runs) > RUN_CACHE_SIZE:
                self._runs.popitem(last=False)
        return result

    # ---- submit and recover -----------------------------------------------------------

    def _check_limits(self, db: Txn, spec: Any, client: str) -> None:
        if self.max_work is not None and spec.work > self.max_work:
            raise TempsupError(
                f"job too large: this config needs {spec.work:.3g} multiply-adds "
                f"(steps*seq_len*seeds*batch*(hidden^2 + hidden*inputs)); this server accepts "
                f"at most {self.max_work:.3g}; lower steps, batch or seeds"
            )
        queue = self._list(db, QUEUE)
        mine = 0
        for key in (*queue, *self._list(db, RUNNING)):
            rec = self._record(db, key)
            if rec is not None and rec["state"] in ACTIVE and rec["client"] == client:
                mine += 1
        if mine >= self.max_per_client:
            raise TempsupError(
                f"too many active jobs: expected at most {self.max_per_client} queued or "
                f"running per user, you have {mine}; wait for one to finish or cancel one"
            )
        if self.max_rate is not None:
            now = time.time()
            recent = self._recent(db, client, now)
            if len(recent) >= self.max_rate:
                wait = max(1, int(recent[0] + self.rate_window - now + 0.999))
                raise TempsupError(
                    f"too many new jobs: expected at most {self.max_rate} per "
                    f"{self.rate_window:.0f} s per user, you started {len(recent)}; "
                    f"try again in {wait} s"
                )
        if len(queue) >= self.max_queue:
            raise TempsupError(
                f"queue full: {len(queue)} jobs are waiting (at most {self.max_queue}); "
                "try again when some have finished"
            )

    def _check_warm_start(self, spec: Any) -> None:
        if self.warm_start_files:
            return
        base = getattr(spec, "base", None)
        for ref in (getattr(spec, "warm_start", None), getattr(base, "warm_start", None)):
            if ref is not None and not (isinstance(ref, str) and RUN_KEY.match(ref)):
                raise TempsupError(
                    "warm_start: expected the 16-character key of a finished run (this "
                    f"server does not read files), got {str(ref)[:80]!r}"
                )

    def _recent(self, db: Txn, client: str, now: float) -> list[float]:
        """Times within the rate window at which `client` queued a job, oldest first."""
        text = db.text(rate_key(client))
        try:
            times = json.loads(text) if text is not None else []
        except ValueError:
            times = []
        if not isinstance(times, list):
            times = []
        ok = (t for t in times if isinstance(t, (int, float)) and not isinstance(t, bool))
        return sorted(t for t in ok if now - self.rate_window < t <= now + 1.0)

    def _enqueue(
        self, db: Txn, kind: JobKind, spec: Any, client: str, old: dict[str, Any] | None
    ) -> dict[str, Any]:
        key = spec.key
        self._drop_frames(db, key, old)
        db.delete(run_key(key))
        db.set(config_key(key), _spec_entry(kind, spec))
        self._remove(db, RUNNING, key)
        queue = self._list(db, QUEUE)
        if key not in queue:
            self._put_list(db, QUEUE, [*queue, key])
        if self.max_rate is not None:
            now = time.time()
            db.set(rate_key(client), json.dumps([*self._recent(db, client, now), now]))
        rec = self._new_record(key, kind, spec, client, old)
        self._put_record(db, rec)
        return rec

    def _is_dead(self, rec: dict[str, Any]) -> bool:
        updated = rec.get("updated")
        if not isinstance(updated, (int, float)) or time.time() - updated > self.heartbeat_timeout:
            return True
        pid = rec.get("pid")
        return rec.get("host") == HOST and isinstance(pid, int) and not pid_alive(pid)

    def _recover_keys(self, keys: list[str] | None) -> list[str]:
        def txn(db: Txn) -> list[str]:
            dead = []
            running = self._list(db, RUNNING)
            keep = []
            for key in running:
                rec = self._record(db, key)
                if rec is None or rec["state"] != JobState.RUNNING:
                    continue
                if (keys is None or key in keys) and self._is_dead(rec):
                    rec.update(
                        state=JobState.FAILED,
                        finished=time.time(),
                        token=None,
                        cancel=False,
                        message=f"worker died at step {rec['step']}; press Train to retry",
                    )
                    self._put_record(db, rec)
                    dead.append(key)
                else:
                    keep.append(key)
            if keep != running:
                self._put_list(db, RUNNING, keep)
            return dead

        return self.store.atomic(txn)

    # ---- status -----------------------------------------------------------------------

    def _status(self, db: Txn, rec: dict[str, Any], queue: list[str] | None = None) -> JobStatus:
        state, step, total = rec["state"], rec["step"], rec["total"]
        position = eta = None
        message = rec.get("message") or ""
        if state == JobState.QUEUED:
            queue = self._list(db, QUEUE) if queue is None else queue
            position = queue.index(rec["key"]) + 1 if rec["key"] in queue else len(queue) + 1
            message = f"queued ({_ordinal(position)} in line)"
        elif state == JobState.RUNNING:
            rate, updated = rec.get("rate"), rec.get("updated")
            if isinstance(rate, (int, float)) and rate > 0 and isinstance(updated, (int, float)):
                eta = max(0.0, (total - step) / rate - (time.time() - updated))
            verb = "cancelling at" if rec.get("cancel") else "training:"
            message = f"{verb} step {step}/{total}"
        elif not message:
            message = f"{state.value} at step {step}/{total}"
        return JobStatus(
            key=rec["key"],
            state=state,
            step=step,
            total=total,
            n_frames=rec["n_frames"],
            position=position,
            eta_s=eta,
            message=message,
            kind=str(rec.get("kind", "run")),
        )


class JobQueue(BaseQueue):
    """Jobs in one diskcache directory, shared by web processes and workers on one
    machine (the embedded default). Limits: see `BaseQueue`."""

    backend = "diskcache"

    def __init__(self, directory: str | Path, **limits: Any) -> None:
        super().__init__(**limits)
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
        return JobQueue(self.directory, **self.limits)

    def worker_command(
        self, threads: int = 1, parent: int | None = None, poll: float = 0.2
    ) -> tuple[list[str], dict[str, str]]:
        cmd = [
            sys.executable, "-m", "tempsup.worker", "--cache", str(self.directory),
            "--threads", str(threads), "--poll", str(poll),
        ]  # fmt: skip
        if parent is not None:
            cmd += ["--parent", str(parent)]
        return cmd, {}

    def __repr__(self) -> str:
        return f"JobQueue({str(self.directory)!r})"


# ---- choosing a backend ----------------------------------------------------------


def _env_number(name: str, default: float | None) -> float | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if text.lower() in ("none", "off", "0"):
        return None
    try:
        value = float(text)
    except ValueError:
        return default
    return value if value > 0 else None


def queue_limits_from_env() -> dict[str, Any]:
    """The public demo's limits, each from the environment with a default:

    TEMPSUP_MAX_WORK (2e12 multiply-adds: every preset stays retrainable; ~20 min on one core),
    TEMPSUP_MAX_QUEUE (50 waiting jobs), TEMPSUP_MAX_PER_CLIENT (3 active jobs),
    TEMPSUP_MAX_PER_MINUTE (30 new jobs per client per minute; "off" disables: the
    active-jobs limit already bounds concurrency, this one stops a scripted flood).
    """
    rate = _env_number("TEMPSUP_MAX_PER_MINUTE", 30)
    return {
        "max_work": _env_number("TEMPSUP_MAX_WORK", 2e12),
        "max_queue": int(_env_number("TEMPSUP_MAX_QUEUE", 50) or 50),
        "max_per_client": int(_env_number("TEMPSUP_MAX_PER_CLIENT", 3) or 3),
        "max_rate": None if rate is None else max(1, int(rate)),
    }


def open_queue(**overrides: Any) -> BaseQueue:
    """The configured job queue: `TEMPSUP_REDIS_URL` set → Celery + Redis
    (`tempsup.jobs_redis.RedisQueue`, names prefixed by `$TEMPSUP_REDIS_PREFIX`,
    default "tempsup:"), else diskcache in `default_cache_dir()`. Limits come
    from `queue_limits_from_env()`, and warm starts only from job keys (a web
    client must not make a worker read files); `overrides` replace any of them."""
    limits = {**queue_limits_from_env(), "warm_start_files": False, **overrides}
    url = os.environ.get("TEMPSUP_REDIS_URL", "").strip()
    if url:
        from tempsup.jobs_redis import RedisQueue, default_prefix

        return RedisQueue(url, prefix=default_prefix(), **limits)
    return JobQueue(default_cache_dir(), **limits)


# ---- kinds and the stored spec ---------------------------------------------------


def _kind(rec: dict[str, Any]) -> JobKind:
    """The kind of a status record (records of older versions have none: "run")."""
    return get_kind(str(rec.get("kind", "run")))


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
