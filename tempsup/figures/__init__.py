"""The figures of tempsup: pure functions from a training `Run` to Plotly figures.

Shared by the Dash app and the standalone HTML export; no Dash here (style.md
§5). Four panels (science.md §1), one module each:

    directions   the feature directions w_s in the hidden state, the readout, the half-space
    loss         measured loss and the four loss terms over training, with a step cursor
    projections  a_s = w_yᵀw_s against s (vector input: the heatmap of W_yᵀW_k)
    eigen        eigenvalues of W_h and the unit circle; ρ(W_h), kθ, ‖w_0‖

`PANEL_SET` (`rnn.py`) is the one registry of them (name, module, grid cell, card heading,
caption: what the app, the export and the site read) and puts them behind the panel
protocol (`tempsup.figures.panel`, shared with the correlations lab's panels):
`frame_traces`, `all_frame_traces`, `moving_traces`, `panel_layout` and `panel_figure`
below are its front-end, for every panel, seed, feature and frame. Everything that moves
is trace data, plain JSON with floats rounded to 4 significant digits. `animation_figure`
/ `export_html` put all four panels into one animated, self-contained figure whose frames
carry only what moves; `status_lines` gives the line of numbers under the player, one per
frame (`status.py`).
"""

from __future__ import annotations

from tempsup.core.palette import empty_figure
from tempsup.figures.animation import animation_figure, export_html
from tempsup.figures.rnn import PANEL_SET, PANELS
from tempsup.figures.status import NEAR_BEST, status_line, status_lines

frame_traces = PANEL_SET.frame_traces
all_frame_traces = PANEL_SET.all_frame_traces
moving_traces = PANEL_SET.moving_traces
panel_layout = PANEL_SET.panel_layout
panel_figure = PANEL_SET.panel_figure

__all__ = [
    "NEAR_BEST",
    "PANELS",
    "PANEL_SET",
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
