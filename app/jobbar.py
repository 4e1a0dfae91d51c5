"""The job bar every page shows: progress, status line, Cancel — for any job kind.

A server callback writes a job-status store ({"key", "text", "pct", "active"});
the browser draws it (`assets/tempsup.js`, `job_bar`) only while the key is the
job on screen, so a late poll about an old job never overwrites a newer one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dash import (
    ClientsideFunction,
    Input,
    Output,
    State,
    callback,
    clientside_callback,
    html,
    no_update,
)

from app.services import job_queue
from tempsup.jobs import ACTIVE, JobState, JobStatus


def job_key(store: Any) -> str | None:
    """The job key held in a {"key": ...} store, if it is one."""
    key = store.get("key") if isinstance(store, dict) else None
    return key[:64] if isinstance(key, str) else None


def job_status(key: str, status: JobStatus | None, text: str | None = None) -> dict[str, Any]:
    """The JOB_STATUS store: what the job bar shows, tagged with the job's key.

    The browser draws it only while `key` is the config on screen, so a poll
    answer that arrives after the user moved on cannot overwrite the new state.
    """
    if status is None:
        pct, active = 0.0, False
        text = text or "Not trained yet: press Train."
    else:
        done = status.state == JobState.DONE
        pct = 100.0 if done else 100.0 * status.step / max(status.total, 1)
        active = status.state in ACTIVE
        if text is None:
            text = "Done." if done else status.message
            if status.eta_s is not None and status.state == JobState.RUNNING:
                text += f" · about {status.eta_s:.0f} s left"
    return {"key": key, "text": text, "pct": round(min(max(pct, 0.0), 100.0), 1), "active": active}


def progress(bar_id: str, text_id: str) -> list[html.Div]:
    """The progress bar and the status line under it (drawn by `wire_job_bar`)."""
    return [
        html.Div(className="progress",
                 children=html.Div(id=bar_id, className="bar", style={"width": "0%"})),
        html.Div(id=text_id, className="status", role="status"),
    ]  # fmt: skip


def wire_job_bar(status_store: str, key_store: str, text: str, bar: str, cancel: str) -> None:
    """Draw a job-status store ({"key", "text", "pct", "active"}) in the browser, but
    only while its key is the one in `key_store`: a late answer about an old job
    never overwrites the state of the current one."""
    clientside_callback(
        ClientsideFunction(namespace="tempsup", function_name="job_bar"),
        Output(text, "children"),
        Output(bar, "style"),
        Output(cancel, "disabled"),
        Input(status_store, "data"),
        Input(key_store, "data"),
    )


def wire_cancel(button: str, job_store: str, status_store: str) -> None:
    """Cancel asks the worker to stop at its next frame (queued jobs stop at once)."""

    @callback(
        Output(status_store, "data", allow_duplicate=True),
        Input(button, "n_clicks"),
        State(job_store, "data"),
        prevent_initial_call=True,
    )
    def cancel(_clicks: int, job: Any) -> Any:
        key = job_key(job)
        if key is None:
            return no_update
        status = job_queue().cancel(key)
        if status is None:
            return job_status(key, None, "Nothing to cancel.")
        return job_status(key, status, "Cancelling…" if status.active else None)


@dataclass(frozen=True)
class Polled:
    """A job a poll reports on: its key, store, status and spec."""

    key: str
    queue: Any
    status: JobStatus
    spec: Any

    @property
    def bar(self) -> dict[str, Any]:
        return job_status(self.key, self.status)

    @property
    def done(self) -> bool:
        return self.status.state == JobState.DONE


def polled(store: Any, spec_type: type = object, gone: str = "The job disappeared; press Train."):
    """The job a poll callback reports on, or the outputs that stop polling.

    Poll callbacks output (content, job-status store, interval disabled); when
    there is nothing to poll this returns that triple, else a `Polled`.
    """
    key = job_key(store)
    if key is None:
        return no_update, no_update, True
    queue = job_queue()
    status = queue.status(key)
    spec = queue.spec(key) if status is not None else None
    if status is None or not isinstance(spec, spec_type):
        return no_update, job_status(key, None, gone), True
    return Polled(key, queue, status, spec)


def wire_export(
    button: str,
    job_store: str,
    download: str,
    error: str,
    page: Callable[[str], str | None],
    filename: str,
    missing: str,
) -> None:
    """A button that downloads `page(key)` (an HTML page) of the job on screen as
    `filename.format(key=key)`, or says `missing` when there is nothing yet."""

    @callback(
        Output(download, "data"),
        Output(error, "children", allow_duplicate=True),
        Input(button, "n_clicks"),
        State(job_store, "data"),
        prevent_initial_call=True,
    )
    def export(_clicks: int, job: Any) -> Any:
        key = job_key(job)
        html_text = page(key) if key is not None else None
        if html_text is None:
            return no_update, missing
        return {"content": html_text, "filename": filename.format(key=key)}, ""
