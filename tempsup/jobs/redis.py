"""The scale-out backend of the job queue: Redis as the store, Celery as the dispatcher.

Same interface and the same logic as the embedded diskcache queue
(`tempsup.jobs.queue.BaseQueue`): only the store differs. Chosen by setting
`TEMPSUP_REDIS_URL` (`tempsup.jobs.open_queue`); web servers and workers on any
machine that reaches that Redis share the jobs.

Storage: every entry of `tempsup.jobs.store`'s layout is a Redis string under
`{prefix}{name}` (prefix default "tempsup:", `$TEMPSUP_REDIS_PREFIX`), except
a job's frames, which are one Redis list `{prefix}frames:{key}` (a cursor read
is one LRANGE). Every read-modify-write (submit with its dedupe and limits,
claim, frame, cancel, finish, recover) runs as an optimistic transaction:
the keys it reads are WATCHed, its writes are queued in MULTI/EXEC, and the
whole function runs again if another client changed a watched key first.

Dispatch: queueing a job calls the queue's notify hook, which the entry
points set to send a Celery task `tempsup.drain` (kwargs: the prefix) to the
queue `{prefix without ':'}.tasks` (`tempsup.jobs.celery_app.send_drain`; this
module imports no Celery); a Celery worker
(`celery -A tempsup.jobs.celery_app worker --pool solo`) runs it: claim the oldest
queued job, train it, repeat until the queue is empty. Tasks carry no job, so
a lost, duplicated or redelivered task can neither lose a job nor train one
twice; the claim in Redis is the only hold on a job. A worker that dies
leaves its job RUNNING with a stale heartbeat (or a dead pid on this host):
`recover`, run by every drain and by `status`, marks it FAILED — never a
silent re-run. If no task reaches a worker (broker message lost in a Redis
restart without persistence), polling a queued job re-sends one, at most
every `KICK_EVERY` seconds.

Outages: a Redis that cannot be reached raises `StoreUnavailable` (a
TempsupError naming the URL) in the web process; workers retry their writes
and carry on training once it is back. With Redis persistence on (AOF, as in
docker-compose.yml) a restart loses nothing; without it, jobs that were
queued or running are gone and their pages say so ("the job disappeared").
"""

from __future__ import annotations

import logging
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import redis

from tempsup.jobs.queue import BaseQueue, Command, Imports
from tempsup.jobs.record import JobState, JobStatus
from tempsup.jobs.store import StoreUnavailable

log = logging.getLogger("tempsup.jobs")

T = TypeVar("T")

DEFAULT_PREFIX = "tempsup:"
DRAIN_TASK = "tempsup.drain"
# A polled job that is still queued re-sends a drain task at most this often
# (covers a task lost with the broker; a surplus task is a no-op).
KICK_EVERY = 15.0
# Optimistic transactions that keep losing the race back off, then give up.
MAX_ATTEMPTS = 200


def task_queue(prefix: str) -> str:
    """The Celery queue of a prefix: "tempsup:" → "tempsup.tasks"."""
    return prefix.rstrip(":") + ".tasks"


def safe_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


# ---- the store ---------------------------------------------------------------------


def _text(value: bytes | None) -> str | None:
    if value is None:
        return None
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:  # a damaged entry is a missing one
        return None


def _bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _millis(expire: float | None) -> int | None:
    """An entry's lifetime in seconds as Redis's PX (at least 1 ms; None: no expiry)."""
    return None if expire is None else max(1, int(expire * 1000))


