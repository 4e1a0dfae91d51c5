"""The correlated-features lab: how data correlations shape (spatial) superposition.

After Prieto, Stevinson, Barsbey et al. (arXiv 2603.09972, cited on the page): a tied autoencoder
x̂ = σ(WᵀWx + b) trained on correlated features arranges them by co-activation
— the covariance's PCA circle at a small bottleneck m, antipodal pairs at a
larger one. Same job queue, same player and same export as the explorer; the
figures come from `tempsup.bows.figures`.

The first picture is the authors' own main figure (`tempsup.bows.grid`): the
covariance beside WᵀW/‖W‖² for the linear model at weight decay 1 and the ReLU
model at 1 and 6, at nine bottlenecks, with what it shows at each m in words
measured from the runs (`tempsup.bows.grid.statement`, the README's block too).
The finished grid ships with the package, so it is there at once; "Train grid"
trains it again as one "bows-sweep" job.

Every view is a link (`lab_query`): the controls, the uploaded text (by its
digest, with its file name), the sweep's values, and whether the run and the
sweep on screen are shown; a fresh browser opening it gets the same controls and
the same run and sweep, from the job store when they are there.

Below the panels, the sweep over m: the page's data and model controls are the
base config, every (weight decay, m) point trains in one batch as a
"bows-sweep" job (`tempsup.bows.sweeps`), its per-point measures grow live, and
the finished sweep is drawn by `sweep_figure` (and exported with
`export_sweep_html`), with the switch's table under it: per point the loss
and the claims' three measures, read from the sweep result's rows
(`tempsup.bows.sweeps.switch_table`).
"""

from __future__ import annotations

from base64 import b64decode
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode

import numpy as np
from dash import Input, Output, State, callback, ctx, dcc, html, no_update

from app import ids, player
from app.jobwidget import JobWidget, job_status, polled, register_export, submit
from app.pages import register
from app.services import job_queue
from app.view import empty_view, lab_view
from app.widgets import choice_group, list_field, number_field, panel_card, parse_list
from tempsup.bows import grid as bows_grid
from tempsup.bows.config import MODELS, SHA256, STRUCTURE_NAMES, BowsConfig
from tempsup.bows.data import text_report
from tempsup.bows.figures import export_html, export_sweep_html, sweep_figure
from tempsup.bows.figures import lab as panels_registry
from tempsup.bows.figures.grid import grid_figure
from tempsup.bows.figures.sweep import MEASURE_NOTES
from tempsup.bows.sweeps import (
    BowsSweepResult,
    BowsSweepSpec,
    load_point_runs,
    progress_figure,
    switch_table,
)
from tempsup.core.palette import empty_figure
from tempsup.errors import TempsupError
from tempsup.jobs.record import JobState

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


# The controls a link restores, by query name: (component id, default value). `text` is
# the uploaded text's sha256 (the text stays in the job store), `file` its name.
CONTROL_IDS = (ids.LAB_STRUCTURE, ids.LAB_M, ids.LAB_MODEL, ids.LAB_WD, ids.LAB_SHARPNESS,
               ids.LAB_EPOCHS, ids.LAB_SEEDS)  # fmt: skip
FRESH: dict[str, Any] = {
    "structure": DEFAULT.structure,
    "m": DEFAULT.m,
    "model": DEFAULT.model,
    "wd": DEFAULT.weight_decay,
    "sharpness": DEFAULT.sharpness,
    "epochs": DEFAULT.epochs,
    "seeds": DEFAULT.seeds,
    "text": None,
    "file": None,
    "ms": SWEEP_MS,
    "wds": SWEEP_WDS,
}
SHOWN = ("run", "sweep")  # `=1` in a link: the run / the sweep of these controls is on screen
MAX_QUERY_VALUE = 120


def lab_query(values: dict[str, Any], run: bool = False, sweep: bool = False) -> str:
    """The lab's view as a query string: every control that differs from the fresh page,
    then run=1 / sweep=1 when that run / sweep is on screen."""
    pairs = []
    for name, fresh in FRESH.items():
        value = values.get(name)
        if not _linkable(value) or value == fresh or not str(value).strip():
            continue  # unset, the fresh page's, or not a value a control can hold
        pairs.append((name, f"{value:g}" if isinstance(value, float) else str(value)))
    pairs += [(flag, "1") for flag, on in (("run", run), ("sweep", sweep)) if on]
    return "?" + urlencode(pairs) if pairs else ""


