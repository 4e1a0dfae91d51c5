"""The finished-results store a queue owns: results written whole, read back verified.

A DONE job's result (a Run, a SweepResult, ...) is one entry, `run:{key}`,
written by the worker that finished it (`tempsup.jobs.lease`) or stored
directly (`put`: presets, CLI results, sweep points). Reading one decodes
it and checks that it is the job's own; a missing or damaged one marks the
job FAILED, so that the next `submit` recomputes it. The last few decoded
results stay in memory per queue handle: a replay reads the same run a few
times (its frames, then its result), and decoding costs more than a poll.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from tempsup.errors import TempsupError
from tempsup.jobs.entries import drop_frames, get_record, put_record, spec_entry
from tempsup.jobs.kinds import get_kind, kind_of
from tempsup.jobs.record import JobRecord, JobState, new_record, transition
from tempsup.jobs.store import (
    QUEUE,
    RUNNING,
    Store,
    Txn,
    config_key,
    remove_from,
    run_key,
)

# Decoded finished results kept per queue handle: a replay reads the same run a few times.
RUN_CACHE_SIZE = 4


class Results:
    """The finished results in `store`; `clock` is the queue's (`time.time`)."""

    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store, self.clock = store, clock
        self._cache: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()  # web processes poll from several threads

    def load(self, rec: JobRecord) -> Any:
        """The DONE job's result; if its entry is missing or damaged the job becomes
        FAILED (so `submit` recomputes it) and None is returned."""
        key = rec.key
        slot = (key, str(rec.run_id))
        with self._lock:
            if slot in self._cache:
                self._cache.move_to_end(slot)
                return self._cache[slot]
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
                now = get_record(db, key)
                same = now is not None and now.run_id == rec.run_id
                if same and now.state == JobState.DONE:
                    msg = f"the stored result is unreadable ({problem})"
                    put_record(db, transition(now, JobState.FAILED, message=msg))

            self.store.atomic(txn)
            return None
        with self._lock:
            self._cache[slot] = result
            while len(self._cache) > RUN_CACHE_SIZE:
                self._cache.popitem(last=False)
        return result

    def put(self, spec: Any, result: Any) -> None:
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
            old = get_record(db, key)
            drop_frames(db, key, old)
            db.set(config_key(key), spec_entry(kind, spec))
            db.set(run_key(key), data)
            remove_from(db, QUEUE, key)
            remove_from(db, RUNNING, key)
            now = self.clock()
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
            put_record(db, rec)

        self.store.atomic(txn)
