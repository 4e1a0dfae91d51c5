"""The sweep over the bottleneck m: from the covariance's PCA circle to antipodal pairs.

Top: WᵀW of the final frame (best seed) for every (weight decay, m) point, one
row per weight decay, each matrix ÷ its largest |entry| on one colour scale:
the banded circulant of the PCA circle at small m, the −1 off-diagonals of
antipodal pairs at larger m, and what weight decay does to the switch.
Bottom: the claims' numbers against m (`tempsup.bows.analysis`): (a) PCA
overlap, (b) the fraction of features in isolated antipodal pairs and (c) the
circle score, one line style per weight decay; what each letter measures is
printed above the lines (`MEASURE_NOTES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from tempsup.bows import analysis
from tempsup.bows.figures._common import LINEAR_R2, MODEL_R2, THRESHOLD
from tempsup.bows.run import BowsRun
from tempsup.core.palette import DIVERGING, base_layout
from tempsup.errors import TempsupError
from tempsup.figures._common import rnd

# The claims' measures (`tempsup.bows.analysis`), lettered as the lab's three claims: (a) a
# small m keeps the covariance's PCA circle, (b) a larger m pairs features antipodally,
# (c) the circle comes from the correlations (the i.i.d. control has none).
MEASURES = (
    ("pca_overlap", "(a) PCA overlap", LINEAR_R2),
    ("paired_fraction", "(b) isolated antipodal pairs", MODEL_R2),
    ("circle_score", "(c) circle score", THRESHOLD),
)
# What each letter measures, printed with the lines and on the lab page (plain text: both).
MEASURE_NOTES = (
    "(a) PCA overlap: the data variance W's row space keeps ÷ that of the covariance's "
    "top-m principal components (1: the PCA circle)",
    "(b) isolated antipodal pairs: the fraction of features whose most opposite column has "
    "cos < −0.8 while every other |cos| < 0.5",
    "(c) circle score: the correlation over feature pairs of cos(Wᵢ, Wⱼ) with cos(φᵢ − φⱼ) "
    "(1: the columns sit on the data's circle)",
)
DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
GRID_BOTTOM = 0.5  # the heatmap grid fills y in [GRID_BOTTOM, 1]
LINES_TOP = 0.32  # the lines fill y in [0, LINES_TOP]; the letters' notes sit between
LEGEND_GAP = 60  # px from the lines' axis to the legend: below the axis title, not on it
MARGIN = {"l": 70, "r": 90, "t": 90}


def sweep_points(runs: Sequence[BowsRun]) -> tuple[list[float], list[int]]:
    """The sweep's weight decays and bottlenecks, sorted."""
    if not runs:
        raise TempsupError("sweep figure: expected at least one run, got none")
    wds = sorted({float(r.config.weight_decay) for r in runs})
    ms = sorted({int(r.config.m) for r in runs})
    return wds, ms


def sweep_figure(runs: Sequence[BowsRun]) -> go.Figure:
    """WᵀW per (weight decay, m) above the claims' numbers against m."""
    wds, ms = sweep_points(runs)
    by_point = {(float(r.config.weight_decay), int(r.config.m)): r for r in runs}
    rows, cols = len(wds), len(ms)
    gap_x, gap_y = 0.02, 0.04
    cell_w = (1.0 - gap_x * (cols - 1)) / cols
    cell_h = (1.0 - GRID_BOTTOM - gap_y * rows) / rows
    height = max(580, 230 * rows + 480)
    bottom = LEGEND_GAP + 22 * rows + 10  # the legend: about one row per weight decay
    plot_height = height - MARGIN["t"] - bottom
    layout: dict[str, Any] = base_layout(
        "Sweep over the bottleneck m: WᵀW of the best seed (one row per weight decay)",
        height=height,
        margin={**MARGIN, "b": bottom},
        coloraxis={
            "colorscale": DIVERGING,
            "cmin": -1,
            "cmax": 1,
            "colorbar": {
                "title": {"text": "÷ max"},
                "thickness": 12,
                "len": 1 - GRID_BOTTOM,
                "y": (1 + GRID_BOTTOM) / 2,
            },
        },
        legend={"orientation": "h", "x": 0, "y": -LEGEND_GAP / plot_height, "yanchor": "top"},
    )
    data: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    n = 0
    for i, wd in enumerate(wds):
        y1 = 1.0 - gap_y - i * (cell_h + gap_y)
        for j, m in enumerate(ms):
            n += 1
            x0 = j * (cell_w + gap_x)
            ax, ay = ("", "") if n == 1 else (str(n), str(n))
            run = by_point.get((wd, m))
            layout["xaxis" + ax] = {
                "domain": [x0, x0 + cell_w], "anchor": "y" + ay, "visible": False,
                "constrain": "domain",
            }  # fmt: skip
            layout["yaxis" + ay] = {
                "domain": [y1 - cell_h, y1], "anchor": "x" + ax, "visible": False,
                "autorange": "reversed", "scaleanchor": "x" + ax, "constrain": "domain",
            }  # fmt: skip
            if i == 0:
                annotations.append(_label(f"m = {m}", x0 + cell_w / 2, 1.0, "center", "bottom"))
            if run is None:
                continue
            G = analysis.gram(run.weights()["W"])
            scale = float(np.abs(G).max()) or 1.0
            data.append(
                {
                    "type": "heatmap",
                    "z": rnd(G / scale),
                    "customdata": rnd(G),
                    "coloraxis": "coloraxis",
                    "xaxis": "x" + ax,
                    "yaxis": "y" + ay,
                    "name": f"m = {m}, wd = {wd:g}",
                    "hovertemplate": f"m = {m}, wd = {wd:g}: WᵀW[%{{y}}, %{{x}}] = "
                    "%{customdata}<extra></extra>",
                }
            )
        annotations.append(
            _label(f"wd = {wd:g}", -0.01, y1 - cell_h / 2, "right", "middle", angle=-90)
        )
    axes, lines = _measure_lines(by_point, wds, ms, n + 1)
    layout.update(axes)
    data.extend(lines)
    title = "<b>The claims' numbers against m</b> (best seed, final frame)"
    annotations.append(
        _label("<br>".join((title, *MEASURE_NOTES)), 0, LINES_TOP + 0.02, "left", "bottom")
    )
    layout["annotations"] = annotations
    return go.Figure({"data": data, "layout": layout})


