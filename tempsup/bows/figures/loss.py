"""Loss panel: the training loss ‖x − x̂‖² of every seed over training, with a step cursor.

Log scale (the loss falls over orders of magnitude when m approaches d); the
shown seed is black, the others faint. Only the cursor and the current-loss
dot move.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.bows.figures._common import Parts, Selection, rnd, thin
from tempsup.palette import CURSOR, LOSS, OTHER_SEEDS

HISTORY_POINTS = 400
DECADES = 6


def _positive(v: np.ndarray) -> list:
    v = np.asarray(v, dtype=float)
    return rnd(np.where(v > 0, v, np.nan))


def prepare(sel: Selection) -> dict[str, Any]:
    loss = sel.run["loss"].astype(float)  # (F, S)
    v = loss[:, sel.seed]
    v = v[np.isfinite(v) & (v > 0)]
    hi = float(v.max()) if v.size else 1.0
    lo = max(float(v.min()), hi * 10.0**-DECADES) if v.size else 0.1
    return {"loss": loss, "log_range": [np.log10(lo) - 0.1, np.log10(hi) + 0.1]}


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    run, seed = sel.run, sel.seed
    keep = thin(run.n_frames, HISTORY_POINTS)
    steps = [int(s) for s in run["step"][keep]]
    loss = d["loss"][keep]
    xs: list = []
    ys: list = []
    for s in range(loss.shape[1]):
        if s != seed:
            xs += [*steps, None]
            ys += [*_positive(loss[:, s]), None]
    lo, hi = (10.0**v for v in d["log_range"])
    step = int(run["step"][frame])
    return [
        {
            "type": "scatter", "x": xs, "y": ys, "mode": "lines", "name": "other seeds",
            "line": {"color": OTHER_SEEDS, "width": 1}, "hoverinfo": "skip",
        },
        {
            "type": "scatter", "x": steps, "y": _positive(loss[:, seed]), "mode": "lines",
            "name": f"loss (seed {seed})", "line": {"color": LOSS, "width": 2.5},
            "hovertemplate": "step %{x}: loss %{y}<extra></extra>",
        },
        {
            "type": "scatter", "x": [step, step], "y": rnd([lo, hi]), "mode": "lines",
            "line": {"color": CURSOR, "width": 1.5, "dash": "dash"}, "name": "current step",
            "showlegend": False, "hoverinfo": "skip",
        },
        {
            "type": "scatter", "x": [step], "y": _positive(d["loss"][frame, seed : seed + 1]),
            "mode": "markers", "marker": {"color": LOSS, "size": 9}, "name": "current loss",
            "showlegend": False, "hovertemplate": "step %{x}: loss %{y}<extra></extra>",
        },
    ]  # fmt: skip


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    last = max(int(sel.run["step"][-1]), 1)
    pad = last * 0.02
    return Parts(
        title="Training loss ‖x − x̂‖²<br><sup>log scale; grey dashed: current step</sup>",
        axes={
            "xaxis": {"range": rnd([-pad, last + pad]), "title": {"text": "training step"}},
            "yaxis": {
                "type": "log",
                "range": rnd(d["log_range"]),
                "title": {"text": "loss"},
                "exponentformat": "power",
                "dtick": 1 if d["log_range"][1] - d["log_range"][0] > 2.5 else "D2",
            },
        },
        moving=(2, 3),
    )
