"""The correlated-features lab: how data correlations shape (spatial) superposition.

After Prieto, Stevinson, Barsbey et al. (arXiv 2603.09972, cited on the page): a tied autoencoder
x̂ = σ(WᵀWx + b) trained on correlated features arranges them by co-activation
— the covariance's PCA circle at a small bottleneck m, antipodal pairs at a
larger one. Same job queue, same player and same export as the explorer; the
figures come from `tempsup.bows.figures`.

Below the panels, the sweep over m: the page's data and model controls are the
base config, every (weight decay, m) point trains in one batch as a
"bows-sweep" job (`tempsup.bows.sweep`), its per-point measures grow live, and
the finished sweep is drawn by `sweep_figure` (and exported with
`export_sweep_html`), with the switch's table under it: per point the loss
and the claims' three measures, read from the sweep result's rows
(`tempsup.bows.sweep.switch_table`).
"""

from __future__ import annotations

from base64 import b64decode
from typing import Any

from dash import Input, Output, State, callback, dcc, html, no_update

from app import ids, player
from app.jobwidget import JobWidget, job_status, polled, register_export, submit
from app.pages import register
from app.services import job_queue
from app.view import empty_view, lab_view
from app.widgets import choice_group, list_field, number_field, parse_list
from tempsup.bows.config import STRUCTURE_NAMES, BowsConfig
from tempsup.bows.figures import PANELS, export_html, export_sweep_html, sweep_figure
from tempsup.bows.figures.sweep import MEASURE_NOTES
from tempsup.bows.sweep import (
    BowsSweepResult,
    BowsSweepSpec,
    load_point_runs,
    progress_figure,
    switch_table,
)
from tempsup.errors import TempsupError
from tempsup.jobs.record import JobState
from tempsup.palette import empty_figure

MAX_UPLOAD = 2_000_000  # bytes of text a user may upload
SWEEP_MS = "2, 3, 4, 5, 6, 7, 8, 9, 10, 11"  # the paper's range: circle below 6, pairs from 6
SWEEP_WDS = "0, 1, 6"  # the authors' two weight decays and none
DEFAULT = BowsConfig()
WIDGET = JobWidget(ids.LAB)  # a lab run
SWEEP = JobWidget(ids.LAB_SWEEP)  # the sweep over m
VIEW = ids.player(ids.VIEW, ids.LAB)
# the lab's controls, as the train and the sweep callbacks read them (`build_config`'s order)
CONTROLS = (
    *(State(id_, "value") for id_ in (ids.LAB_STRUCTURE, ids.LAB_M, ids.LAB_MODEL, ids.LAB_WD,
                                       ids.LAB_SHARPNESS, ids.LAB_EPOCHS, ids.LAB_SEEDS)),
    State(ids.LAB_TEXT, "data"),
)  # fmt: skip
EXPLAIN = {
    "matrices": "The data's covariance beside WᵀW, on one colour scale: with correlated "
    "features the model copies the covariance's structure (constructive interference).",
    "columns": "Each feature's column of W in the bottleneck (PCA when m > 2), coloured by its "
    "angle on the circle: a small m reproduces the covariance's PCA circle; a larger m pairs "
    "features antipodally.",
    "r2": "Per feature, how well a linear decoder recovers it from h = Wx: above the threshold "
    "the feature is in linear superposition, below it only the ReLU can read it out.",
    "loss": "Reconstruction loss over training for every seed (the best is bold).",
}


