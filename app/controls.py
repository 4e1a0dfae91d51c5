"""The control panel: sliders and switches ↔ the URL ↔ the config being viewed.

One callback keeps three things in step, in both directions: the controls, the
query string (so a copied link restores the view) and the `CONFIG` store that
the rest of the app reads. Moving a control never trains by itself: it shows
a cached run at once if there is one, else waits for Train. A link that names a
configuration is the sender's intent: opening it trains that run at once if it is not
trained yet (identical configs share one job); a bare page or a link with refused
values waits for Train (`link_autostart`).

The four main settings each have a slider over the teaching range and a number
box holding the exact value (Enter or Tab commits it), which takes anything
`RunConfig` accepts — the same limits as a link. A value `RunConfig` refuses is
never applied silently: the controls go back to the config on screen and the
message says what was refused, in `RunConfig`'s own words, and what was kept.
The message is a notice fixed at the top of the window (`notice`), so it is in view
wherever the control was, at any width, and a screen reader hears it (role="alert").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dash import Input, Output, State, callback, clientside_callback, ctx, dcc, html, no_update

from app import ids
from app.urlstate import config_from_query, names_a_config, query_from_config, view_from_query
from app.widgets import choice_group, js, list_field, model_choice, number_box, number_field
from tempsup.errors import TempsupError
from tempsup.model.config import DEFAULTS, INPUT_DISTS, MULTI_DELAY_TASKS, RunConfig
from tempsup.model.task_shapes import TASK_NAMES, TASKS

# Sliders cover the teaching range; larger sizes (the N_h = 100 preset) come from links.
HIDDEN_MARKS = (1, 2, 3, 5, 10, 16)
INPUT_MARKS = (1, 2, 5, 10, 16)

# (component id, config field): each control edits exactly one field (for the main
# settings, the number box: the slider beside it is in SLIDERS)
FIELD_CONTROLS: tuple[tuple[str, str], ...] = (
    (ids.MODEL, "model"),
    (ids.K_BOX, "k"),
    (ids.SPARSITY_BOX, "sparsity"),
    (ids.HIDDEN_BOX, "hidden"),
    (ids.INPUTS_BOX, "inputs"),
    (ids.STEPS, "steps"),
    (ids.LR, "lr"),
    (ids.SEEDS, "seeds"),
    (ids.SEED, "seed"),
    (ids.SEQ_LEN, "seq_len"),
    (ids.BATCH, "batch"),
    (ids.IMPORTANCE, "importance"),
    (ids.INPUT_DIST, "input_dist"),
    (ids.SNAPSHOT_EVERY, "snapshot_every"),
    (ids.CURRICULUM, "curriculum"),
    (ids.TASK, "task"),
    (ids.DELAYS, "ks"),
    (ids.WINDOW, "window"),
    (ids.PERSISTENCE, "persistence"),
)
OPTION_FIELDS = ("tied", "bias")  # the OPTIONS checklist
# The task's own boxes: each is read (and shown, in its row) only for the tasks that have it;
# for the others the field keeps its default, whatever the hidden box holds.
TASK_BOXES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ks": (ids.DELAYS_ROW, MULTI_DELAY_TASKS),
    "window": (ids.WINDOW_ROW, ("sum",)),
}
# What a task box holds while the task on screen has no such field: choosing the task then
# gives a config that trains at once (two delays; a window of three inputs).
SUGGESTED = {"ks": "2, 5", "window": 3}


@dataclass(frozen=True)
class SliderSpec:
    """A slider over the teaching range of one field, beside that field's number box."""

    id: str
    box: str
    field: str
    lo: float
    hi: float
    step: float
    marks: dict[float, str]

    def position(self, value: Any) -> Any:
        """Where the slider sits for a config value (values beyond its range: at its end)."""
        return min(max(value, self.lo), self.hi) if isinstance(value, (int, float)) else value


SLIDERS = (
    SliderSpec(ids.K, ids.K_BOX, "k", 0, 10, 1, {0: "0", 3: "3", 5: "5", 10: "10"}),
    SliderSpec(
        ids.SPARSITY,
        ids.SPARSITY_BOX,
        "sparsity",
        0.0,
        0.99,
        0.01,
        # no label at the end (0.99): beside "0.9" the two overlapped at any width
        {0: "0", 0.5: "0.5", 0.9: "0.9"},
    ),  # fmt: skip
    SliderSpec(ids.HIDDEN, ids.HIDDEN_BOX, "hidden", 1, 16, 1, {v: str(v) for v in HIDDEN_MARKS}),
    SliderSpec(ids.INPUTS, ids.INPUTS_BOX, "inputs", 1, 16, 1, {v: str(v) for v in INPUT_MARKS}),
)