class RedisView:
    """Reads and writes outside a transaction, each one atomic by itself."""

    def __init__(self, store: RedisStore) -> None:
        self.store = store

    def text(self, name: str) -> str | None:
        with self.store.guard():
            return _text(self.store.client.get(self.store.name(name)))

    def data(self, name: str) -> bytes | None:
        with self.store.guard():
            return self.store.client.get(self.store.name(name))

    def set(self, name: str, value: str | bytes, expire: float | None = None) -> None:
        with self.store.guard():
            self.store.client.set(self.store.name(name), _bytes(value), px=_millis(expire))

    def delete(self, name: str) -> None:
        with self.store.guard():
            self.store.client.delete(self.store.name(name))

    def set_frame(self, key: str, index: int, data: bytes, stored: int) -> None:
        self.store.atomic(lambda txn: txn.set_frame(key, index, data, stored))

    def drop_frames(self, key: str, stored: int) -> None:
        with self.store.guard():
            self.store.client.delete(self.store.frames_name(key))


class RedisTxn:
    """One optimistic transaction: reads WATCH their key and see this transaction's
    own writes; writes are queued and applied in MULTI/EXEC by `RedisStore.atomic`."""

    def __init__(self, store: RedisStore, pipe: redis.client.Pipeline) -> None:
        self.store, self.pipe = store, pipe
        self.pending: dict[str, bytes | None] = {}  # name -> value written (None: deleted)
        self.ops: list[Callable[[redis.client.Pipeline], Any]] = []
        self.watched: set[str] = set()

    def _get(self, name: str) -> bytes | None:
        full = self.store.name(name)
        if full in self.pending:
            return self.pending[full]
        if full not in self.watched:
            self.pipe.watch(full)
            self.watched.add(full)
        return self.pipe.get(full)

    def text(self, name: str) -> str | None:
        return _text(self._get(name))

    def data(self, name: str) -> bytes | None:
        return self._get(name)

    def set(self, name: str, value: str | bytes, expire: float | None = None) -> None:
        full, data, px = self.store.name(name), _bytes(value), _millis(expire)
        self.pending[full] = data
        self.ops.append(lambda p: p.set(full, data, px=px))

    def delete(self, name: str) -> None:
        full = self.store.name(name)
        self.pending[full] = None
        self.ops.append(lambda p: p.delete(full))

    def set_frame(self, key: str, index: int, data: bytes, stored: int) -> None:
        """Frame `index` into the job's list; `stored` frames are there (the record says)."""
        full = self.store.frames_name(key)
        if index < stored:
            self.ops.append(lambda p: p.lset(full, index, data))
            return
        if index == 0:  # a fresh list, whatever a damaged record left behind
            self.ops.append(lambda p: p.delete(full))
        padding = [b""] * (index - stored) if index > 0 else []  # never happens in order
        self.ops.append(lambda p: p.rpush(full, *padding, data))

    def drop_frames(self, key: str, stored: int) -> None:
        full = self.store.frames_name(key)
        self.ops.append(lambda p: p.delete(full))