def layout() -> html.Div:
    structures = [s for s in STRUCTURE_NAMES if s != "text"] + ["text"]
    controls = html.Div(
        className="card controls",
        children=[
            *WIDGET.layout(export="Export HTML"),
            html.H2("Data and model"),
            choice_group(
                "Correlation structure",
                dcc.RadioItems(
                    id=ids.LAB_STRUCTURE,
                    options=[{"label": STRUCTURE_NAMES[s], "value": s} for s in structures],
                    value=DEFAULT.structure,
                    className="radios",
                ),
            ),
            # a label around the drop zone names its file input for screen readers
            html.Label(
                dcc.Upload(
                    id=ids.LAB_UPLOAD,
                    children=html.Div(
                        ["for “bag of words”: drop or ", html.A("choose a text file")]
                    ),
                    className="upload",
                    max_size=MAX_UPLOAD,
                ),
            ),
            html.Label("Bottleneck m", className="label"),
            dcc.Slider(
                id=ids.LAB_M,
                min=1,
                max=12,
                step=1,
                value=DEFAULT.m,
                marks={1: "1", 2: "2", 4: "4", 6: "6", 8: "8", 12: "12"},
            ),
            choice_group(
                "Model",
                dcc.RadioItems(
                    id=ids.LAB_MODEL,
                    options=[
                        {"label": "ReLU (x̂ = ReLU(WᵀWx + b))", "value": "relu"},
                        {"label": "linear", "value": "linear"},
                    ],
                    value=DEFAULT.model,
                    className="radios",
                ),
            ),
            choice_group(
                "Weight decay",
                dcc.RadioItems(
                    id=ids.LAB_WD,
                    options=[0.0, 1.0, 6.0],
                    value=DEFAULT.weight_decay,
                    inline=True,
                    className="radios inline",
                ),
            ),
            html.Div(
                className="grid",
                children=[
                    number_field(ids.LAB_SHARPNESS, "sharpness", DEFAULT.sharpness, 0, 100, "any"),
                    number_field(ids.LAB_EPOCHS, "epochs", DEFAULT.epochs, 1, 2000),
                    number_field(ids.LAB_SEEDS, "seeds", DEFAULT.seeds, 1, 16),
                ],
            ),
        ],
    )
    player_card = html.Div(
        className="card player", children=player.controls(ids.LAB, empty_view("press Train"))
    )
    panels = html.Div(
        className="panels",
        children=[
            html.Div(
                className="card panel",
                children=[
                    dcc.Graph(
                        id=ids.graph(ids.LAB, p),
                        style={"height": "30rem"},
                        figure=empty_figure("press Train"),
                        config={"displaylogo": False},
                    ),
                    html.P(EXPLAIN.get(p, ""), className="explain"),
                ],
            )
            for p in PANELS
        ],
    )
    return html.Div(
        children=[
            dcc.Store(id=ids.LAB_TEXT),
            intro(),
            html.Div(
                className="main",
                children=[
                    html.Aside(className="side", children=controls),
                    html.Section(className="content", children=[player_card, panels, sweep_card()]),
                ],
            ),
        ]
    )


PAPER_URL = "https://arxiv.org/abs/2603.09972"


def intro() -> html.P:
    """The paper this page follows (the header cites the RNN paper, which it does not)."""
    return html.P(
        className="lead",
        children=[
            "This lab follows a second paper: Prieto, Stevinson, Barsbey et al., ",
            html.A(
                "From Data Statistics to Feature Geometry: How Correlations Shape Superposition",
                href=PAPER_URL,
                target="_blank",
            ),
            " (arXiv 2603.09972). A tied autoencoder x̂ = σ(WᵀWx + b) squeezes d correlated "
            "features through a bottleneck of m and arranges them by co-activation.",
        ],
    )


def sweep_card() -> html.Div:
    """The sweep over m: its values, Run/Cancel/Export, the job bar and the figure."""
    return html.Div(
        className="card panel",
        children=[
            html.H2("Sweep over m"),
            html.P(
                "Trains every (weight decay, m) point with the data and model chosen above, "
                "all in one batch. At a small bottleneck the columns of W span the covariance's "
                "top principal components (PCA overlap → 1, the circle); at a larger one "
                "features pair up antipodally (isolated pairs → 1); weight decay moves the "
                "switch.",
                className="explain",
            ),
            html.Div(
                className="grid",
                children=[
                    list_field(ids.LAB_SWEEP_MS, "bottlenecks m (comma-separated)", SWEEP_MS),
                    list_field(ids.LAB_SWEEP_WDS, "weight decays (comma-separated)", SWEEP_WDS),
                ],
            ),
            *SWEEP.layout("Run sweep", export="Export sweep HTML"),
            dcc.Graph(
                id=ids.LAB_SWEEP_GRAPH,
                figure=empty_figure("press Run sweep"),
                config={"displaylogo": False},
            ),
            html.Div(id=ids.LAB_SWEEP_TABLE, className="sweep-table"),
            html.P("The letters in the legend are the lab's three claims:", className="explain"),
            html.Ul([html.Li(note) for note in MEASURE_NOTES], className="explain"),
            html.P(
                "The table: per point (best seed, final frame) the loss, the correlation of "
                "WᵀW with the projection onto the covariance's top-m principal components "
                "(the circle: near 1), the fraction of features whose column is antipodal "
                "(cos < −0.8) to that of the feature opposite on the circle (the circle has "
                "it too; isolated pairs do not share their direction with any third feature), "
                "and the features in nonlinear superposition: the model recovers them to R² "
                "above the line, no linear decoder from h = Wx does. At the paper's line 0.5 an "
                "isolated antipodal pair of anti-correlated features can never count (a linear "
                "decoder of x_i − x_j keeps R² ≥ 0.5), hence the stricter line 0.9 beside it.",
                className="explain",
            ),
        ],
    )


