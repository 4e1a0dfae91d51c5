"""Small inputs every page lays out alike, and what they read: labelled number boxes,
boxes of comma-separated values (`parse_list`) and the scrubber.

(The job widget is `app/jobwidget.py`, the player `app/player.py`; `js` names a function
of `assets/tempsup.js` for a client-side callback.)
"""

from __future__ import annotations

from typing import Any

from dash import ClientsideFunction, dcc, html

from tempsup.errors import TempsupError
from tempsup.model.config import MODEL_NAMES


def js(name: str) -> ClientsideFunction:
    """The browser function `name` of `assets/tempsup.js` (namespace "tempsup")."""
    return ClientsideFunction(namespace="tempsup", function_name=name)


def model_choice(id_: str, value: str) -> list[Any]:
    """The labelled choice of the model (linear RNN, SSM, ReLU RNN)."""
    options = [{"label": MODEL_NAMES[m], "value": m} for m in MODEL_NAMES]
    radios = dcc.RadioItems(id=id_, options=options, value=value, className="radios")
    return [choice_group("Model", radios)]


def choice_group(legend: str, choices: Any) -> html.Fieldset:
    """Radio buttons or check boxes under their caption: a fieldset, so a screen reader
    names the group its buttons belong to (Dash's own markup is a list of options)."""
    return html.Fieldset(
        className="group", children=[html.Legend(legend, className="label"), choices]
    )


def panel_card(title: str, explain: Any, *children: Any, class_name: str = "") -> html.Div:
    """A card of the page: its heading, the sentence that says what it is for, its parts."""
    return html.Div(
        className=f"card panel {class_name}".strip(),
        children=[html.H2(title), html.P(explain, className="explain"), *children],
    )


def number_field(
    id_: str,
    label: str,
    value: Any = None,
    lo: float = 0,
    hi: float = 1e9,
    step: Any = 1,
    hint: str = "",
) -> html.Label:
    """A labelled number box (debounced: it reports on Enter or blur); `lo`, `hi` go into
    its tooltip. The box itself takes any number: the config's validation, not the
    browser, judges it and says what is allowed (an out-of-range number would otherwise
    reach the server as an empty box)."""
    kind = "integer" if step == 1 else "number"
    title = f"{hint + ': ' if hint else ''}{kind} from {lo:g} to {hi:g}"
    return html.Label(
        className="field",
        title=title,
        children=[html.Span(label), number_box(id_, value)],
    )


def number_box(id_: str, value: Any = None, class_name: str = "") -> dcc.Input:
    """A number box that commits on Enter or blur and leaves range checks to the server."""
    return dcc.Input(
        id=id_, type="number", step="any", value=value, debounce=True, className=class_name
    )


def scrubber(id_: str, *, maximum: float = 0, step: float = 1, value: float = 0,
             marks: dict | None = None) -> html.Div:  # fmt: skip
    """The slider that picks the frame (or the fraction of training) on screen. Its group's
    name is the slider's (assets/a11y.js: Dash's slider takes no aria props)."""
    return html.Div(
        className="scrubber",
        role="group",
        **{"aria-label": "frame"},
        children=dcc.Slider(
            id=id_,
            min=0,
            max=maximum,
            step=step,
            value=value,
            marks=marks,
            updatemode="drag",
            allow_direct_input=False,  # the label says which frame, counted from 1
        ),  # fmt: skip
    )


def list_field(id_: str, label: str, value: str) -> html.Label:
    """A labelled text box of comma-separated values (read it with `parse_list`)."""
    return html.Label(
        className="field",
        children=[
            html.Span(label),
            dcc.Input(id=id_, value=value, debounce=True, className="wide"),
        ],
    )


def parse_list(text: Any, kind: type, name: str) -> tuple:
    """ "0.1, 0.3" → (0.1, 0.3); TempsupError naming the box otherwise."""
    if not isinstance(text, str) or len(text) > 400:
        raise TempsupError(f"{name}: expected comma-separated numbers")
    try:
        values = tuple(kind(part) for part in text.replace(";", ",").split(",") if part.strip())
    except ValueError:
        raise TempsupError(f"{name}: expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise TempsupError(f"{name}: enter at least one value")
    return values