# The number boxes under "Advanced": (id, label, min, max, step, hint)
ADVANCED_NUMBERS = (
    (ids.STEPS, "steps", 1, 200_000, 1, "optimizer steps"),
    (ids.LR, "learning rate", 1e-5, 10, "any", "Adam, cosine decay"),
    (ids.SEEDS, "seeds", 1, 64, 1, "models trained side by side"),
    (ids.SEED, "base seed", 0, 2**31 - 1, 1, "init and data"),
    (ids.SEQ_LEN, "sequence length T", 2, 500, 1, "time steps"),
    (ids.BATCH, "batch", 1, 65536, 1, "sequences per step"),
    (ids.IMPORTANCE, "importance decay", 0.01, 1, "any", "feature i weighs importance^i"),
    (ids.SNAPSHOT_EVERY, "snapshot every", 1, 200_000, 1, "steps between frames"),
    (ids.CURRICULUM, "curriculum start S", 0, 0.99, "any", "start at this sparsity; empty: none"),
)


def layout(config: RunConfig = DEFAULTS) -> html.Div:
    """The control card showing `config`: the main settings, then "advanced" folded away."""
    names = [i for i, _ in FIELD_CONTROLS] + [ids.OPTIONS] + [sl.id for sl in SLIDERS]
    values = dict(zip(names, control_values(config) + slider_values(config), strict=True))
    props = {id_: {"value": value} for id_, value in values.items()}
    rows = [row for row, _ in TASK_BOXES.values()]
    hidden = task_rows_hidden(config.task)
    props.update({row: {"hidden": h} for row, h in zip(rows, hidden, strict=True)})
    return _with_props(_card(), props)


