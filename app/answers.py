"""One answer's bytes for every page that polls the same thing within a tick.

A class of sixty watching one job sends the server the same poll again and again: the
pages hold the same cursor, seed and feature, and a web process reads the stream at most
every `app.streams.STREAM_TICK_S`, so within a tick they are owed the same answer. Measured
in the classroom benchmark (60 viewers, 40 s): 6,496 polls held 658 different answers
(346 MB sent, 35 MB of it different), yet each poll ran the callback and Dash encoded its
answer afresh, a quarter of the web's time.

Here a callback declared `share`d (a poll without side effects: the job widget's,
`app.jobfollow.RunFollower`) is answered once per process for each request content within
a tick: the request's outputs and every input and state value except the interval's tick
count name the answer. The first request runs Dash as usual and its answer is kept; the
identical requests of the next `STREAM_TICK_S` get those bytes before Dash is reached. An
answer is at most one tick older than a fresh one would be, as the frames it carries
already are. Only a plain 200 answer is kept (not one that reports an error on the page),
and compression's result is kept with it (`app.delivery`): a phone's brotli form is made
once too.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Any

import flask

from app import delivery, ids, streams
from app.services import job_queue

KEEP_BYTES = 32 * 1024 * 1024  # answers kept per process (a class's tick holds a few)
UPDATE_PATH = "_dash-update-component"
_TRIGGERS: set[str] = set()  # "id.prop" of the intervals whose callbacks are shared
_LOCK = threading.Lock()


class _Kept:
    """An answer's bytes, when it was made, from which job store (a process opens another
    when its settings change: tests do), and its name for compression's cache: its
    digest, so that the same bytes asked for differently are compressed once (when a
    class's job ends, every page is sent the same whole view, but their polls differ by
    the frame each had, and each answer was compressed again: 60 brotli forms of a 200 kB
    view). Worked out when compression first asks for it: an answer sent as it is needs
    none (hashing every kept answer cost a class about half a second of CPU a minute)."""

    __slots__ = ("body", "made", "store", "_name")

    def __init__(self, body: bytes, made: float, store: Any) -> None:
        self.body, self.made, self.store = body, made, store
        self._name: str | None = None

    @property
    def name(self) -> str:
        if self._name is None:  # two threads at once work out the same name
            digest = hashlib.blake2b(self.body, digest_size=16).hexdigest()
            self._name = f"{delivery.SHARED_NAME}{digest}"
        return self._name


_ANSWERS: OrderedDict[str, _Kept] = OrderedDict()
_SIZE = [0]  # bytes held in _ANSWERS


def share(trigger: str) -> None:
    """Share the answers of the callback fired by `trigger` ("id.prop" as the page names
    it: `app.ids.text` of a dict id), an interval's `n_intervals`. The callback must have no
    side effects: a shared request is not run."""
    _TRIGGERS.add(trigger)


def request_key(body: Any) -> str | None:
    """The name of the answer a callback request is owed, or None if it is not shared:
    its outputs and every input and state value but the trigger's count."""
    if not isinstance(body, dict):
        return None
    changed = body.get("changedPropIds")
    if not (isinstance(changed, list) and len(changed) == 1 and changed[0] in _TRIGGERS):
        return None
    items = [*(body.get("inputs") or []), *(body.get("state") or [])]
    try:
        values = [
            [i["id"], i["property"], i.get("value")]
            for i in items
            if not _is_trigger(i, changed[0])
        ]
        text = json.dumps([body.get("output"), values], sort_keys=True, separators=(",", ":"))
    except (TypeError, KeyError, ValueError):  # a malformed request: Dash answers it
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _is_trigger(item: Any, trigger: str) -> bool:
    return f"{ids.text(item.get('id'))}.{item.get('property')}" == trigger


def _fresh(key: str, now: float) -> _Kept | None:
    with _LOCK:
        kept = _ANSWERS.get(key)
        if kept is None:
            return None
        if now - kept.made >= streams.STREAM_TICK_S or kept.store is not job_queue():
            _drop(key)
            return None
        _ANSWERS.move_to_end(key)
        return kept


def _drop(key: str) -> None:
    kept = _ANSWERS.pop(key)
    _SIZE[0] -= len(kept.body)


def _keep(key: str, made: float, body: bytes) -> _Kept | None:
    if streams.STREAM_TICK_S <= 0 or len(body) > KEEP_BYTES // 4:
        return None
    kept = _Kept(body, made, job_queue())
    with _LOCK:
        if key in _ANSWERS:
            _drop(key)
        _ANSWERS[key] = kept
        _SIZE[0] += len(body)
        while _SIZE[0] > KEEP_BYTES:
            _drop(next(iter(_ANSWERS)))
    return kept


def _before() -> flask.Response | None:
    request = flask.request
    if request.method != "POST" or not request.path.endswith(UPDATE_PATH) or not _TRIGGERS:
        return None
    key = request_key(request.get_json(silent=True))
    if key is None:
        return None
    now = time.monotonic()
    kept = _fresh(key, now)
    if kept is None:
        flask.g.tempsup_answer = (key, now)  # Dash answers; `_after` keeps what it said
        return None
    flask.g.tempsup_shared = kept  # compression names it (`app.delivery`), if it compresses
    return flask.Response(kept.body, mimetype="application/json")


def _after(response: flask.Response) -> flask.Response:
    made = flask.g.pop("tempsup_answer", None)
    if made is None or response.status_code != 200 or response.is_streamed:
        return response
    body = response.get_data()
    if b'"sideUpdate"' in body:  # an error the page is told of (app.report_error): not kept
        return response
    kept = _keep(*made, body)
    if kept is not None:  # its compressed form is kept under its name (app.delivery)
        flask.g.tempsup_shared = kept
    return response


def install(server: flask.Flask) -> None:
    """Serve shared answers on `server` (after compression's set-up: its after-request hook
    then sees the answer before it is compressed)."""
    server.before_request(_before)
    server.after_request(_after)


def clear() -> None:
    """Forget every kept answer (tests)."""
    with _LOCK:
        _ANSWERS.clear()
        _SIZE[0] = 0
