"""The phase diagram: the swept angle kθ and the spectral radius against sparsity.

science.md §1: for the SSM the angle swept from w_0 to w_k jumps from ≈ 90°
(dense) to ≈ 270° (sparse) and the spectral radius drops. One marker per
sweep point (its best seed), labelled with how many seeds reached a low loss;
`customdata` carries the point's index so a click can open that run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tempsup.core.palette import READOUT, ROLE_COLORS, TEMPLATE

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
