"""The lesson: the paper's story as six predict-then-reveal steps (`tempsup.teaching.lesson`).

A step asks a question first; Reveal then says whether the prediction was
right, explains the answer with the numbers measured on this server's preset
run, animates the runs its question compares (dense beside sparse, k = 0 beside
larger k: `Step.shown`; side by side on a wide screen, stacked on a phone) and
links into the explorer at its configuration ("try it yourself"). The step
lives in the URL (`/lesson?step=3`), so a teacher can send one; nothing trains
here (the gallery's runs are reused). A teacher can run a class poll on it
(`app.pollpanel`): the step links then keep the class (`?class=CODE`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from dash import MATCH, Input, Output, State, callback, ctx, dcc, html, no_update

from app import ids, pollpanel, preset_runs
from app.frame_buttons import frame_buttons
from app.jobwidget import submit
from app.jobwords import describe
from app.pages import intro, register
from app.services import job_queue
from app.urlstate import query_from_config
from tempsup.errors import TempsupError
from tempsup.figures.animation import animation_json, side_by_side
from tempsup.jobs.record import ACTIVE
from tempsup.teaching import lesson

PATH = "/lesson"
POLL_MS = 3000  # a step's runs training: how often its answer looks for them


def step_nav(number: int, search: str | None = None) -> html.Nav:
    """Links to every step (in the class poll the URL names); the current one is marked
    for screen readers too."""
    links = []
    for i, item in enumerate(lesson.STEPS, start=1):
        current = i == number
        links.append(
            dcc.Link(
                f"{i}. {item.title}",
                href=pollpanel.step_href(i, search),
                className="chip current" if current else "chip",
                title="the step shown" if current else None,
            )
        )
    return html.Nav(
        className="chips lesson-steps", children=links, **{"aria-label": "lesson steps"}
    )


def step_card(number: int, search: str | None = None) -> html.Div:
    item = lesson.step(number)
    choices, _ = lesson.shown_choices(item)
    return html.Div(
        className="card lesson-step",
        children=[
            dcc.Store(id=ids.LESSON_STEP, data=number),
            # focused when a step link redraws the card (assets/lesson-focus.js)
            html.H2(f"Step {number} of {len(lesson.STEPS)}: {item.title}", tabIndex="-1"),
            html.Fieldset(
                className="choices",
                children=[
                    html.Legend(item.question, className="question"),
                    html.P("Predict first, then reveal.", className="explain"),
                    dcc.RadioItems(
                        id=ids.LESSON_CHOICE,
                        options=[{"label": c, "value": i} for i, c in enumerate(choices)],
                        labelStyle={"display": "block"},
                        inputStyle={"marginRight": "0.5rem"},
                    ),
                ],
            ),
            pollpanel.vote_part(search),  # in a class poll: Send my prediction
            html.Button("Reveal", id=ids.LESSON_REVEAL, className="primary"),
            # the verdict's own status region, there before it is written, so a screen
            # reader announces the verdict (and only it: the explanation is read on demand)
            html.Div(
                id=ids.LESSON_ANSWER,
                children=[
                    html.Div(id=ids.LESSON_VERDICT, role="status"),
                    html.Div(id=ids.LESSON_DETAILS),
                ],
            ),
        ],
    )


def drawn_for(number: int, search: str | None) -> str:
    """What a step's body depends on: the step and the class the URL names."""
    return f"{number}:{pollpanel.class_of(search) or ''}"


def body(number: int, search: str | None = None) -> list[Any]:
    return [
        dcc.Store(id=ids.LESSON_SHOWN, data=drawn_for(number, search)),
        step_nav(number, search),
        step_card(number, search),
    ]


def layout() -> html.Div:
    return initial("")


def initial(query: str) -> html.Div:
    return html.Div(
        children=[
            intro(
                "Lesson: how an RNN packs its memory",
                "Six short steps through the paper. Each asks you to predict what training "
                "finds, then shows the run, the measured numbers and a link to try the "
                "configuration yourself.",
            ),
            pollpanel.panel(query),
            html.Div(id=ids.LESSON_BODY, children=body(lesson.step_number(query), query)),
        ]
    )


@lru_cache(maxsize=8)
def _animation(key: str) -> dict[str, Any]:
    """The run's four animated panels (plain JSON, cached: finished runs never change)."""
    run = job_queue().run(key)
    return animation_json(run) if run is not None else {}


