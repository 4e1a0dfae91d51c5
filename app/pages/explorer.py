"""The explorer page: train, stream frames in, cancel, switch seed, export.

Layout: the job widget (Train first) and the controls in a sticky side column beside the
player and the four panels. Opened from a link, the page is built for the link's config;
if that run is already trained, its frames come inside the page itself (no callback
needed before the animation can play), showing the link's seed, and the player's request
store carries the link's frame to the scrubber.

Flow (architecture.md, "Jobs"): the `CONFIG` store changes (a control moved or a link
opened) → `show_config` serves a cached run at once, joins a job that is already
training, or (for a link) submits one. While a job runs, the widget's poll reads the
frames past the cursor and appends their figure data to the view store with
`dash.Patch` — never resending what the browser already has, each frame with its own
status line. While it streams, the page shows the seed that leads now
(`tempsup.run.leading_seed`: lowest recent loss, switching only when another is clearly
ahead) and the seed menu says so. When the job ends (done, or cancelled with its frames
kept) the whole run replaces the stream, showing the best seed (`Run.best_seed`) unless
the user picked one (the seed menu, or a share link's `view_seed`). Training happens in
the worker processes; this module never imports torch.
"""

from __future__ import annotations

from typing import Any

from dash import Input, Output, Patch, State, callback, ctx, dcc, html, no_update, set_props

from app import controls, ids, open_run, panels, player
from app.controls import config_store
from app.jobwidget import JobWidget, job_status, submit
from app.jobwords import describe
from app.pages import register
from app.services import job_queue
from app.urlstate import config_from_query, public_link, view_from_query
from app.view import (
    choose_seed,
    empty_view,
    frame_data,
    full_view,
    seed_options,
    shared_parts,
    status_lines,
    stream_view,
    streaming_options,
)
from tempsup.config import DEFAULTS, RunConfig
from tempsup.errors import TempsupError
from tempsup.figures import export_html
from tempsup.jobs.record import JobState, JobStatus
from tempsup.run import Run, leading_seed

ACTIVE = (JobState.QUEUED, JobState.RUNNING)
FINAL = (JobState.DONE.value, JobState.CANCELLED.value)  # runs that no longer change
POLL_MS = 300
# While a job waits behind others, only its place in line changes: a slower poll leaves
# the cores to the workers (30 waiting pages polling every 0.3 s took over half a core of
# web work in the burst benchmark). The job next in line keeps the fast poll, so its first
# frame shows as soon as it starts.
WAITING_POLL_MS = 2000
# Streaming pages share the web tier: each poll that brings frames rebuilds the view's
# shared parts (~20 ms of CPU). Up to FAST_STREAMS active jobs poll at POLL_MS; beyond
# that the period grows with their number (capped), so a classroom's burst keeps the
# cores for training (the burst benchmark: polls took as much CPU as the workers).
FAST_STREAMS = 4
MAX_STREAM_POLL_MS = 1500
# Under the job bar when opening a link started training (app/controls.py link_autostart).
LINK_STARTED = (
    "Training started from the link: a link trains the run it names; after moving a "
    "control, press Train."
)
WIDGET = JobWidget(ids.EXPLORER)
JOB, STATUS, POLL = WIDGET.store, WIDGET.status, WIDGET.poll
TRAIN = WIDGET.id(ids.RUN)
VIEW = ids.player(ids.VIEW, ids.EXPLORER)
REQUEST = ids.player(ids.REQUEST, ids.EXPLORER)


