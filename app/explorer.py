"""The live explorer: train, stream frames in, cancel, switch seed, export.

Flow (architecture.md, "Jobs"): the `CONFIG` store changes (a control moved or
a link opened) → `show_config` serves a cached run at once, joins a job that
is already training, or (for a link) submits one. While a job runs, `POLL`
reads the frames past the cursor and appends their figure data to `VIEW`
with `dash.Patch` — never resending what the browser already has. Training
happens in the worker processes; this module never imports torch.
"""

from __future__ import annotations

from typing import Any

from dash import (
    Input,
    Output,
    Patch,
    State,
    callback,
    ctx,
    dcc,
    html,
    no_update,
)

from app import ids
from app.jobbar import job_status, progress, wire_cancel, wire_job_bar
from app.services import job_queue
from app.view import choose_seed, empty_view, frame_data, full_view, seed_options, shared_parts
from tempsup.config import RunConfig
from tempsup.errors import TempsupError
from tempsup.figures import export_html
from tempsup.jobs import JobState, JobStatus
from tempsup.run import Run

ACTIVE = (JobState.QUEUED, JobState.RUNNING)
POLL_MS = 300


def layout(status: dict[str, Any] | None = None) -> html.Div:
    """Train / Cancel, the progress bar and the status line (`status`: a JOB_STATUS)."""
    return html.Div(
        className="card jobbar",
        children=[
            html.Div(
                className="buttons",
                children=[
                    html.Button("Train", id=ids.TRAIN, className="primary", n_clicks=0),
                    html.Button("Cancel", id=ids.CANCEL, n_clicks=0, disabled=True),
                    html.Button("Export HTML", id=ids.EXPORT_HTML, n_clicks=0),
                    html.Button("Download run (.npz)", id=ids.EXPORT_NPZ, n_clicks=0),
                ],
            ),
            *progress(ids.PROGRESS_BAR, ids.STATUS),
            dcc.Interval(id=ids.POLL, interval=POLL_MS, disabled=True),
            dcc.Store(id=ids.JOB_STATUS, data=status),
            dcc.Download(id=ids.DOWNLOAD),
        ],
    )


# ---- helpers: status → what the page shows ------------------------------------------


def job_store(status: JobStatus, cursor: int = 0, seed: int | None = None) -> dict[str, Any]:
    return {"key": status.key, "state": status.state.value, "cursor": cursor, "seed": seed}


def _config(store: dict[str, Any] | None) -> RunConfig | None:
    try:
        return RunConfig.from_dict(store["config"]) if isinstance(store, dict) else None
    except (TempsupError, KeyError, TypeError):
        return None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _feature(value: Any, config: RunConfig) -> int:
    feature = _int_or_none(value) or 0
    return feature if 0 <= feature < config.inputs else 0


def cached_state(config: RunConfig) -> dict[str, Any] | None:
    """Everything the page shows for an already trained config, or None.

    Used to build a shared link's page with its run already inside, so a cached
    link needs no callback round trip at all.
    """
    queue = job_queue()
    status = queue.status(config.key)
    if status is None or status.state != JobState.DONE:
        return None
    run = queue.run(config.key)
    if run is None:
        return None
    job, view, _, bar, options, seed = _finished(run, status, None, 0)
    return {"job": job, "view": view, "status": bar, "options": options, "seed": seed}


SHOW_OUTPUTS = (
    Output(ids.JOB, "data"),
    Output(ids.VIEW, "data"),
    Output(ids.POLL, "disabled"),
    Output(ids.JOB_STATUS, "data"),
    Output(ids.SEED_PICK, "options"),
    Output(ids.SEED_PICK, "value"),
)


def _start(status: JobStatus) -> tuple[Any, ...]:
    """Outputs for a job that is queued or running: reset the view, start polling."""
    return (
        job_store(status),
        empty_view("training…"),
        False,
        job_status(status.key, status),
        [],
        None,
    )


def _finished(run: Run, status: JobStatus, seed: int | None, feature: int) -> tuple[Any, ...]:
    """Outputs for a finished run: the whole view at once, polling off."""
    seed = choose_seed(run, seed)
    return (
        job_store(status, run.n_frames, seed),
        full_view(run, seed, feature),
        True,
        job_status(status.key, status),
        seed_options(run),
        seed,
    )


@callback(
    *SHOW_OUTPUTS,
    Input(ids.CONFIG, "data"),
    Input(ids.TRAIN, "n_clicks"),
    State(ids.CLIENT, "data"),
    State(ids.FEATURE_PICK, "value"),
    prevent_initial_call=True,
)
def show_config(store: dict[str, Any] | None, _clicks: int, client: Any, feature: Any):
    """Serve, join or start the job of the config being viewed."""
    config = _config(store)
    if config is None:
        return (no_update,) * len(SHOW_OUTPUTS)
    queue = job_queue()
    feature = _feature(feature, config)
    status = queue.status(config.key)
    wants_training = ctx.triggered_id == ids.TRAIN or bool(store.get("autostart"))
    if status is not None and status.state == JobState.DONE:
        run = queue.run(config.key)
        if run is not None:
            return _finished(run, status, None, feature)
        status = None  # an unreadable cached run: train it again
    if status is not None and status.state in ACTIVE:
        return _start(status)
    if not wants_training:
        text = status.message + " · press Train to retry" if status else None
        return (
            {"key": config.key, "state": "none", "cursor": 0, "seed": None},
            empty_view(text or "Not trained yet: press Train."),
            True,
            job_status(config.key, None, text),
            [],
            None,
        )
    try:
        status = queue.submit(config, client=str(client or "anonymous")[:64])
    except TempsupError as exc:
        return (
            no_update,
            no_update,
            True,
            job_status(config.key, None, f"Refused: {exc}"),
            no_update,
            no_update,
        )
    if status.state == JobState.DONE:
        run = queue.run(config.key)
        if run is not None:
            return _finished(run, status, None, feature)
    return _start(status)


