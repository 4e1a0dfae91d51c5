"""Figure pieces that several presets' summary figures share (plotly, no Dash)."""

from __future__ import annotations

import plotly.graph_objects as go

from tempsup.analysis.measures import sorted_by
from tempsup.core.palette import base_layout
from tempsup.io.run import Run


def against_sparsity(runs: dict[str, Run], y: list[float], title: str, name: str) -> go.Figure:
    """One number per run (its best seed's, by increasing sparsity) against sparsity."""
    fig = go.Figure(layout=base_layout(title))
    S = [runs[lab].config.sparsity for lab in sorted_by(runs, "sparsity")]
    fig.add_scatter(x=S, y=y, mode="lines+markers", name=name)
    fig.update_xaxes(title="sparsity S")
    return fig
