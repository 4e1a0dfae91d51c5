"""The phase diagram page: a sparsity (and k, and persistence q) sweep as one queued job.

science.md §1: the SSM's best seed's swept angle kθ switches from the ≈ 90° (dense)
to the ≈ 270° (sparse) basin and its spectral radius drops. One sentence under the
diagram says where, measured by the ssm-jump claim's own function
(`tempsup.paper.presets.ssm_jump`): on the gallery's sweep until this page's sweep
finishes, then on this sweep's runs. The sweep is a job like any other
(progress, cancel, dedupe); the diagram grows while it trains, and clicking a
point opens that point's run — stored on its own when the sweep finishes — in
the explorer.

With several persistences q (inputs correlated in time, issue 43) the diagram is a map over
(S, q) (`tempsup.figures.phase.phase_map_figure`): the best seed's |kθ| and, for the ReLU
RNN, its half-space count; the sentence then says where the basin switches at each q.
The default q list, "0", is the sparsity sweep this page always drew (same link, same key).

The sweep shown is in the page's URL (`/phase?model=ssm&sparsities=0.1,0.9&k=3&…`,
app/urlstate.py `phase_query`), written when a sweep is run: a reload or a shared
link re-opens it from the job store without training again, and a link to a sweep
nobody ran yet starts it, as an explorer link does (the line under the bar says so).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from dash import Input, Output, State, callback, ctx, dcc, html, no_update

from app import ids
from app.controls import notice
from app.jobwidget import JobWidget, job_key, polled, submit
from app.pages import register
from app.panels import caption_block
from app.services import job_queue
from app.urlstate import phase_from_query, phase_query, query_from_config
from app.widgets import model_choice, number_field, parse_list
from tempsup.analysis.captions import phase_caption
from tempsup.analysis.sweeps import SweepSpec
from tempsup.core.palette import empty_figure
from tempsup.errors import TempsupError
from tempsup.figures.phase import phase_figure, phase_map_figure
from tempsup.jobs.record import JobState
from tempsup.model.config import DEFAULTS, MODEL_NAMES
from tempsup.paper.claims_table import claim_of
from tempsup.paper.presets import REGISTRY, ssm_jump

DEFAULT_SPARSITIES = "0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95"
DEFAULT_PERSISTENCE = "0"  # no persistence sweep: the sparsity (and k) diagram
POLL_MS = 500
WIDGET = JobWidget(ids.PHASE)
# The controls that name a sweep, in `build_spec`'s order, and their values on a fresh page.
CONTROLS = (ids.PHASE_MODEL, ids.PHASE_SPARSITIES, ids.PHASE_K, ids.PHASE_SEEDS,
            ids.PHASE_STEPS, ids.PHASE_HIDDEN, ids.PHASE_PERSISTENCE)  # fmt: skip
FRESH = {"model": "ssm", "sparsities": DEFAULT_SPARSITIES, "k": str(DEFAULTS.k),
         "seeds": DEFAULTS.seeds, "steps": DEFAULTS.steps, "hidden": DEFAULTS.hidden,
         "persistence": DEFAULT_PERSISTENCE}  # fmt: skip
# The table's columns either diagram reads (`tempsup.figures.phase`).
SUMMARY_COLUMNS = (
    "swept_angle_deg", "spectral_radius", "w0_norm", "successes", "n_interference_free",
)  # fmt: skip
LINK_STARTED = "Sweep started from the link: a link runs the sweep it names."


def list_field(label: str, field_id: str, value: str) -> tuple[html.Label, dcc.Input]:
    """One of the sweep's axes: a label and its comma-separated list of values."""
    return (
        html.Label(label, htmlFor=field_id, className="label"),
        dcc.Input(id=field_id, value=value, debounce=True, className="wide"),
    )