def switch_table_view(result: Any) -> Any:
    """The switch's table of a finished sweep (its result's rows), or nothing."""
    if not isinstance(result, BowsSweepResult) or not result.rows:
        return None
    headers, cells = switch_table(result.rows)
    pad = {"padding": "0.15rem 0.6rem", "textAlign": "right"}  # assets/style.css has no table
    return html.Table(
        style={"borderCollapse": "collapse", "fontSize": "0.85rem", "margin": "0.5rem 0"},
        children=[
            html.Thead(html.Tr([html.Th(h, style=pad) for h in headers])),
            html.Tbody([html.Tr([html.Td(c, style=pad) for c in row]) for row in cells]),
        ],
    )


def build_config(structure, m, model, wd, sharpness, epochs, seeds, text_sha256) -> BowsConfig:
    """The lab's controls as a validated BowsConfig (TempsupError names the field)."""
    fields = {"structure": structure, "m": m, "model": model, "weight_decay": wd,
              "sharpness": sharpness, "epochs": epochs, "seeds": seeds}  # fmt: skip
    for name, value in fields.items():
        if value is None:
            raise TempsupError(f"{name}: enter a value")
    if structure == "text":
        if text_sha256 is None:
            raise TempsupError("bag of words: upload a text file first")
        fields["text_sha256"] = text_sha256  # the upload's digest; BowsConfig checks its form
    try:
        # short runs: at most one frame per step (frames at the start and the end)
        steps = DEFAULT.replace(**fields, snapshot_every=1).steps
        return DEFAULT.replace(**fields, snapshot_every=min(DEFAULT.snapshot_every, steps))
    except TempsupError:
        raise
    except (TypeError, ValueError) as exc:
        raise TempsupError(f"invalid value ({exc})") from None


def build_sweep(
    structure, m, model, wd, sharpness, epochs, seeds, text_sha256, ms, wds
) -> BowsSweepSpec:
    """The sweep the page describes: the controls' config as the base, the boxes' values
    as its points (validated by the library; messages name the box or the field)."""
    base = build_config(structure, m, model, wd, sharpness, epochs, seeds, text_sha256)
    return BowsSweepSpec(
        base, parse_list(ms, int, "bottlenecks m"), parse_list(wds, float, "weight decays")
    )


@callback(
    Output(ids.LAB_TEXT, "data"),
    Output(WIDGET.error, "children", allow_duplicate=True),
    Output(ids.LAB_STRUCTURE, "value"),
    Input(ids.LAB_UPLOAD, "contents"),
    State(ids.LAB_UPLOAD, "filename"),
    prevent_initial_call=True,
)
def upload_text(contents: Any, filename: Any):
    """Keep an uploaded text in the job store under its sha256; the page keeps the digest.

    The browser never holds a server path: a spec names the text by its content,
    the worker reads it from the job store (any backend), and the key hashes it."""
    if not isinstance(contents, str) or "," not in contents:
        return no_update, "upload: expected a text file", no_update
    try:
        data = b64decode(contents.split(",", 1)[1], validate=False)
        data.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return no_update, f"upload: {str(filename)[:80]!r} is not UTF-8 text", no_update
    if len(data) > MAX_UPLOAD:
        return no_update, f"upload: at most {MAX_UPLOAD // 1_000_000} MB of text", no_update
    return job_queue().put_blob(data), "", "text"


