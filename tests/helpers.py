"""Helpers shared by the test files (fixtures live in tests/conftest.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

T = TypeVar("T")

# Seconds before a wait gives up: a hang, not a slow machine.
DEADLINE = 120.0
POLL = 0.05


def wait_for(what: str, probe: Callable[[], T | None], deadline: float = DEADLINE) -> T:
    """Poll `probe` until it returns something truthy; fail after `deadline` seconds.

    Tests wait on a condition, never on a clock: the deadline only turns a hang
    into a failure that names what was awaited.
    """
    end = time.monotonic() + deadline
    while True:
        value = probe()
        if value:
            return value
        assert time.monotonic() < end, f"gave up after {deadline:.0f}s waiting for {what}"
        time.sleep(POLL)


def rot(deg: float) -> np.ndarray:
    """The 2-D rotation by `deg` degrees."""
    a = np.radians(deg)
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


class FakeClock:
    """A `time.time` stand-in that moves only when told (`advance`)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def follow(queue, key: str, on_status: Callable | None = None, deadline: float = DEADLINE):
    """Poll a job as the app's pages do (status, then frames from the cursor) until DONE.

    Returns (frames, final status, reads) where `reads` counts the polls that
    returned new frames while the job was running. `on_status(status, new)`
    sees every poll. A FAILED (or vanished) job fails the test.
    """
    from tempsup.jobs import JobState

    frames: list = []
    reads = 0
    end = time.monotonic() + deadline
    while True:
        assert time.monotonic() < end, f"gave up after {deadline:.0f}s following job {key}"
        status = queue.status(key)
        assert status is not None and status.state != JobState.FAILED, status
        new = queue.frames(key, len(frames))
        frames += new
        if on_status is not None:
            on_status(status, new)
        reads += status.state == JobState.RUNNING and bool(new)
        if status.state == JobState.DONE:
            break
        time.sleep(POLL)
    frames += queue.frames(key, len(frames))
    return frames, status, reads
