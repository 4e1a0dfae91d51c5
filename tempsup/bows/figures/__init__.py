"""Figures of the correlated-features lab: pure functions from a `BowsRun` to Plotly figures.

No Dash here (style.md §5); the app and the HTML export share them. Panels
(science.md §2), one module each:

    matrices   the data covariance Σ beside WᵀW, one colour scale
    columns    the columns W_i in 2-D (PCA of the columns when m > 2), coloured by angle
    r2         per-feature R² of a linear decoder from h = Wx and of the model, threshold line
    loss       training loss of every seed, with a step cursor

The same contract as the RNN explorer's figures (`tempsup.figures`), for every
panel, seed and frame f:

    panel_figure(panel, run, seed, f)
        == go.Figure({"data": frame_traces(panel, run, seed, f),
                      "layout": panel_layout(panel, run, seed)})

`panel_layout` is fixed across frames; `moving_traces` lists the indices of
the traces that change; `all_frame_traces` computes every frame at once;
`animation_figure` / `export_html` put the four panels into one animated,
self-contained figure. `sweep_figure(runs)` draws a sweep over m (and weight
decay) from several runs. Seed None means the run's best seed.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from tempsup.bows.figures._common import frame_index, layout_from_parts, select
from tempsup.bows.figures._registry import PANELS
from tempsup.bows.figures._registry import module as _module
from tempsup.bows.figures.animation import animation_figure, export_html
from tempsup.bows.figures.sweep import export_sweep_html, sweep_figure
from tempsup.bows.run import BowsRun
from tempsup.palette import empty_figure

__all__ = [
    "PANELS",
    "all_frame_traces",
    "animation_figure",
    "empty_figure",
    "export_html",
    "export_sweep_html",
    "frame_traces",
    "moving_traces",
    "panel_figure",
    "panel_layout",
    "sweep_figure",
]


def frame_traces(
    panel: str, run: BowsRun, seed: int | None = None, frame: int = -1
) -> list[dict[str, Any]]:
    """The traces of one panel at one frame: plain JSON-able dicts."""
    mod, sel = _module(panel), select(run, seed)
    return mod.traces(sel, mod.prepare(sel), frame_index(run, frame))


def all_frame_traces(
    panel: str, run: BowsRun, seed: int | None = None, start: int = 0
) -> list[list[dict[str, Any]]]:
    """`frame_traces` for frames start … F-1, preparing the panel once."""
    mod, sel = _module(panel), select(run, seed)
    data = mod.prepare(sel)
    return [mod.traces(sel, data, f) for f in range(frame_index(run, start), run.n_frames)]


def moving_traces(panel: str, run: BowsRun, seed: int | None = None) -> list[int]:
    """Indices into `frame_traces` of the traces that change with the frame."""
    mod, sel = _module(panel), select(run, seed)
    return list(mod.parts(sel, mod.prepare(sel)).moving)


def panel_layout(panel: str, run: BowsRun, seed: int | None = None) -> dict:
    """The layout of one panel, fixed across frames: plain JSON, template included."""
    mod, sel = _module(panel), select(run, seed)
    parts = mod.parts(sel, mod.prepare(sel))
    return layout_from_parts(parts, f"{run.config.key}:{sel.seed}:{panel}")


def panel_figure(panel: str, run: BowsRun, seed: int | None = None, frame: int = -1) -> go.Figure:
    """The full figure of one panel at one frame (seed None = the run's best seed)."""
    return go.Figure(
        {"data": frame_traces(panel, run, seed, frame), "layout": panel_layout(panel, run, seed)}
    )
