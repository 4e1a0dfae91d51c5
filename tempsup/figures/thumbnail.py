"""A card's picture: one panel of a run's final frame, or a preset's own figure across
its runs, small and static.

Shared by the gallery and the static site. Which run and which picture a card shows is
the preset's choice (`tempsup.paper.presets.thumbnail_choice`), so two cards whose
claims rest on the same run still show different things. At card size a note inside
the plot is cut off at the plot's edge, so the panel's corner notes come back as text
for a caption.
"""

from __future__ import annotations

import re
from typing import Any

import plotly.graph_objects as go

from tempsup import figures
from tempsup.io.run import Run

THUMB_HEIGHT = 260  # px: a card's picture
THUMB_CELL_TEXT = 5  # heatmaps print their values in the cells up to N_x = 5 at card size


def default_panel(run: Run) -> str:
    """The panel a card shows when its preset names none: the heatmap for vector input."""
    return "projections" if run.config.inputs > 1 else "directions"


def thumbnail(run: Run, panel: str | None = None) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A small static picture of one panel (`default_panel` when None) of a run's final
    frame (plain JSON), and the panel's corner notes (e.g. how many directions are
    interference-free) as text for a caption: at card size a note inside the plot is cut
    off at the plot's edge."""
    fig = figures.panel_figure(panel or default_panel(run), run)
    texts = [t for t in fig.data if getattr(t, "mode", None) == "text"]
    notes = tuple(plain(t.text[0]) for t in texts if t.text)
    fig.data = [t for t in fig.data if t not in texts]
    if run.config.inputs > THUMB_CELL_TEXT:  # a value per cell is unreadable here: colours only
        fig.update_traces(texttemplate=None, selector={"type": "heatmap"})
    fig.update_traces(colorbar={"thickness": 8, "len": 0.9}, selector={"type": "heatmap"})
    if run.config.inputs > 1:  # every feature named, small
        fig.update_xaxes(dtick=1, tickfont={"size": 9}, title={"font": {"size": 11}})
        fig.update_yaxes(dtick=1, tickfont={"size": 9}, title={"font": {"size": 11}})
    fig.update_layout(showlegend=False, title=None, margin={"l": 40, "r": 10, "t": 10, "b": 40},
                      height=THUMB_HEIGHT, annotations=[])  # fmt: skip
    return fig.to_plotly_json(), notes


def figure_thumbnail(fig: go.Figure) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A preset's own figure across its runs (`Preset.summary_figure`) at card size, its
    title as the caption (a card has no room for a title inside the plot)."""
    fig = go.Figure(fig)
    title = fig.layout.title.text or ""
    fig.update_traces(colorbar={"thickness": 8, "len": 0.9}, selector={"type": "heatmap"})
    fig.update_xaxes(tickfont={"size": 9}, title={"font": {"size": 11}})
    fig.update_yaxes(tickfont={"size": 9}, title={"font": {"size": 11}})
    fig.update_layout(showlegend=False, title=None, margin={"l": 40, "r": 10, "t": 10, "b": 40},
                      height=THUMB_HEIGHT, width=None)  # fmt: skip
    return fig.to_plotly_json(), (plain(title),) if title else ()


def plain(text: str) -> str:
    """A figure's rich text as plain text: line breaks as spaces, w<sub>y</sub> as w_y."""
    text = re.sub(r"<br\s*/?>", " ", text)
    text = re.sub(r"<sub>(.*?)</sub>", r"_\1", text)
    return re.sub(r"<[^>]+>", "", text)
