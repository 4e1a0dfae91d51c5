"""Train independent preset batches in worker processes, longest first (`--jobs N`).

Why processes, one torch thread each: a preset batch's matrix products are small
(N_h <= 100), so a second torch thread speeds one batch up little, while two
batches in two processes keep two cores busy. Training is deterministic per
config and seed (every seed draws from its own generator, `tempsup.training.trainer`),
so a batch trained in a worker gives the numbers it gives in one process, and
the report does not depend on the number of processes.

Order: a batch's priority is its estimated cost plus the dearest chain of
batches that warm-start from it (its critical path); the ready batch of highest
priority goes to the next free worker. So the large preset's chain (the SSM,
then the N_h = 100 ReLU RNN warm-started from it: 180 of 503 s on one core)
starts at once and the small batches fill the end.

The cost (`batch_cost`) is the run's multiply-adds (`RunConfig.work`) plus
`ELEMENT_COST` per unit of steps x seeds x T x batch x (N_h + N_x): the products
plus the element-wise passes over states and inputs, which dominate the
N_h = 2 batches. The constant is a least-squares fit to the full form's
seconds per batch on one core (143, 68, 63, 62, 47 and 37 s for the six largest
batches; it predicts them within 30 % and the other four together as 70 s for
72 s measured); it only orders the batches and weighs the progress bar.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from tempsup.errors import TempsupError
from tempsup.model.config import RunConfig

if TYPE_CHECKING:
    from tempsup.io.run import Run

# Multiply-adds one unit of element-wise work costs as much time as (fit: see above).
ELEMENT_COST = 64.0
# A worker reports its step every this many steps (and at the last one).
PROGRESS_EVERY = 25
# The thread pools a worker caps before torch loads (as the job workers do).
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
# What the fork server imports once for all its workers.
PRELOAD = ("torch", "tempsup.analysis.sweeps", "tempsup.training.trainer", "tempsup.io.run")
# Seconds a finished worker may take to exit before it is terminated.
STOP_TIMEOUT = 5.0

Group = Sequence[RunConfig]


def available_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def batch_cost(group: Group) -> float:
    """Estimated training time of one batch, in multiply-add equivalents."""
    return sum(
        c.work + ELEMENT_COST * c.steps * c.seeds * c.seq_len * c.batch * (c.hidden + c.inputs)
        for c in group
    )


def sources(groups: Sequence[Group]) -> list[int | None]:
    """For each group, the index of the group that trains its warm start's source
    (None: no warm start, or a source trained earlier)."""
    producer = {cfg.key: i for i, group in enumerate(groups) for cfg in group}
    return [producer.get(group[0].warm_start or "") for group in groups]


def width(groups: Sequence[Group]) -> int:
    """The most groups that can train at once: those no other group warm-starts from
    (each group has at most one source, so the groups form a forest, whose largest
    set of mutually independent groups is its leaves)."""
    return len(groups) - len({s for s in sources(groups) if s is not None})


def priorities(groups: Sequence[Group]) -> list[float]:
    """Each group's cost plus the dearest chain of groups that warm-start from it."""
    cost = [batch_cost(g) for g in groups]
    dependents: list[list[int]] = [[] for _ in groups]
    for i, src in enumerate(sources(groups)):
        if src is not None:
            dependents[src].append(i)
    memo: dict[int, float] = {}

    def chain(i: int) -> float:
        if i not in memo:
            memo[i] = cost[i] + max((chain(j) for j in dependents[i]), default=0.0)
        return memo[i]

    return [chain(i) for i in range(len(groups))]


class Schedule:
    """Which group to train next: the ready one (its source trained) of highest
    priority; ties in the groups' own order."""

    def __init__(self, groups: Sequence[Group]) -> None:
        self.source = sources(groups)
        self.priority = priorities(groups)
        self.waiting = set(range(len(groups)))
        self.finished: set[int] = set()

    def next(self) -> int | None:
        """The group to start now (and mark started), or None while none is ready."""
        ready = [
            i for i in self.waiting if self.source[i] is None or self.source[i] in self.finished
        ]
        if not ready:
            return None
        i = min(ready, key=lambda i: (-self.priority[i], i))
        self.waiting.remove(i)
        return i

    def finish(self, i: int) -> None:
        self.finished.add(i)

    def order(self) -> list[int]:
        """The order one worker would train them in (what the tests check)."""
        out = []
        while (i := self.next()) is not None:
            self.finish(i)
            out.append(i)
        return out


