"""The app's handle on the job store, and the worker processes it starts.

The only state the web process keeps is this handle: the queue that every
gunicorn worker and every training worker shares, chosen by
`tempsup.jobs.open_queue` — diskcache in one directory by default, Redis +
Celery when `TEMPSUP_REDIS_URL` is set. Limits for a public demo come from
the environment (`tempsup.jobs.queue_limits_from_env`) so a deployment can
tune them without code changes.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from functools import lru_cache

from tempsup.config import DEFAULTS
from tempsup.errors import TempsupError
from tempsup.jobs import BaseQueue, open_queue
from tempsup.worker import WorkerPool


def _env_int(name: str, default: int) -> int:
    try:
        return int(float(os.environ.get(name, default)))
    except ValueError:
        return default


@lru_cache(maxsize=1)
def job_queue() -> BaseQueue:
    """The shared job store (`tempsup.jobs.open_queue`)."""
    return open_queue()


def start_workers() -> WorkerPool:
    """Training workers beside the web server: separate processes, bounded in number.

    diskcache: `$TEMPSUP_WORKERS` (default 1). Redis: none unless
    `$TEMPSUP_WORKERS` asks for some; workers normally run elsewhere
    (`celery -A tempsup.celery_app worker`).
    """
    queue = job_queue()
    default = 0 if queue.backend == "redis" else 1
    pool = WorkerPool(
        queue.copy(),
        n=max(0, _env_int("TEMPSUP_WORKERS", default)),
        threads=max(1, _env_int("TEMPSUP_THREADS", 1)),
    )
    pool.start()
    return pool


def warm_up() -> None:
    """Queue the default example so the first visitor sees a trained run."""
    # a full queue, or a store still starting, is not worth failing the server for
    with contextlib.suppress(TempsupError):
        queue = job_queue()
        queue.recover()
        queue.submit(DEFAULTS, client="startup")


PRESET_MODES = ("full", "quick", "off")


def preset_mode() -> str:
    """Which presets the gallery shows and the server pre-trains: `$TEMPSUP_PRESETS`."""
    mode = os.environ.get("TEMPSUP_PRESETS", "full")
    return mode if mode in PRESET_MODES else "full"


def start_preset_fill() -> subprocess.Popen | None:
    """Pre-train the gallery's presets in the background, in a process of its own.

    Only runs that the job store lacks are trained (`tempsup presets fill`), so
    after the first start this exits at once; the web process never runs torch.
    """
    mode = preset_mode()
    default_workers = 0 if job_queue().backend == "redis" else 1
    if mode == "off" or _env_int("TEMPSUP_WORKERS", default_workers) <= 0:
        return None  # no training on this machine: run `tempsup presets fill` where workers run
    cmd = [sys.executable, "-m", "tempsup.cli", "presets", "fill", "--quiet"]
    if mode == "quick":
        cmd.append("--quick")
    env = {**os.environ, "TEMPSUP_THREADS": os.environ.get("TEMPSUP_THREADS", "1")}
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
