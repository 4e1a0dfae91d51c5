"""The app's handle on the job store, and the worker processes it starts.

The only state the web process keeps is this handle: a `JobQueue` over one
directory that every gunicorn worker and every training worker shares. Limits
for a public demo come from the environment so a deployment can tune them
without code changes.
"""

from __future__ import annotations

import contextlib
import os
from functools import lru_cache

from tempsup.config import DEFAULTS
from tempsup.errors import TempsupError
from tempsup.jobs import JobQueue, default_cache_dir
from tempsup.worker import WorkerPool


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


@lru_cache(maxsize=1)
def job_queue() -> JobQueue:
    """The shared job store (`$TEMPSUP_CACHE`, default `cache/jobs`)."""
    return JobQueue(
        default_cache_dir(),
        max_queue=int(_env_number("TEMPSUP_MAX_QUEUE", 50)),
        max_per_client=int(_env_number("TEMPSUP_MAX_PER_CLIENT", 3)),
        max_work=_env_number("TEMPSUP_MAX_WORK", 2e12),
    )


def start_workers() -> WorkerPool:
    """Training workers beside the web server: separate processes, bounded in number."""
    pool = WorkerPool(
        default_cache_dir(),
        n=int(_env_number("TEMPSUP_WORKERS", 1)),
        threads=int(_env_number("TEMPSUP_THREADS", 1)),
    )
    pool.start()
    return pool


def warm_up() -> None:
    """Queue the default example so the first visitor sees a trained run."""
    queue = job_queue()
    queue.recover()
    # a full queue at start-up is not worth failing the server for
    with contextlib.suppress(TempsupError):
        queue.submit(DEFAULTS, client="startup")