def layout() -> html.Div:
    return html.Div(
        className="main",
        children=[
            dcc.Location(id=ids.PHASE_URL, refresh="callback-nav"),
            notice(ids.PHASE_LINK_ERROR, ids.PHASE_NOTICE_CLOSE),
            html.Aside(
                className="side",
                children=html.Div(
                    className="card controls",
                    children=[
                        html.H2("Sweep"),
                        *model_choice(ids.PHASE_MODEL, "ssm"),
                        *list_field(
                            "Sparsities (comma-separated)",
                            ids.PHASE_SPARSITIES,
                            DEFAULT_SPARSITIES,
                        ),
                        *list_field("Delays k (comma-separated)", ids.PHASE_K, str(DEFAULTS.k)),
                        *list_field(
                            "Persistence q (comma-separated; 0: inputs independent in time)",
                            ids.PHASE_PERSISTENCE,
                            DEFAULT_PERSISTENCE,
                        ),
                        html.Div(
                            className="grid",
                            children=[
                                number_field(
                                    ids.PHASE_SEEDS, "seeds per point", DEFAULTS.seeds, lo=1, hi=64
                                ),
                                number_field(
                                    ids.PHASE_STEPS, "steps", DEFAULTS.steps, lo=1, hi=200_000
                                ),
                                number_field(
                                    ids.PHASE_HIDDEN,
                                    "hidden size N_h",
                                    DEFAULTS.hidden,
                                    lo=1,
                                    hi=16,
                                ),
                            ],
                        ),
                        *WIDGET.layout("Run sweep", poll_ms=POLL_MS),
                        html.Div(id=ids.PHASE_NOTE, className="status link-note", role="status"),
                        caption_block("phase", phase_caption()),
                    ],
                ),
            ),
            html.Section(
                className="content",
                children=html.Div(
                    className="card panel",
                    children=[
                        html.H2("Phase diagram: dense → sparse"),
                        dcc.Graph(
                            id=ids.PHASE_GRAPH,
                            style={"height": "40rem"},
                            figure=empty_figure("run a sweep to draw the diagram"),
                            config={"displaylogo": False},
                        ),
                        html.P(
                            id=ids.PHASE_STORY,
                            className="explain phase-story",
                            children=preset_story(),
                            **{"aria-live": "polite"},
                        ),
                    ],
                ),
            ),
        ],
    )


