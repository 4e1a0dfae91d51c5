"""The explorer page: the job widget, the controls, the player and the four panels.

Layout: a side column (the job widget, Train first; the player; the settings) beside the
four panels. On a wide screen (≥ 1200 px) the panels are a 2 × 2 grid as tall as the
window, so the player and all four are seen at once; in one column (≤ 900 px: a phone)
the settings fold away when Train is pressed (`FOLD_SETTINGS`), putting the player and
the first panel on the first screen, and a tap on their summary opens them again.

Opened from a link, the page is built for the link's config; if that run is already
trained, its frames come inside the page itself (no callback needed before the animation
can play), showing the link's seed, and the player's request store carries the link's
frame to the scrubber.

The job itself — serve, join or start it, stream its frames in, show the whole run when it
ends — is the job widget's (`app.jobfollow.RunFollower`, architecture.md "Jobs"); this
page adds what is its own: another seed or feature of a finished run, and the exports.
Training happens in the worker processes; this module never imports torch.
"""

from __future__ import annotations

from typing import Any

from dash import Input, Output, State, callback, clientside_callback, ctx, dcc, html, no_update

from app import controls, ids, open_run, panels, player
from app.controls import config_store
from app.jobfollow import (  # noqa: F401 - the poll's periods, read by the page's tests
    FAST_STREAMS,
    FINAL,
    MAX_STREAM_POLL_MS,
    POLL_MS,
    WAITING_POLL_MS,
    RunFollower,
    active_jobs,
    cached_state,
    config_of,
    feature_of,
    int_or_none,
    kept_run,
    poll_interval,
)
from app.jobwidget import JobWidget, job_status
from app.pages import register
from app.services import job_queue
from app.urlstate import config_from_query, public_link, view_from_query
from app.view import choose_seed, full_view
from tempsup.errors import TempsupError
from tempsup.figures import export_html
from tempsup.model.config import DEFAULTS

WIDGET = JobWidget(ids.EXPLORER)
FOLLOWER = RunFollower(ids.EXPLORER)
JOB, STATUS = WIDGET.store, WIDGET.status
VIEW = ids.player(ids.VIEW, ids.EXPLORER)


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
        className="explorer",
        children=[
            dcc.Location(id=ids.URL, refresh="callback-nav"),
            dcc.Store(id=ids.CONFIG, data=stores["config"]),
            controls.notice(),
            html.Div(
                className="main",
                children=[
                    # Train, the player, then the settings; the column's top stays in view
                    # while the panels scroll (assets/style.css: .side and .player are sticky)
                    html.Aside(
                        className="side",
                        children=[
                            job_card,
                            player.layout(
                                stores["options"],
                                stores["seed"],
                                stores["view"],
                                request if state is not None else None,
                                config.inputs,
                            ),
                            html.Details(
                                className="settings",
                                open=True,
                                children=[
                                    html.Summary("Settings: model, task, run file"),
                                    controls.layout(config),
                                    open_run.card(),
                                ],
                            ),
                        ],
                    ),
                    html.Section(
                        className="content",
                        children=[panels.grid(config), player.hint()],
                    ),
                ],
            ),
        ],
    )


FOLLOWER.register()  # show_config and poll: the job widget's (app/jobfollow.py)

# One column (a phone): Train folds the settings away, so the player and the first panel
# are on the first screen (assets/style.css: the same 900 px as the one column); their
# summary opens them again. Set in the page, not through a prop, so a summary the user
# opened is never closed by a later render. A wider screen keeps them as they are.
FOLD_SETTINGS = """(n) => {
  if (n && window.matchMedia("(max-width: 900px)").matches) {
    document.querySelectorAll(".explorer details.settings").forEach((d) => { d.open = false; });
  }
}"""
clientside_callback(FOLD_SETTINGS, Input(WIDGET.id(ids.RUN), "n_clicks"), prevent_initial_call=True)


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
    config = config_of(store)
    seed = int_or_none(seed)
    if config is None or not isinstance(job, dict) or job.get("state") not in FINAL:
        return no_update, no_update
    feature = feature_of(feature, config)
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
    config = config_of(store)
    queue = job_queue()
    from_file = open_run.opened(job)  # a run opened from a file, else the config's job
    if from_file is not None:
        run = from_file[0]
    else:
        run = kept_run(queue, config, queue.status(config.key)) if config is not None else None
    if run is None:
        text = "Nothing to export yet: train this configuration first."
        return no_update, job_status(config.key if config else "", None, text)
    seed = choose_seed(run, int_or_none(job.get("seed")) if isinstance(job, dict) else None)
    if ctx.triggered_id == ids.EXPORT_NPZ:
        return dcc.send_bytes(run.to_bytes(), f"tempsup-{config.key}.npz"), no_update
    html_text = export_html(run, seed, link=public_link(link), feature=feature_of(feature, config))
    return dict(content=html_text, filename=f"tempsup-{config.key}.html"), no_update


register("/", "Explorer", layout, order=0, initial=layout)