def reveal(number: int, picked: int, search: str | None = None) -> list[Any]:
    """The answer to step `number` for the choice `picked` (its place as shown): the
    verdict first (`on_reveal` writes it into the announced status region), then the
    explanation, the animations and the links."""
    item = lesson.step(number)
    choices, right = lesson.shown_choices(item)
    verdict = (
        html.P("✓ Right.", className="held")
        if picked == right
        else html.P(f"✗ Not quite: the answer is “{choices[right]}”.", className="not-held")
    )
    cfg = preset_runs.by_name(item.preset).config(item.run)
    links = [dcc.Link("Try it yourself in the explorer", href="/" + query_from_config(cfg),
                      className="chip")]  # fmt: skip
    if number < len(lesson.STEPS):
        links.append(
            dcc.Link("Next step →", href=pollpanel.step_href(number + 1, search), className="chip")
        )
    return [verdict, *answer(number), html.Div(className="chips", children=links)]


def answer(number: int) -> list[Any]:
    """Step `number`'s explanation with the numbers measured on this server's runs and its
    runs animated; while some of those runs are not here, what is said without them, and
    either how far their training is or, when nobody started them, why (presets off:
    what the gallery says) and how to train them."""
    item = lesson.step(number)
    preset = preset_runs.by_name(item.preset)
    ready = preset_runs.ready(preset)
    if len(ready) == len(preset.configs):
        claims = preset_runs.checked(preset.name, preset_runs.quick(), preset.keys)
        cited = {n: preset_runs.claim_dicts(n) for n in lesson.cited_presets(item)}
        text = lesson.explanation(item, [c.to_dict() for c in claims], cited)
        shown = [label for label in item.shown if label in ready]
        double = side_by_side if len(item.shown) > 1 else dict
        views = [_run_view(label, double(_animation(preset.config(label).key))) for label in shown]
        return [html.P(text), html.Div(className="lesson-runs", children=views)]
    training = preset_runs.training(preset)
    return [
        html.Div(
            id=ids.lesson_part(ids.LESSON_UNTRAINED, number),
            children=untrained(number, ready, training),
        ),
        html.Div(
            id=ids.lesson_part(ids.LESSON_TRAINING, number), className="status", role="status"
        ),
        dcc.Interval(
            id=ids.lesson_part(ids.LESSON_TRAIN_POLL, number),
            interval=POLL_MS,
            disabled=not training,
        ),
    ]


def untrained(number: int, ready: dict[str, Any], training: int) -> list[Any]:
    """Step `number`'s answer while some of its preset's runs are not on this server (`ready`:
    those that are; `training`: how many of the rest are queued or training): what is said
    without their numbers, how many are ready and, if none of the rest is training, why
    and how to train them. Never "training" for runs nobody started."""
    item = lesson.step(number)
    n, total = len(ready), len(preset_runs.by_name(item.preset).configs)
    said = html.P(lesson.explanation(item, None))
    if training:
        return [
            said,
            html.P(
                f"This step's runs are training on the server ({n} of {total} ready); the "
                "numbers and the animation appear when they finish.",
                className="status",
            ),
        ]
    why = preset_runs.OFF if preset_runs.off() else "This step's runs are not trained here."
    runs = "one run" if total == 1 else f"its preset's {total} runs, {n} of them on this server"
    missing = total - n
    label = f"Train the {missing} missing runs" if n and missing > 1 else "Train the missing run"
    return [
        said,
        html.P(
            f"{why} Its numbers and animation come from {runs}.",
            className="status lesson-untrained",
        ),
        html.Button(
            label if n else "Train this step's run" + ("s" if total > 1 else ""),
            id=ids.lesson_part(ids.LESSON_TRAIN, number),
        ),
        html.P(
            [
                "Or train every preset on your own machine: ",
                html.Code("tempsup reproduce"),
                " (the paper's claims checked, in a report).",
            ],
            className="hint",
        ),
    ]


def _run_view(label: str, figure: dict[str, Any]) -> html.Figure:
    """One run's animation under its label, with its keyboard controls
    (`app.frame_buttons`: Plotly's own play button and slider are not reachable)."""
    return html.Figure(
        className="lesson-run",
        children=[
            html.Figcaption(label),
            dcc.Graph(figure=figure, config={"displaylogo": False}),
            frame_buttons(figure, label),
        ],
    )


def _step_of(triggered: Any) -> int:
    """The step a matched part's id names (`ids.lesson_part`)."""
    return lesson.step_number(f"step={triggered['step']}")


