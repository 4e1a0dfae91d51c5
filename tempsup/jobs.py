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

`JobQueue` is the embedded backend: one diskcache `Cache` directory shared by
every web and worker process on the machine. Layout (all values are `str`
JSON or `bytes`, never pickles):

    queue                 JSON list of QUEUED keys, oldest first (the FIFO)
    running               JSON list of RUNNING keys (what `recover` inspects)
    status:{key}          JSON status record: kind, state, step, n_frames, client,
                          pid/host/token of the claiming worker, heartbeat...
    config:{key}          JSON {"kind": name, "spec": spec.to_json()} (an entry
                          without a kind, written by older versions, is a RunConfig)
    frame:{key}:{i}       published frame i as `np.savez` bytes, while running and
                          kept after a failure or cancel; dropped once the job is DONE
    run:{key}             result.to_bytes() of a DONE job; its frames are served from it

Every read-modify-write happens inside `cache.transact()` (an SQLite write
lock), so two workers never claim the same job. A worker's writes carry the
claim's token: once a job is re-queued or recovered, a stale worker's writes
are ignored. An entry that cannot be read is treated as missing: a damaged
frame ends a cursor read early, a damaged result marks the job FAILED so that
the next `submit` recomputes it.
"""

from __future__ import annotations

import io
import json
import os
import socket
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
# Decoded finished runs kept per JobQueue: a replay reads the same run a few times.
RUN_CACHE_SIZE = 4
HOST = socket.gethostname()

QUEUE = "queue"
RUNNING = "running"


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


# ---- the queue ---------------------------------------------------------------------


class JobQueue:
    """Jobs in one diskcache directory, shared by web processes and workers.

    `max_queue` bounds the jobs waiting in total, `max_per_client` the queued or
    running jobs one client (a browser session) may own, `max_work` the size of
    a job (`config.work`, multiply-adds) this server accepts; None = only the
    hard limit of RunConfig.
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        max_queue: int = 50,
        max_per_client: int = 3,
        max_work: float | None = None,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
    ) -> None:
        for name, value in (("max_queue", max_queue), ("max_per_client", max_per_client)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise TempsupError(f"JobQueue: {name} expected an integer >= 1, got {value!r}")
        if max_work is not None and not (isinstance(max_work, (int, float)) and max_work > 0):
            raise TempsupError(f"JobQueue: max_work expected a positive number, got {max_work!r}")
        self.directory = Path(directory)
        self.max_queue = max_queue
        self.max_per_client = max_per_client
        self.max_work = None if max_work is None else float(max_work)
        self.heartbeat_timeout = float(heartbeat_timeout)
        self._cache: diskcache.Cache | None = None
        self._cache_pid = -1
        self._runs: OrderedDict[tuple[str, str], Run] = OrderedDict()
        self._runs_lock = threading.Lock()  # web processes poll from several threads

    @property
    def cache(self) -> diskcache.Cache:
        """The diskcache, reopened after a fork (SQLite handles must not cross one)."""
        if self._cache is None or self._cache_pid != os.getpid():
            # eviction off: a culled queue or status entry would lose jobs silently
            self._cache = diskcache.Cache(str(self.directory), eviction_policy="none")
            self._cache_pid = os.getpid()
        return self._cache

    def close(self) -> None:
        if self._cache is not None and self._cache_pid == os.getpid():
            self._cache.close()
        self._cache = None

    def __enter__(self) -> JobQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"JobQueue({str(self.directory)!r})"

    # ---- the public interface -------------------------------------------------------

    def submit(self, spec: RunConfig | SweepSpec | Any, client: str = "local") -> JobStatus:
        """Queue `spec` (a RunConfig, SweepSpec, ...) unless its job exists; return its status.

        DONE, QUEUED and RUNNING jobs are returned as they are (a DONE job is
        served from the cache); FAILED and CANCELLED ones are queued again.
        Raises TempsupError when the queue is full, the client has too many
        active jobs, or the job is larger than `max_work`.
        """
        kind = kind_of(spec)
        client = str(client)
        key = spec.key
        rec = self._record(key)
        # Verify a finished result before promising it (outside the lock: decoding is slow).
        done = rec is not None and rec["state"] == JobState.DONE
        if done and self._load_result(rec) is not None and self._spec(key) is not None:
            return self._status(rec)
        with self._transact():
            rec = self._record(key)
            if rec is not None and rec["state"] in (*ACTIVE, JobState.DONE):
                if self._spec(key) is None:  # a damaged config entry: rewrite it
                    self.cache.set(config_key(key), _spec_entry(kind, spec))
                return self._status(rec)
            self._check_limits(spec, client)
            rec = self._enqueue(kind, spec, client, rec)
            return self._status(rec, self._list(QUEUE))

    def status(self, key: str) -> JobStatus | None:
        """The job's status, or None if there is no such job (or its record is unreadable)."""
        rec = self._record(key)
        if rec is None:
            return None
        if rec["state"] == JobState.RUNNING and self._is_dead(rec):
            self._recover_keys([key])
            rec = self._record(key)
        elif rec["state"] == JobState.QUEUED and key not in self._list(QUEUE):
            with self._transact():  # the queue entry was damaged: put the job back in line
                if key not in (queue := self._list(QUEUE)):
                    self._put_list(QUEUE, [*queue, key])
        return None if rec is None else self._status(rec)

    def frames(self, key: str, start: int = 0) -> list[dict[str, np.ndarray]]:
        """Frames `start`, `start + 1`, ... stored so far, in order (a cursor read).

        Works while the job runs and after it ends; a damaged frame ends the
        read early (the cursor stays there). Unknown jobs have no frames.
        """
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise TempsupError(f"frames: start expected an integer >= 0, got {start!r}")
        rec = self._record(key)
        if rec is None or start >= rec["n_frames"]:
            return []
        kind = _kind(rec)
        if rec["state"] == JobState.DONE:
            result = self._load_result(rec)
            return [] if result is None else kind.frames_of(result, start)
        out = []
        for i in range(start, rec["n_frames"]):
            frame = self._load_frame(key, i, kind.frame_names)
            if frame is None:
                now = self._record(key)  # finished in between: its frames moved into the run
                if now is not None and now["state"] == JobState.DONE:
                    return out + self.frames(key, i)
                break
            out.append(frame)
        return out

    def spec(self, key: str) -> Any:
        """The job's spec (RunConfig, SweepSpec, ...), or None if unknown or unreadable."""
        found = self._spec(key)
        return None if found is None else found[1]

    def config(self, key: str) -> Any:
        """Same as `spec` (the name from when every job was a RunConfig)."""
        return self.spec(key)

    def result(self, key: str) -> Any:
        """The result of a DONE job (a Run, a SweepResult, ...), else None;
        a damaged one marks the job FAILED so that `submit` recomputes it."""
        rec = self._record(key)
        if rec is None or rec["state"] != JobState.DONE:
            return None
        return self._load_result(rec)

    def run(self, key: str) -> Run | None:
        """The finished Run of a DONE run job, else None (other kinds: use `result`)."""
        rec = self._record(key)
        if rec is None or rec["state"] != JobState.DONE or _kind(rec).name != "run":
            return None
        return self._load_result(rec)

    def cancel(self, key: str) -> JobStatus | None:
        """QUEUED: cancelled at once. RUNNING: flagged; the worker stops at its next
        frame and keeps the frames so far. Finished jobs are left as they are."""
        with self._transact():
            rec = self._record(key)
            if rec is None:
                return None
            if rec["state"] == JobState.QUEUED:
                self._remove(QUEUE, key)
                rec.update(state=JobState.CANCELLED, message="cancelled before it started")
                self._put_record(rec)
            elif rec["state"] == JobState.RUNNING and not rec["cancel"]:
                rec["cancel"] = True
                self._put_record(rec)
            return self._status(rec, self._list(QUEUE))

    def retry(self, key: str, client: str | None = None) -> JobStatus:
        """Queue a FAILED or CANCELLED job again (same limits as `submit`).

        Active or finished jobs are returned unchanged.
        """
        rec = self._record(key)
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
        with self._transact():
            old = self._record(key)
            self._drop_frames(key, old)
            self.cache.set(config_key(key), _spec_entry(kind, spec))
            self.cache.set(run_key(key), data)
            self._remove(QUEUE, key)
            self._remove(RUNNING, key)
            rec = self._new_record(key, kind, spec, (old or {}).get("client", "local"), old)
            rec.update(
                state=JobState.DONE,
                step=spec.steps,
                n_frames=n_frames,
                finished=time.time(),
                run_id=uuid.uuid4().hex,
                message=f"done: {spec.steps} steps, {n_frames} frames (stored {kind.name})",
            )
            self._put_record(rec)

    def recover(self) -> list[str]:
        """Fail RUNNING jobs whose worker is gone (pid dead on this host, or no
        heartbeat for `heartbeat_timeout` s); return their keys."""
        return self._recover_keys(None)

    def details(self, key: str) -> dict[str, Any] | None:
        """The raw status record (claiming pid and host, attempts, client, times): diagnostics."""
        rec = self._record(key)
        return None if rec is None else {**rec, "state": rec["state"].value}

    def queued(self) -> list[str]:
        """Keys of the QUEUED jobs, oldest first."""
        return self._list(QUEUE)

    # ---- the worker side (tempsup.worker) -------------------------------------------

    def claim(self, pid: int | None = None) -> Claim | None:
        """Atomically take the oldest QUEUED job: it becomes RUNNING under this process."""
        if not self._list(QUEUE):  # idle workers poll here: stay lock-free when empty
            return None
        with self._transact():
            queue = self._list(QUEUE)
            original = list(queue)
            claim = None
            while queue and claim is None:
                key = queue.pop(0)
                rec = self._record(key)
                if rec is None or rec["state"] != JobState.QUEUED:
                    continue
                found = self._spec(key)
                if found is None or found[1].key != key:
                    rec.update(
                        state=JobState.FAILED,
                        message="the stored config of this job is unreadable; submit it again",
                    )
                    self._put_record(rec)
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
                self._put_record(rec)
                self._put_list(RUNNING, [*self._list(RUNNING), key])
            if queue != original:
                self._put_list(QUEUE, queue)
            return claim

    def put_frame(self, claim: Claim, index: int, frame: dict[str, np.ndarray]) -> str:
        """Store frame `index` of a claimed job. Returns "ok", "cancel" (the user
        asked to stop) or "lost" (the job is no longer this worker's)."""
        data = frame_to_bytes(frame)
        with self._transact():
            rec = self._owned(claim)
            if rec is None:
                return "lost"
            self.cache.set(frame_key(claim.key, index), data)
            rec["n_frames"] = max(rec["n_frames"], index + 1)
            rec["step"] = max(rec["step"], int(frame["step"]))
            rec["updated"] = time.time()
            self._put_record(rec)
            return "cancel" if rec["cancel"] else "ok"

    def progress(self, claim: Claim, step: int, rate: float | None) -> bool:
        """Heartbeat with the step reached and the measured steps/s; False if lost."""
        with self._transact():
            rec = self._owned(claim)
            if rec is None:
                return False
            rec["step"] = max(rec["step"], int(step))
            rec["rate"] = rate
            rec["updated"] = time.time()
            self._put_record(rec)
            return True

    def finish(self, claim: Claim, result: Any) -> bool:
        """Store the finished result; its frames are now served from it. False if lost."""
        data = result.to_bytes()
        n_frames = claim.kind.n_frames(result)
        with self._transact():
            rec = self._owned(claim)
            if rec is None:
                return False
            self.cache.set(run_key(claim.key), data)
            self._drop_frames(claim.key, rec)
            self._remove(RUNNING, claim.key)
            rec.update(
                state=JobState.DONE,
                step=rec["total"],
                n_frames=n_frames,
                finished=time.time(),
                run_id=claim.token,
                cancel=False,
                message=f"done: {rec['total']} steps, {n_frames} frames",
            )
            self._put_record(rec)
            return True

    def end(self, claim: Claim, state: JobState, message: str) -> bool:
        """End a claimed job as FAILED or CANCELLED, keeping its frames. False if lost."""
        if state not in (JobState.FAILED, JobState.CANCELLED):
            raise TempsupError(f"end: expected state failed or cancelled, got {state!r}")
        with self._transact():
            rec = self._owned(claim)
            if rec is None:
                return False
            self._remove(RUNNING, claim.key)
            rec.update(state=state, finished=time.time(), cancel=False, message=message)
            self._put_record(rec)
            return True

    def requeue(self, claim: Claim, message: str) -> bool:
        """Give a claimed job back (worker shut down): first in line, frames cleared."""
        with self._transact():
            rec = self._owned(claim)
            if rec is None:
                return False
            self._drop_frames(claim.key, rec)
            self._remove(RUNNING, claim.key)
            self._put_list(QUEUE, [claim.key, *self._without(QUEUE, claim.key)])
            rec.update(
                state=JobState.QUEUED, step=0, n_frames=0, token=None, pid=None, message=message
            )
            self._put_record(rec)
            return True

    # ---- records ----------------------------------------------------------------------

    @contextmanager
    def _transact(self) -> Iterator[None]:
        with self.cache.transact(retry=True):
            yield

    def _get(self, name: str, kind: type) -> Any:
        try:
            value = self.cache.get(name)
        except Exception:  # a damaged entry (unreadable file, bad pickle) is a missing one
            return None
        return value if isinstance(value, kind) else None

    def _record(self, key: str) -> dict[str, Any] | None:
        text = self._get(status_key(key), str)
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

    def _put_record(self, rec: dict[str, Any]) -> None:
        self.cache.set(status_key(rec["key"]), json.dumps({**rec, "state": rec["state"].value}))

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

    def _owned(self, claim: Claim) -> dict[str, Any] | None:
        rec = self._record(claim.key)
        if rec is None or rec["state"] != JobState.RUNNING or rec.get("token") != claim.token:
            return None
        return rec

    def _list(self, name: str) -> list[str]:
        text = self._get(name, str)
        try:
            items = json.loads(text) if text is not None else []
        except ValueError:
            return []
        return [k for k in items if isinstance(k, str)] if isinstance(items, list) else []

    def _put_list(self, name: str, items: list[str]) -> None:
        self.cache.set(name, json.dumps(items))

    def _without(self, name: str, key: str) -> list[str]:
        return [k for k in self._list(name) if k != key]

    def _remove(self, name: str, key: str) -> None:
        items = self._list(name)
        if key in items:
            self._put_list(name, [k for k in items if k != key])

    def _spec(self, key: str) -> tuple[JobKind, Any] | None:
        """The stored (kind, spec) of a job; None if missing or unreadable."""
        text = self._get(config_key(key), str)
        if text is None:
            return None
        return _parse_spec_entry(text)

    def _load_frame(
        self, key: str, index: int, names: tuple[str, ...]
    ) -> dict[str, np.ndarray] | None:
        data = self._get(frame_key(key, index), bytes)
        if data is None:
            return None
        try:
            return frame_from_bytes(data, names)
        except TempsupError:
            return None

    def _drop_frames(self, key: str, rec: dict[str, Any] | None) -> None:
        for i in range((rec or {}).get("n_frames", 0)):
            self.cache.delete(frame_key(key, i))

    def _load_result(self, rec: dict[str, Any]) -> Any:
        """The DONE job's result; if its entry is missing or damaged the job becomes
        FAILED (so `submit` recomputes it) and None is returned."""
        key = rec["key"]
        slot = (key, str(rec["run_id"]))
        with self._runs_lock:
            if slot in self._runs:
                self._runs.move_to_end(slot)
                return self._runs[slot]
        data = self._get(run_key(key), bytes)
        problem = "it is missing"
        run = None
        if data is not None:
            try:
                kind = _kind(rec)
                run = kind.load(data)
                if kind.result_key(run) != key:
                    problem, run = f"it holds job {kind.result_key(run)}", None
            except TempsupError as exc:
                problem = str(exc)
        if run is None:
            with self._transact():
                now = self._record(key)
                same = now is not None and now["run_id"] == rec["run_id"]
                if same and now["state"] == JobState.DONE:
                    now.update(
                        state=JobState.FAILED,
                        message=f"the stored result is unreadable ({problem}); "
                        "press Train to recompute it",
                    )
                    self._put_record(now)
            return None
        with self._runs_lock:
            self._runs[slot] = run
            while len(self._runs) > RUN_CACHE_SIZE:
                self._runs.popitem(last=False)
        return run

    # ---- submit and recover -----------------------------------------------------------

    def _check_limits(self, spec: Any, client: str) -> None:
        if self.max_work is not None and spec.work > self.max_work:
            raise TempsupError(
                f"job too large: this config needs {spec.work:.3g} multiply-adds "
                f"(steps*seq_len*seeds*batch*(hidden^2 + hidden*inputs)); this server accepts "
                f"at most {self.max_work:.3g}; lower steps, batch or seeds"
            )
        queue = self._list(QUEUE)
        mine = 0
        for key in (*queue, *self._list(RUNNING)):
            rec = self._record(key)
            if rec is not None and rec["state"] in ACTIVE and rec["client"] == client:
                mine += 1
        if mine >= self.max_per_client:
            raise TempsupError(
                f"too many active jobs: expected at most {self.max_per_client} queued or "
                f"running per user, you have {mine}; wait for one to finish or cancel one"
            )
        if len(queue) >= self.max_queue:
            raise TempsupError(
                f"queue full: {len(queue)} jobs are waiting (at most {self.max_queue}); "
                "try again when some have finished"
            )

    def _enqueue(
        self, kind: JobKind, spec: Any, client: str, old: dict[str, Any] | None
    ) -> dict[str, Any]:
        key = spec.key
        self._drop_frames(key, old)
        self.cache.delete(run_key(key))
        self.cache.set(config_key(key), _spec_entry(kind, spec))
        self._remove(RUNNING, key)
        queue = self._list(QUEUE)
        if key not in queue:
            self._put_list(QUEUE, [*queue, key])
        rec = self._new_record(key, kind, spec, client, old)
        self._put_record(rec)
        return rec

    def _is_dead(self, rec: dict[str, Any]) -> bool:
        updated = rec.get("updated")
        if not isinstance(updated, (int, float)) or time.time() - updated > self.heartbeat_timeout:
            return True
        pid = rec.get("pid")
        return rec.get("host") == HOST and isinstance(pid, int) and not pid_alive(pid)

    def _recover_keys(self, keys: list[str] | None) -> list[str]:
        dead = []
        with self._transact():
            running = self._list(RUNNING)
            keep = []
            for key in running:
                rec = self._record(key)
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
                    self._put_record(rec)
                    dead.append(key)
                else:
                    keep.append(key)
            if keep != running:
                self._put_list(RUNNING, keep)
        return dead

    # ---- status -----------------------------------------------------------------------

    def _status(self, rec: dict[str, Any], queue: list[str] | None = None) -> JobStatus:
        state, step, total = rec["state"], rec["step"], rec["total"]
        position = eta = None
        message = rec.get("message") or ""
        if state == JobState.QUEUED:
            queue = self._list(QUEUE) if queue is None else queue
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
