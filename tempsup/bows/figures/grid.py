"""The authors' main figure: the covariance beside WᵀW/‖W‖² for three models at nine m.

One panel per matrix (`tempsup.bows.grid.Grid`, best seed of each point): the
covariance Σ of the training data first, then for each row of
`tempsup.bows.grid.ROWS` (linear at weight decay 1, ReLU at 1, ReLU at 6) the
normalised WᵀW at every bottleneck m. WᵀW/‖W‖² has trace 1, so its entries
are comparable across m and models: every WᵀW panel shares one colour scale,
[−L, L] with L the largest |entry| over all of them (the authors scale each
row by its own largest entry); Σ is divided by its own largest |entry|. The
hover shows the raw values.

`wide=True` is the authors' arrangement (rows = models, columns = Σ and m);
`wide=False` turns it for a phone's narrow screen (rows = m, columns = models,
Σ on top).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from tempsup.bows.grid import ROW_NAMES, ROWS, Grid
from tempsup.core.palette import DIVERGING, base_layout
from tempsup.figures._common import fmt, rnd


def grid_limit(grid: Grid) -> float:
    """L: the largest |entry| of WᵀW/‖W‖² over every drawn panel."""
    return max(float(np.abs(grid.normalised_gram(*row, m)).max()) for row in ROWS
               for m in grid.ms) or 1.0  # fmt: skip


def grid_panels(grid: Grid) -> list[tuple[str, int | None, str, np.ndarray]]:
    """(row name, m or None for Σ, hover name, raw matrix) of every panel, Σ first."""
    out: list[tuple[str, int | None, str, np.ndarray]] = [("", None, "covariance Σ", grid.cov)]
    for row in ROWS:
        for m in grid.ms:
            out.append((ROW_NAMES[row], m, f"{ROW_NAMES[row]}, m = {m}: WᵀW/‖W‖²",
                        grid.normalised_gram(*row, m)))  # fmt: skip
    return out


GAP = 2  # empty cells between two panels of the mosaic


def panel_position(grid: Grid, row_name: str, m: int | None, wide: bool) -> tuple[int, int]:
    """(row, column) of a panel in the arrangement: Σ in the middle row's first column
    (wide) or on top (narrow)."""
    if m is None:
        return (1, 0) if wide else (0, 1)
    i = [ROW_NAMES[row] for row in ROWS].index(row_name)
    j = list(grid.ms).index(m)
    return (i, j + 1) if wide else (j + 1, i)


def block(r: int, c: int, d: int, extra: int = 0) -> tuple[slice, slice]:
    """Where panel (r, c) of d × d sits in the mosaic's matrix: (rows, columns); rows
    after the first move down by `extra` more empty cells (room for labels)."""
    y0 = r * (d + GAP) + (extra if r >= 1 else 0)
    return slice(y0, y0 + d), slice(c * (d + GAP), c * (d + GAP) + d)


def grid_figure(grid: Grid, wide: bool = True, title: str = "") -> go.Figure:
    """The grid as one figure (wide: 3 rows × (Σ + 9 m); narrow: Σ, then 9 rows × 3).

    One heatmap holds every panel, a mosaic with empty cells between them (28 plots
    of their own would put ~3,000 elements in the page for its 28 small matrices);
    `layout.meta["panels"]` names each panel and its place, `block` finds its cells.
    """
    lim = grid_limit(grid)
    s_cov = float(np.abs(grid.cov).max()) or 1.0
    ms = list(grid.ms)
    d = grid.cov.shape[0]
    n_rows, n_cols = (len(ROWS), len(ms) + 1) if wide else (len(ms) + 1, len(ROWS))
    extra = 0 if wide else 4  # narrow: the models' names between Σ and the first m
    z = np.full((n_rows * (d + GAP) - GAP + extra, n_cols * (d + GAP) - GAP), np.nan)
    raw_all = np.full_like(z, np.nan)
    meta = []
    for row_name, m, name, raw in grid_panels(grid):
        r, c = panel_position(grid, row_name, m, wide)
        rows, cols = block(r, c, d, extra)
        z[rows, cols] = raw / (s_cov if m is None else lim)
        raw_all[rows, cols] = raw
        meta.append({"name": name, "row": r, "col": c, "y0": rows.start, "x0": cols.start})
    trace = {
        "type": "heatmap",
        "z": rnd(z),
        "customdata": rnd(raw_all),
        "coloraxis": "coloraxis",
        "hoverongaps": False,
        "hovertemplate": "value %{customdata}<extra></extra>",  # the panels' names label them
    }
    label = {"showarrow": False, "xref": "x", "yref": "y", "font": {"size": 12}}
    left = {**label, "xref": "paper", "x": 0, "xanchor": "right"}  # beside the first column
    above = {**label, "yref": "paper", "y": 1, "yanchor": "bottom"}  # over the first row
    mid = (d - 1) / 2
    notes = []
    if wide:
        for i, row in enumerate(ROWS):
            notes.append({**left, "text": ROW_NAMES[row].replace(", ", "<br>"),
                          "y": block(i, 0, d)[0].start + mid})  # fmt: skip
        for j, m in enumerate(ms):
            notes.append({**above, "text": f"m = {m}", "x": block(0, j + 1, d)[1].start + mid})
        notes.append({**label, "text": "covariance Σ", "x": mid,
                      "y": block(1, 0, d)[0].start - 0.6, "yanchor": "bottom"})  # fmt: skip
    else:
        under_sigma = block(1, 0, d, extra)[0].start - 0.6
        for i, row in enumerate(ROWS):
            notes.append({**label, "text": ROW_NAMES[row].replace(", ", "<br>"),
                          "x": block(0, i, d)[1].start + mid, "y": under_sigma,
                          "yanchor": "bottom"})  # fmt: skip
        for j, m in enumerate(ms):
            notes.append({**left, "text": f"m = {m}",
                          "y": block(j + 1, 0, d, extra)[0].start + mid})  # fmt: skip
        notes.append({**label, "text": "covariance Σ", "x": block(0, 1, d)[1].start - 1,
                      "y": mid, "xanchor": "right"})  # fmt: skip
    seeds = grid.spec.base.seeds
    title = title or (
        f"best of {seeds} seed{'s' if seeds != 1 else ''} per panel<br>WᵀW/‖W‖² ÷ {fmt(lim)} "
        f"(the largest |entry| of all), Σ ÷ {fmt(s_cov)}"
    )
    hidden = {"showgrid": False, "zeroline": False, "showticklabels": False, "ticks": "",
              "showline": False, "constrain": "domain"}  # fmt: skip
    layout = base_layout(
        title,
        height=330 if wide else 1150,
        margin={"l": 70 if wide else 46, "r": 10, "t": 90 if wide else 60, "b": 10},
        title_font_size=12,
        annotations=notes,
        meta={"panels": meta},
        xaxis={**hidden, "range": [-0.5, z.shape[1] - 0.5]},
        yaxis={**hidden, "range": [z.shape[0] - 0.5, -0.5], "scaleanchor": "x", "scaleratio": 1},
        coloraxis={
            "colorscale": DIVERGING,
            "cmin": -1,
            "cmax": 1,
            "showscale": wide,
            "colorbar": {"title": {"text": "÷ max"}, "thickness": 10, "len": 0.9},
        },
    )
    return go.Figure({"data": [trace], "layout": layout})
