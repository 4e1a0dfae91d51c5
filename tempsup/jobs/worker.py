"""Worker processes: claim queued jobs, train them, stream their frames into the queue.

    python -m tempsup.jobs.worker --cache DIR [--threads 1] [--once]     (diskcache)
    celery -A tempsup.jobs.celery_app worker --pool solo                  (Redis, see celery_app)

A worker is a plain process that never serves web requests (torch and fork do
not mix) and never imports dash. Its loop: `recover()` jobs of dead workers,
claim the next QUEUED job atomically, together with up to `BATCH_JOBS` − 1
more queued jobs that train in one batch with it (runs that differ only in
seed, k or sparsity: `JobKind.batch_key`), prepare their inputs (a warm
start, an uploaded text), then iterate the kind's stream (`tempsup.jobs.kinds`:
a run's `tempsup.io.run.frame`s, a sweep's batched frames; `stream_batch` for a
batch) and store each job's published frames as they come.
Between snapshots it checks the cancel flag (stop iterating: CANCELLED, frames
kept); any exception fails the job with its message; SIGTERM/SIGINT give the
job back to the queue (first in line) and exit. A thread beats the job's
heartbeat and writes step and rate at most 4 times a second, so the status
moves smoothly while the training loop stays untouched. If the store cannot
be reached (Redis restarting), writes are retried for `STORE_OUTAGE` seconds
and training goes on.

The diskcache backend's workers poll (`Worker.run`); Celery workers are woken
by a task and `Worker.drain` the queue. `WorkerPool` (`tempsup.jobs.pool`,
named here too) starts and stops N worker processes for any queue (the
backend says which command): the app at start-up, `tempsup worker -n N`
and the tests use it. This module builds no
queue of its own beyond a diskcache directory it is given: the entry points
open the configured one (`tempsup.jobs.open_queue`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from tempsup.errors import TempsupError
from tempsup.jobs.lease import Claim
from tempsup.jobs.pool import POLL, WorkerPool, as_queue
from tempsup.jobs.queue import BaseQueue
from tempsup.jobs.record import JobState
from tempsup.jobs.store import StoreUnavailable
from tempsup.settings import Settings

__all__ = ["Worker", "WorkerPool", "WorkerStopped", "serve", "main"]

log = logging.getLogger("tempsup.worker")

PROGRESS_EVERY = 0.25  # at most 4 status writes a second while training
HEARTBEAT_EVERY = 5.0  # a write even without progress (one very long step)
RECOVER_EVERY = 10.0  # idle workers look for jobs of dead workers this often
# How long a worker keeps retrying writes while the store is unreachable (a
# Redis restart takes seconds); past it the job is abandoned and `recover`
# fails it once its heartbeat is stale.
STORE_OUTAGE = 120.0
# At most this many queued jobs of one batch key are claimed and trained as one batch
# (a classroom's default runs: one time loop for all, about twice the throughput of one
# at a time, and a second worker still finds jobs of its own).
BATCH_JOBS = 8

T = TypeVar("T")


class WorkerStopped(Exception):
    """Raised inside training when the worker is asked to shut down."""


class _Progress:
    """`on_step` for training, plus the thread that writes step, rate and heartbeat
    of every job being trained (one, or a batch)."""

    def __init__(self, worker: Worker, claims: Sequence[Claim]) -> None:
        self.worker, self.claims = worker, list(claims)
        self.step = 0
        self.rate: float | None = None
        self._t0: float | None = None
        self._s0 = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="tempsup-heartbeat", daemon=True)

    def __call__(self, step: int) -> None:
        now = time.monotonic()
        if self._t0 is None:
            self._t0, self._s0 = now, step
        elif now > self._t0:
            self.rate = (step - self._s0) / (now - self._t0)
        self.step = step
        if self.worker.stopping:
            raise WorkerStopped

    def __enter__(self) -> _Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _beat(self) -> None:
        # Its own handle: diskcache transactions may not be shared between threads.
        queue = self.worker.queue.copy()
        written, last = -1, time.monotonic()
        try:
            while not self._done.wait(PROGRESS_EVERY):
                self.worker.check_parent()
                now = time.monotonic()
                if self.step == written and now - last < HEARTBEAT_EVERY:
                    continue
                step = self.step
                try:
                    # a job no longer ours is beaten no more; the main loop finds out at a frame
                    self.claims = [c for c in self.claims if queue.progress(c, step, self.rate)]
                except StoreUnavailable:
                    continue  # beat again at the next tick; the main loop retries its writes
                except Exception:  # a failed heartbeat must not kill training; recover() judges
                    log.exception("heartbeat failed")
                if not self.claims:
                    return
                written, last = step, now
        finally:
            queue.close()


class Worker:
    """One worker's loop over a queue (a BaseQueue or a diskcache directory)."""

    def __init__(
        self,
        queue: BaseQueue | str | Path,
        *,
        threads: int = 1,
        poll: float = POLL,
        parent: int | None = None,
        outage: float = STORE_OUTAGE,
        batch: int = BATCH_JOBS,
    ) -> None:
        for name, value in (("threads", threads), ("batch", batch)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise TempsupError(f"worker: {name} expected an integer >= 1, got {value!r}")
        self.batch = batch
        self.queue = as_queue(queue)
        self.threads = threads
        self.poll = poll
        self.parent = parent
        self.outage = outage
        # A plain flag, not an Event: signal handlers set it, and an Event's lock
        # taken inside a handler can deadlock with the interrupted main thread.
        self.stopping = False

    @property
    def directory(self) -> Path | None:
        return getattr(self.queue, "directory", None)

    def stop(self, *_: object) -> None:
        """Finish at the next step: the running job goes back to the queue."""
        self.stopping = True

    def check_parent(self) -> None:
        """Stop when the process that started us is gone (no orphan workers)."""
        if self.parent is not None and os.getppid() != self.parent:
            self.stopping = True

    def _torch_threads(self) -> None:
        import torch

        torch.set_num_threads(self.threads)

    def _store(self, fn: Callable[..., T], *args: Any) -> T:
        """Call a queue method, retrying while the store is unreachable (up to `outage` s)."""
        deadline = time.monotonic() + self.outage
        while True:
            try:
                return fn(*args)
            except StoreUnavailable:
                if time.monotonic() > deadline:
                    raise
                log.warning("job store unreachable; retrying")
                time.sleep(0.5)

    def _recover(self) -> None:
        for key in self.queue.recover():
            log.warning("job %s: its worker died; marked failed", key)

    def run(self, once: bool = False) -> int:
        """Poll and train queued jobs until stopped (or, with `once`, at most one);
        return jobs run."""
        self._torch_threads()
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
        done = 0
        last_recover = -float("inf")
        log.info("watching %r (%d torch thread(s))", self.queue, self.threads)
        while not self.stopping:
            try:
                if time.monotonic() - last_recover >= RECOVER_EVERY:
                    self._recover()
                    last_recover = time.monotonic()
                claims = self.queue.claim_batch(1 if once else self.batch)
            except StoreUnavailable as exc:
                log.warning("%s", exc)
                claims = []
            if not claims:
                if once:
                    break
                self.check_parent()
                time.sleep(self.poll)
                continue
            self.process_batch(claims)
            done += len(claims)
            if once:
                break
        self.queue.close()
        return done

    def drain(self) -> int:
        """Train queued jobs until the queue is empty (a Celery task's body); return jobs run."""
        self._torch_threads()
        self._recover()
        done = 0
        while not self.stopping:
            claims = self.queue.claim_batch(self.batch)
            if not claims:
                break
            self.process_batch(claims)
            done += len(claims)
        return done

    def process(self, claim: Claim) -> None:
        """Train one claimed job to DONE, CANCELLED, FAILED, or back into the queue."""
        self.process_batch([claim])

    def process_batch(self, claims: Sequence[Claim]) -> None:
        """Train claimed jobs (one, or several of one batch key: `claim_batch`) as one
        batch, each to DONE, CANCELLED, FAILED, or back into the queue.

        Each job's frames are stored as they come; a job cancelled or taken from
        this worker is dropped while the others train on (the batch stops when none
        is left).
        """
        kind, queue = claims[0].kind, self.queue
        steps = claims[0].spec.steps  # one batch key: one number of steps
        names = ", ".join(c.key for c in claims)
        log.info("job(s) %s (%s): training %d steps", names, kind.name, steps)
        active = list(claims)  # jobs still trained for
        kept: dict[str, list[dict[str, np.ndarray]]] = {c.key: [] for c in claims}
        published: dict[str, list[dict[str, np.ndarray]]] = {c.key: [] for c in claims}
        with _Progress(self, claims) as progress:
            try:
                inputs = [
                    kind.prepare(queue, c.spec) if kind.prepare is not None else None
                    for c in claims
                ]
                stream = self._stream(claims, inputs, progress)
                try:
                    for frames in stream:
                        for claim, full in zip(claims, frames, strict=True):
                            if claim in active and not self._put(claim, full, kept, published):
                                active.remove(claim)
                        if not active:
                            break
                finally:
                    close = getattr(stream, "close", None)
                    if close is not None:
                        close()
                for claim in active:
                    result = kind.result(claim.spec, kept[claim.key], published[claim.key])
                    if kind.on_finish is not None:
                        self._store(kind.on_finish, queue, claim.spec, result)
                    self._store(queue.finish, claim, result)
                    log.info("job %s: done", claim.key)
            except WorkerStopped:
                for claim in active:
                    self._store(
                        queue.requeue, claim, f"worker stopped at step {progress.step}; re-queued"
                    )
                    log.info("job %s: worker stopping; job re-queued", claim.key)
            except StoreUnavailable:
                log.exception("job(s) %s: the job store stayed unreachable; abandoned", names)
            except Exception as exc:
                text = str(exc) if isinstance(exc, TempsupError) else f"{type(exc).__name__}: {exc}"
                for claim in active:
                    # if the store stays unreachable, recover() fails it once its heartbeat is stale
                    with contextlib.suppress(StoreUnavailable):
                        self._store(
                            queue.end,
                            claim,
                            JobState.FAILED,
                            f"training failed at step {progress.step}/{steps}: {text}",
                        )
                    log.exception("job %s: failed", claim.key)

    def _stream(self, claims: Sequence[Claim], inputs: list[Any], on_step: _Progress):
        """Per snapshot, one kept frame per claim: the kind's batched stream, or its own
        stream for a single job."""
        kind = claims[0].kind
        if len(claims) > 1:
            assert kind.stream_batch is not None, f"kind {kind.name} does not batch"
            return kind.stream_batch([c.spec for c in claims], inputs, on_step)
        single = kind.stream(claims[0].spec, inputs[0], on_step)

        def one() -> Iterator[list[dict[str, np.ndarray]]]:
            try:
                for full in single:
                    yield [full]
            finally:
                close = getattr(single, "close", None)
                if close is not None:
                    close()

        return one()

    def _put(self, claim: Claim, full: dict[str, np.ndarray], kept: dict, published: dict) -> bool:
        """Store a job's next frame; False once the job is cancelled (ended here) or lost."""
        kind, queue = claim.kind, self.queue
        kept[claim.key].append(full)
        frames = published[claim.key]
        frames.append(kind.publish(claim.spec, full))
        verdict = self._store(queue.put_frame, claim, len(frames) - 1, frames[-1])
        if verdict == "ok":
            return True
        if verdict == "cancel":
            step = int(frames[-1]["step"])
            self._store(
                queue.end, claim, JobState.CANCELLED, f"cancelled at step {step}/{claim.spec.steps}"
            )
            log.info("job %s: cancelled at step %d", claim.key, step)
        else:
            log.warning("job %s: taken from this worker; dropped", claim.key)
        return False


# ---- a pool of worker processes ------------------------------------------------------


# ---- entry points ------------------------------------------------------------------


def _handle_signals(handler: Callable[..., None]) -> dict[int, Any]:
    """SIGTERM/SIGINT call `handler`; return the previous handlers to restore."""
    return {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}


def _restore_signals(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def serve(queue: BaseQueue | str | Path, n: int = 1, threads: int = 1, once: bool = False) -> int:
    """`tempsup worker`: one worker in this process, or a supervised pool of `n`,
    on `queue` (a queue, or a diskcache directory)."""
    queue = as_queue(queue)
    if n == 1 or once:
        worker = Worker(queue, threads=threads)
        previous = _handle_signals(worker.stop)
        try:
            worker.run(once=once)
        finally:
            _restore_signals(previous)
        return 0
    stopping: list[object] = []
    previous = _handle_signals(lambda *_: stopping.append(True))
    pool = WorkerPool(queue, n=n, threads=threads)
    try:
        while not stopping:
            time.sleep(1.0)
            restarted = pool.check()
            if restarted:
                log.warning("restarted %d dead worker(s)", restarted)
    finally:
        pool.stop()
        _restore_signals(previous)
    return 0


def lower_priority(increment: int) -> None:
    """Run this worker process `increment` nice levels below its parent (TEMPSUP_WORKER_NICE):
    training is batch work, and a page waits on every answer the web server gives."""
    if increment > 0 and hasattr(os, "nice"):
        os.nice(increment)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tempsup.jobs.worker",
        description="Train jobs queued in a diskcache job store (Redis: use the Celery worker).",
    )
    parser.add_argument(
        "--cache", default=None, help="diskcache job directory (default: $TEMPSUP_CACHE)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument("--once", action="store_true", help="train at most one job, then exit")
    parser.add_argument("--poll", type=float, default=POLL, help="idle poll interval in seconds")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (one that registers more job kinds); repeatable",
    )
    args = parser.parse_args(argv)
    for module in args.imports:
        importlib.import_module(module)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s tempsup worker %(process)d: %(message)s"
    )
    try:
        settings = Settings.from_env(os.environ)  # TEMPSUP_PARENT_PID: exit when it is gone
        lower_priority(settings.worker_nice)
        worker = Worker(
            args.cache or settings.cache, threads=args.threads, poll=args.poll,
            parent=settings.parent_pid,
        )  # fmt: skip
    except TempsupError as exc:
        print(f"tempsup worker: error: {exc}", file=sys.stderr)
        return 2
    _handle_signals(worker.stop)
    worker.run(once=args.once)
    return 0


if __name__ == "__main__":
    sys.exit(main())