def _measure_lines(
    by_point: dict[tuple[float, int], BowsRun], wds: Sequence[float], ms: Sequence[int], nx: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The lower plot's axes (number `nx`) and its lines: each claim's measure against m,
    one dash per weight decay."""
    layout: dict[str, Any] = {}
    data: list[dict[str, Any]] = []
    layout[f"xaxis{nx}"] = {
        "domain": [0, 1],
        "anchor": f"y{nx}",
        "title": {"text": "bottleneck m"},
        "tickmode": "array",
        "tickvals": ms,
        "range": [min(ms) - 0.5, max(ms) + 0.5],
    }
    layout[f"yaxis{nx}"] = {
        "domain": [0, LINES_TOP],
        "anchor": f"x{nx}",
        "range": [-0.05, 1.05],
        "title": {"text": "measure"},
    }
    for k, wd in enumerate(wds):
        summaries = {m: by_point[(wd, m)].summary() for m in ms if (wd, m) in by_point}
        for key, label, colour in MEASURES:
            xs = sorted(summaries)
            data.append(
                {
                    "type": "scatter",
                    "x": xs,
                    "y": rnd([summaries[m][key] for m in xs]),
                    "mode": "lines+markers",
                    "line": {"color": colour, "dash": DASHES[k % len(DASHES)], "width": 2},
                    "marker": {"size": 7},
                    "name": f"{label}, wd = {wd:g}",
                    "xaxis": f"x{nx}",
                    "yaxis": f"y{nx}",
                    "hovertemplate": f"m = %{{x}}: {label} = %{{y}} (wd = {wd:g})<extra></extra>",
                }
            )
    return layout, data


def _label(text: str, x: float, y: float, xa: str, ya: str, angle: float = 0) -> dict[str, Any]:
    return {
        "text": text,
        "xref": "paper",
        "yref": "paper",
        "x": x,
        "y": y,
        "xanchor": xa,
        "yanchor": ya,
        "showarrow": False,
        "textangle": angle,
        "align": xa if xa in ("left", "right") else "center",
        "font": {"size": 12},
    }


def export_sweep_html(runs: Sequence[BowsRun]) -> str:
    """A standalone page with the sweep figure and one table row per point."""
    import html

    from tempsup.bows.figures.animation import page
    from tempsup.bows.run import TABLE_COLUMNS

    cols = [c for c in TABLE_COLUMNS if c != "file"]
    rows = [r.summary() for r in runs]

    def cell(v: object) -> str:
        return html.escape(f"{v:.3g}" if isinstance(v, float) else str(v))

    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td>{cell(r.get(c, ''))}</td>" for c in cols) + "</tr>" for r in rows
    )
    return page(
        "tempsup bows sweep over m",
        sweep_figure(runs).to_plotly_json(),
        config=f"<h2>Points (best seed, final frame)</h2><table><tr>{head}</tr>{body}</table>",
        div_id="tempsup-bows-sweep",
    )