def layout(query: str | None = None) -> html.Div:
    """The page; with `query` (the link being opened) prefilled for its config."""
    config, state, request = DEFAULTS, None, None
    opened = open_run.page(query)  # a run opened from a file (?…&run=…): shown, never trained
    if opened is not None:
        config, state, request = opened
    elif query is not None:
        parsed, errors = config_from_query(query)
        request, view_errors = view_from_query(query, parsed)
        if not errors + view_errors:  # a link with problems goes through the callbacks,
            seed = request["seed"] if request else None  # which explain them
            feature = request.get("feature", 0) if request else 0
            try:
                config, state = parsed, cached_state(parsed, seed, feature)
            except TempsupError:  # the job store is unreachable: the callbacks will say so
                config, state = parsed, None
    stores: dict[str, Any] = {"config": None, "job": None, "view": player.INITIAL_VIEW,
                              "status": None, "options": [], "seed": None}  # fmt: skip
    if state is not None:
        stores.update(state, config=config_store(config, autostart=False))
    exports = (
        html.Button("Export HTML", id=ids.EXPORT_HTML, n_clicks=0),
        html.Button("Download run (.npz)", id=ids.EXPORT_NPZ, n_clicks=0),
    )
    job_card = html.Div(
        className="card jobbar",
        children=WIDGET.layout(
            buttons=exports,
            poll_ms=POLL_MS,
            job=stores["job"],
            status=stores["status"],
        )
        + [html.Div(id=ids.LINK_NOTE, className="status link-note", role="status")],
    )
    return html.Div(
        children=[
            dcc.Location(id=ids.URL, refresh="callback-nav"),
            dcc.Store(id=ids.CONFIG, data=stores["config"]),
            controls.notice(),
            html.Div(
                className="main",
                children=[
                    # Train first, then the controls; both columns' tops stay in view while
                    # the panels scroll (assets/style.css: .side and .player are sticky)
                    html.Aside(
                        className="side",
                        children=[job_card, controls.layout(config), open_run.card()],
                    ),
                    html.Section(
                        className="content",
                        children=[
                            player.layout(
                                stores["options"],
                                stores["seed"],
                                stores["view"],
                                request if state is not None else None,
                                config.inputs,
                            ),
                            player.hint(),
                            panels.grid(config),
                        ],
                    ),
                ],
            ),
        ]
    )


# ---- helpers: status → what the page shows ------------------------------------------


def job_store(
    status: JobStatus, cursor: int = 0, seed: int | None = None, picked: bool = False
) -> dict[str, Any]:
    """The JOB store. `seed` is the seed on screen; `picked` says the user chose it (in the
    menu or through a link): only then does it survive the end of training, which
    otherwise shows the best seed."""
    return {
        "key": status.key,
        "state": status.state.value,
        "cursor": cursor,
        "seed": seed,
        "picked": picked,
    }


def _untrained(config: RunConfig) -> dict[str, Any]:
    """The JOB store of a config with no job to show (the job bar shows its status)."""
    return {"key": config.key, "state": "none", "cursor": 0, "seed": None, "picked": False}


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


def _picked_seed(job: Any) -> int | None:
    """The seed the user chose for the job on screen, if they chose one."""
    return _int_or_none(job.get("seed")) if isinstance(job, dict) and job.get("picked") else None


def _requested_feature(request: Any, config: RunConfig) -> int | None:
    """The feature a share link asks for (REQUEST store), if it is for this config."""
    if not isinstance(request, dict) or request.get("key") != config.key:
        return None
    feature = _int_or_none(request.get("feature"))
    return feature if feature is not None and 0 <= feature < config.inputs else None


def _requested_seed(request: Any, config: RunConfig) -> int | None:
    """The seed a share link asks for (REQUEST store), if it is for this config."""
    if not isinstance(request, dict) or request.get("key") != config.key:
        return None
    return _int_or_none(request.get("seed"))


def kept_run(queue: Any, config: RunConfig, status: JobStatus | None) -> Run | None:
    """What the page can show and export for a job that will not change any more: the run
    of a DONE job, or the frames a CANCELLED one kept; None while it trains or when
    there is nothing."""
    if status is None:
        return None
    if status.state == JobState.DONE:
        return queue.run(config.key)
    if status.state == JobState.CANCELLED and status.n_frames > 0:
        frames = queue.frames(config.key, 0)
        return Run.from_frames(config, frames) if frames else None
    return None


