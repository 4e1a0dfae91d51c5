"""The figures of tempsup: pure functions from a training `Run` to Plotly figures.

Shared by the Dash app and the standalone HTML export; no Dash here (style.md
§5). Four panels (science.md §1), one module each:

    directions   the feature directions w_s in the hidden state, the readout, the half-space
    loss         measured loss and the four loss terms over training, with a step cursor
    projections  a_s = w_yᵀw_s against s (vector input: the heatmap of W_yᵀW_k)
    eigen        eigenvalues of W_h and the unit circle; ρ(W_h), kθ, ‖w_0‖

The contract the app relies on, for every panel, seed, feature and frame f:

    panel_figure(panel, run, seed, f)
        == go.Figure({"data": frame_traces(panel, run, seed, f),
                      "layout": panel_layout(panel, run, seed)})

`panel_layout` is fixed across frames (axis ranges come from all frames of the
run, so nothing jumps while scrubbing); everything that moves is trace data,
plain JSON with floats rounded to 4 significant digits. `moving_traces` names
the traces that actually change (for the loss panel only the cursor), and
`animation_figure` / `export_html` put all four panels into one animated,
self-contained figure whose frames carry only those. `status_lines` gives the
line of numbers under the player, one per frame (`status.py`).
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from tempsup.figures._common import frame_index, layout_from_parts, select, uirevision
from tempsup.figures._registry import PANELS
from tempsup.figures._registry import module as _module
from tempsup.figures.animation import animation_figure, export_html
from tempsup.figures.status import NEAR_BEST, status_line, status_lines
from tempsup.palette import empty_figure
from tempsup.run import Run

__all__ = [
    "NEAR_BEST",
    "PANELS",
    "all_frame_traces",
    "animation_figure",
    "empty_figure",
    "export_html",
    "frame_traces",
    "moving_traces",
    "panel_figure",
    "panel_layout",
    "status_line",
    "status_lines",
]


def frame_traces(
    panel: str, run: Run, seed: int | None = None, frame: int = -1, feature: int = 0
) -> list[dict[str, Any]]:
    """The traces of one panel at one frame: plain JSON-able dicts (lists of floats, no numpy)."""
    mod, sel = _module(panel), select(run, seed, feature)
    return mod.traces(sel, mod.prepare(sel), frame_index(run, frame))


def all_frame_traces(
    panel: str, run: Run, seed: int | None = None, feature: int = 0, start: int = 0
) -> list[list[dict[str, Any]]]:
    """`frame_traces` for frames start … F-1, computing the run's geometry once."""
    mod, sel = _module(panel), select(run, seed, feature)
    data = mod.prepare(sel)
    return [mod.traces(sel, data, f) for f in range(frame_index(run, start), run.n_frames)]


def moving_traces(panel: str, run: Run, seed: int | None = None, feature: int = 0) -> list[int]:
    """Indices into `frame_traces` of the traces that change with the frame."""
    mod, sel = _module(panel), select(run, seed, feature)
    return list(mod.parts(sel, mod.prepare(sel)).moving)


def panel_layout(panel: str, run: Run, seed: int | None = None, feature: int = 0) -> dict:
    """The layout of one panel, fixed across frames: plain JSON, template included."""
    mod, sel = _module(panel), select(run, seed, feature)
    return layout_from_parts(mod.parts(sel, mod.prepare(sel)), uirevision(panel, sel))


def panel_figure(
    panel: str, run: Run, seed: int | None = None, frame: int = -1, feature: int = 0
) -> go.Figure:
    """The full figure of one panel at one frame (seed None = the run's best seed)."""
    return go.Figure(
        {
            "data": frame_traces(panel, run, seed, frame, feature),
            "layout": panel_layout(panel, run, seed, feature),
        }
    )