@callback(
    *WIDGET.submitted(Output(VIEW, "data")),
    Input(WIDGET.id(ids.RUN), "n_clicks"),
    *CONTROLS,
    State(ids.CLIENT, "data"),
    prevent_initial_call=True,
)
def train_lab(_n, structure, m, model, wd, sharpness, epochs, seeds, text_sha256, client):
    """Submit the lab run; a finished identical one is shown at once."""
    try:
        config = build_config(structure, m, model, wd, sharpness, epochs, seeds, text_sha256)
        return (*WIDGET.started(config.key, submit(config, client)), empty_view("training…"))
    except TempsupError as exc:
        return (*WIDGET.refused(str(exc)), no_update)


@callback(*WIDGET.polling(Output(VIEW, "data", allow_duplicate=True)), prevent_initial_call=True)
def poll_lab(_n, job):
    """Progress while training; the whole animated view once done."""
    job = polled(job)
    if isinstance(job, tuple):
        return job
    run = job.queue.result(job.key) if job.done else None
    if run is not None:
        return lab_view(run, run.best), job.bar, True
    return no_update, job.bar, not job.status.active


def _run_page(key: str) -> str | None:
    run = job_queue().result(key)
    return export_html(run) if run is not None else None


register_export(ids.LAB, _run_page, "tempsup-lab-{key}.html", "Nothing to export yet: train first.")


# ---- the sweep over m ---------------------------------------------------------------


@callback(
    *SWEEP.submitted(
        Output(ids.LAB_SWEEP_GRAPH, "figure"), Output(ids.LAB_SWEEP_TABLE, "children")
    ),
    Input(SWEEP.id(ids.RUN), "n_clicks"),
    *CONTROLS,
    State(ids.LAB_SWEEP_MS, "value"),
    State(ids.LAB_SWEEP_WDS, "value"),
    State(ids.CLIENT, "data"),
    prevent_initial_call=True,
)
def run_lab_sweep(_n, structure, m, model, wd, sharpness, epochs, seeds, text_sha256, ms, wds,
                  client):  # fmt: skip
    """Submit the sweep (a finished identical one is served at once)."""
    try:
        spec = build_sweep(structure, m, model, wd, sharpness, epochs, seeds, text_sha256, ms, wds)
        status = submit(spec, client)
    except TempsupError as exc:
        return (*SWEEP.refused(str(exc)), no_update, no_update)
    waiting = empty_figure(f"training {len(spec.configs)} points × {spec.base.seeds} seeds…")
    return (*SWEEP.started(spec.key, status), waiting, None)


@callback(
    *SWEEP.polling(
        Output(ids.LAB_SWEEP_GRAPH, "figure", allow_duplicate=True),
        Output(ids.LAB_SWEEP_TABLE, "children", allow_duplicate=True),
    ),
    prevent_initial_call=True,
)
def poll_lab_sweep(_n, job):
    """The measures against m from the newest frame; the whole sweep figure and the
    switch's table once done."""
    job = polled(job, BowsSweepSpec, "The sweep disappeared; run it again.")
    if isinstance(job, tuple):
        return (*job, no_update)
    key, queue, status, spec, bar = job.key, job.queue, job.status, job.spec, job.bar
    if status.state == JobState.DONE:
        result = queue.result(key)
        runs = load_point_runs(queue, result) if isinstance(result, BowsSweepResult) else []
        if runs:
            return sweep_figure(runs), bar, True, switch_table_view(result)
        gone = "The sweep's runs are gone from the cache; run it again."
        return empty_figure(gone), job_status(key, None, gone), True, None
    frames = queue.frames(key, max(status.n_frames - 1, 0))
    if not frames:
        return no_update, bar, not status.active, no_update
    return progress_figure(spec, frames[-1]), bar, not status.active, no_update


def _sweep_runs(key: Any) -> list:
    """The finished sweep's point runs (each stored as its own "bows" job), or []."""
    queue = job_queue()
    result = queue.result(key) if isinstance(key, str) else None
    return load_point_runs(queue, result) if isinstance(result, BowsSweepResult) else []


def _sweep_page(key: str) -> str | None:
    runs = _sweep_runs(key)
    return export_sweep_html(runs) if runs else None


register_export(ids.LAB_SWEEP, _sweep_page, "tempsup-lab-sweep-{key}.html",
                "Nothing to export yet: run the sweep first.")  # fmt: skip

register("/lab", "Correlations lab", layout, order=4)
