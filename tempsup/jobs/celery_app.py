"""The Celery application of the Redis backend (`tempsup.jobs.redis`): workers run

    TEMPSUP_REDIS_URL=redis://HOST:6379/0 \\
        celery -A tempsup.jobs.celery_app worker --pool solo --queues tempsup.tasks

on any machine that reaches that Redis (one training process per worker; run
more workers, or containers, for more). `RedisQueue.worker_command` builds
exactly this line for `WorkerPool`.

One task, `tempsup.drain`: open the queue of the task's prefix, recover jobs
of dead workers, then claim and train queued jobs until none is left
(`tempsup.jobs.worker.Worker.drain`). `drain_hook` is the notify hook a
`RedisQueue` is given (by `tempsup.jobs.open_queue` and by the task itself).
The task carries no job, so Celery's delivery guarantees do not matter to
correctness: the queue's atomic claim in Redis decides who trains what, and a
redelivered or surplus task is a no-op.
Settings: late acks with a prefetch of one (an idle worker never waits behind
a busy one's reserved message), JSON only, no result backend (results live in
the queue's own keys).

Shutdown: a warm shutdown (SIGTERM) stops the running job at its next step
and gives it back to the queue, first in line, like the diskcache workers;
the drain task it sends on the way wakes another worker. A worker started by
a `WorkerPool` (env `TEMPSUP_PARENT_PID`) shuts down when that process dies.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from celery import Celery, signals

from tempsup.jobs.redis import DEFAULT_PREFIX, DRAIN_TASK, RedisQueue, task_queue
from tempsup.jobs.worker import Worker, lower_priority
from tempsup.settings import Settings

log = logging.getLogger("tempsup.worker")

# The worker object of the running task, so that a warm shutdown can stop it.
_current: dict[str, Any] = {"worker": None, "stopping": False}
LOCAL_BROKER = "redis://127.0.0.1:6379/0"


def _settings() -> Settings:
    return Settings.from_env(os.environ)


def make_app(url: str, prefix: str = DEFAULT_PREFIX) -> Celery:
    celery = Celery("tempsup", broker=url, set_as_current=False)
    celery.conf.update(
        task_default_queue=task_queue(prefix),
        task_ignore_result=True,
        task_acks_late=True,
        worker_prefetch_multiplier=1,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # ride out a Redis restart
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        broker_transport_options={"visibility_timeout": 6 * 3600},
    )
    celery.task(name=DRAIN_TASK, ignore_result=True)(drain)
    return celery


@lru_cache(maxsize=8)
def app_for(url: str) -> Celery:
    """A Celery app that sends to the broker at `url` (web processes, tests)."""
    return make_app(url)


def send_drain(url: str, prefix: str = DEFAULT_PREFIX) -> None:
    app_for(url).send_task(
        DRAIN_TASK, kwargs={"prefix": prefix}, queue=task_queue(prefix), retry=False
    )


def drain_hook(url: str, prefix: str) -> Callable[[], None]:
    """A RedisQueue's notify hook: send a drain task to the workers of `prefix`."""

    def notify() -> None:
        send_drain(url, prefix)

    return notify


def worker_queue(settings: Settings, prefix: str | None = None) -> RedisQueue:
    """The queue a Celery worker trains from (trusted: specs were checked at submit)."""
    url, prefix = settings.redis_url or LOCAL_BROKER, prefix or settings.redis_prefix
    return RedisQueue(url, prefix, settings.worker_loglevel, notify=drain_hook(url, prefix))


def drain(prefix: str | None = None) -> int:
    """The task: train queued jobs of the queue at `prefix` until none is left."""
    if _current["stopping"]:
        return 0
    settings = _settings()
    worker = Worker(worker_queue(settings, prefix), threads=settings.threads)
    _current["worker"] = worker
    try:
        return worker.drain()
    finally:
        _current["worker"] = None
        worker.queue.close()


_startup = _settings()
app = make_app(_startup.redis_url or LOCAL_BROKER, _startup.redis_prefix)


# ---- worker life cycle ---------------------------------------------------------------


@signals.worker_init.connect
def _init(**_: Any) -> None:
    settings = _settings()
    lower_priority(settings.worker_nice)
    threads = str(settings.threads)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, threads)
    logging.getLogger("tempsup").setLevel(logging.INFO)


@signals.worker_ready.connect
def _ready(**_: Any) -> None:
    """Pick up jobs queued while no worker ran; watch the parent, if any."""
    settings = _settings()
    try:
        worker_queue(settings)._notify()
    except Exception:  # the next submit or poll sends one anyway
        log.exception("could not send the start-up drain task")
    if settings.parent_pid is not None:
        threading.Thread(
            target=_watch_parent, args=(settings.parent_pid,), name="tempsup-parent", daemon=True
        ).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    log.warning("parent process %d is gone; shutting down", parent)
    os.kill(os.getpid(), signal.SIGTERM)


@signals.worker_shutting_down.connect
def _shutting_down(**_: Any) -> None:
    """Warm shutdown: the running job stops at its next step and is re-queued."""
    _current["stopping"] = True
    worker = _current["worker"]
    if worker is not None:
        worker.stop()
