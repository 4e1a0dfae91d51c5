"""The phase diagram page: a sparsity (and k) sweep as one queued batch.

science.md §1: the SSM's swept angle kθ jumps from ≈ 90° (dense) to ≈ 270°
(sparse) and its spectral radius drops. The sweep is a job like any other
(progress, cancel, dedupe); the diagram grows while it trains, and clicking a
point opens that point's run — stored on its own when the sweep finishes — in
the explorer.
"""

from __future__ import annotations

from typing import Any

from dash import Input, Output, State, callback, dcc, html, no_update

from app import ids
from app.jobwidget import JobWidget, job_key, polled, submit
from app.pages import register
from app.services import job_queue
from app.urlstate import query_from_config
from app.widgets import model_choice, number_field, parse_list
from tempsup.config import DEFAULTS, MODEL_NAMES
from tempsup.errors import TempsupError
from tempsup.figures.phase import phase_figure
from tempsup.jobs.record import JobState
from tempsup.palette import empty_figure
from tempsup.sweep import SweepSpec

DEFAULT_SPARSITIES = "0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95"
POLL_MS = 500
WIDGET = JobWidget(ids.PHASE)


def layout() -> html.Div:
    return html.Div(
        className="main",
        children=[
            html.Aside(
                className="side",
                children=html.Div(
                    className="card controls",
                    children=[
                        html.H2("Sweep"),
                        *model_choice(ids.PHASE_MODEL, "ssm"),
                        html.Label(
                            "Sparsities (comma-separated)",
                            htmlFor=ids.PHASE_SPARSITIES,
                            className="label",
                        ),
                        dcc.Input(
                            id=ids.PHASE_SPARSITIES,
                            value=DEFAULT_SPARSITIES,
                            debounce=True,
                            className="wide",
                        ),
                        html.Label(
                            "Delays k (comma-separated)", htmlFor=ids.PHASE_K, className="label"
                        ),
                        dcc.Input(
                            id=ids.PHASE_K, value=str(DEFAULTS.k), debounce=True, className="wide"
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
                        html.P(
                            "Every point × seed trains in one batch. Click a point to open its "
                            "run in the explorer. Each point is the best seed of its sparsity; "
                            "its label x/n says how many of the n seeds are near that best loss "
                            "(closing 90 % of the gap from a silent network's loss), and the "
                            "marker grows with x. Where the SSM's |kθ| jumps from ≈ 90° to "
                            "≈ 270° is read off the diagram, not promised here: it moves with "
                            "k, the seeds and the training length. A short run (a few hundred "
                            "steps) has not settled: angles far above 360° or labels like 1/4 "
                            "say train longer before judging.",
                            className="explain",
                        ),
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
                    ],
                ),
            ),
        ],
    )


def build_spec(model: Any, sparsities: Any, ks: Any, seeds: Any, steps: Any, hidden: Any):
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
        base, parse_list(sparsities, float, "sparsities"), parse_list(ks, int, "delays k")
    )


def summary_figure(spec: SweepSpec, arrays: dict[str, Any], title: str):
    configs = spec.configs
    return phase_figure(
        [c.sparsity for c in configs], [c.k for c in configs], arrays, spec.base.seeds, title
    )


@callback(
    *WIDGET.submitted(),
    Input(WIDGET.id(ids.RUN), "n_clicks"),
    State(ids.PHASE_MODEL, "value"),
    State(ids.PHASE_SPARSITIES, "value"),
    State(ids.PHASE_K, "value"),
    State(ids.PHASE_SEEDS, "value"),
    State(ids.PHASE_STEPS, "value"),
    State(ids.PHASE_HIDDEN, "value"),
    State(ids.CLIENT, "data"),
    prevent_initial_call=True,
)
def run_sweep(_n: int, model, sparsities, ks, seeds, steps, hidden, client):
    """Submit the sweep (a finished identical one is served at once)."""
    try:
        spec = build_spec(model, sparsities, ks, seeds, steps, hidden)
        return WIDGET.started(spec.key, submit(spec, client))
    except TempsupError as exc:
        return WIDGET.refused(str(exc))


@callback(*WIDGET.polling(Output(ids.PHASE_GRAPH, "figure")), prevent_initial_call=True)
def poll_sweep(_n: int, job: Any):
    """Redraw the diagram from the newest frame; the finished table when done."""
    job = polled(job, SweepSpec, "The sweep disappeared; run it again.")
    if isinstance(job, tuple):
        return job
    key, queue, status, spec, bar = job.key, job.queue, job.status, job.spec, job.bar
    if status.state == JobState.DONE:
        result = queue.result(key)
        if result is not None:
            arrays = {
                name: [row[name] for row in result.rows]
                for name in ("swept_angle_deg", "spectral_radius", "w0_norm", "successes")
            }
            title = f"{MODEL_NAMES[spec.base.model]}, final (step {spec.steps})"
            return summary_figure(spec, arrays, title), bar, True
    frames = queue.frames(key, max(status.n_frames - 1, 0))
    if not frames:
        return no_update, bar, not status.active
    last = frames[-1]
    title = f"{MODEL_NAMES[spec.base.model]}, step {int(last['step'])} of {spec.steps}"
    return summary_figure(spec, last, title), bar, not status.active


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