def _with_props(component: Any, props: dict[str, dict[str, Any]]) -> Any:
    """Set the props of every component in a layout tree from `props` (by id)."""
    for name, value in props.get(getattr(component, "id", None), {}).items():
        setattr(component, name, value)
    children = getattr(component, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and hasattr(child, "to_plotly_json"):
            _with_props(child, props)
    return component


def task_rows_hidden(task: Any) -> list[bool]:
    """Whether each task box's row is hidden for `task` (TASK_BOXES order)."""
    return [task not in tasks for _, tasks in TASK_BOXES.values()]


def _task_card() -> list[Any]:
    """The task (issue 43: docs/researchers/tasks.md), its delays or window where it has
    them, and the inputs' persistence q."""
    options = [{"label": f"{t}: {TASK_NAMES[t]}", "value": t} for t in TASKS]
    radios = dcc.RadioItems(id=ids.TASK, options=options, value=DEFAULTS.task, className="radios")
    delays = html.Div(
        id=ids.DELAYS_ROW,
        children=list_field(ids.DELAYS, "delays ks (k = the largest)", SUGGESTED["ks"]),
    )
    window = html.Div(
        id=ids.WINDOW_ROW,
        children=number_field(
            ids.WINDOW, "window w", lo=1, hi=499, hint="inputs summed from age k on"
        ),
    )
    persistence = number_field(
        ids.PERSISTENCE,
        "persistence q",
        lo=0,
        hi=0.99,
        step="any",
        hint="an input repeats its previous value with probability q (0: independent)",
    )
    return [
        choice_group("Task", radios),
        html.Div(className="grid task-fields", children=[delays, window, persistence]),
    ]


def _card() -> html.Div:
    return html.Div(
        className="card controls",
        children=[
            html.H2("Model and task"),
            *model_choice(ids.MODEL, DEFAULTS.model),
            *_slider_rows(),
            *_task_card(),
            html.Details(
                className="advanced",
                children=[
                    html.Summary("Advanced"),
                    html.Div(
                        className="grid",
                        children=[
                            *[
                                number_field(id_, label, lo=lo, hi=hi, step=step, hint=hint)
                                for id_, label, lo, hi, step, hint in ADVANCED_NUMBERS
                            ],
                            html.Label(
                                className="field",
                                children=[
                                    html.Span("input values U"),
                                    dcc.Dropdown(
                                        id=ids.INPUT_DIST,
                                        options=list(INPUT_DISTS),
                                        value=DEFAULTS.input_dist,
                                        clearable=False,
                                    ),
                                ],
                            ),
                        ],
                    ),
                    choice_group(
                        "Readout",
                        dcc.Checklist(
                            id=ids.OPTIONS,
                            options=[
                                {
                                    "label": "tied readout W_y := W_h^k W_x (the paper's)",
                                    "value": "tied",
                                },
                                {"label": "readout bias b_y", "value": "bias"},
                            ],
                            value=["tied"],
                            className="checks",
                        ),
                    ),
                ],
            ),
        ],
    )


def notice(message: str = ids.CONFIG_ERROR, close: str = ids.NOTICE_CLOSE) -> html.Div:
    """What was refused (from a link or a control), fixed at the top of the window while it
    has something to say; × dismisses it (assets/style.css `.notice`). The page lays it
    out outside its sticky columns, whose stacking would put the sticky player over it.
    `message`, `close`: the ids of its text and its ×, one pair per page."""
    return html.Div(
        className="notice",
        children=[
            html.Div(id=message, className="error", role="alert"),
            html.Button("×", id=close, n_clicks=0, title="dismiss",
                        **{"aria-label": "dismiss the message"}),
        ],
    )  # fmt: skip


SLIDER_LABELS = {
    "k": "Delay k (the target is the input k steps back)",
    "sparsity": "Sparsity S = 1 − p (how often an input is silent)",
    "hidden": "Hidden size N_h",
    "inputs": "Input dimension N_x (features A, B, C, …)",
}


def _slider_rows() -> list[Any]:
    rows: list[Any] = []
    for sl in SLIDERS:
        value = getattr(DEFAULTS, sl.field)
        rows += [
            html.Label(
                SLIDER_LABELS[sl.field], className="label", htmlFor=sl.box, id=f"{sl.id}-label"
            ),
            # the label names the box (htmlFor) and, through the group, the slider
            # (assets/a11y.js: Dash's slider takes no aria props)
            html.Div(
                className="slider-box",
                role="group",
                **{"aria-labelledby": f"{sl.id}-label"},
                children=[
                    dcc.Slider(
                        id=sl.id,
                        min=sl.lo,
                        max=sl.hi,
                        step=sl.step,
                        value=value,
                        marks=sl.marks,
                        allow_direct_input=False,
                    ),  # fmt: skip
                    number_box(sl.box, value, class_name="box"),
                ],
            ),
        ]
    return rows


def slider_values(config: RunConfig) -> list[Any]:
    """Where each slider sits for `config` (SLIDERS order)."""
    return [sl.position(getattr(config, sl.field)) for sl in SLIDERS]


def control_values(config: RunConfig) -> list[Any]:
    """The value of every control showing `config` (FIELD_CONTROLS order, then OPTIONS)."""
    values = [_control_value(config, field) for _, field in FIELD_CONTROLS]
    values.append([name for name in OPTION_FIELDS if getattr(config, name)])
    return values


def _control_value(config: RunConfig, field: str) -> Any:
    """What the control of `field` shows for `config`: the delays as "2, 5"; a task box the
    config's task has not holds its suggestion (`SUGGESTED`)."""
    if field in TASK_BOXES and config.task not in TASK_BOXES[field][1]:
        return SUGGESTED[field]
    if field == "ks":
        return ", ".join(str(d) for d in config.delays)
    return getattr(config, field)


def config_from_controls(values: list[Any], options: list[str] | None) -> RunConfig:
    """Build the config the controls describe; TempsupError if a value is bad. A task box
    is read only for the tasks that have it (`TASK_BOXES`)."""
    fields: dict[str, Any] = {}
    typed = dict(zip((field for _, field in FIELD_CONTROLS), values, strict=True))
    for field, value in typed.items():
        if field in TASK_BOXES and typed["task"] not in TASK_BOXES[field][1]:
            continue  # hidden for this task: the field keeps its default
        if value is None and field != "curriculum":
            raise TempsupError(f"{field}: enter a value")
        fields[field] = RunConfig.field_value(field, value)
    if "ks" in fields and fields["ks"] is None:
        raise TempsupError("ks: enter the delays to recall, e.g. 2, 5")
    options = options if isinstance(options, list) else []
    for name in OPTION_FIELDS:
        fields[name] = name in options
    return RunConfig(**fields)


def config_store(config: RunConfig, autostart: bool) -> dict[str, Any]:
    """The CONFIG store; `autostart`: train the config if it is not trained yet (a link)."""
    return {"config": config.to_dict(), "key": config.key, "autostart": autostart}


def link_autostart(search: str | None, errors: list[str]) -> bool:
    """Whether opening this link trains its config: only a link that names a configuration
    and was taken whole (a bare page, or one with refused values, waits for Train)."""
    return names_a_config(search) and not errors


def refused(exc: Exception, controls: list[Any], current: RunConfig) -> str:
    """The message for controls `RunConfig` refused: its own words, then what stays on screen."""
    shown = control_values(current)[: len(FIELD_CONTROLS)]
    kept = [
        f"{field} = {value if value is not None else 'none'}"
        for (_, field), typed, value in zip(FIELD_CONTROLS, controls, shown, strict=True)
        if typed != value
    ]
    return f"Not applied: {exc}" + (f" (kept {', '.join(kept)})" if kept else "")


@callback(
    Output(ids.URL, "search"),
    Output(ids.CONFIG, "data"),
    Output(ids.player(ids.REQUEST, ids.EXPLORER), "data"),
    Output(ids.CONFIG_ERROR, "children"),
    *[Output(id_, "value") for id_, _ in FIELD_CONTROLS],
    Output(ids.OPTIONS, "value"),
    *[Output(sl.id, "value") for sl in SLIDERS],
    Input(ids.URL, "search"),
    *[Input(id_, "value") for id_, _ in FIELD_CONTROLS],
    Input(ids.OPTIONS, "value"),
    *[Input(sl.id, "value") for sl in SLIDERS],
    State(ids.CONFIG, "data"),
)
def sync_controls(search: str | None, *values: Any) -> tuple[Any, ...]:
    """URL → controls (a link was opened) or controls → URL (a control moved).

    Every answer sets all controls (boxes and sliders alike) to the config they
    describe, so a slider and its box never disagree and a refused value does
    not stay on screen."""
    n_fields, n_sliders = len(FIELD_CONTROLS), len(SLIDERS)
    controls = list(values[:n_fields])
    options = values[n_fields]
    sliders = values[n_fields + 1 : n_fields + 1 + n_sliders]
    current = values[-1] if isinstance(values[-1], dict) else None
    n_controls = n_fields + 1 + n_sliders
    if ctx.triggered_id == ids.URL or ctx.triggered_id is None:
        config, errors = config_from_query(search)
        # a bare or partly invalid link is rewritten to the config actually shown
        bare = not (isinstance(search, str) and search.strip("?"))
        url = query_from_config(config) if errors or bare else no_update
        if current and current.get("key") == config.key:  # the page came prefilled
            return (url,) + (no_update,) * (3 + n_controls)
        request, view_errors = view_from_query(search, config)
        errors += view_errors
        autostart = link_autostart(search, errors)
        message = "Ignored from the link: " + "; ".join(errors) if errors else ""
        return (url, config_store(config, autostart), request, message,
                *control_values(config), *slider_values(config))  # fmt: skip
    for sl, value in zip(SLIDERS, sliders, strict=True):
        if ctx.triggered_id == sl.id:  # a slider moved: its value replaces its box's
            controls[[i for i, _ in FIELD_CONTROLS].index(sl.box)] = value
    shown = _config_or_defaults(current)
    try:
        config = config_from_controls(controls, options)
    except (TempsupError, TypeError, ValueError) as exc:  # (the last two: a crafted request)
        return (no_update, no_update, no_update, refused(exc, controls, shown),
                *control_values(shown), *slider_values(shown))  # fmt: skip
    unchanged = current and current.get("key") == config.key
    return (
        no_update if unchanged else query_from_config(config),
        no_update if unchanged else config_store(config, autostart=False),
        no_update,
        "",
        *control_values(config),
        *slider_values(config),
    )


def _config_or_defaults(store: dict[str, Any] | None) -> RunConfig:
    """The config on screen (the CONFIG store), or the defaults before there is one."""
    try:
        return RunConfig.from_dict(store["config"]) if store else DEFAULTS
    except (TempsupError, KeyError, TypeError):
        return DEFAULTS


@callback(
    *[Output(row, "hidden") for row, _ in TASK_BOXES.values()],
    Input(ids.TASK, "value"),
)
def show_task_boxes(task: Any) -> list[bool]:
    """Show the delays for multi and cued, the window for sum; hide them for the others."""
    return task_rows_hidden(task)


# × on a notice empties it (the next refusal fills it again)
for _message, _close in ((ids.CONFIG_ERROR, ids.NOTICE_CLOSE),
                         (ids.PHASE_LINK_ERROR, ids.PHASE_NOTICE_CLOSE)):  # fmt: skip
    clientside_callback(
        js("dismiss"),
        Output(_message, "children", allow_duplicate=True),
        Input(_close, "n_clicks"),
        prevent_initial_call=True,
    )