def train_batches(
    groups: Sequence[Group],
    labels: Sequence[str],
    jobs: int,
    init_for: Callable[[int], dict[str, Any] | None],
    on_step: Callable[[int, int], None],
    on_done: Callable[[int, list[Run], float], None],
) -> None:
    """Train `groups` in up to `jobs` worker processes, highest priority first.

    `init_for(i)` gives group i's warm-start weights when it starts (its source
    is trained by then); `on_step(i, step)` reports progress every
    PROGRESS_EVERY steps; `on_done(i, runs, seconds)` receives each batch's runs
    as it finishes (in the order they finish). A worker's exception, or its
    death, stops the others and raises a TempsupError naming the batch;
    Ctrl-C in the terminal reaches only this process, which stops the workers.
    """
    schedule = Schedule(groups)
    workers = _start(min(jobs, len(groups)))
    busy: dict[Connection, int] = {}
    try:
        while schedule.waiting or busy:
            idle = [w for w in workers if w[1] not in busy]
            for _, conn in idle:
                i = schedule.next()
                if i is None:
                    break
                conn.send((list(groups[i]), init_for(i)))
                busy[conn] = i
            if not busy:  # unreachable: `sources` only links to groups listed here
                raise TempsupError("reproduce: no batch can start (a warm start's source?)")
            for conn in wait(list(busy)):
                i = busy[conn]
                try:
                    message = conn.recv()
                except EOFError:
                    process = next(p for p, c in workers if c is conn)
                    process.join(1.0)
                    raise TempsupError(
                        f"reproduce: the worker process training {labels[i]} died "
                        f"(exit code {process.exitcode}); run keys {_keys(groups[i])}"
                    ) from None
                kind = message[0]
                if kind == "step":
                    on_step(i, message[1])
                elif kind == "done":
                    del busy[conn]
                    schedule.finish(i)
                    on_done(i, message[1], message[2])
                else:  # "error"
                    error = TempsupError(
                        f"reproduce: training {labels[i]} failed: {message[1]} "
                        f"(run keys {_keys(groups[i])})"
                    )
                    error.add_note(f"in the worker process:\n{message[2]}")
                    raise error
    except BaseException:
        for process, _ in workers:
            process.terminate()
        raise
    finally:
        _stop(workers)


def _keys(group: Group) -> str:
    return ", ".join(c.key for c in group)


@contextmanager
def _child_environment() -> Iterator[None]:
    """One thread per pool in the environment a worker inherits, and Ctrl-C ignored
    while it starts (it keeps ignoring it: this process stops it)."""
    saved = {var: os.environ.get(var) for var in THREAD_VARS}
    os.environ.update({var: "1" for var in THREAD_VARS})
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


def _start(n: int) -> list[tuple[multiprocessing.process.BaseProcess, Connection]]:
    """`n` fresh worker processes, none a copy of this one (whose torch may run threads).

    Where the OS has it, a fork server that imported torch and the trainer once
    forks them (each would spend ~2 s of CPU importing torch; a test session or a
    second call reuses the server); elsewhere each is spawned.
    """
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
    else:
        ctx = multiprocessing.get_context("spawn")
    workers = []
    with _child_environment():
        for _ in range(n):
            here, there = ctx.Pipe()
            process = ctx.Process(target=_serve, args=(there,), daemon=True, name="tempsup-train")
            process.start()
            there.close()
            workers.append((process, here))
    return workers


def _stop(workers: Sequence[tuple[multiprocessing.process.BaseProcess, Connection]]) -> None:
    for _, conn in workers:
        with suppress(OSError):
            conn.send(None)  # no more batches
    deadline = time.monotonic() + STOP_TIMEOUT
    for process, conn in workers:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
        conn.close()


def _serve(conn: Connection) -> None:
    """A worker process: train the batches it is sent until told to stop (None) or
    the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import torch

    from tempsup.analysis.sweeps import train_runs

    torch.set_num_threads(1)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        configs, init = task
        steps = configs[0].steps

        def on_step(step: int, steps: int = steps) -> None:
            if step % PROGRESS_EVERY == 0 or step == steps:
                conn.send(("step", step))

        start = time.monotonic()
        try:
            runs = train_runs(configs, init=init, on_step=on_step)
            conn.send(("done", runs, time.monotonic() - start))
        except (BrokenPipeError, EOFError):
            return  # the parent is gone
        except Exception as exc:
            conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))


__all__ = [
    "available_cores",
    "batch_cost",
    "priorities",
    "Schedule",
    "sources",
    "train_batches",
    "width",
]