def _linkable(value: Any) -> bool:
    """A control's value that a link can carry: a number, or short UTF-8 text."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return False
    if isinstance(value, float) and not np.isfinite(value):
        return False
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return len(value) <= MAX_QUERY_VALUE
    return True


def lab_from_query(query: str | None) -> tuple[dict[str, Any], dict[str, bool], list[str]]:
    """A link's controls (FRESH where the link says nothing or something invalid), its
    run=1 / sweep=1 flags, and what it had that was ignored, each named."""
    values, errors = dict(FRESH), []
    flags = {flag: False for flag in SHOWN}
    params = parse_qsl(query.lstrip("?") if isinstance(query, str) else "", keep_blank_values=True)
    for name, text in params:
        if len(text) > MAX_QUERY_VALUE:
            errors.append(f"{name}: value too long ({len(text)} characters)")
        elif name in SHOWN:
            flags[name] = text == "1"
        elif name in ("structure", "model"):
            allowed = list(STRUCTURE_NAMES) if name == "structure" else list(MODELS)
            if text in allowed:
                values[name] = text
            else:
                errors.append(f"{name}: expected one of {', '.join(allowed)}, got {text!r}")
        elif name in ("m", "epochs", "seeds", "wd", "sharpness"):
            try:
                number = float(text) if name in ("wd", "sharpness") else int(text)
            except ValueError:
                errors.append(f"{name}: expected a number, got {text!r}")
                continue
            values[name] = number
        elif name == "text":
            if SHA256.fullmatch(text) and job_queue().blob(text) is not None:
                values["text"] = text
            else:
                errors.append("text: the link's text is not on this server; upload it again")
        elif name in ("file", "ms", "wds"):
            values[name] = text
        else:
            errors.append(f"{name}: not a setting of the lab")
    if values["text"] is None:
        values["file"] = None
        if values["structure"] == "text" and not any(e.startswith("text:") for e in errors):
            errors.append("structure text: the link names no uploaded text; upload one")
    return values, flags, errors


def _captions(values: dict[str, Any]) -> dict[str, str]:
    """The words under each panel, written by the lab's registry for the controls' config
    (the fresh page's while the controls make none)."""
    try:
        config = build_config_from(values)
    except TempsupError:
        config = DEFAULT
    return panels_registry.panel_captions(config)


@callback(
    [Output(ids.lab_explain(p), "children") for p in panels_registry.PANEL_SET.names],
    Input(ids.LAB_MODEL, "value"),
    prevent_initial_call=True,
)
def update_captions(model: Any) -> list[Any]:
    """The captions for the model chosen (their words differ by model; a value that is
    not a model changes nothing)."""
    if model not in MODELS:
        return [no_update] * len(panels_registry.PANEL_SET.names)
    words = _captions({**FRESH, "model": model})
    return [words.get(p, "") for p in panels_registry.PANEL_SET.names]


def _empty_view(message: str) -> dict[str, Any]:
    """The player's store before a lab run shows: the lab's panels, no frames."""
    return empty_view(message, panels_registry.PANEL_SET)


def build_config_from(values: dict[str, Any]) -> BowsConfig:
    """`build_config` of a link's values (`lab_from_query`)."""
    return build_config(*(values[k] for k in ("structure", "m", "model", "wd", "sharpness",
                                              "epochs", "seeds", "text")))  # fmt: skip


def controls_card(values: dict[str, Any], note: str) -> html.Div:
    """The data and model controls, set from `values`; `note` says what a link got wrong."""
    report = _text_words(values["text"], values["file"])
    structures = [s for s in STRUCTURE_NAMES if s != "text"] + ["text"]
    return html.Div(
        className="card controls",
        children=[
            html.Div(note, id=ids.LAB_NOTE, className="error", role="alert"),
            *WIDGET.layout(export="Export HTML"),
            html.H2("Data and model"),
            choice_group(
                "Correlation structure",
                dcc.RadioItems(
                    id=ids.LAB_STRUCTURE,
                    options=[{"label": STRUCTURE_NAMES[s], "value": s} for s in structures],
                    value=values["structure"],
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
            html.Div(report[0], id=ids.LAB_UPLOAD_NAME, className="status"),
            html.Div(report[1], id=ids.LAB_TEXT_WARNING, className="error", role="alert"),
            html.Label("Bottleneck m", className="label", id=f"{ids.LAB_M}-label"),
            # the group names the slider and its box (assets/a11y.js)
            html.Div(
                role="group",
                **{"aria-labelledby": f"{ids.LAB_M}-label"},
                children=dcc.Slider(
                    id=ids.LAB_M,
                    min=1,
                    max=12,
                    step=1,
                    value=values["m"],
                    marks={1: "1", 2: "2", 4: "4", 6: "6", 8: "8", 12: "12"},
                ),
            ),
            choice_group(
                "Model",
                dcc.RadioItems(
                    id=ids.LAB_MODEL,
                    options=[
                        {"label": "ReLU (x̂ = ReLU(WᵀWx + b))", "value": "relu"},
                        {"label": "linear", "value": "linear"},
                    ],
                    value=values["model"],
                    className="radios",
                ),
            ),
            choice_group(
                "Weight decay",
                dcc.RadioItems(
                    id=ids.LAB_WD,
                    options=sorted({0.0, 1.0, 6.0, float(values["wd"])}),
                    value=values["wd"],
                    inline=True,
                    className="radios inline",
                ),
            ),
            html.Div(
                className="grid",
                children=[
                    number_field(
                        ids.LAB_SHARPNESS, "sharpness", values["sharpness"], 0, 100, "any"
                    ),  # fmt: skip
                    number_field(ids.LAB_EPOCHS, "epochs", values["epochs"], 1, 2000),
                    number_field(ids.LAB_SEEDS, "seeds", values["seeds"], 1, 16),
                ],
            ),
        ],
    )


def panels_card(values: dict[str, Any]) -> html.Div:
    """One graph per panel of the lab's run, each with its caption for `values`' model."""
    words = _captions(values)
    return html.Div(
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
                    html.P(words.get(p, ""), id=ids.lab_explain(p), className="explain"),
                ],
            )
            for p in panels_registry.PANEL_SET.names
        ],
    )