def build_spec(
    model: Any,
    sparsities: Any,
    ks: Any,
    seeds: Any,
    steps: Any,
    hidden: Any,
    persistences: Any = DEFAULT_PERSISTENCE,
) -> SweepSpec:
    """The SweepSpec the page's controls describe (validated by the library)."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (seeds, steps, hidden)):
        raise TempsupError("seeds, steps and hidden size: expected whole numbers")
    try:
        base = DEFAULTS.replace(
            model=model,
            seeds=seeds,
            steps=steps,
            hidden=hidden,
            snapshot_every=max(1, min(DEFAULTS.snapshot_every, int(steps))),
        )
    except (TypeError, ValueError) as exc:
        raise TempsupError(f"invalid value ({exc})") from None
    return SweepSpec(
        base,
        parse_list(sparsities, float, "sparsities"),
        parse_list(ks, int, "delays k"),
        parse_list(persistences, float, "persistence q"),
    )


def summary_figure(spec: SweepSpec, arrays: dict[str, Any], title: str):
    """The diagram of a sweep: lines over sparsity, or the (S, q) map when q is swept."""
    configs = spec.configs
    s, ks = [c.sparsity for c in configs], [c.k for c in configs]
    if not spec.two_d:
        return phase_figure(s, ks, arrays, spec.base.seeds, title)
    qs = [c.persistence for c in configs]
    return phase_map_figure(s, ks, qs, arrays, spec.base.seeds, spec.base.relu_hidden, title)


@callback(
    *WIDGET.submitted(
        Output(ids.PHASE_URL, "search"),
        Output(ids.PHASE_NOTE, "children"),
        Output(ids.PHASE_LINK_ERROR, "children"),
        *[Output(id_, "value") for id_ in CONTROLS],
    ),
    Input(WIDGET.id(ids.RUN), "n_clicks"),
    Input(ids.PHASE_URL, "search"),
    *[State(id_, "value") for id_ in CONTROLS],
    State(ids.CLIENT, "data"),
)
def run_sweep(
    _n: int, search: Any, model, sparsities, ks, seeds, steps, hidden, persistences, client
):
    """Run sweep: submit the sweep (a finished identical one is served at once) and put it
    in the URL. A URL (a reload, a link): its controls, and the sweep it names — shown from
    the job store, or started when nobody ran it yet; a refused value is named and nothing
    runs."""
    keep = (no_update,) * len(CONTROLS)
    if ctx.triggered_id != ids.PHASE_URL and ctx.triggered_id is not None:
        try:
            spec = build_spec(model, sparsities, ks, seeds, steps, hidden, persistences)
            status = submit(spec, client)
        except TempsupError as exc:
            return (*WIDGET.refused(str(exc)), no_update, "", "", *keep)
        link = phase_query(
            spec.base.model, spec.sparsities, spec.ks, seeds, steps, hidden, spec.persistences
        )
        return (*WIDGET.started(spec.key, status), link, "", "", *keep)
    values, errors = phase_from_query(search)
    if not values and not errors:  # a bare /phase: the fresh page, nothing runs
        return (no_update, True, no_update, "", no_update, "", "", *keep)
    shown = {**FRESH, **values}
    controls = tuple(shown[name] for name in FRESH)
    try:
        spec = build_spec(*controls)
    except TempsupError as exc:
        spec, errors = None, [*errors, str(exc)]
    if spec is None or errors:
        message = "Ignored from the link (nothing runs): " + "; ".join(errors)
        return (no_update, True, no_update, "", no_update, "", message, *controls)
    queue = job_queue()
    status = queue.status(spec.key)
    note = ""
    if status is None or status.state == JobState.FAILED:
        try:
            status, note = submit(spec, client), LINK_STARTED
        except TempsupError as exc:
            return (*WIDGET.refused(str(exc)), no_update, "", "", *controls)
    return (*WIDGET.started(spec.key, status), no_update, note, "", *controls)


def preset_story() -> str:
    """The ssm-jump claim's sentence, measured once on the gallery's shipped sweep, said to be
    about that sweep (a page that has not finished a sweep of its own shows this)."""
    try:
        claim = claim_of(ssm_jump.NAME)
        sweep = REGISTRY.preset(ssm_jump.NAME)
    except TempsupError:
        return ""
    grid = ", ".join(f"{c.sparsity:g}" for c in sweep.configs)
    base = sweep.configs[0]
    return (
        f"The gallery's {ssm_jump.NAME} sweep (k = {base.k}, {base.seeds} seeds at S = {grid}, "
        f"{base.steps} steps): {claim.statement}"
    )


@lru_cache(maxsize=8)
def sweep_story(key: str) -> str:
    """The same sentence measured on a finished sweep of this page (its points' runs)."""
    queue = job_queue()
    result = queue.result(key)
    runs = [queue.run(k) for k in result.keys] if result is not None else []
    if not runs or any(r is None for r in runs):
        return ""
    return f"This sweep: {ssm_jump.said_of_sweep(runs)}"


@callback(
    *WIDGET.polling(Output(ids.PHASE_GRAPH, "figure"), Output(ids.PHASE_STORY, "children")),
    prevent_initial_call=True,
)
def poll_sweep(_n: int, job: Any):
    """Redraw the diagram from the newest frame; the finished table (and the sentence of
    where its best seed switches basin) when done."""
    job = polled(job, SweepSpec, "The sweep disappeared; run it again.")
    if isinstance(job, tuple):
        return (*job, no_update)
    key, queue, status, spec, bar = job.key, job.queue, job.status, job.spec, job.bar
    if status.state == JobState.DONE:
        result = queue.result(key)
        if result is not None:
            arrays = {name: [row[name] for row in result.rows] for name in SUMMARY_COLUMNS}
            title = f"{MODEL_NAMES[spec.base.model]}, final (step {spec.steps})"
            story = sweep_story(key) or no_update
            return summary_figure(spec, arrays, title), bar, True, story
    frames = queue.frames(key, max(status.n_frames - 1, 0))
    if not frames:
        return no_update, bar, not status.active, no_update
    last = frames[-1]
    title = f"{MODEL_NAMES[spec.base.model]}, step {int(last['step'])} of {spec.steps}"
    return summary_figure(spec, last, title), bar, not status.active, no_update


@callback(
    Output(ids.ROOT_URL, "href"),
    Input(ids.PHASE_GRAPH, "clickData"),
    State(WIDGET.store, "data"),
    prevent_initial_call=True,
)
def open_point(click: Any, job: Any):
    """A clicked point opens its run in the explorer."""
    key = job_key(job)
    try:
        index = int(click["points"][0]["customdata"])
    except (TypeError, KeyError, IndexError, ValueError, OverflowError):
        return no_update
    spec = job_queue().spec(key) if isinstance(key, str) else None
    if not isinstance(spec, SweepSpec) or not 0 <= index < len(spec.configs):
        return no_update
    return "/" + query_from_config(spec.configs[index])


register("/phase", "Phase diagram", layout, order=2)