class RedisStore:
    """Names under `prefix` in the Redis at `url`; a client per process."""

    def __init__(self, url: str, prefix: str = DEFAULT_PREFIX) -> None:
        self.url, self.prefix = url, prefix
        self._client: redis.Redis | None = None
        self._pid = -1

    @property
    def client(self) -> redis.Redis:
        if self._client is None or self._pid != os.getpid():
            self._client = redis.Redis.from_url(
                self.url, socket_timeout=10, socket_connect_timeout=3, health_check_interval=15
            )
            self._pid = os.getpid()
        return self._client

    def name(self, name: str) -> str:
        return self.prefix + name

    def frames_name(self, key: str) -> str:
        return f"{self.prefix}frames:{key}"

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Redis errors (other than a lost optimistic race) become StoreUnavailable."""
        try:
            yield
        except redis.exceptions.WatchError:
            raise
        except redis.exceptions.RedisError as exc:
            raise StoreUnavailable(
                f"job store unavailable: cannot use Redis at {safe_url(self.url)} "
                f"({type(exc).__name__}: {exc}); try again in a moment"
            ) from None

    def view(self) -> RedisView:
        return RedisView(self)

    def atomic(self, fn: Callable[[RedisTxn], T]) -> T:
        for attempt in range(MAX_ATTEMPTS):
            with self.guard(), self.client.pipeline(transaction=True) as pipe:
                txn = RedisTxn(self, pipe)
                try:
                    result = fn(txn)
                    if txn.ops:
                        pipe.multi()
                        for op in txn.ops:
                            op(pipe)
                        pipe.execute()
                    return result
                except redis.exceptions.WatchError:
                    pass  # another client changed what we read: run fn again
            if attempt >= 5:
                time.sleep(min(0.05, 0.001 * attempt))
        raise StoreUnavailable(
            f"job store busy: a transaction lost {MAX_ATTEMPTS} races in a row; try again"
        )

    def frames(self, key: str, start: int, stop: int) -> list[bytes | None]:
        if stop <= start:
            return []
        with self.guard():
            items = self.client.lrange(self.frames_name(key), start, stop - 1)
        out: list[bytes | None] = [item if item else None for item in items]
        return out + [None] * (stop - start - len(out))

    def ping(self) -> bool:
        with self.guard():
            return bool(self.client.ping())

    def close(self) -> None:
        if self._client is not None and self._pid == os.getpid():
            self._client.close()
        self._client = None


# ---- the queue ---------------------------------------------------------------------


class RedisQueue(BaseQueue):
    """Jobs in Redis, trained by Celery workers (see the module docstring).

    `url` is a Redis URL (redis://host:port/db), `prefix` namespaces every
    key (several deployments, or tests, can share one Redis), `worker_loglevel`
    is the Celery workers' log level. Options: see `tempsup.jobs.queue.BaseQueue`
    (`notify`: what wakes a worker, e.g. `tempsup.jobs.celery_app.drain_hook`).
    """

    backend = "redis"

    def __init__(
        self, url: str, prefix: str = DEFAULT_PREFIX, worker_loglevel: str = "INFO", **options: Any
    ) -> None:
        self.url, self.prefix, self.worker_loglevel = url, prefix, worker_loglevel
        self._redis = RedisStore(url, prefix)
        super().__init__(self._redis, **options)

    @property
    def store(self) -> RedisStore:
        return self._redis

    @property
    def task_queue(self) -> str:
        return task_queue(self.prefix)

    def copy(self) -> RedisQueue:
        return RedisQueue(self.url, self.prefix, self.worker_loglevel, **self.options)

    def ping(self) -> bool:
        """True if Redis answers; StoreUnavailable if not."""
        return self._redis.ping()

    def worker_command(self, threads: int = 1, poll: float = 0.2, imports: Imports = ()) -> Command:
        """A Celery worker for this queue: one training process (`--pool solo`)."""
        cmd = [
            sys.executable, "-m", "celery", "-A", "tempsup.jobs.celery_app", "worker",
            "--pool", "solo", "--concurrency", "1", "--prefetch-multiplier", "1",
            "--queues", self.task_queue, "--hostname", f"tempsup-{uuid.uuid4().hex[:8]}@%h",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
            "--loglevel", self.worker_loglevel,
        ]  # fmt: skip
        if imports:
            cmd += ["--include", ",".join(imports)]
        env = {
            "TEMPSUP_REDIS_URL": self.url,
            "TEMPSUP_REDIS_PREFIX": self.prefix,
            "TEMPSUP_THREADS": str(threads),
        }
        return cmd, env

    def _notify(self) -> None:
        """Wake a worker; if the hook fails (broker down), a later poll sends again."""
        try:
            super()._notify()
        except Exception as exc:  # kombu raises many types; the kick covers a lost task
            log.warning("could not wake a worker at %s: %s", safe_url(self.url), exc)

    def status(self, key: str) -> JobStatus | None:
        status = super().status(key)
        if status is not None and status.state == JobState.QUEUED and self._kick_due():
            self._notify()
        return status

    def _kick_due(self) -> bool:
        with self._redis.guard():
            name = self._redis.name("kick")
            return bool(self._redis.client.set(name, b"1", nx=True, ex=int(KICK_EVERY)))

    def __repr__(self) -> str:
        return f"RedisQueue({safe_url(self.url)!r}, prefix={self.prefix!r})"