def layout(query: str | None = None) -> html.Div:
    """The lab; `query` (a fresh load of a link) sets its controls and what it shows."""
    values, flags, errors = lab_from_query(query)
    note = "Ignored from the link: " + "; ".join(errors) if errors else ""
    player_card = html.Div(
        className="card player", children=player.controls(ids.LAB, _empty_view("press Train"))
    )
    return html.Div(
        children=[
            dcc.Location(id=ids.LAB_URL, refresh="callback-nav"),
            dcc.Store(id=ids.LAB_TEXT, data=values["text"]),
            dcc.Store(id=ids.LAB_FILE, data=values["file"]),
            dcc.Store(id=ids.LAB_LINK, data=flags),
            intro(),
            html.Div(
                className="main",
                children=[
                    html.Aside(className="side", children=controls_card(values, note)),
                    html.Section(
                        className="content",
                        children=[
                            grid_card(),
                            player_card,
                            panels_card(values),
                            sweep_card(values["ms"], values["wds"]),
                        ],
                    ),  # fmt: skip
                ],
            ),
        ]
    )


# ---- the authors' grid: the lab's first picture ----------------------------------------

GRID = JobWidget(ids.LAB_GRID)


@lru_cache(maxsize=1)
def _shipped_grid() -> bows_grid.Grid | None:
    return bows_grid.shipped()


