"""The job widget every page shows: Run, Cancel, the progress bar, the status line, the
error line, the poll interval and the job's stores — one component for any job kind.

Its ids are pattern-matching, `{"type": part, "page": page}` (`app/ids.py`), so the
widget's own callbacks are registered once, here, and serve every page through `MATCH`:

- the bar is drawn in the browser (`assets/tempsup.js`, `job_bar`) from the status store
  ({"key", "text", "pct", "active"}), and only while its key is the job in the job store:
  a late poll about an old job never overwrites the state of a newer one;
- Cancel asks the worker to stop at its next frame (a queued job stops at once);
- Export downloads the page that the exporter registered for that page makes of the job.

What differs between pages — which controls make the job spec, what a poll draws — stays in
the page, in callbacks written against `JobWidget(page)`'s ids and outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dash
from dash import MATCH, Input, Output, State, callback, clientside_callback, dcc, html, no_update

from app import ids
from app.jobwords import describe
from app.services import job_queue
from app.widgets import js
from tempsup.jobs.record import ACTIVE, JobState, JobStatus


def job_key(store: Any) -> str | None:
    """The job key held in a {"key": ...} store, if it is one."""
    key = store.get("key") if isinstance(store, dict) else None
    return key[:64] if isinstance(key, str) else None


def job_status(key: str, status: JobStatus | None, text: str | None = None) -> dict[str, Any]:
    """The status store: what the job bar shows, tagged with the job's key.

    The browser draws it only while `key` is the job on screen, so a poll answer that
    arrives after the user moved on cannot overwrite the new state.
    """
    if status is None:
        pct, active = 0.0, False
        text = text or "Not trained yet: press Train."
    else:
        done = status.state == JobState.DONE
        pct = 100.0 if done else 100.0 * status.step / max(status.total, 1)
        active = status.state in ACTIVE
        if text is None:
            text = "Done." if done else describe(status)
            if status.eta_s is not None and status.state == JobState.RUNNING:
                text += f" · about {status.eta_s:.0f} s left"
    return {"key": key, "text": text, "pct": round(min(max(pct, 0.0), 100.0), 1), "active": active}


def submit(spec: Any, client: Any) -> JobStatus:
    """Queue `spec` for this browser (`client`: the per-browser id of the client store)."""
    return job_queue().submit(spec, client=str(client or "anonymous")[:64])


@dataclass(frozen=True)
class JobWidget:
    """The job widget of one page (`page`: `ids.EXPLORER`, `ids.PHASE`, …): its ids, its
    layout, and the outputs a page's submit and poll callbacks write."""

    page: str

    def id(self, part: str) -> dict[str, Any]:
        return ids.job(part, self.page)

    # the parts a page's callbacks name most
    store = property(lambda self: self.id(ids.STORE))  # {"key", …}: the job on screen
    status = property(lambda self: self.id(ids.STATUS))  # what the bar draws
    poll = property(lambda self: self.id(ids.POLL))
    error = property(lambda self: self.id(ids.ERROR))

    def layout(
        self,
        run: str = "Train",
        *,
        export: str | None = None,
        buttons: tuple[Any, ...] = (),
        poll_ms: int = 500,
        job: Any = None,
        status: Any = None,
    ) -> list[Any]:
        """Run / Cancel (/ `export`, then `buttons`), the bar, the status line, the error
        line, and the widget's stores (prefilled with `job` and `status`)."""
        row = [
            html.Button(run, id=self.id(ids.RUN), className="primary", n_clicks=0),
            html.Button("Cancel", id=self.id(ids.CANCEL), n_clicks=0, disabled=True),
        ]
        if export is not None:
            row.append(html.Button(export, id=self.id(ids.EXPORT), n_clicks=0))
        return [
            html.Div(className="buttons", children=[*row, *buttons]),
            html.Div(className="progress", children=html.Div(
                id=self.id(ids.BAR), className="bar", style={"width": "0%"})),
            html.Div(id=self.id(ids.TEXT), className="status", role="status"),
            html.Div(id=self.error, className="error", role="alert"),
            dcc.Store(id=self.store, data=job),
            dcc.Store(id=self.status, data=status),
            dcc.Interval(id=self.poll, interval=poll_ms, disabled=True),
            dcc.Download(id=self.id(ids.DOWNLOAD)),
        ]  # fmt: skip

    # ---- what a page's callbacks read and write ----------------------------------------

    def submitted(self, *more: Output) -> tuple[Output, ...]:
        """A submit callback's outputs: the job store, the poll's `disabled`, the status
        store and the error line (then `more`); see `started` and `refused`."""
        return (
            Output(self.store, "data"),
            Output(self.poll, "disabled"),
            Output(self.status, "data"),
            Output(self.error, "children"),
            *more,
        )

    @staticmethod
    def started(key: str, status: JobStatus) -> tuple[Any, ...]:
        """`submitted` values for a queued (or already finished) job: poll it."""
        return {"key": key}, False, job_status(key, status), ""

    @staticmethod
    def refused(message: str) -> tuple[Any, ...]:
        """`submitted` values for a request the page or the queue refused."""
        return no_update, True, no_update, message

    def polling(self, first: Output, *more: Output) -> tuple[Any, ...]:
        """A poll callback's dependencies: `first` (what it draws), the status store, the
        poll's `disabled` (then `more`), fired by the poll interval with the job store as
        state."""
        return (
            first,
            Output(self.status, "data", allow_duplicate=True),
            Output(self.poll, "disabled", allow_duplicate=True),
            *more,
            Input(self.poll, "n_intervals"),
            State(self.store, "data"),
        )


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

    Poll callbacks output (content, status store, interval disabled); when there is
    nothing to poll this returns that triple, else a `Polled`.
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


