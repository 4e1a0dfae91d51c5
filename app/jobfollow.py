"""The job widget following a run job for a page: show, join or start it, stream its
frames in, and show the whole run once it ends (architecture.md, "Jobs").

The page's config store changes (a control moved or a link opened) → `show_config` serves
a finished run at once, joins a job that is already training, or (for a link) submits one.
While the job runs, the widget's poll sends the frames past the page's cursor as a
`dash.Patch` (`app.streams.stream_patch`: read from the store once per web process, never
resending what the browser already has, each frame with its own status line). While it
streams, the page shows the seed that leads now (`tempsup.io.run.leading_seed`: lowest recent
loss, switching only when another is clearly ahead) and the seed menu says so. When the
job ends (done, or cancelled with its frames kept) the page shows the whole run, the best
seed (`Run.best_seed`) unless the user picked one (the seed menu, or a share link's
`view_seed`): a page that streamed that seed is sent the frames after its cursor and the
parts every frame shares (its frames were the finished run's: `PanelSet.causal`), any
other the whole view. Training happens in the worker processes; nothing here imports
torch.

A page lays out `JobWidget(page)` and its player, then calls `RunFollower(page).register()`:
the callbacks are the widget's, the page only arranges components.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dash import Input, Output, State, callback, ctx, no_update, set_props

from app import answers, audience, ids
from app.jobwidget import JobWidget, job_status, submit
from app.jobwords import describe
from app.memo import PENDING
from app.services import job_queue
from app.streams import (
    drawing,
    finish_patch,
    finished_run,
    stream_patch,
    stream_seed,
    stream_whole,
    streamed_run,
)
from app.view import choose_seed, empty_view, full_view, seed_options
from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.jobs.record import JobState, JobStatus
from tempsup.model.config import RunConfig

ACTIVE = (JobState.QUEUED, JobState.RUNNING)
ACTIVE_STATES = tuple(state.value for state in ACTIVE)  # as a JOB store names them
FINAL = (JobState.DONE.value, JobState.CANCELLED.value)  # runs that no longer change
POLL_MS = 300
# While a job waits behind others, only its place in line changes: a slower poll leaves
# the cores to the workers (30 waiting pages polling every 0.3 s took over half a core of
# web work in the burst benchmark). The job next in line keeps the fast poll, so its first
# frame shows as soon as it starts.
WAITING_POLL_MS = 2000
# Streaming pages share the web tier: up to FAST_STREAMS active jobs poll at POLL_MS;
# beyond that the period grows with their number (capped), so a classroom's burst keeps
# the cores for training.
FAST_STREAMS = 4
MAX_STREAM_POLL_MS = 1500
# A web process answers up to FAST_PAGES pages at POLL_MS (a seminar); beyond that the
# period grows with the pages polling it (`app.audience`; capped, and rounded to 0.1 s).
# Sixty pages watching the teacher's one job are one active job but sixty pages: they now
# poll every 1.5 s, not every 0.3 s, and the web's CPU goes to frames, not to answering.
FAST_PAGES = 12
STEADY = 0.25  # a page keeps its period while the one it would get is within this share
# Under the job bar when opening a link started training (app/controls.py link_autostart).
LINK_STARTED = (
    "Training started from the link: a link trains the run it names; after moving a "
    "control, press Train."
)


# ---- the job store and what a status shows ------------------------------------------


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


def config_of(store: dict[str, Any] | None) -> RunConfig | None:
    """The config a page's config store holds, or None."""
    try:
        return RunConfig.from_dict(store["config"]) if isinstance(store, dict) else None
    except (TempsupError, KeyError, TypeError):
        return None


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def feature_of(value: Any, config: RunConfig) -> int:
    """The feature menu's value, if it names one of the config's features; else 0."""
    feature = int_or_none(value) or 0
    return feature if 0 <= feature < config.inputs else 0


