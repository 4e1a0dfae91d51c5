"""The job service: a queue of training jobs shared by web processes and workers.

Modules, each importing only those before it:

    record      JobState, JobRecord, TRANSITIONS and transition(): a job's life
    store       the store primitives (Txn, Store) and their names
    disk        DiskStore: the diskcache backend's store
    limits      Limits: size, per-client, rate, queue length
    kinds       the job kinds (run, sweep, bows, bows-sweep), check_untrusted(spec)
    entries     a job's record and spec entries, read and written in a transaction
    results     Results: the finished results a queue stores, reads back verified, caches
    lease       WorkerLease (claim / put_frame / progress / finish / end / requeue),
                Claim, and the recovery of dead workers' jobs
    queue       BaseQueue, the web's verbs (submit / status / frames / result /
                cancel ...) over a WorkerLease; JobQueue on diskcache
    redis       RedisStore, RedisQueue (no Celery: the notify hook is passed in)
    pool        WorkerPool: worker processes started and supervised by another process
    worker      the worker loop (`python -m tempsup.jobs.worker`)
    celery_app  the Celery app of the Redis backend (`celery -A tempsup.jobs.celery_app`)

`open_queue(settings)` below is the one place that knows both backends; only
entry points (the CLI, `app.services`, the Celery app) call it.
"""

from __future__ import annotations

from typing import Any

from tempsup.jobs.limits import Limits
from tempsup.jobs.queue import BaseQueue, JobQueue
from tempsup.settings import Settings


def limits_of(settings: Settings) -> Limits:
    """The public demo's limits (TEMPSUP_MAX_*)."""
    return Limits(
        max_queue=settings.max_queue,
        max_per_client=settings.max_per_client,
        max_work=settings.max_work,
        max_rate=settings.max_per_minute,
    )


def open_queue(settings: Settings, **options: Any) -> BaseQueue:
    """The configured job queue: `redis_url` set → Redis, woken through Celery
    (`tempsup.jobs.redis.RedisQueue`, names prefixed by `redis_prefix`), else
    diskcache in `settings.cache`. Limits come from the settings, and specs
    are untrusted (what a web server needs); `options` replace any of them
    (`trust_specs=True` for the command line)."""
    options = {"limits": limits_of(settings), "trust_specs": False, **options}
    if settings.redis_url:
        from tempsup.jobs.celery_app import drain_hook
        from tempsup.jobs.redis import RedisQueue

        url, prefix = settings.redis_url, settings.redis_prefix
        options.setdefault("notify", drain_hook(url, prefix))
        return RedisQueue(url, prefix, settings.worker_loglevel, **options)
    return JobQueue(settings.cache, **options)