# ---- the widget's own callbacks, registered once for every page -----------------------


@dataclass(frozen=True)
class Exporter:
    """What a page's Export button downloads: `make(key)` (an HTML page, or None when there
    is nothing yet) as `filename.format(key=key)`; else the error line says `missing`."""

    make: Callable[[str], str | None]
    filename: str
    missing: str


EXPORTERS: dict[str, Exporter] = {}


def register_export(page: str, make: Callable[[str], str | None], filename: str, missing: str):
    """Give `page`'s widget an Export button's action (the page lays the button out with
    `JobWidget.layout(export=...)`)."""
    EXPORTERS[page] = Exporter(make, filename, missing)


def _page(id_: Any) -> str | None:
    page = id_.get("page") if isinstance(id_, dict) else None
    return page if isinstance(page, str) else None


clientside_callback(
    js("job_bar"),
    Output(ids.job(ids.TEXT, MATCH), "children"),
    Output(ids.job(ids.BAR, MATCH), "style"),
    Output(ids.job(ids.CANCEL, MATCH), "disabled"),
    Input(ids.job(ids.STATUS, MATCH), "data"),
    Input(ids.job(ids.STORE, MATCH), "data"),
)


@callback(
    Output(ids.job(ids.STATUS, MATCH), "data", allow_duplicate=True),
    Input(ids.job(ids.CANCEL, MATCH), "n_clicks"),
    State(ids.job(ids.STORE, MATCH), "data"),
    prevent_initial_call=True,
)
def cancel(_clicks: int, job: Any) -> Any:
    """Cancel asks the worker to stop at its next frame (queued jobs stop at once)."""
    key = job_key(job)
    if key is None:
        return no_update
    status = job_queue().cancel(key)
    if status is None:
        return job_status(key, None, "Nothing to cancel.")
    return job_status(key, status, "Cancelling…" if status.active else None)


@callback(
    Output(ids.job(ids.DOWNLOAD, MATCH), "data"),
    Output(ids.job(ids.ERROR, MATCH), "children", allow_duplicate=True),
    Input(ids.job(ids.EXPORT, MATCH), "n_clicks"),
    State(ids.job(ids.STORE, MATCH), "data"),
    prevent_initial_call=True,
)
def export(_clicks: int, job: Any) -> Any:
    """The page's exporter applied to the job on screen."""
    exporter = EXPORTERS.get(_page(dash.ctx.triggered_id) or "")
    if exporter is None:
        return no_update, no_update
    key = job_key(job)
    html_text = exporter.make(key) if key is not None else None
    if html_text is None:
        return no_update, exporter.missing
    return {"content": html_text, "filename": exporter.filename.format(key=key)}, ""
