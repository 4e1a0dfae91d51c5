"""◀ Play ▶ and the frame label for an animated Plotly figure, reachable by keyboard.

Plotly draws an animation's own play button and slider in SVG: a keyboard cannot reach
them and a screen reader does not name them. These HTML buttons issue the figure's own
commands — its slider's steps, its play and pause buttons (assets/frame-buttons.js) —
so they show the same frames and Plotly's slider follows them. The label under them is
the slider's own text for the frame shown ("frame 41 of 101 (step 800)", written once by
`tempsup.core.frames.frame_label`), in a polite live region: a screen reader says where a
step or a pause has left the animation. ← and → step while a button has the focus.
"""

from __future__ import annotations

from typing import Any

from dash import html


def frame_buttons(figure: dict[str, Any], name: str) -> html.Div | None:
    """The controls of the animated `figure` (plain JSON, with its slider) called `name`,
    to be laid out beside its graph (the browser finds the graph in the same parent);
    None for a figure without a slider."""
    sliders = figure.get("layout", {}).get("sliders") or []
    steps = sliders[0].get("steps", []) if sliders else []
    if not steps:
        return None
    active = sliders[0].get("active", len(steps) - 1)
    label = steps[max(0, min(int(active), len(steps) - 1))].get("label", "")

    def button(text: str, command: str, title: str = "") -> html.Button:
        named = {"aria-label": title, "title": title} if title else {}
        return html.Button(text, type="button", **{"data-frames": command}, **named)

    return html.Div(
        className="player-row frame-buttons",
        role="group",
        **{"aria-label": f"frames of {name}"},
        children=[
            button("◀", "prev", "previous frame"),
            button("Play", "play"),
            button("▶", "next", "next frame"),
            html.Span(label, className="frame-label", **{"aria-live": "polite"}),
        ],
    )
