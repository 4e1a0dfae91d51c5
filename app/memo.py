"""A bounded cache that computes each value once, however many requests ask at once.

A class watching one job asks for the same thing at the same moment: thirty pages poll
within a few milliseconds of a new frame, and all of them find the job done on the same
poll. A plain cache (`functools.lru_cache`) lets every one of those requests miss and
compute the value in parallel, so thirty viewers cost thirty computations anyway. Here
the first request computes and the others wait for its value (single flight); if the
computation raises, that request sees the error and the waiting ones ask again (one of
them computes).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

LOCK = threading.RLock()  # one lock for every memo of a process: the critical parts are tiny
PENDING: Any = object()  # get_or(..., wait=False): another request is making the value


class _Flight:
    """A value being computed: the requests that wait for it, and what it turned out to be."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok = False
        self.value: Any = None


class Memo(OrderedDict):
    """A mapping of at most `keep` entries, least recently used first out, filled by
    `get_or(key, make)` with one call of `make` per key at a time."""

    def __init__(self, keep: int) -> None:
        super().__init__()
        self.keep = keep
        self._flights: dict[Hashable, _Flight] = {}

    def get_or(self, key: Hashable, make: Callable[[], Any], wait: bool = True) -> Any:
        """The value under `key`, made by `make()` if absent (by the first of the requests
        that ask for it at once; the others wait for that value). With `wait` False, a
        request that finds another making it gets `PENDING` at once instead: a page that
        can show what it has and ask again does not hold a server thread meanwhile."""
        with LOCK:
            if key in self:
                self.move_to_end(key)
                return self[key]
            flight = self._flights.get(key)
            first = flight is None
            if first:
                flight = self._flights[key] = _Flight()
        if not first:
            if not wait:
                return PENDING
            flight.done.wait()
            if flight.ok:
                return flight.value
            return self.get_or(key, make)  # the first request failed: ask again
        try:
            value = make()
            flight.value, flight.ok = value, True
            self.put(key, value)
            return value
        finally:
            with LOCK:
                self._flights.pop(key, None)
            flight.done.set()

    def put(self, key: Hashable, value: Any) -> None:
        """Hold `value` under `key` as the most recently used entry."""
        with LOCK:
            self[key] = value
            self.move_to_end(key)
            while len(self) > self.keep:
                self.popitem(last=False)
