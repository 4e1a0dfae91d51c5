"""The diskcache backend's store: one directory shared by every process on the machine.

The embedded default (`tempsup.jobs.queue.JobQueue`), beside the scale-out
one (`tempsup.jobs.redis`). Entries are the names of `tempsup.jobs.store`,
each a diskcache key (values are str or bytes, never pickles of objects);
`atomic(fn)` runs `fn` inside `cache.transact()`, an SQLite write lock, so
every read-modify-write of the queue holds across processes. Workers poll:
nothing wakes them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import diskcache

from tempsup.jobs.store import Txn, frame_key

T = TypeVar("T")


class DiskTxn:
    """Direct reads and writes of a diskcache; inside `transact()` they are one transaction."""

    def __init__(self, cache: diskcache.Cache) -> None:
        self.cache = cache

    def _get(self, name: str, kind: type) -> Any:
        try:
            value = self.cache.get(name)
        except Exception:  # a damaged entry (unreadable file, bad pickle) is a missing one
            return None
        return value if isinstance(value, kind) else None

    def text(self, name: str) -> str | None:
        return self._get(name, str)

    def data(self, name: str) -> bytes | None:
        return self._get(name, bytes)

    def set(self, name: str, value: str | bytes, expire: float | None = None) -> None:
        self.cache.set(name, value, expire=expire)

    def delete(self, name: str) -> None:
        self.cache.delete(name)

    def set_frame(self, key: str, index: int, data: bytes, stored: int) -> None:
        self.cache.set(frame_key(key, index), data)

    def drop_frames(self, key: str, stored: int) -> None:
        for i in range(stored):
            self.cache.delete(frame_key(key, i))


class DiskStore:
    """A diskcache directory, reopened after a fork (SQLite handles must not cross one)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._cache: diskcache.Cache | None = None
        self._cache_pid = -1
        # One Cache per process, made once: threads of a web worker opening it at the
        # same moment would race on its settings writes ("database is locked") and a
        # half-made one could keep the SQLite lock until collected.
        self._open_lock = threading.Lock()

    @property
    def cache(self) -> diskcache.Cache:
        cache = self._cache
        if cache is not None and self._cache_pid == os.getpid():
            return cache
        with self._open_lock:
            if self._cache is None or self._cache_pid != os.getpid():
                # eviction off: a culled queue or status entry would lose jobs silently
                self._cache = diskcache.Cache(str(self.directory), eviction_policy="none")
                self._cache_pid = os.getpid()
            return self._cache

    def view(self) -> DiskTxn:
        return DiskTxn(self.cache)

    def atomic(self, fn: Callable[[Txn], T]) -> T:
        with self.cache.transact(retry=True):
            return fn(DiskTxn(self.cache))

    def frames(self, key: str, start: int, stop: int) -> list[bytes | None]:
        view = self.view()
        return [view.data(frame_key(key, i)) for i in range(start, stop)]

    def close(self) -> None:
        if self._cache is not None and self._cache_pid == os.getpid():
            self._cache.close()
        self._cache = None
