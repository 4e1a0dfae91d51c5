"""Figures of the correlated-features lab: pure functions from a `BowsRun` to Plotly figures.

No Dash here (style.md §5); the app and the HTML export share them. Panels
(science.md §2), one module each:

    matrices   the data covariance Σ beside WᵀW, one colour scale
    columns    the columns W_i in 2-D (PCA of the columns when m > 2), coloured by angle
    r2         per-feature R² of a linear decoder from h = Wx and of the model, threshold line
    loss       training loss of every seed, with a step cursor

`PANEL_SET` (`lab.py`) puts them behind the panel protocol of the RNN explorer's figures
(`tempsup.figures.panel`): `PANEL_SET.frame_traces`, `.panel_layout`, `.panel_figure`, …
draw any panel, with the same contract.
`animation_figure` / `export_html` put the four panels into one animated, self-contained
figure; `sweep_figure(runs)` draws a sweep over m (and weight decay) from several runs;
`grid.grid_figure(grid)` the authors' main figure (`tempsup.bows.grid`).
Seed None means the run's best seed.
"""

from __future__ import annotations

from tempsup.bows.figures.animation import animation_figure, export_html
from tempsup.bows.figures.lab import PANEL_SET, PANELS, status_lines
from tempsup.bows.figures.sweep import export_sweep_html, sweep_figure
from tempsup.core.palette import empty_figure

__all__ = [
    "PANELS",
    "PANEL_SET",
    "animation_figure",
    "empty_figure",
    "export_html",
    "export_sweep_html",
    "status_lines",
    "sweep_figure",
]
