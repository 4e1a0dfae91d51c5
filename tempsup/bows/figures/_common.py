"""What the correlated-features panels share: the selection of a seed, colours, labels and
the features a panel shows. The panel protocol (`prepare`, `traces`, `parts`) is
`tempsup.figures.panel`, shared with the RNN panels; a panel here may use several axis
pairs ("x"/"y" and "x2"/"y2": the matrices panel draws the covariance beside WᵀW), its
`Parts.axes` then give each axis a `domain` inside the panel, and the animation maps those
into the panel's cell.
"""

from __future__ import annotations

import numpy as np
from plotly.colors import cyclical, make_colorscale

from tempsup.bows.run import BowsRun
from tempsup.errors import TempsupError
from tempsup.figures.panel import Selection

# Colours of the lab; the shared ones (loss, cursor, diverging heatmaps) come
# from tempsup.core.palette, so both labs look alike.
# Feature angle: a cyclic scale (cmocean's phase), so 0° and 360° get the same colour. Spelled
# out: the app hands traces to plotly.js as plain JSON, and plotly.js knows no "Phase" (an
# unknown name silently falls back to its default, non-cyclic scale).
CYCLIC = make_colorscale(cyclical.Phase)
LINEAR_R2 = "#0072B2"  # blue: R² of the best linear decoder from h = Wx
MODEL_R2 = "#D55E00"  # vermillion: R² of the model's own (ReLU) reconstruction
THRESHOLD = "#009E73"  # bluish green: the linear-superposition threshold
SPOKE = "rgba(120, 120, 120, 0.45)"  # lines from the origin to each column of W

MAX_MATRIX = 64  # heatmaps show at most this many features (the most frequent words)
MAX_BARS = 120  # R² bars for at most this many features
MAX_TEXT_LABELS = 40  # columns panel: text labels beside the points up to this many features


def select(run: BowsRun, seed: int | None, feature: int = 0) -> Selection:
    """Validate the seed (None = the run's best); a lab run draws all its features at once,
    so the only feature is 0."""
    n = run.n_seeds
    s = run.best if seed is None else seed
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < n:
        raise TempsupError(f"seed: expected an integer in [0, {n - 1}] or None, got {seed!r}")
    if feature != 0:
        raise TempsupError(
            f"feature: expected 0 (a lab run has no input features), got {feature!r}"
        )
    return Selection(run, int(s))


def shown_features(run: BowsRun, limit: int) -> np.ndarray:
    """Indices of the features a panel draws: all, or for large d the first `limit`.

    Text vocabularies are ordered by frequency, so these are the most frequent
    words; they are then ordered by angle, so co-occurring words sit together.
    """
    d = run.d
    if d <= limit and run.config.structure != "text":
        return np.arange(d)
    keep = np.arange(min(d, limit))
    return keep[np.argsort(run["angle"][keep], kind="stable")]


def short_labels(run: BowsRun, idx: np.ndarray) -> list[str]:
    """Axis labels: the word for text, the feature index otherwise."""
    labels = run.labels
    if run.config.structure == "text":
        return [labels[i] for i in idx]
    return [str(int(i)) for i in idx]