POLL_OUTPUTS = (
    Output(ids.VIEW, "data", allow_duplicate=True),
    Output(ids.JOB, "data", allow_duplicate=True),
    Output(ids.POLL, "disabled", allow_duplicate=True),
    Output(ids.JOB_STATUS, "data", allow_duplicate=True),
    Output(ids.SEED_PICK, "options", allow_duplicate=True),
    Output(ids.SEED_PICK, "value", allow_duplicate=True),
)


@callback(
    *POLL_OUTPUTS,
    Input(ids.POLL, "n_intervals"),
    State(ids.JOB, "data"),
    State(ids.CONFIG, "data"),
    State(ids.FEATURE_PICK, "value"),
    prevent_initial_call=True,
)
def poll(_n: int, job: dict[str, Any] | None, store: dict[str, Any] | None, feature: Any):
    """Append the frames that arrived since the cursor; stop when the job ends."""
    config = _config(store)
    if not isinstance(job, dict) or config is None or job.get("key") != config.key:
        # the user moved on: this poll belongs to an old job; show_config restarts it if needed
        return (no_update, no_update, True, no_update, no_update, no_update)
    queue = job_queue()
    status = queue.status(config.key)
    if status is None:
        text = "The job disappeared; press Train."
        return (
            no_update,
            no_update,
            True,
            job_status(config.key, None, text),
            no_update,
            no_update,
        )
    feature = _feature(feature, config)
    cursor = _int_or_none(job.get("cursor")) or 0
    if status.state == JobState.DONE:
        run = queue.run(config.key)
        if run is not None:
            job_, view, disabled, bar, options, seed = _finished(
                run, status, _int_or_none(job.get("seed")), feature
            )
            return (view, job_, disabled, bar, options, seed)
    ended = status.state not in ACTIVE
    bar = job_status(config.key, status)
    frames = queue.frames(config.key, 0) if status.n_frames > cursor else []
    if len(frames) <= cursor:
        return (no_update, no_update, ended, bar, no_update, no_update)
    run = Run.from_frames(config, frames)
    seed = _int_or_none(job.get("seed"))
    if seed is None or seed >= config.seeds:
        seed = run.best  # the best seed when the first frames arrive
    view = Patch()
    if cursor == 0:
        view["key"] = config.key
        view["seed"] = seed
        view["feature"] = feature
    for panel, traces in frame_data(run, seed, feature, cursor).items():
        view["frames"][panel].extend(traces)
    view["steps"].extend([int(s) for s in run["step"][cursor:]])
    view["n"] = run.n_frames
    for name, value in shared_parts(run, seed, feature).items():
        view[name] = value
    new_job = {**job, "cursor": run.n_frames, "seed": seed, "state": status.state.value}
    return (view, new_job, ended, bar, no_update, no_update)


wire_cancel(ids.CANCEL, ids.JOB, ids.JOB_STATUS)


@callback(
    Output(ids.VIEW, "data", allow_duplicate=True),
    Output(ids.JOB, "data", allow_duplicate=True),
    Input(ids.SEED_PICK, "value"),
    Input(ids.FEATURE_PICK, "value"),
    State(ids.JOB, "data"),
    State(ids.CONFIG, "data"),
    prevent_initial_call=True,
)
def switch_seed(seed: Any, feature: Any, job: dict[str, Any] | None, store: dict[str, Any] | None):
    """Rebuild the view for another seed or feature of a finished run."""
    config = _config(store)
    seed = _int_or_none(seed)
    if config is None or not isinstance(job, dict) or job.get("state") != JobState.DONE.value:
        return no_update, no_update
    feature = _feature(feature, config)
    if seed == job.get("seed") and feature == (job.get("view_feature") or 0):
        return no_update, no_update
    run = job_queue().run(config.key)
    if run is None:
        return no_update, no_update
    seed = choose_seed(run, seed)
    return full_view(run, seed, feature), {**job, "seed": seed, "view_feature": feature}


@callback(
    Output(ids.DOWNLOAD, "data"),
    Output(ids.JOB_STATUS, "data", allow_duplicate=True),
    Input(ids.EXPORT_HTML, "n_clicks"),
    Input(ids.EXPORT_NPZ, "n_clicks"),
    State(ids.JOB, "data"),
    State(ids.CONFIG, "data"),
    State(ids.SHARE_LINK, "href"),
    prevent_initial_call=True,
)
def export(_h: int, _n: int, job: dict[str, Any] | None, store: dict[str, Any] | None, link: Any):
    """The run as a standalone HTML animation or as its .npz run file."""
    config = _config(store)
    run = job_queue().run(config.key) if config is not None else None
    if run is None:
        text = "Nothing to export yet: train this configuration first."
        return no_update, job_status(config.key if config else "", None, text)
    seed = choose_seed(run, _int_or_none(job.get("seed")) if isinstance(job, dict) else None)
    if ctx.triggered_id == ids.EXPORT_NPZ:
        return dcc.send_bytes(run.to_bytes(), f"tempsup-{config.key}.npz"), no_update
    html_text = export_html(run, seed, link=link if isinstance(link, str) else None)
    return dict(content=html_text, filename=f"tempsup-{config.key}.html"), no_update


# The job bar is drawn in the browser, and only for the config on screen.
wire_job_bar(ids.JOB_STATUS, ids.CONFIG, ids.STATUS, ids.PROGRESS_BAR, ids.CANCEL)