def _picked_seed(job: Any) -> int | None:
    """The seed the user chose for the job on screen, if they chose one."""
    return int_or_none(job.get("seed")) if isinstance(job, dict) and job.get("picked") else None


def _requested_feature(request: Any, config: RunConfig) -> int | None:
    """The feature a share link asks for (REQUEST store), if it is for this config."""
    if not isinstance(request, dict) or request.get("key") != config.key:
        return None
    feature = int_or_none(request.get("feature"))
    return feature if feature is not None and 0 <= feature < config.inputs else None


def _requested_seed(request: Any, config: RunConfig) -> int | None:
    """The seed a share link asks for (REQUEST store), if it is for this config."""
    if not isinstance(request, dict) or request.get("key") != config.key:
        return None
    return int_or_none(request.get("seed"))


def kept_run(queue: Any, config: RunConfig, status: JobStatus | None) -> Run | None:
    """What the page can show and export for a job that will not change any more: the run
    of a DONE job, or the frames a CANCELLED one kept; None while it trains or when
    there is nothing. Decoded once per web process (`app.streams.finished_run`)."""
    return finished_run(queue, config, status)


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
    job, view, _, bar, options, seed, _ = finished(run, status, seed, feature)
    return {"job": job, "view": view, "status": bar, "options": options, "seed": seed}


def poll_interval(status: JobStatus, active: int, pages: float = 0.0) -> int:
    """The poll's period (ms) for a job in this state, with `active` jobs queued or running
    in all and about `pages` pages polling this web process (`app.audience.pages`): slow
    while others are ahead of it, and slower as more jobs stream or more pages poll."""
    if status.state == JobState.QUEUED and (status.position or 0) > 1:
        return WAITING_POLL_MS
    by_jobs = POLL_MS * active // FAST_STREAMS
    by_pages = int(round(POLL_MS * pages / FAST_PAGES, -2))
    return min(MAX_STREAM_POLL_MS, max(POLL_MS, by_jobs, by_pages))


def active_jobs(queue: Any) -> int:
    """How many jobs are queued or running (every page's poll period depends on it)."""
    return len(queue.queued()) + len(queue.running())


def period(queue: Any, status: JobStatus, current: Any = None) -> int:
    """`poll_interval` now (the store's active jobs, the pages polling this process), or the
    page's `current` period while the new one is within STEADY of it: the count of pages
    wavers by a page or two from poll to poll, and each new period restarts the page's
    timer."""
    new = poll_interval(status, active_jobs(queue), audience.pages())
    steady = (
        isinstance(current, int)
        and not isinstance(current, bool)
        and WAITING_POLL_MS not in (new, current)
        and abs(new - current) <= STEADY * current
    )
    return current if steady else new


def _holds_start_of(job: dict[str, Any], view: dict[str, Any], cursor: int) -> bool:
    """Whether a streaming page (its JOB store `job`, `cursor` frames) holds the first frames
    of the finished `view` as they are: the same seed and feature, streamed from the same
    job, and frames drawn from the frames up to them (`view` has a template: its panels
    are causal, `app.view`)."""
    return (
        0 < cursor <= view["n"]
        and "template" in view
        and job.get("state") in ACTIVE_STATES
        and int_or_none(job.get("seed")) == view["seed"]
        and int_or_none(job.get("view_feature")) == view["feature"]
    )


def _start(status: JobStatus, seed: int | None, interval: int) -> tuple[Any, ...]:
    """Outputs for a job that is queued or running: reset the view, start polling."""
    return (
        job_store(status, seed=seed, picked=seed is not None),
        empty_view("training…"),
        False,
        job_status(status.key, status),
        [],
        None,
        interval,
    )