@callback(
    Output(ids.lesson_part(ids.LESSON_TRAINING, MATCH), "children"),
    Output(ids.lesson_part(ids.LESSON_TRAIN_POLL, MATCH), "disabled"),
    Input(ids.lesson_part(ids.LESSON_TRAIN, MATCH), "n_clicks"),
    State(ids.CLIENT, "data"),
    prevent_initial_call=True,
)
def train(_clicks: int | None, client: Any):
    return queue_runs(_step_of(ctx.triggered_id), client)


def queue_runs(number: int, client: Any) -> tuple[str, bool]:
    """Queue step `number`'s missing runs as the explorer's Train queues a run: `client`'s
    (this browser's) jobs in the server's one queue, within its limits. What a limit
    refuses is said; the rest train, and the answer fills in when they are done
    (`progress`). Returns what was queued and whether the poll stays off."""
    preset = preset_runs.by_name(lesson.step(number).preset)
    ready = preset_runs.ready(preset)
    missing = [cfg for label, cfg in zip(preset.labels, preset.configs, strict=True)
               if label not in ready]  # fmt: skip
    queued, refused = 0, []
    for cfg in missing:
        try:
            submit(cfg, client)
            queued += 1
        except TempsupError as exc:
            refused.append(str(exc))
    text = f"Queued {queued} of the {len(missing)} missing runs"
    if queued:
        text += ": they train on this server now, and the answer fills in when they are done"
    text += "."
    if refused:
        text += " Not queued: " + "; ".join(dict.fromkeys(refused))
    return text, not queued


@callback(
    Output(ids.lesson_part(ids.LESSON_UNTRAINED, MATCH), "children"),
    Output(ids.lesson_part(ids.LESSON_TRAINING, MATCH), "children", allow_duplicate=True),
    Output(ids.lesson_part(ids.LESSON_TRAIN_POLL, MATCH), "disabled", allow_duplicate=True),
    Input(ids.lesson_part(ids.LESSON_TRAIN_POLL, MATCH), "n_intervals"),
    prevent_initial_call=True,
)
def follow(_n: int | None):
    return progress(_step_of(ctx.triggered_id))


def progress(number: int) -> tuple[Any, str, bool]:
    """While step `number`'s runs train: how far they are; once all are here, the whole
    answer (the numbers, the animations); if the rest stopped (failed, cancelled), Train
    again. Returns the answer's body, the status line and whether the poll stops."""
    preset = preset_runs.by_name(lesson.step(number).preset)
    ready, training = preset_runs.ready(preset), preset_runs.training(preset)
    if len(ready) == len(preset.configs):
        return answer(number), "", True
    if training:
        queue = job_queue()
        now = [st for c in preset.configs if (st := queue.status(c.key)) and st.state in ACTIVE]
        where = f" ({describe(now[0])})" if now else ""
        text = f"Training on this server: {len(ready)} of {len(preset.configs)} ready{where}."
        return no_update, text, False
    return untrained(number, ready, 0), "", True


@callback(
    Output(ids.LESSON_VERDICT, "children"),
    Output(ids.LESSON_DETAILS, "children"),
    Input(ids.LESSON_REVEAL, "n_clicks"),
    State(ids.LESSON_CHOICE, "value"),
    State(ids.LESSON_STEP, "data"),
    State(ids.ROOT_URL, "search"),
    prevent_initial_call=True,
)
def on_reveal(_clicks: int | None, picked: int | None, number: int | None, search: str | None):
    if not isinstance(number, int) or isinstance(number, bool):
        return no_update, no_update
    if not isinstance(picked, int) or isinstance(picked, bool):
        return html.P("Pick an answer first: the point is to predict.", className="error"), []
    verdict, *details = reveal(lesson.step_number(f"step={number}"), picked, search)
    return verdict, details


@callback(
    Output(ids.LESSON_BODY, "children"),
    Input(ids.ROOT_URL, "search"),
    State(ids.ROOT_URL, "pathname"),
    State(ids.LESSON_SHOWN, "data"),
    prevent_initial_call=True,
)
def on_step(search: str | None, pathname: str | None, drawn: Any):
    """Going from step to step changes only the query: redraw the step, keep the page.
    The URL read on load names the step already drawn: redrawing it would clear a
    prediction picked meanwhile."""
    if pathname != PATH:
        return no_update
    number = lesson.step_number(search)
    return no_update if drawn_for(number, search) == drawn else body(number, search)


register(PATH, "Lesson", layout, order=1, initial=initial)
