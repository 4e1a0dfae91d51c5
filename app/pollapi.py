"""The class poll over HTTP: JSON routes on the app's Flask server, and the poll's handle.

The lesson page's poll panel (`app.pollpanel`) calls `tempsup.teaching.poll` directly
from its callbacks; these routes give the same operations to any client (and
are what a crafted request meets). Every refusal is a JSON `{"error": …}` with
the status `tempsup.teaching.poll.PollRefused` names — never a traceback:

    POST   /poll/api/classes                   → 201 {"code", "key", "link", "expires"}
    POST   /poll/api/classes/CODE/votes        {"step", "choice", "browser"} → 201 {"count"}
    GET    /poll/api/classes/CODE/results?step=N   (Authorization: Bearer KEY)
           → 200 {"step", "choices", "counts", "total", "browsers", "expires"}
    DELETE /poll/api/classes/CODE               (Authorization: Bearer KEY) → 204

`choice` is the choice's place in the step's `choices` (its identity, as the
results list them), not the shuffled place a page shows it in.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import flask

from app.services import job_queue
from tempsup.errors import TempsupError
from tempsup.jobs.store import StoreUnavailable
from tempsup.teaching import lesson
from tempsup.teaching.poll import Poll, PollRefused

MAX_BODY = 2048  # bytes: a vote is a few dozen

blueprint = flask.Blueprint("poll", __name__, url_prefix="/poll/api")
log = logging.getLogger("tempsup.app")


def class_poll() -> Poll:
    """The class poll in the app's job store (every web worker shares it)."""
    return Poll(job_queue().store)


def client_address() -> str:
    """Who a request counts against in the per-address rate limit: the peer's address.

    A forwarded-for header is not trusted (anyone can write one); behind a proxy all
    requests share its address, as a school's students share their network's."""
    return flask.request.remote_addr or "unknown"


def _key() -> str | None:
    auth = flask.request.headers.get("Authorization", "")
    return auth[7:].strip() if auth.startswith("Bearer ") else None


def _body() -> dict[str, Any]:
    """The request's JSON object, read no further than `MAX_BODY` (a chunked body too)."""
    data = flask.request.stream.read(MAX_BODY + 1)
    if len(data) > MAX_BODY or (flask.request.content_length or 0) > MAX_BODY:
        raise PollRefused(f"request too large: at most {MAX_BODY} bytes", 413)
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise PollRefused("expected a JSON object as the request body")
    return body


def _answer(fn) -> flask.Response:  # noqa: ANN001 - any route body
    try:
        out, status = fn()
    except PollRefused as exc:
        return flask.jsonify(error=str(exc)), exc.status
    except StoreUnavailable as exc:
        return flask.jsonify(error=str(exc)), 503
    except TempsupError as exc:
        return flask.jsonify(error=str(exc)), 400
    except Exception:
        log.exception("poll request failed")
        return flask.jsonify(error="something went wrong; the server log has the details"), 500
    return (flask.jsonify(out), status) if out is not None else ("", status)


@blueprint.post("/classes")
def create_class():
    def run():
        made = class_poll().create(client_address())
        link = f"/lesson?class={made.code}"
        return {"code": made.code, "key": made.key, "link": link, "expires": made.expires}, 201

    return _answer(run)


@blueprint.post("/classes/<code>/votes")
def vote(code: str):
    def run():
        body = _body()
        count = class_poll().vote(
            code, body.get("step"), body.get("browser"), body.get("choice"), client_address()
        )
        return {"count": count}, 201

    return _answer(run)


@blueprint.get("/classes/<code>/results")
def results(code: str):
    def run():
        text = flask.request.args.get("step", "")[:8]
        step = int(text) if text.isdigit() else text
        res = class_poll().results(code, _key(), step, client_address())
        out = {
            "step": res.step,
            "choices": list(lesson.step(res.step).choices),
            "counts": list(res.counts),
            "total": res.total,
            "browsers": res.browsers,
            "expires": res.expires,
        }
        return out, 200

    return _answer(run)


@blueprint.delete("/classes/<code>")
def end_class(code: str):
    def run():
        class_poll().end(code, _key(), client_address())
        return None, 204

    return _answer(run)
