"""One palette, one page style and one empty-state figure for every tempsup figure.

The dashboard panels, the animation and the HTML export all take their colours
from here, so an intermediate feature direction (s < k) is the same blue in
the directions panel, the projections bars and the legend of the export.
Colours are Okabe–Ito (distinguishable with the common colour-vision
deficiencies). Figures use `TEMPLATE`, a small explicit template rather than a
named one, so a layout dict sent straight to the browser (the app swaps
`figure["data"]` client-side) renders exactly like the `go.Figure` built from
it in Python.
"""

from __future__ import annotations

from typing import Any

import plotly.colors
import plotly.graph_objects as go

# ---- feature roles (science.md §1 "Feature directions") ------------------------------

ROLES = ("intermediate", "output", "old")
ROLE_COLORS = {
    "intermediate": "#0072B2",  # blue: still needed (s < k)
    "output": "#D55E00",  # vermillion: the one the readout must see (s = k)
    "old": "#9A9A9A",  # grey: task-irrelevant, should be forgotten (s > k)
}
ROLE_LABELS = {
    "intermediate": "intermediate (s < k)",
    "output": "output (s = k)",
    "old": "old (s > k)",
}
# Input features A, B, C, … (vector input): each its own colour, A in the output role's
# vermillion so a one-feature picture and feature A's look the same. Okabe–Ito first, then
# Paul Tol's muted colours (both readable with the common colour-vision deficiencies); no
# role blue, role grey or readout black among them. Cycled beyond ten features.
FEATURE_COLORS = (
    "#D55E00",  # A vermillion
    "#E69F00",  # B orange
    "#009E73",  # C bluish green
    "#CC79A7",  # D reddish purple
    "#56B4E9",  # E sky blue
    "#882255",  # F wine
    "#999933",  # G olive
    "#44AA99",  # H teal
    "#AA4499",  # I purple
    "#DDCC77",  # J sand
)


def feature_color(j: int) -> str:
    """Feature j's colour (the palette cycles beyond ten features)."""
    return FEATURE_COLORS[j % len(FEATURE_COLORS)]


READOUT = "#111111"  # w_y: drawn dashed black, on top of everything
HALF_SPACE = "rgba(0, 158, 115, 0.13)"  # interference-free half-space fill (bluish green)
HALF_SPACE_EDGE = "rgba(0, 158, 115, 0.55)"

# ---- loss panel -----------------------------------------------------------------------

LOSS = "#111111"  # measured loss of the shown seed
EXPECTED = "#D55E00"  # the expected loss E[L] (Okabe–Ito vermillion)
REMAINDER = "#999999"  # E[L] minus the four terms: third order and up
OTHER_SEEDS = "rgba(120, 120, 120, 0.35)"  # measured loss of the other seeds, faint
TERM_COLORS = {  # keyed by tempsup.io.run.TERM_NAMES
    "task": "#E69F00",
    "mean correction": "#56B4E9",
    "projection interference": "#CC79A7",
    "composition interference": "#009E73",
}
CURSOR = "rgba(60, 60, 60, 0.75)"  # the current frame's step
# What captions call the loss panel's colours (tempsup.analysis.captions reads them from here, so a
# caption names the colour a curve really has). Black is drawn white in dark mode.
COLOR_NAMES = {
    LOSS: "black",
    EXPECTED: "vermillion",
    REMAINDER: "grey",
    OTHER_SEEDS: "faint grey",
    TERM_COLORS["task"]: "orange",
    TERM_COLORS["mean correction"]: "sky blue",
    TERM_COLORS["projection interference"]: "reddish purple",
    TERM_COLORS["composition interference"]: "bluish green",
}

# ---- eigenvalues and heatmaps ---------------------------------------------------------

EIGEN = "#0072B2"
EIGEN_PATH = "rgba(0, 114, 178, 0.2)"  # eigenvalues of earlier frames
UNIT_CIRCLE = "#888888"
# projections heatmap: red positive, blue negative, white at 0. Written out as a list:
# plotly.js knows no "RdBu_r" by name, and a figure sent to the browser as plain JSON
# would silently fall back to its default scale.
DIVERGING = [[x, c] for x, c in plotly.colors.get_colorscale("RdBu_r")]

