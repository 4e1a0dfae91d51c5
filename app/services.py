"""The app's handle on the job store, the settings, and the processes the server starts.

The only state the web process keeps is this handle: the queue that every
gunicorn worker and every training worker shares, opened by
`tempsup.jobs.open_queue` from the settings (`tempsup.settings.Settings`,
read once from the environment) — diskcache in one directory by default,
Redis + Celery when `TEMPSUP_REDIS_URL` is set. `start` is what a server
runs at start-up (`python -m app`, gunicorn's master): the training workers,
the default example, and the gallery's presets as low-priority jobs.
"""

from __future__ import annotations

import contextlib
import os
from functools import lru_cache

from tempsup.errors import TempsupError
from tempsup.jobs import BaseQueue, open_queue
from tempsup.jobs.record import LOW
from tempsup.jobs.worker import WorkerPool
from tempsup.model.config import DEFAULTS
from tempsup.settings import Settings


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The server's settings, read once (a bad value raises SettingsError, one line)."""
    return Settings.from_env(os.environ)


@lru_cache(maxsize=1)
def job_queue() -> BaseQueue:
    """The shared job store (`tempsup.jobs.open_queue`): specs from the web are untrusted.

    Opening it reads the settings afresh, so a new handle (`job_queue.cache_clear()`,
    as tests do after changing the environment) and the settings always agree."""
    settings.cache_clear()
    return open_queue(settings())


def reload_settings() -> None:
    """Read the settings again after the environment changed (`python -m app --workers N`).

    Importing the app already reads them (its pages' layouts open the job store), so a
    change made after that import would otherwise go unseen: `python -m app --workers 0`
    started a worker all the same."""
    settings.cache_clear()
    job_queue.cache_clear()


def preset_mode() -> str:
    """Which presets the gallery shows and the server pre-trains: `$TEMPSUP_PRESETS`."""
    return settings().presets


def start_workers() -> WorkerPool:
    """Training workers beside the web server: separate processes, bounded in number.

    diskcache: `$TEMPSUP_WORKERS` (default 1). Redis: none unless
    `$TEMPSUP_WORKERS` asks for some; workers normally run elsewhere
    (`celery -A tempsup.jobs.celery_app worker`).
    """
    s = settings()
    return WorkerPool(job_queue().copy(), n=s.worker_count, threads=s.threads)


def warm_up() -> None:
    """Queue the default example so the first visitor sees a trained run."""
    # a full queue, or a store still starting, is not worth failing the server for
    with contextlib.suppress(TempsupError):
        queue = job_queue()
        queue.recover()
        queue.submit(DEFAULTS, client="startup")


def queue_presets() -> int:
    """Queue the gallery's preset runs the store lacks, as low-priority jobs.

    The runs that ship with the package (`tempsup.paper.shipped`: the full
    presets) are copied into the store first, so only the rest train. Workers
    take preset jobs only when no visitor's job waits, and a preset that
    warm-starts from another waits in line until that one is done; so the
    presets train within the worker bound, and stop with the workers.
    Returns how many were queued (0 when presets are off).
    """
    mode = preset_mode()
    if mode == "off":
        return 0
    from tempsup.paper import shipped
    from tempsup.paper.presets import preset_configs

    queue, queued = job_queue(), 0
    configs = preset_configs(quick=mode == "quick")
    shipped.install(queue, configs)
    for config in configs:
        with contextlib.suppress(TempsupError):  # a preset this server refuses stays untrained
            queued += queue.submit(config, client="presets", priority=LOW).active
    return queued


def start() -> WorkerPool:
    """What a server starts with: its workers, the default example, the presets."""
    pool = start_workers()
    warm_up()
    with contextlib.suppress(TempsupError):
        queue_presets()
    return pool
