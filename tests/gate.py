"""A gate in real worker processes: a job stops after its n-th frame until the test opens it.

A worker started with this module imported (`WorkerPool(..., imports=GATED)`)
trains "run" jobs exactly as usual, except that a test may hold one: with
`gate.hold(key, after=n)` before the job starts, the worker publishes frames
0..n-1, writes `{key}.held` and waits (still beating, still stoppable) until
`gate.open(key)`. So "the job is running and has n frames" is a state the
test reaches by construction, not by catching a job in time. The gate's
directory travels in the environment (`TEMPSUP_TEST_GATE`), set by the
`gate` fixture before the workers start.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tempsup.jobs.kinds import RUN, SWEEP, JobKind, register_kind
from tests.helpers import wait_for

ENV = "TEMPSUP_TEST_GATE"
GATED = ("tests.gate",)  # the imports a gated worker pool passes its workers


class Gate:
    """The test's side: hold a job after n frames, wait until it is held, open it."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def hold(self, key: str, after: int) -> None:
        (self.directory / f"{key}.held").unlink(missing_ok=True)
        _write(self.directory / f"{key}.hold", str(after))

    def held(self, key: str) -> bool:
        return (self.directory / f"{key}.held").exists()

    def wait_held(self, key: str) -> None:
        wait_for(f"job {key} to be held at its gate", lambda: self.held(key))

    def move_on(self, key: str, after: int) -> None:
        """Let a held job go on to its `after`-th frame and hold it there."""
        self.hold(key, after)

    def open(self, key: str) -> None:
        (self.directory / f"{key}.hold").unlink(missing_ok=True)


def _write(path: Path, text: str) -> None:
    """`text` into `path` whole or not at all: the other side reads it as soon as it exists
    (written in place, it was read once while still empty: `int('')` failed a test)."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    part.write_text(text)
    os.replace(part, path)


def _after(hold: Path) -> int:
    """The frame count a hold file asks for (0 while it is being written: hold now)."""
    try:
        return int(hold.read_text() or 0)
    except (OSError, ValueError):
        return 0


def _stop_at_gate(key: str, n: int, step: int, on_step: Any) -> None:
    """After a job's n-th frame: wait here while its hold asks for n frames or fewer."""
    directory = Path(os.environ[ENV])
    hold = directory / f"{key}.hold"
    if hold.exists() and n >= _after(hold):
        _write(directory / f"{key}.held", str(n))
        while hold.exists() and n >= _after(hold):  # a later `hold` moves it on
            if on_step is not None:
                on_step(step)  # raises when the worker is asked to stop
            time.sleep(0.01)


def gated(kind: JobKind) -> JobKind:
    """`kind`, whose stream (and batched stream) stops at a held job's gate."""

    def stream(spec: Any, inputs: Any, on_step: Any) -> Iterator[Any]:
        for n, frame in enumerate(kind.stream(spec, inputs, on_step), 1):
            yield frame
            _stop_at_gate(spec.key, n, int(frame.get("step", 0)), on_step)

    def stream_batch(specs: list[Any], inputs: list[Any], on_step: Any) -> Iterator[Any]:
        for n, frames in enumerate(kind.stream_batch(specs, inputs, on_step), 1):
            yield frames
            for spec, frame in zip(specs, frames, strict=True):
                _stop_at_gate(spec.key, n, int(frame.get("step", 0)), on_step)

    batched = {} if kind.stream_batch is None else {"stream_batch": stream_batch}
    return dataclasses.replace(kind, stream=stream, **batched)


if os.environ.get(ENV):  # only in workers started for a gated test
    for _kind in (RUN, SWEEP):
        register_kind(gated(_kind))