FONT = dict(family="Inter, 'Helvetica Neue', Arial, sans-serif", size=13, color="#222222")
_AXIS = dict(
    gridcolor="#ececec",
    zerolinecolor="#bdbdbd",
    linecolor="#9a9a9a",
    showline=True,
    ticks="outside",
    tickcolor="#9a9a9a",
    automargin=True,
)
_SCENE_AXIS = dict(
    backgroundcolor="white", gridcolor="#e4e4e4", zerolinecolor="#aaaaaa", showbackground=True
)
TEMPLATE: dict[str, Any] = {
    "layout": {
        "font": FONT,
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "colorway": ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"],
        "xaxis": _AXIS,
        "yaxis": _AXIS,
        "scene": {"xaxis": _SCENE_AXIS, "yaxis": _SCENE_AXIS, "zaxis": _SCENE_AXIS},
        "legend": {"bgcolor": "rgba(255, 255, 255, 0.85)", "font": {"size": 11}},
        "hoverlabel": {"font": {"size": 12}},
        "title": {"x": 0.02, "xanchor": "left", "font": {"size": 15}},
    }
}

# ---- dark mode -------------------------------------------------------------------------
# The browser redraws every plot with these when the system prefers a dark scheme
# (assets/tempsup.js; the figures themselves stay light, so exports and the static
# site look the same everywhere). `layout` goes over a figure's layout, every axis
# and 3-D scene; `colors` swaps the near-black and near-white colours of traces,
# shapes and notes, which would vanish on a dark background. The role and term
# colours are Okabe–Ito and stay as they are: they read on dark too.
_DARK_AXIS = {"gridcolor": "#2f3642", "zerolinecolor": "#59616e", "linecolor": "#7a8391",
              "tickcolor": "#7a8391"}  # fmt: skip
_DARK_SCENE_AXIS = {**_DARK_AXIS, "backgroundcolor": "#171b22"}
DARK: dict[str, Any] = {
    "layout": {
        "paper_bgcolor": "#171b22",
        "plot_bgcolor": "#171b22",
        "font": {"color": "#e4e7ec"},
        "legend": {"bgcolor": "rgba(23, 27, 34, 0.85)"},
    },
    "axis": _DARK_AXIS,
    "scene_axis": _DARK_SCENE_AXIS,
    "colors": {
        READOUT: "#f2f2f2",
        "#222222": "#e4e7ec",
        "#333333": "#d0d5dd",
        "#666666": "#a9b1bd",
        "#667": "#a9b1bd",
        CURSOR: "rgba(220, 220, 220, 0.75)",
        OTHER_SEEDS: "rgba(190, 190, 190, 0.35)",
        "white": "#171b22",
        "#ffffff": "#171b22",
    },
}


def base_layout(title: str = "", **overrides: Any) -> dict[str, Any]:
    """The layout every tempsup figure starts from (plain JSON, no numpy)."""
    layout: dict[str, Any] = {
        "template": TEMPLATE,
        "margin": {"l": 60, "r": 20, "t": 70, "b": 50},
        "hovermode": "closest",
    }
    if title:
        layout["title"] = {"text": title}
    layout.update(overrides)
    return layout


def empty_figure(message: str) -> go.Figure:
    """The one "nothing to show yet" figure: a centred message, no axes."""
    return go.Figure(
        layout=base_layout(
            xaxis={"visible": False},
            yaxis={"visible": False},
            annotations=[
                {
                    "text": message,
                    "xref": "paper",
                    "yref": "paper",
                    "x": 0.5,
                    "y": 0.5,
                    "showarrow": False,
                    "font": {"size": 15, "color": "#666666"},
                }
            ],
            margin={"l": 20, "r": 20, "t": 20, "b": 20},
        )
    )