def grid_words(grid: bows_grid.Grid) -> list[Any]:
    """What the grid shows at each m (`tempsup.bows.grid.statement_rows`, the README's
    block too) as a table, and what its words mean."""
    cell = {"padding": "0.2rem 0.5rem", "verticalAlign": "top", "textAlign": "left"}
    head = html.Tr(
        [html.Th("m", style=cell)]
        + [html.Th(bows_grid.ROW_NAMES[row], style=cell) for row in bows_grid.ROWS]
    )
    rows = [html.Tr([html.Th(str(m), style=cell)] + [html.Td(c, style=cell) for c in cells])
            for m, cells in bows_grid.statement_rows(grid)]  # fmt: skip
    return [
        html.Div(
            className="sweep-table",
            children=html.Table(
                style={"borderCollapse": "collapse", "fontSize": "0.85rem"},
                children=[html.Thead(head), html.Tbody(rows)],
            ),
        ),
        html.P(bows_grid.LEGEND, className="explain"),
    ]


def grid_views(grid: bows_grid.Grid | None) -> tuple[Any, Any, Any]:
    """The wide and the narrow figure of a grid and its measured words (or placeholders)."""
    if grid is None:
        empty = empty_figure("press Train grid")
        return empty, empty, None
    return grid_figure(grid, wide=True), grid_figure(grid, wide=False), grid_words(grid)


def grid_card() -> html.Div:
    """The authors' main figure, from the grid that ships (else: press Train grid)."""
    wide, narrow, words = grid_views(_shipped_grid())
    spec = bows_grid.grid_spec()
    return panel_card(
        "The authors' grid: covariance beside WᵀW/‖W‖²",
        (
            "The paper's main figure, trained with its authors' recipe (the lab's "
            f"defaults: binary circular data, {DEFAULT.n_samples:,} of "
            f"{DEFAULT.n_samples + DEFAULT.n_heldout:,} samples train, AdamW lr 0.01 with "
            f"a cosine per epoch down to 1e-9, clipping 1, batch {DEFAULT.batch}, "
            f"{DEFAULT.epochs} epochs; best of {DEFAULT.seeds} seeds): the linear model at "
            "weight decay 1, the ReLU model at 1 and at 6, at bottlenecks m = "
            f"{', '.join(str(m) for m in spec.ms)}. WᵀW is divided by ‖W‖² (its trace is "
            "then 1). Measured from these runs, at each m:"
        ),
        dcc.Graph(
            id=ids.LAB_GRID_GRAPH,
            className="grid-wide",
            figure=wide,
            config={"displayModeBar": False, "responsive": True},
        ),
        dcc.Graph(
            id=ids.LAB_GRID_GRAPH_NARROW,
            className="grid-narrow",
            figure=narrow,
            config={"displayModeBar": False, "responsive": True},
        ),
        html.Div(words, id=ids.LAB_GRID_TEXT, className="grid-words"),
        html.P(
            f"“Train grid” trains these {len(spec.configs)} points × {spec.base.seeds} seeds "
            "again, in one batch (the ReLU and linear models side by side).",
            className="explain",
        ),
        *GRID.layout("Train grid"),
        class_name="lab-grid",
    )


@callback(
    *GRID.submitted(),
    Input(GRID.id(ids.RUN), "n_clicks"),
    State(ids.CLIENT, "data"),
    prevent_initial_call=True,
)
def train_grid(_n, client):
    """Submit the grid (a finished one in the job store is served at once)."""
    try:
        spec = bows_grid.grid_spec()
        return GRID.started(spec.key, submit(spec, client))
    except TempsupError as exc:
        return GRID.refused(str(exc))


@callback(
    *GRID.polling(
        Output(ids.LAB_GRID_GRAPH, "figure"),
        Output(ids.LAB_GRID_GRAPH_NARROW, "figure"),
        Output(ids.LAB_GRID_TEXT, "children"),
    ),
    prevent_initial_call=True,
)
def poll_grid(_n, job):
    """The grid from the job's runs once done (until then the shipped one stays)."""
    job = polled(job, BowsSweepSpec, "The grid job disappeared; press Train grid.")
    if isinstance(job, tuple):
        return (*job, no_update, no_update)
    if not job.done:
        return no_update, job.bar, not job.status.active, no_update, no_update
    result = job.queue.result(job.key)
    runs = load_point_runs(job.queue, result) if isinstance(result, BowsSweepResult) else []
    try:
        grid = bows_grid.from_runs(job.spec, runs)
    except TempsupError as exc:
        return no_update, job_status(job.key, None, str(exc)), True, no_update, no_update
    wide, narrow, words = grid_views(grid)
    return wide, job.bar, True, narrow, words


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


