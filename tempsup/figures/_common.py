"""What every panel shares: the selection (run, seed, feature), rounding, the panel parts.

A panel module provides two pure functions of a `Selection`:

    traces(sel, frame) -> list[dict]   the frame's traces, plain JSON (floats rounded to 4 digits)
    parts(sel) -> Parts                everything fixed across frames

`Parts` keeps the frame-independent pieces apart (axes, shapes, title), so the
same panel can become a whole figure (`panel_layout`) or one cell of the
animation's subplot grid (axes renamed, shapes re-referenced).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tempsup import gauge
from tempsup.errors import TempsupError
from tempsup.palette import CURSOR, LOSS, base_layout
from tempsup.run import Run

SIG_DIGITS = 4  # floats in figures: 4 significant digits keeps frames small and plots exact enough


@dataclass(frozen=True)
class Selection:
    """One seed and one input feature of a run: what a panel draws."""

    run: Run
    seed: int
    feature: int = 0

    @property
    def config(self):
        return self.run.config


@dataclass(frozen=True)
class Parts:
    """The frame-independent pieces of one panel.

    `axes` maps layout keys to axis settings: {"xaxis": …, "yaxis": …} for a
    2-D panel (a "scaleanchor" names the other axis by "x"/"y"), {"scene": …}
    for a 3-D one. Shapes refer to "x"/"y" (or "x domain"/"y domain").
    `moving` lists the indices of the traces that change with the frame; the
    others are identical in every frame (e.g. the loss history).
    """

    title: str
    axes: dict[str, dict[str, Any]]
    moving: tuple[int, ...]
    shapes: tuple[dict[str, Any], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # further layout keys (legend, …)


def select(run: Run, seed: int | None, feature: int = 0) -> Selection:
    """Validate the seed (None = the run's best) and the feature against the run."""
    n_seeds = int(run["loss"].shape[1])
    s = run.best if seed is None else seed
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < n_seeds:
        raise TempsupError(f"seed: expected an integer in [0, {n_seeds - 1}] or None, got {seed!r}")
    n_x = run.config.inputs
    if (
        isinstance(feature, bool)
        or not isinstance(feature, (int, np.integer))
        or not 0 <= feature < n_x
    ):
        raise TempsupError(f"feature: expected an integer in [0, {n_x - 1}], got {feature!r}")
    return Selection(run, int(s), int(feature))


# The last few canonical-gauge results, keyed by the run's W_h array (identity, not value):
# the directions and eigen panels of one view share one computation.
_CANONICAL: list[tuple[np.ndarray, int, dict[str, np.ndarray]]] = []
_CANONICAL_KEEP = 4


def canonical_weights(sel: Selection) -> dict[str, np.ndarray]:
    """Every frame of the selected seed in the canonical gauge (`tempsup.gauge.canonical`):
    "W_x", "W_h", "W_y", "b_y" as (F, ...) float arrays. Panels draw gauge-dependent things
    (arrows w_s, ‖w_0‖, kθ) from these, so two runs computing the same function look alike."""
    W_h = sel.run["W_h"]
    for arr, seed, cw in _CANONICAL:
        if arr is W_h and seed == sel.seed:
            return cw
    cfg, s = sel.config, sel.seed
    cw = gauge.canonical(
        sel.run["W_x"][:, s], W_h[:, s], sel.run["W_y"][:, s], sel.run["b_y"][:, s],
        cfg.k, cfg.relu_hidden, cfg.tied,
    )  # fmt: skip
    _CANONICAL.insert(0, (W_h, sel.seed, cw))
    del _CANONICAL[_CANONICAL_KEEP:]
    return cw


def frame_index(run: Run, frame: int) -> int:
    """A frame index in [0, F), accepting Python's negative indexing."""
    n = run.n_frames
    if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or not -n <= frame < n:
        raise TempsupError(f"frame: expected an integer in [{-n}, {n - 1}], got {frame!r}")
    return int(frame) % n


def rnd(x: Any) -> Any:
    """Plain-JSON copy of a number or array: SIG_DIGITS significant digits, NaN/inf -> None."""
    arr = np.asarray(x, dtype=float)
    flat = [
        float(f"{v:.{SIG_DIGITS}g}") if math.isfinite(v) else None for v in arr.ravel().tolist()
    ]
    if arr.ndim == 0:
        return flat[0]
    return np.array(flat, dtype=object).reshape(arr.shape).tolist()


def thin(n: int, limit: int) -> np.ndarray:
    """At most `limit` evenly spread indices of range(n), always the first and the last."""
    if n <= limit:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(int))


