"""Helpers shared by the test files (fixtures live in tests/conftest.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

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
    from tempsup.jobs.record import JobState

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


def simulate(
    W_x, W_h, W_y, p, dist, relu_hidden, n, seed, k=3, seq_len=20, imp=None, b=None,
    active=None, relu_readout=True,
):  # fmt: skip
    """Plain sampling: n sequences through the network, Σ_t Σ_i I_i (y − ŷ)² each: (M, n).

    Written with numpy alone, independent of the library's sampler and models,
    so that it can check them. `active`, if given, is the number of active slots
    of every sequence (the stratum), chosen uniformly; otherwise each slot is
    active with probability p. `relu_readout=False` is the linear model's readout.
    """
    rng = np.random.default_rng(seed)
    m, n_h, n_x = W_x.shape
    imp = np.ones(n_x) if imp is None else imp
    b = np.zeros((m, n_x)) if b is None else b
    shape = (n, seq_len, n_x)
    mags = {"uniform": rng.random, "exponential": rng.exponential}.get(dist, np.ones)(shape)
    if active is None:
        on = rng.random(shape) < p
    else:
        keys = rng.random((n, seq_len * n_x))
        on = (keys.argsort(1).argsort(1) < active).reshape(shape)
    x = mags * on
    h = np.zeros((m, n, n_h))
    total = np.zeros((m, n))
    for t in range(seq_len):
        prev = np.maximum(h, 0) if relu_hidden else h
        h = np.einsum("mhj,nj->mnh", W_x, x[:, t]) + np.einsum("mhg,mng->mnh", W_h, prev)
        z = np.einsum("mhi,mnh->mni", W_y, h) + b[:, None, :]
        y_hat = np.maximum(z, 0.0) if relu_readout else z
        y = x[:, t - k] if t >= k else 0.0
        total += (((y - y_hat) ** 2) * imp).sum(-1)
    return total


def frame_shapes(F: int, M: int, n_h: int, n_x: int) -> dict[str, tuple[int, ...]]:
    """The shapes of a run file's frame arrays: F frames of M seeds (tempsup.io.run.ARRAYS)."""
    return {"step": (F,), "W_x": (F, M, n_h, n_x), "W_h": (F, M, n_h, n_h),
            "W_y": (F, M, n_h, n_x), "b_y": (F, M, n_x), "loss": (F, M), "terms": (F, M, 4),
            "expected_loss": (F, M), "expected_loss_se": (F, M)}  # fmt: skip


def nodes(component: Any) -> Iterator[Any]:
    """A Dash component and every component below it, depth first (text children skipped)."""
    yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None and not isinstance(child, str):
            yield from nodes(child)


def run_python(code: str) -> None:
    """Run `code` in a fresh interpreter (what a new process imports is the question) and
    fail with its stderr if it fails, e.g. on an `assert 'torch' not in sys.modules`."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
