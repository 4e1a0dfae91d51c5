"""How many pages poll this web process now, measured from their polls.

A page's poll period is chosen by the server (`app.jobfollow.poll_interval`). The number of
active jobs says how busy the training cores are, but not how many pages the web tier
serves: a class of sixty watching the teacher's one job is one active job and sixty pages,
each polling every 0.3 s — in the classroom benchmark over half of the web's CPU went to
answering polls before any frame was drawn (a scratch poll that drew nothing still cost
11 s of the class's minute). Here each process counts the pages that poll it, so their
period can grow with them.

Every poll request carries the period its page polls at (the interval's `interval`, a
State of the poll callback). Over the last `WINDOW_S` seconds, a page polling every p
seconds sends WINDOW_S / p requests; counting each request as p / WINDOW_S of a page gives
each page 1 whatever its period: `pages()` is that sum. It is counted before Dash or a
shared answer (`app.answers`) is reached, so every poll counts, answered or shared.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

import flask

from app import ids
from app.answers import UPDATE_PATH

WINDOW_S = 4.0  # longer than the slowest poll period (app.jobfollow.WAITING_POLL_MS)
_TRIGGERS: dict[str, str] = {}  # "id.n_intervals" -> "id" of the intervals counted
_LOCK = threading.Lock()
_HEARD: deque[tuple[float, float]] = deque()  # (when, the page's share of a page)
_TOTAL = [0.0]  # the sum of the shares in _HEARD


def listen(interval: Any) -> None:
    """Count the pages whose `dcc.Interval` of id `interval` fires a poll (its
    `n_intervals`); the poll callback must take that interval's `interval` as a State."""
    name = ids.text(interval)
    _TRIGGERS[f"{name}.n_intervals"] = name


def heard(period_ms: Any, now: float | None = None) -> None:
    """One poll from a page that polls every `period_ms` (anything else: not counted)."""
    if isinstance(period_ms, bool) or not isinstance(period_ms, (int, float)) or period_ms <= 0:
        return
    now = time.monotonic() if now is None else now
    share = min(float(period_ms) / 1000.0, WINDOW_S) / WINDOW_S
    with _LOCK:
        _HEARD.append((now, share))
        _TOTAL[0] += share
        _expire(now)


def pages(now: float | None = None) -> float:
    """About how many pages poll this process now (each page 1, whatever its period)."""
    now = time.monotonic() if now is None else now
    with _LOCK:
        _expire(now)
        return max(_TOTAL[0], 0.0)


def _expire(now: float) -> None:
    while _HEARD and _HEARD[0][0] <= now - WINDOW_S:
        _TOTAL[0] -= _HEARD.popleft()[1]
    if not _HEARD:
        _TOTAL[0] = 0.0  # no drift from the float sums


def period_of(body: Any) -> Any:
    """The poll period a callback request says its page polls at, if it is a counted poll
    (one of `listen`'s intervals fired it); None otherwise."""
    if not isinstance(body, dict):
        return None
    changed = body.get("changedPropIds")
    if not (isinstance(changed, list) and len(changed) == 1 and changed[0] in _TRIGGERS):
        return None
    interval = _TRIGGERS[changed[0]]
    for item in body.get("state") or []:
        if (
            isinstance(item, dict)
            and item.get("property") == "interval"
            and ids.text(item.get("id")) == interval
        ):
            return item.get("value")
    return None


def _before() -> None:
    request = flask.request
    if request.method == "POST" and request.path.endswith(UPDATE_PATH) and _TRIGGERS:
        heard(period_of(request.get_json(silent=True)))


def install(server: flask.Flask) -> None:
    """Count the polls `server` receives (before any hook that may answer them)."""
    server.before_request(_before)


def clear() -> None:
    """Forget every poll heard (tests)."""
    with _LOCK:
        _HEARD.clear()
        _TOTAL[0] = 0.0
