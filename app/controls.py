"""The control panel: sliders and switches ↔ the URL ↔ the config being viewed.

One callback keeps three things in step, in both directions: the controls, the
query string (so a copied link restores the view) and the `CONFIG` store that
the rest of the app reads. Moving a control never trains by itself: it shows
a cached run at once if there is one; opening a link trains if there is not.
"""

from __future__ import annotations

from typing import Any

from dash import Input, Output, State, callback, ctx, dcc, html, no_update

from app import ids
from app.urlstate import config_from_query, query_from_config
from app.widgets import number_field
from tempsup.config import DEFAULTS, INPUT_DISTS, MODEL_NAMES, RunConfig
from tempsup.errors import TempsupError

# Sliders cover the teaching range; larger sizes (the N_h = 100 preset) come from links.
HIDDEN_MARKS = (1, 2, 3, 5, 10, 16)
INPUT_MARKS = (1, 2, 5, 10, 16)

# (component id, config field): each control edits exactly one field
FIELD_CONTROLS: tuple[tuple[str, str], ...] = (
    (ids.MODEL, "model"),
    (ids.K, "k"),
    (ids.SPARSITY, "sparsity"),
    (ids.HIDDEN, "hidden"),
    (ids.INPUTS, "inputs"),
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
)
OPTION_FIELDS = ("tied", "bias")  # the OPTIONS checklist

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


def _marks(values: tuple[int, ...]) -> dict[int, str]:
    return {v: str(v) for v in values}


def layout(config: RunConfig = DEFAULTS) -> html.Div:
    """The control card showing `config`: the main settings, then "advanced" folded away."""
    values = dict(zip([i for i, _ in FIELD_CONTROLS] + [ids.OPTIONS], control_values(config),
                      strict=True))  # fmt: skip
    return _with_values(_card(), values)


def _with_values(component: Any, values: dict[str, Any]) -> Any:
    """Set the `value` of every control in a layout tree from `values` (by id)."""
    if getattr(component, "id", None) in values:
        component.value = values[component.id]
    children = getattr(component, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and hasattr(child, "to_plotly_json"):
            _with_values(child, values)
    return component


def _card() -> html.Div:
    return html.Div(
        className="card controls",
        children=[
            html.H2("Model and task"),
            html.Label("Model", className="label"),
            dcc.RadioItems(
                id=ids.MODEL,
                options=[{"label": MODEL_NAMES[m], "value": m} for m in MODEL_NAMES],
                value=DEFAULTS.model,
                className="radios",
            ),
            html.Label("Delay k (the target is the input k steps back)", className="label"),
            dcc.Slider(
                id=ids.K,
                min=0,
                max=10,
                step=1,
                value=DEFAULTS.k,
                marks={0: "0", 3: "3", 5: "5", 10: "10"},
            ),
            html.Label("Sparsity S = 1 − p (how often an input is silent)", className="label"),
            dcc.Slider(
                id=ids.SPARSITY,
                min=0.0,
                max=0.99,
                step=0.01,
                value=DEFAULTS.sparsity,
                marks={0: "0", 0.5: "0.5", 0.9: "0.9", 0.99: "0.99"},
            ),
            html.Label("Hidden size N_h", className="label"),
            dcc.Slider(
                id=ids.HIDDEN,
                min=1,
                max=16,
                step=1,
                value=DEFAULTS.hidden,
                marks=_marks(HIDDEN_MARKS),
            ),
            html.Label("Input dimension N_x (features A, B, C, …)", className="label"),
            dcc.Slider(
                id=ids.INPUTS,
                min=1,
                max=16,
                step=1,
                value=DEFAULTS.inputs,
                marks=_marks(INPUT_MARKS),
            ),
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
                ],
            ),
            html.Div(id=ids.CONFIG_ERROR, className="error", role="alert"),
        ],
    )


def control_values(config: RunConfig) -> list[Any]:
    """The value of every control showing `config` (FIELD_CONTROLS order, then OPTIONS)."""
    values = [getattr(config, field) for _, field in FIELD_CONTROLS]
    values.append([name for name in OPTION_FIELDS if getattr(config, name)])
    return values


def config_from_controls(values: list[Any], options: list[str] | None) -> RunConfig:
    """Build the config the controls describe; TempsupError if a value is bad."""
    fields: dict[str, Any] = {}
    for (_, field), value in zip(FIELD_CONTROLS, values, strict=True):
        if value is None and field != "curriculum":
            raise TempsupError(f"{field}: enter a value")
        if (
            isinstance(value, float)
            and value.is_integer()
            and isinstance(getattr(DEFAULTS, field), int)
        ):
            value = int(value)
        fields[field] = value
    options = options if isinstance(options, list) else []
    for name in OPTION_FIELDS:
        fields[name] = name in options
    return RunConfig(**fields)


def config_store(config: RunConfig, autostart: bool) -> dict[str, Any]:
    return {"config": config.to_dict(), "key": config.key, "autostart": autostart}


@callback(
    Output(ids.URL, "search"),
    Output(ids.CONFIG, "data"),
    Output(ids.CONFIG_ERROR, "children"),
    *[Output(id_, "value") for id_, _ in FIELD_CONTROLS],
    Output(ids.OPTIONS, "value"),
    Input(ids.URL, "search"),
    *[Input(id_, "value") for id_, _ in FIELD_CONTROLS],
    Input(ids.OPTIONS, "value"),
    State(ids.CONFIG, "data"),
)
def sync_controls(search: str | None, *values: Any) -> tuple[Any, ...]:
    """URL → controls (a link was opened) or controls → URL (a control moved)."""
    *controls, options, current = values
    current = current if isinstance(current, dict) else None
    n_controls = len(FIELD_CONTROLS) + 1
    if ctx.triggered_id == ids.URL or ctx.triggered_id is None:
        config, errors = config_from_query(search)
        # a bare or partly invalid link is rewritten to the config actually shown
        bare = not (isinstance(search, str) and search.strip("?"))
        url = query_from_config(config) if errors or bare else no_update
        if current and current.get("key") == config.key:  # the page came prefilled
            return (url,) + (no_update,) * (2 + n_controls)
        message = "Ignored from the link: " + "; ".join(errors) if errors else ""
        return (url, config_store(config, autostart=True), message, *control_values(config))
    try:
        config = config_from_controls(controls, options)
    except TempsupError as exc:
        return (no_update, no_update, str(exc), *([no_update] * n_controls))
    except (TypeError, ValueError) as exc:  # malformed values from a crafted request
        return (no_update, no_update, f"invalid control value ({exc})", *([no_update] * n_controls))
    if current and current.get("key") == config.key:
        return (no_update, no_update, "", *([no_update] * n_controls))
    return (
        query_from_config(config),
        config_store(config, autostart=False),
        "",
        *([no_update] * n_controls),
    )
