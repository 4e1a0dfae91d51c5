"""The authors' main figure: the covariance beside WᵀW/‖W‖² for three models at nine m.

One heatmap per panel (`tempsup.bows.grid.Grid`, best seed of each point): the
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

from typing import Any

import numpy as np
import plotly.graph_objects as go

from tempsup.bows.grid import ROW_NAMES, ROWS, Grid
from tempsup.figures._common import fmt, rnd
from tempsup.palette import DIVERGING, base_layout


def grid_limit(grid: Grid) -> float:
    """L: the largest |entry| of WᵀW/‖W‖² over every drawn panel."""
    return max(float(np.abs(grid.normalised_gram(*row, m)).max()) for row in ROWS
               for m in grid.ms) or 1.0  # fmt: skip


def _panel(z: np.ndarray, raw: np.ndarray, name: str, k: int) -> dict[str, Any]:
    n = z.shape[0]
    suffix = "" if k == 1 else str(k)
    return {
        "type": "heatmap",
        "x": list(range(n)),
        "y": list(range(n)),
        "z": rnd(z),
        "customdata": rnd(raw),
        "coloraxis": "coloraxis",
        "name": name,
        "hovertemplate": f"{name}<br>[%{{y}}, %{{x}}] = %{{customdata}}<extra></extra>",
        "xaxis": "x" + suffix,
        "yaxis": "y" + suffix,
    }


def grid_panels(grid: Grid) -> list[tuple[str, int | None, str, np.ndarray]]:
    """(row name, m or None for Σ, hover name, raw matrix) of every panel, Σ first."""
    out: list[tuple[str, int | None, str, np.ndarray]] = [("", None, "covariance Σ", grid.cov)]
    for row in ROWS:
        for m in grid.ms:
            out.append((ROW_NAMES[row], m, f"{ROW_NAMES[row]}, m = {m}: WᵀW/‖W‖²",
                        grid.normalised_gram(*row, m)))  # fmt: skip
    return out


def grid_figure(grid: Grid, wide: bool = True, title: str = "") -> go.Figure:
    """The grid as one figure (wide: 3 rows × (Σ + 9 m); narrow: Σ, then 9 rows × 3)."""
    lim = grid_limit(grid)
    s_cov = float(np.abs(grid.cov).max()) or 1.0
    ms = list(grid.ms)
    n_rows, n_cols = (len(ROWS), len(ms) + 1) if wide else (len(ms) + 1, len(ROWS))
    gap_x, gap_y = (0.012, 0.05) if wide else (0.03, 0.012)
    left = 0.0
    width = (1.0 - left - gap_x * (n_cols - 1)) / n_cols
    label_gap = 0.0 if wide else 0.04  # narrow: room for the models' names under Σ
    height = (1.0 - gap_y * (n_rows - 1) - label_gap) / n_rows

    def top(r: int) -> float:
        return 1.0 - r * (height + gap_y) - (label_gap if r >= 1 else 0.0)

    data, layout_axes, notes = [], {}, []

    def place(k: int, r: int, c: int, n: int) -> None:
        x0 = left + c * (width + gap_x)
        y1 = top(r)
        suffix = "" if k == 1 else str(k)
        common = {"showgrid": False, "zeroline": False, "showticklabels": False,
                  "ticks": "", "constrain": "domain"}  # fmt: skip
        layout_axes["xaxis" + suffix] = {
            **common, "domain": [x0, x0 + width], "range": [-0.5, n - 0.5], "anchor": "y" + suffix,
        }  # fmt: skip
        layout_axes["yaxis" + suffix] = {
            **common, "domain": [y1 - height, y1], "range": [n - 0.5, -0.5],
            "anchor": "x" + suffix, "scaleanchor": "x" + suffix, "scaleratio": 1,
        }  # fmt: skip

    for k, (row_name, m, name, raw) in enumerate(grid_panels(grid), start=1):
        n = raw.shape[0]
        if m is None:
            r, c = (1, 0) if wide else (0, 1)
            z = raw / s_cov
        else:
            i, j = ROWS.index(next(row for row in ROWS if ROW_NAMES[row] == row_name)), ms.index(m)
            r, c = (i, j + 1) if wide else (j + 1, i)
            z = raw / lim
        data.append(_panel(z, raw, name, k))
        place(k, r, c, n)
    label = {"showarrow": False, "xref": "paper", "yref": "paper", "font": {"size": 12}}
    if wide:
        for i, row in enumerate(ROWS):
            y = top(i) - height / 2
            notes.append({**label, "text": ROW_NAMES[row].replace(", ", "<br>"), "x": -0.005,
                          "y": y, "xanchor": "right", "textangle": 0})  # fmt: skip
        for j, m in enumerate(ms):
            x = left + (j + 1) * (width + gap_x) + width / 2
            notes.append({**label, "text": f"m = {m}", "x": x, "y": 1.0, "yanchor": "bottom"})
        notes.append({**label, "text": "covariance Σ", "x": left + width / 2,
                      "y": top(1), "yanchor": "bottom"})  # fmt: skip
    else:
        for i, row in enumerate(ROWS):
            x = left + i * (width + gap_x) + width / 2
            notes.append({**label, "text": ROW_NAMES[row].replace(", ", "<br>"), "x": x,
                          "y": top(1), "yanchor": "bottom"})  # fmt: skip
        for j, m in enumerate(ms):
            y = top(j + 1) - height / 2
            notes.append({**label, "text": f"m = {m}", "x": -0.01, "y": y, "xanchor": "right"})
        notes.append({**label, "text": "covariance Σ", "x": left + 1 * (width + gap_x) - gap_x,
                      "y": 1.0 - height / 2, "xanchor": "right"})  # fmt: skip
    seeds = grid.spec.base.seeds
    title = title or (
        f"best of {seeds} seed{'s' if seeds != 1 else ''} per panel<br>WᵀW/‖W‖² ÷ {fmt(lim)} "
        f"(the largest |entry| of all), Σ ÷ {fmt(s_cov)}"
    )
    layout = base_layout(
        title,
        height=330 if wide else 1150,
        margin={"l": 70 if wide else 46, "r": 10, "t": 70 if wide else 80, "b": 10},
        title_font_size=12,
        annotations=notes,
        coloraxis={
            "colorscale": DIVERGING,
            "cmin": -1,
            "cmax": 1,
            "showscale": wide,
            "colorbar": {"title": {"text": "÷ max"}, "thickness": 10, "len": 0.9},
        },
        **layout_axes,
    )
    return go.Figure({"data": data, "layout": layout})