def cached_state(
    config: RunConfig, seed: int | None = None, feature: int = 0
) -> dict[str, Any] | None:
    """Everything the page shows for an already trained config, or None.

    Used to build a shared link's page with its run already inside, so a cached
    link needs no callback round trip at all; `seed` and `feature` are the link's.
    """
    queue = job_queue()
    status = queue.status(config.key)
    run = kept_run(queue, config, status)
    if run is None:
        return None
    job, view, _, bar, options, seed, _ = _finished(run, status, seed, feature)
    return {"job": job, "view": view, "status": bar, "options": options, "seed": seed}


def poll_interval(status: JobStatus, active: int) -> int:
    """The poll's period (ms) for a job in this state, with `active` jobs queued or running
    in all: slow while others are ahead of it, and slower as more pages stream at once."""
    if status.state == JobState.QUEUED and (status.position or 0) > 1:
        return WAITING_POLL_MS
    return min(MAX_STREAM_POLL_MS, max(POLL_MS, POLL_MS * active // FAST_STREAMS))


def active_jobs(queue: Any) -> int:
    """How many jobs are queued or running (every page's poll period depends on it)."""
    return len(queue.queued()) + len(queue.running())


SHOW_OUTPUTS = (
    Output(JOB, "data"),
    Output(VIEW, "data"),
    Output(POLL, "disabled"),
    Output(STATUS, "data"),
    Output(ids.SEED_PICK, "options"),
    Output(ids.SEED_PICK, "value"),
    Output(POLL, "interval"),
)


def _start(status: JobStatus, seed: int | None, active: int) -> tuple[Any, ...]:
    """Outputs for a job that is queued or running: reset the view, start polling."""
    return (
        job_store(status, seed=seed, picked=seed is not None),
        empty_view("training…"),
        False,
        job_status(status.key, status),
        [],
        None,
        poll_interval(status, active),
    )


def _finished(run: Run, status: JobStatus, seed: int | None, feature: int) -> tuple[Any, ...]:
    """Outputs for a run that will not change (done, or cancelled with its frames kept):
    the whole view at once, polling off. `seed`: the user's choice, None for the best."""
    shown = choose_seed(run, seed)
    picked = seed is not None and shown == seed
    job = job_store(status, run.n_frames, shown, picked=picked)
    return (
        {**job, "view_feature": feature},
        full_view(run, shown, feature),
        True,
        job_status(status.key, status),
        seed_options(run, shown if picked else None),
        shown,
        POLL_MS,
    )


@callback(
    *SHOW_OUTPUTS,
    Input(ids.CONFIG, "data"),
    Input(TRAIN, "n_clicks"),
    State(ids.CLIENT, "data"),
    State(ids.FEATURE_PICK, "value"),
    State(REQUEST, "data"),
    prevent_initial_call=True,
)
def show_config(
    store: dict[str, Any] | None, _clicks: int, client: Any, feature: Any, request: Any
):
    """Serve, join or start the job of the config being viewed. Train starts it; so does
    opening a link that names it (`autostart`, app/controls.py link_autostart), which the
    line under the job bar then says; a cancelled run's kept frames stay until Train."""
    config = _config(store)
    if config is None:
        return (no_update,) * len(SHOW_OUTPUTS)
    queue = job_queue()
    asked = _requested_feature(request, config)
    feature = _feature(feature, config) if asked is None else asked
    seed = _requested_seed(request, config)
    status = queue.status(config.key)
    from_link = ctx.triggered_id != TRAIN and store.get("autostart") is True
    wants_training = ctx.triggered_id == TRAIN or from_link
    kept_first = from_link and status is not None and status.state == JobState.CANCELLED
    set_props(ids.LINK_NOTE, {"children": ""})
    if status is not None and status.state == JobState.DONE:
        run = queue.run(config.key)
        if run is not None:
            return _finished(run, status, seed, feature)
        status = None  # an unreadable cached run: train it again
    if status is not None and status.state in ACTIVE:
        return _start(status, seed, active_jobs(queue))
    if not wants_training or kept_first:
        kept = kept_run(queue, config, status)
        if kept is not None:  # cancelled: what was trained stays on screen
            return _finished(kept, status, seed, feature)
    if not wants_training:
        text = describe(status) if status else None
        return (
            _untrained(config),
            empty_view(text or "Not trained yet: press Train."),
            True,
            job_status(config.key, None, text),
            [],
            None,
            POLL_MS,
        )
    try:
        status = submit(config, client)
    except TempsupError as exc:  # the job bar shows the refusal: it is about this config
        refused = job_status(config.key, None, f"Refused: {exc}")
        return (_untrained(config), no_update, True, refused, no_update, no_update, no_update)
    if status.state == JobState.DONE:
        run = queue.run(config.key)
        if run is not None:
            return _finished(run, status, seed, feature)
    if from_link:
        set_props(ids.LINK_NOTE, {"children": LINK_STARTED})
    return _start(status, seed, active_jobs(queue))


POLL_OUTPUTS = (
    Output(VIEW, "data", allow_duplicate=True),
    Output(JOB, "data", allow_duplicate=True),
    Output(POLL, "disabled", allow_duplicate=True),
    Output(STATUS, "data", allow_duplicate=True),
    Output(ids.SEED_PICK, "options", allow_duplicate=True),
    Output(ids.SEED_PICK, "value", allow_duplicate=True),
    Output(POLL, "interval", allow_duplicate=True),
)


@callback(
    *POLL_OUTPUTS,
    Input(POLL, "n_intervals"),
    State(JOB, "data"),
    State(ids.CONFIG, "data"),
    State(ids.FEATURE_PICK, "value"),
    State(ids.SEED_PICK, "value"),
    prevent_initial_call=True,
)
def poll(
    _n: int, job: dict[str, Any] | None, store: dict[str, Any] | None, feature: Any, menu: Any
):
    """Append the frames that arrived since the cursor, for the seed that leads now (or
    the one the user picked in the menu); when the job ends, show the whole run (the best
    seed, unless the user picked one)."""
    config = _config(store)
    if not isinstance(job, dict) or config is None or job.get("key") != config.key:
        # the user moved on: this poll belongs to an old job; show_config restarts it if needed
        return (no_update, no_update, True, no_update, no_update, no_update, no_update)
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
            no_update,
        )
    feature = _feature(feature, config)
    cursor = _int_or_none(job.get("cursor")) or 0
    kept = kept_run(queue, config, status)
    if kept is not None:
        job_, view, disabled, bar, options, seed, interval = _finished(
            kept, status, _picked_seed(job), feature
        )
        return (view, job_, disabled, bar, options, seed, interval)
    ended = status.state not in ACTIVE
    bar = job_status(config.key, status)
    interval = poll_interval(status, active_jobs(queue))
    frames = queue.frames(config.key, 0) if status.n_frames > cursor else []
    if len(frames) <= cursor:
        return (no_update, no_update, ended, bar, no_update, no_update, interval)
    run = Run.from_frames(config, frames)
    shown = _int_or_none(job.get("seed"))
    shown = shown if shown is not None and 0 <= shown < config.seeds else None
    picked = bool(job.get("picked")) and shown is not None
    menu = _int_or_none(menu)
    if cursor > 0 and menu is not None and menu != shown and 0 <= menu < config.seeds:
        seed, picked = menu, True  # picked in the menu while the job streams
    elif picked:
        seed = shown
    else:  # the seed that leads now, switching only when another is clearly ahead
        seed = leading_seed(run["loss"], shown)
    options = streaming_options(run, seed, picked)
    new_job = {**job, "cursor": run.n_frames, "seed": seed, "picked": picked,
               "state": status.state.value}  # fmt: skip
    if cursor > 0 and seed != shown:  # another seed on screen: its frames from the first
        view = stream_view(run, seed, feature)
        return (view, new_job, ended, bar, options, seed, interval)
    view = Patch()
    if cursor == 0:
        view["key"] = config.key
        view["seed"] = seed
        view["feature"] = feature
    for panel, traces in frame_data(run, seed, feature, cursor).items():
        view["frames"][panel].extend(traces)
    view["summaries"].extend(status_lines(run, seed, feature, cursor))
    view["steps"].extend([int(s) for s in run["step"][cursor:]])
    view["n"] = run.n_frames
    for name, value in shared_parts(run, seed, feature).items():
        view[name] = value
    return (view, new_job, ended, bar, options, seed, interval)


@callback(
    Output(VIEW, "data", allow_duplicate=True),
    Output(JOB, "data", allow_duplicate=True),
    Input(ids.SEED_PICK, "value"),
    Input(ids.FEATURE_PICK, "value"),
    State(JOB, "data"),
    State(ids.CONFIG, "data"),
    prevent_initial_call=True,
)
def switch_seed(seed: Any, feature: Any, job: dict[str, Any] | None, store: dict[str, Any] | None):
    """Rebuild the view for another seed or feature of a finished (or cancelled) run; a seed
    chosen here is the user's, kept from then on."""
    config = _config(store)
    seed = _int_or_none(seed)
    if config is None or not isinstance(job, dict) or job.get("state") not in FINAL:
        return no_update, no_update
    feature = _feature(feature, config)
    if seed == job.get("seed") and feature == (job.get("view_feature") or 0):
        return no_update, no_update
    queue = job_queue()
    run, content = open_run.opened(job) or (kept_run(queue, config, queue.status(config.key)), None)
    if run is None:
        return no_update, no_update
    shown = choose_seed(run, seed)
    picked = bool(job.get("picked")) or (seed is not None and shown != job.get("seed"))
    new_job = {**job, "seed": shown, "view_feature": feature, "picked": picked}
    return full_view(run, shown, feature, content=content), new_job


@callback(
    Output(WIDGET.id(ids.DOWNLOAD), "data", allow_duplicate=True),
    Output(STATUS, "data", allow_duplicate=True),
    Input(ids.EXPORT_HTML, "n_clicks"),
    Input(ids.EXPORT_NPZ, "n_clicks"),
    State(JOB, "data"),
    State(ids.CONFIG, "data"),
    State(ids.FEATURE_PICK, "value"),
    State(ids.SHARE_LINK, "href"),
    prevent_initial_call=True,
)
def export(_h: int, _n: int, job: Any, store: dict[str, Any] | None, feature: Any, link: Any):
    """What is on screen as a standalone HTML animation (the seed and feature shown), or the
    run file; a cancelled job exports the frames it kept. The page's share link goes into
    the file only if someone else could open it (`public_link`)."""
    config = _config(store)
    queue = job_queue()
    from_file = open_run.opened(job)  # a run opened from a file, else the config's job
    if from_file is not None:
        run = from_file[0]
    else:
        run = kept_run(queue, config, queue.status(config.key)) if config is not None else None
    if run is None:
        text = "Nothing to export yet: train this configuration first."
        return no_update, job_status(config.key if config else "", None, text)
    seed = choose_seed(run, _int_or_none(job.get("seed")) if isinstance(job, dict) else None)
    if ctx.triggered_id == ids.EXPORT_NPZ:
        return dcc.send_bytes(run.to_bytes(), f"tempsup-{config.key}.npz"), no_update
    html_text = export_html(run, seed, link=public_link(link), feature=_feature(feature, config))
    return dict(content=html_text, filename=f"tempsup-{config.key}.html"), no_update


register("/", "Explorer", layout, order=0, initial=layout)