def feature_name(j: int) -> str:
    """Input features are A, B, C, … in decreasing importance (science.md §1)."""
    return chr(ord("A") + j) if j < 26 else f"x{j}"


def role(s: int, k: int) -> str:
    return "intermediate" if s < k else "output" if s == k else "old"


def n_ages(k: int) -> int:
    """Ages s = 0 … n-1 to draw: through k+3 (forgetting shows), at most 12 unless k needs more."""
    return max(min(k + 4, 12), k + 2)


def corner_text(text: str, x: float, y: float, name: str) -> dict[str, Any]:
    """A text-only trace (so frames can change it) anchored at data point (x, y), top left."""
    return {
        "type": "scatter",
        "x": [rnd(x)],
        "y": [rnd(y)],
        "mode": "text",
        "text": [text],
        "textposition": "bottom right",
        "textfont": {"size": 12, "color": "#333333"},
        "hoverinfo": "skip",
        "showlegend": False,
        "name": name,
    }


def fmt(v: float, digits: int = 3) -> str:
    return f"{v:.{digits}g}" if math.isfinite(v) else "n/a"


def layout_from_parts(parts: Parts, revision: str = "") -> dict[str, Any]:
    """A whole single-panel layout: base layout, title, axes, fixed shapes, legend below."""
    layout = base_layout(parts.title, **parts.axes)
    layout["margin"] = {"l": 60, "r": 20, "t": 80, "b": 110}  # the legend sits below the axes
    # at the bottom of the whole figure, not a fraction of the plot's height below it: on a
    # short panel (Compare) that fraction put the legend over the x-axis title
    layout["legend"] = {"orientation": "h", "x": 0, "xanchor": "left",
                        "yref": "container", "y": 0, "yanchor": "bottom"}  # fmt: skip
    if parts.shapes:
        layout["shapes"] = [dict(s) for s in parts.shapes]
    layout.update(parts.extra)
    if revision:
        layout["uirevision"] = revision  # keep zoom and the 3-D camera while scrubbing
    return layout


def uirevision(panel: str, sel: Selection) -> str:
    return f"{sel.config.key}:{sel.seed}:{sel.feature}:{panel}"


# ---- loss over training: the RNN's and the bows lab's loss panels ----------------------


def positive(v: Any) -> list:
    """Values for a log axis: non-positive ones become gaps (None)."""
    v = np.asarray(v, dtype=float)
    return rnd(np.where(v > 0, v, np.nan))


def log_range(values: np.ndarray, decades: int) -> list[float]:
    """A log axis range (log10 units) over the positive finite `values`, at most `decades`
    below the largest, padded by 0.1: one range for every frame, so the axis stays put."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    hi = float(values.max()) if values.size else 1.0
    lo = max(float(values.min()), hi * 10.0**-decades) if values.size else 0.1
    return [np.log10(lo) - 0.1, np.log10(hi) + 0.1]


def step_cursor(step: int, log_range: list[float], loss: Any) -> list[dict[str, Any]]:
    """The moving traces of a loss panel: a dashed line at the frame's `step` across the
    whole `log_range`, and a dot on the shown seed's `loss` (a 1-element array)."""
    lo, hi = (10.0**v for v in log_range)
    return [
        {
            "type": "scatter",
            "x": [step, step],
            "y": rnd([lo, hi]),
            "mode": "lines",
            "line": {"color": CURSOR, "width": 1.5, "dash": "dash"},
            "name": "current step",
            "showlegend": False,
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "x": [step],
            "y": positive(loss),
            "mode": "markers",
            "marker": {"color": LOSS, "size": 9},
            "name": "current loss",
            "showlegend": False,
            "hovertemplate": "step %{x}: loss %{y}<extra></extra>",
        },
    ]


def loss_axes(last: int, log_range: list[float], narrow_dtick: str | None = None) -> dict:
    """A loss panel's axes: training steps 0 … `last` (padded 2 %), the loss on a log axis
    labelled by decade when it spans more than 2.5 of them (else `narrow_dtick`, if any)."""
    pad = max(last, 1) * 0.02
    yaxis = {
        "type": "log",
        "range": rnd(log_range),
        "title": {"text": "loss"},
        "exponentformat": "power",
    }
    if log_range[1] - log_range[0] > 2.5:
        yaxis["dtick"] = 1
    elif narrow_dtick is not None:
        yaxis["dtick"] = narrow_dtick
    return {
        "xaxis": {"range": rnd([-pad, last + pad]), "title": {"text": "training step"}},
        "yaxis": yaxis,
    }
