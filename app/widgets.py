"""Pieces every page reuses: the player's client-side wiring, the job bar, number fields.

A page lays out its own components (ids from `app/ids.py`) and calls these to
connect them, so the explorer, the lab and the phase diagram play, scrub and
report progress through the same code (`assets/tempsup.js`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dash import ClientsideFunction, Input, Output, State, clientside_callback, dcc, html


def _js(name: str) -> ClientsideFunction:
    return ClientsideFunction(namespace="tempsup", function_name=name)


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
    """The slider that picks the frame (or the fraction of training) on screen."""
    return html.Div(
        className="scrubber",
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


def player_row(
    play: str, frame: str, label: str, steppers: tuple[str, str] | None = None
) -> html.Div:
    """◀ Play ▶, the frame scrubber and the label under it (see `wire_player`)."""
    play_button = html.Button("Play", id=play, n_clicks=0, title="play / pause (space)")
    buttons = [play_button]
    if steppers is not None:
        buttons = [
            html.Button("◀", id=steppers[0], n_clicks=0, title="previous frame (←)"),
            play_button,
            html.Button("▶", id=steppers[1], n_clicks=0, title="next frame (→)"),
        ]
    return html.Div(
        className="player-row",
        children=[*buttons, scrubber(frame), html.Span(id=label, className="frame-label")],
    )


def wire_player(
    *,
    frame: str,
    tick: str,
    play: str,
    view: str,
    job: str,
    graphs: Sequence[str],
    label: str,
    steppers: tuple[str, str] | None = None,
    request: str | None = None,
) -> None:
    """Scrubber, play/pause and step buttons over a view store, all client-side.

    `request`: a store {"key", "frame"} naming the frame a link asks for; the scrubber
    goes there once that run's frames are all in, and the store is emptied."""
    clientside_callback(
        _js("render"),
        *[Output(g, "figure") for g in graphs],
        Output(label, "children"),
        Input(frame, "value"),
        Input(view, "data"),
    )
    # the slider's range follows the frames; while training it follows the newest
    wanted = [Output(request, "data", allow_duplicate=True), State(request, "data")]
    clientside_callback(
        _js("follow"),
        Output(frame, "max"),
        Output(frame, "value", allow_duplicate=True),
        *(wanted[:1] if request else []),
        Input(view, "data"),
        State(frame, "value"),
        State(frame, "max"),
        State(job, "data"),
        *(wanted[1:] if request else []),
        prevent_initial_call="initial_duplicate",  # a page may arrive with its frames inside
    )
    clientside_callback(
        _js("toggle_play"),
        Output(tick, "disabled"),
        Output(play, "children"),
        Output(frame, "value", allow_duplicate=True),
        Input(play, "n_clicks"),
        State(tick, "disabled"),
        State(frame, "value"),
        State(frame, "max"),
        prevent_initial_call=True,
    )
    clientside_callback(
        _js("tick"),
        Output(frame, "value", allow_duplicate=True),
        Output(tick, "disabled", allow_duplicate=True),
        Output(play, "children", allow_duplicate=True),
        Input(tick, "n_intervals"),
        State(frame, "value"),
        State(frame, "max"),
        prevent_initial_call=True,
    )
    if steppers is not None:
        clientside_callback(
            _js("step"),
            Output(frame, "value", allow_duplicate=True),
            Input(steppers[0], "n_clicks"),
            Input(steppers[1], "n_clicks"),
            State(frame, "value"),
            State(frame, "max"),
            prevent_initial_call=True,
        )