def finished(
    run: Run, status: JobStatus, seed: int | None, feature: int, wait: bool = True
) -> tuple[Any, ...] | None:
    """Outputs for a run that will not change (done, or cancelled with its frames kept):
    the whole view at once, polling off. `seed`: the user's choice, None for the best.
    With `wait` False: None while another request draws that view (`app.view.full_view`)."""
    shown = choose_seed(run, seed)
    picked = seed is not None and shown == seed
    # the frames this process drew while the job streamed are the finished run's (when its
    # panels are causal): the view takes them instead of drawing every frame again
    view = full_view(run, shown, feature, wait=wait, streamed=lambda: drawing(run, shown, feature))
    if view is PENDING:
        return None
    job = job_store(status, run.n_frames, shown, picked=picked)
    return (
        {**job, "view_feature": feature},
        view,
        True,
        job_status(status.key, status),
        seed_options(run, shown if picked else None),
        shown,
        POLL_MS,
    )


# ---- the callbacks ------------------------------------------------------------------


@dataclass(frozen=True)
class RunFollower:
    """The run job of one page's config, followed through that page's job widget.

    The page holds the config store (`config`), the seed and feature menus, the player's
    view and request stores (`ids.player(…, page)`) and the line under the job bar
    (`note`)."""

    page: str
    config: str = ids.CONFIG
    seed_pick: str = ids.SEED_PICK
    feature_pick: str = ids.FEATURE_PICK
    note: str = ids.LINK_NOTE

    @property
    def widget(self) -> JobWidget:
        return JobWidget(self.page)

    @property
    def view(self) -> dict[str, Any]:
        return ids.player(ids.VIEW, self.page)

    @property
    def request(self) -> dict[str, Any]:
        return ids.player(ids.REQUEST, self.page)

    def register(self) -> None:
        """Register `show_config` and `poll` for this page's ids (once, at import)."""
        w = self.widget
        callback(
            Output(w.store, "data"),
            Output(self.view, "data"),
            Output(w.poll, "disabled"),
            Output(w.status, "data"),
            Output(self.seed_pick, "options"),
            Output(self.seed_pick, "value"),
            Output(w.poll, "interval"),
            Input(self.config, "data"),
            Input(w.id(ids.RUN), "n_clicks"),
            State(ids.CLIENT, "data"),
            State(self.feature_pick, "value"),
            State(self.request, "data"),
            prevent_initial_call=True,
        )(self.show_config)
        callback(
            Output(self.view, "data", allow_duplicate=True),
            Output(w.store, "data", allow_duplicate=True),
            Output(w.poll, "disabled", allow_duplicate=True),
            Output(w.status, "data", allow_duplicate=True),
            Output(self.seed_pick, "options", allow_duplicate=True),
            Output(self.seed_pick, "value", allow_duplicate=True),
            Output(w.poll, "interval", allow_duplicate=True),
            Input(w.poll, "n_intervals"),
            State(w.store, "data"),
            State(self.config, "data"),
            State(self.feature_pick, "value"),
            State(self.seed_pick, "value"),
            # how often the page polls: the process counts its pages from it (app.audience)
            # and the page keeps it while the new period would be close (`period`)
            State(w.poll, "interval"),
            prevent_initial_call=True,
        )(self.poll)
        # the poll has no side effects: a class's identical polls share one answer a tick
        answers.share(f"{ids.text(w.poll)}.n_intervals")
        audience.listen(w.poll)

    def show_config(
        self, store: dict[str, Any] | None, _clicks: int, client: Any, feature: Any, request: Any
    ) -> tuple[Any, ...]:
        """Serve, join or start the job of the config being viewed. Train starts it; so
        does opening a link that names it (`autostart`, app/controls.py link_autostart),
        which the line under the job bar then says; a cancelled run's kept frames stay
        until Train."""
        config = config_of(store)
        if config is None:
            return (no_update,) * 7
        queue = job_queue()
        asked = _requested_feature(request, config)
        feature = feature_of(feature, config) if asked is None else asked
        seed = _requested_seed(request, config)
        status = queue.status(config.key)
        train = self.widget.id(ids.RUN)
        from_link = ctx.triggered_id != train and store.get("autostart") is True
        wants_training = ctx.triggered_id == train or from_link
        kept_first = from_link and status is not None and status.state == JobState.CANCELLED
        set_props(self.note, {"children": ""})
        if status is not None and status.state == JobState.DONE:
            run = kept_run(queue, config, status)
            if run is not None:
                return finished(run, status, seed, feature)
            status = None  # an unreadable cached run: train it again
        if status is not None and status.state in ACTIVE:
            return _start(status, seed, period(queue, status))
        if not wants_training or kept_first:
            kept = kept_run(queue, config, status)
            if kept is not None:  # cancelled: what was trained stays on screen
                return finished(kept, status, seed, feature)
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
            run = kept_run(queue, config, status)
            if run is not None:
                return finished(run, status, seed, feature)
        if from_link:
            set_props(self.note, {"children": LINK_STARTED})
        return _start(status, seed, period(queue, status))

    def poll(
        self, _n: int, job: dict[str, Any] | None, store: dict[str, Any] | None, feature: Any,
        menu: Any, polling: Any = None,
    ) -> tuple[Any, ...]:  # fmt: skip
        """Append the frames that arrived since the cursor, for the seed that leads now (or
        the one the user picked in the menu); when the job ends, show the whole run (the
        best seed, unless the user picked one)."""
        config = config_of(store)
        if not isinstance(job, dict) or config is None or job.get("key") != config.key:
            # the user moved on: this poll belongs to an old job; show_config restarts it
            return (no_update, no_update, True, no_update, no_update, no_update, no_update)
        queue = job_queue()
        status = queue.status(config.key)
        if status is None:
            gone = job_status(config.key, None, "The job disappeared; press Train.")
            return (no_update, no_update, True, gone, no_update, no_update, no_update)
        feature = feature_of(feature, config)
        cursor = max(int_or_none(job.get("cursor")) or 0, 0)
        kept = kept_run(queue, config, status)
        if kept is not None:
            # when a class's job ends, every page of the class asks for the same whole view
            # at once: one request draws it, the others answer now (their streamed frames
            # and job bar stay as they are: the bar says done with the view that shows it)
            # and get it on their next poll, holding no server thread
            done = finished(kept, status, _picked_seed(job), feature, wait=False)
            if done is None:
                return (no_update, no_update, False, no_update, no_update, no_update, POLL_MS)
            job_, view, disabled, bar, options, seed, interval = done
            if _holds_start_of(job, view, cursor):  # its streamed frames are the run's
                view = finish_patch(view, cursor)
            return (view, job_, disabled, bar, options, seed, interval)
        ended = status.state not in ACTIVE
        bar = job_status(config.key, status)
        interval = period(queue, status, polling)
        run = streamed_run(queue, config, status, interval) if status.n_frames > cursor else None
        if run is None or run.n_frames <= cursor:
            return (no_update, no_update, ended, bar, no_update, no_update, interval)
        shown = int_or_none(job.get("seed"))
        shown = shown if shown is not None and 0 <= shown < config.seeds else None
        picked = bool(job.get("picked")) and shown is not None
        menu = int_or_none(menu)
        if cursor > 0 and menu is not None and menu != shown and 0 <= menu < config.seeds:
            picked, shown_pick = True, menu  # picked in the menu while the job streams
        else:
            shown_pick = shown if picked else None
        # the user's pick, else the seed that leads now (switching only when another is
        # clearly ahead: tempsup.io.run.leading_seed)
        seed, options = stream_seed(run, shown, shown_pick)
        drawn = int_or_none(job.get("view_feature"))
        new_job = {**job, "cursor": run.n_frames, "seed": seed, "picked": picked,
                   "state": status.state.value, "view_feature": feature}  # fmt: skip
        if cursor > 0 and (seed != shown or (drawn is not None and drawn != feature)):
            # another seed (or feature) on screen: its frames from the first
            view = stream_whole(config, run, seed, feature)
            return (view, new_job, ended, bar, options, seed, interval)
        view = stream_patch(config, run, seed, feature, cursor)
        return (view, new_job, ended, bar, options, seed, interval)