def sweep_card(ms: str = SWEEP_MS, wds: str = SWEEP_WDS) -> html.Div:
    """The sweep over m: its values, Run/Cancel/Export, the job bar and the figure."""
    return panel_card(
        "Sweep over m",
        "Trains every (weight decay, m) point with the data and model chosen above, "
        "all in one batch. At a small bottleneck the columns of W span the covariance's "
        "top principal components (PCA overlap → 1, the circle); at a larger one "
        "features pair up antipodally (isolated pairs → 1); weight decay moves the "
        "switch.",
        html.Div(
            className="grid",
            children=[
                list_field(ids.LAB_SWEEP_MS, "bottlenecks m (comma-separated)", ms),
                list_field(ids.LAB_SWEEP_WDS, "weight decays (comma-separated)", wds),
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


def _text_words(digest: Any, name: Any) -> tuple[str, str]:
    """The line under the upload box (the file's name and what it gives) and the warning
    when it is too short for the lab's statistics; ("", "") without a text."""
    data = (
        job_queue().blob(digest) if isinstance(digest, str) and SHA256.fullmatch(digest) else None
    )
    if data is None:
        return "", ""
    report = text_report(data.decode("utf-8", errors="replace"), DEFAULT.window)
    label = str(name)[:80] if name else "uploaded text"
    return f"Text: {label} — {report.summary}.", report.warning or ""


@callback(
    Output(ids.LAB_TEXT, "data"),
    Output(ids.LAB_FILE, "data"),
    Output(ids.LAB_UPLOAD_NAME, "children"),
    Output(ids.LAB_TEXT_WARNING, "children"),
    Output(WIDGET.error, "children", allow_duplicate=True),
    Output(ids.LAB_STRUCTURE, "value"),
    Input(ids.LAB_UPLOAD, "contents"),
    State(ids.LAB_UPLOAD, "filename"),
    prevent_initial_call=True,
)
def upload_text(contents: Any, filename: Any):
    """Keep an uploaded text in the job store under its sha256; the page keeps the digest,
    shows the file's name and what it gives, and warns at once when it is too short.

    The browser never holds a server path: a spec names the text by its content,
    the worker reads it from the job store (any backend), and the key hashes it."""
    keep = (no_update,) * 4
    if not isinstance(contents, str) or "," not in contents:
        return (*keep, "upload: expected a text file", no_update)
    try:
        data = b64decode(contents.split(",", 1)[1], validate=False)
        data.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return (*keep, f"upload: {str(filename)[:80]!r} is not UTF-8 text", no_update)
    if len(data) > MAX_UPLOAD:
        return (*keep, f"upload: at most {MAX_UPLOAD // 1_000_000} MB of text", no_update)
    digest = job_queue().put_blob(data)
    name = str(filename)[:80] if isinstance(filename, str) and filename else None
    words, warning = _text_words(digest, name)
    return digest, name, words, warning, "", "text"


@callback(
    Output(ids.LAB_URL, "search"),
    Input(WIDGET.store, "data"),
    Input(SWEEP.store, "data"),
    *(Input(id_, "value") for id_ in CONTROL_IDS),
    Input(ids.LAB_TEXT, "data"),
    Input(ids.LAB_FILE, "data"),
    Input(ids.LAB_SWEEP_MS, "value"),
    Input(ids.LAB_SWEEP_WDS, "value"),
    State(ids.LAB_URL, "search"),
    prevent_initial_call=True,
)
def lab_link(run_job, sweep_job, structure, m, model, wd, sharpness, epochs, seeds, text, name,
             ms, wds, search):  # fmt: skip
    """Controls → address bar: the view as a link (`lab_query`), with run=1 / sweep=1 only
    while the run / sweep on screen is the one these controls make."""
    values = {"structure": structure, "m": m, "model": model, "wd": wd, "sharpness": sharpness,
              "epochs": epochs, "seeds": seeds, "text": text, "file": name if text else None,
              "ms": ms, "wds": wds}  # fmt: skip
    run = sweep = False
    try:
        config = build_config_from(values)
        run = isinstance(run_job, dict) and run_job.get("key") == config.key
        spec = build_sweep(*(values[k] for k in ("structure", "m", "model", "wd", "sharpness",
                                                 "epochs", "seeds", "text")), ms, wds)  # fmt: skip
        sweep = isinstance(sweep_job, dict) and sweep_job.get("key") == spec.key
    except (TempsupError, TypeError, ValueError):
        pass  # controls that make no config: the link keeps them, shows nothing trained
    query = lab_query(values, run, sweep)
    return no_update if query == (search or "") else query


def _from_link(widget: JobWidget, key: str, spec: Any, client: Any) -> tuple[tuple, str]:
    """What a link's run=1 / sweep=1 shows: the job in the store, or (absent or failed)
    the job started now, as the phase page does; the note says which."""
    status = job_queue().status(key)
    if status is None or status.state == JobState.FAILED:
        return widget.started(key, submit(spec, client)), LINK_STARTED
    return widget.started(key, status), ""


LINK_STARTED = "Started from the link: it names a run or sweep nobody had trained here."


@callback(
    *WIDGET.submitted(Output(VIEW, "data"), Output(ids.LAB_NOTE, "children", allow_duplicate=True)),
    Input(WIDGET.id(ids.RUN), "n_clicks"),
    Input(ids.LAB_LINK, "data"),
    *CONTROLS,
    State(ids.CLIENT, "data"),
    prevent_initial_call="initial_duplicate",
)
def train_lab(_n, link, structure, m, model, wd, sharpness, epochs, seeds, text_sha256, client):
    """Submit the lab run; a finished identical one is shown at once. On a link's first
    load (run=1): the run its controls name, from the job store (or started)."""
    from_link = ctx.triggered_id != WIDGET.id(ids.RUN)
    if from_link and not (isinstance(link, dict) and link.get("run")):
        return (no_update,) * 6
    try:
        config = build_config(structure, m, model, wd, sharpness, epochs, seeds, text_sha256)
        if from_link:
            started, note = _from_link(WIDGET, config.key, config, client)
            return (*started, _empty_view("loading…"), note or no_update)
        return (*WIDGET.started(config.key, submit(config, client)), _empty_view("training…"),
                no_update)  # fmt: skip
    except TempsupError as exc:
        return (*WIDGET.refused(str(exc)), no_update, no_update)


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
        Output(ids.LAB_SWEEP_GRAPH, "figure"),
        Output(ids.LAB_SWEEP_TABLE, "children"),
        Output(ids.LAB_NOTE, "children", allow_duplicate=True),
    ),
    Input(SWEEP.id(ids.RUN), "n_clicks"),
    Input(ids.LAB_LINK, "data"),
    *CONTROLS,
    State(ids.LAB_SWEEP_MS, "value"),
    State(ids.LAB_SWEEP_WDS, "value"),
    State(ids.CLIENT, "data"),
    prevent_initial_call="initial_duplicate",
)
def run_lab_sweep(_n, link, structure, m, model, wd, sharpness, epochs, seeds, text_sha256, ms,
                  wds, client):  # fmt: skip
    """Submit the sweep (a finished identical one is served at once). On a link's first
    load (sweep=1): the sweep it names, from the job store (or started)."""
    from_link = ctx.triggered_id != SWEEP.id(ids.RUN)
    if from_link and not (isinstance(link, dict) and link.get("sweep")):
        return (no_update,) * 7
    note = no_update
    try:
        spec = build_sweep(structure, m, model, wd, sharpness, epochs, seeds, text_sha256, ms, wds)
        if from_link:
            started, note = _from_link(SWEEP, spec.key, spec, client)
            return (*started, empty_figure("loading the sweep…"), None, note or no_update)
        status = submit(spec, client)
    except TempsupError as exc:
        return (*SWEEP.refused(str(exc)), no_update, no_update, no_update)
    waiting = empty_figure(f"training {len(spec.configs)} points × {spec.base.seeds} seeds…")
    return (*SWEEP.started(spec.key, status), waiting, None, note)


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

register("/lab", "Correlations lab", layout, order=4, initial=layout)
