"""The phase diagram: the swept angle kθ and the spectral radius against sparsity (and q).

science.md §1: for the SSM the angle swept from w_0 to w_k jumps from ≈ 90°
(dense) to ≈ 270° (sparse) and the spectral radius drops. One marker per
sweep point (its best seed), labelled with how many seeds reached a low loss;
`customdata` carries the point's index so a click can open that run.

A sweep over several persistences q (inputs correlated in time, issue 43) is drawn as a
map over (S, q) instead (`phase_map_figure`): the same best-seed numbers, one cell per
point, so the basin switch reads as a boundary across the grid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tempsup.core.palette import DIVERGING, READOUT, ROLE_COLORS, TEMPLATE

# Reference levels of the paper's two regimes.
DENSE_ANGLE, SPARSE_ANGLE = 90.0, 270.0


def phase_figure(
    sparsity: Sequence[float],
    k: Sequence[int],
    summary: Mapping[str, Sequence[float]],
    seeds: int,
    title: str = "",
) -> go.Figure:
    """Two stacked panels over sparsity, one line per k.

    `summary` holds, per point, "swept_angle_deg", "spectral_radius",
    "w0_norm" and "successes" (a sweep frame or the sweep's table).
    """
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=(
            "|kθ|: angle swept from w_0 to w_k (best seed, minimum-norm gauge)",
            "ρ(W_h) (gauge-free) and ‖w_0‖ (minimum-norm gauge)",
        ),
    )
    s = np.asarray(sparsity, dtype=float)
    ks = np.asarray(k, dtype=int)
    angle = np.abs(np.asarray(summary["swept_angle_deg"], dtype=float))
    rho = np.asarray(summary["spectral_radius"], dtype=float)
    w0 = np.asarray(summary["w0_norm"], dtype=float)
    ok = np.asarray(summary["successes"], dtype=int)
    for level, name in ((DENSE_ANGLE, "dense ≈ 90°"), (SPARSE_ANGLE, "sparse ≈ 270°")):
        fig.add_hline(
            y=level,
            line={"dash": "dot", "color": "#999"},
            row=1,
            col=1,
            annotation_text=name,
            annotation_position="top left",
        )
    dashes = ("solid", "dash", "dot", "dashdot")
    for j, kk in enumerate(sorted(set(ks.tolist()))):
        sel = np.flatnonzero(ks == kk)
        order = sel[np.argsort(s[sel])]
        idx = order.tolist()
        labels = [f"{ok[i]}/{seeds}" for i in idx]
        hover = [
            f"S = {s[i]:.3g}, k = {kk}<br>|kθ| = {angle[i]:.0f}°, ρ = {rho[i]:.3f}, "
            f"‖w_0‖ = {w0[i]:.3f}<br>{ok[i]}/{seeds} seeds succeeded<br>click to open"
            for i in idx
        ]
        dash = dashes[j % len(dashes)]
        fig.add_trace(
            go.Scatter(
                x=s[idx], y=angle[idx], mode="lines+markers+text", text=labels,
                textposition="top center", name=f"|kθ|, k = {kk}",
                line={"color": ROLE_COLORS["output"], "dash": dash},
                marker={"size": 9 + 9 * ok[idx] / max(seeds, 1)},
                customdata=idx, hovertext=hover, hoverinfo="text",
            ),
            row=1, col=1,
        )  # fmt: skip
        for values, name, color in ((rho, "ρ(W_h)", ROLE_COLORS["intermediate"]),
                                    (w0, "‖w_0‖", READOUT)):  # fmt: skip
            fig.add_trace(
                go.Scatter(
                    x=s[idx], y=values[idx], mode="lines+markers", name=f"{name}, k = {kk}",
                    line={"color": color, "dash": dash}, customdata=idx, hovertext=hover,
                    hoverinfo="text",
                ),
                row=2, col=1,
            )  # fmt: skip
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title} if title else None,
        margin={"l": 60, "r": 20, "t": 70, "b": 50},
        legend={"orientation": "h", "y": -0.12},
        clickmode="event",
        uirevision="phase",
    )
    fig.update_xaxes(title_text="sparsity S", row=2, col=1)
    top = float(np.nanmax(angle)) if angle.size and np.isfinite(angle).any() else 0.0
    fig.update_yaxes(title_text="degrees", range=[0, max(SPARSE_ANGLE, top) + 40], row=1, col=1)
    return fig


def _cells(
    s: np.ndarray, q: np.ndarray, sel: np.ndarray, values: np.ndarray
) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """One k's points as a grid: x labels (sparsity), y labels (persistence), the values
    (q rows × S columns, NaN where no point) and the point indices (-1 where none)."""
    xs, ys = sorted(set(s[sel].tolist())), sorted(set(q[sel].tolist()))
    z = np.full((len(ys), len(xs)), np.nan)
    index = np.full((len(ys), len(xs)), -1, dtype=int)
    for i in sel.tolist():
        r, c = ys.index(q[i]), xs.index(s[i])
        z[r, c], index[r, c] = values[i], i
    return [f"{x:g}" for x in xs], [f"{y:g}" for y in ys], z, index


def phase_map_figure(
    sparsity: Sequence[float],
    k: Sequence[int],
    persistence: Sequence[float],
    summary: Mapping[str, Sequence[float]],
    seeds: int,
    relu_hidden: bool = False,
    title: str = "",
) -> go.Figure:
    """The phase diagram over (S, q): heatmaps, sparsity across, persistence up, one column
    per k. Top: the best seed's |kθ| (the SSM's ≈ 90° / ≈ 270° basins); bottom: for the
    ReLU RNN (`relu_hidden`) its count of directions in the interference-free half-space,
    else ρ(W_h). Each cell says its value and how many seeds succeeded; `customdata`
    carries the point's index so a click can open that run."""
    s, q = np.asarray(sparsity, dtype=float), np.asarray(persistence, dtype=float)
    ks = np.asarray(k, dtype=int)
    angle = np.abs(np.asarray(summary["swept_angle_deg"], dtype=float))
    rho = np.asarray(summary["spectral_radius"], dtype=float)
    ok = np.asarray(summary["successes"], dtype=int)
    second = (
        ("n_interference_free", "directions in the interference-free half-space", "{:.0f}")
        if relu_hidden
        else ("spectral_radius", "ρ(W_h) (gauge-free)", "{:.2f}")
    )
    lower = np.asarray(summary[second[0]], dtype=float)
    k_values = sorted(set(ks.tolist()))

    def point_hover(i: int, kk: int) -> str:
        if i < 0:
            return ""
        extra = f", half-space: {lower[i]:g}" if relu_hidden else ""
        return (
            f"S = {s[i]:g}, q = {q[i]:g}, k = {kk}<br>|kθ| = {angle[i]:.0f}°, "
            f"ρ = {rho[i]:.3f}{extra}<br>{ok[i]}/{seeds} seeds succeeded<br>click to open"
        )

    fig = make_subplots(
        rows=2, cols=len(k_values), shared_yaxes=True, vertical_spacing=0.14,
        horizontal_spacing=0.04,
        subplot_titles=[
            *(f"|kθ| (best seed), k = {kk}" for kk in k_values),
            *(f"{second[1]}, k = {kk}" for kk in k_values),
        ],
    )  # fmt: skip
    rows = ((angle, "{:.0f}°", "coloraxis"), (lower, second[2], "coloraxis2"))
    for col, kk in enumerate(k_values, start=1):
        sel = np.flatnonzero(ks == kk)
        for row, (values, fmt, axis) in enumerate(rows, start=1):
            xs, ys, z, index = _cells(s, q, sel, values)
            text = [
                ["" if i < 0 else f"{fmt.format(values[i])}<br>{ok[i]}/{seeds}" for i in line]
                for line in index
            ]
            hover = [[point_hover(i, kk) for i in line] for line in index]
            fig.add_trace(
                go.Heatmap(
                    x=xs, y=ys, z=z, customdata=index, text=text, texttemplate="%{text}",
                    hovertext=hover, hoverinfo="text", coloraxis=axis, xgap=2, ygap=2,
                ),
                row=row, col=col,
            )  # fmt: skip
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title} if title else None,
        margin={"l": 60, "r": 20, "t": 70, "b": 50},
        coloraxis={
            "colorscale": DIVERGING, "cmin": 0, "cmax": 360,
            "colorbar": {"title": {"text": "|kθ|°"}, "len": 0.42, "y": 0.79},
        },
        coloraxis2={
            "colorscale": "Viridis", "cmin": 0,
            "colorbar": {"title": {"text": "count" if relu_hidden else "ρ"}, "len": 0.42,
                         "y": 0.21},
        },
        clickmode="event",
        uirevision="phase",
    )  # fmt: skip
    fig.update_xaxes(title_text="sparsity S", type="category", row=2)
    fig.update_xaxes(type="category", row=1)
    fig.update_yaxes(title_text="persistence q", type="category", col=1)
    return fig
