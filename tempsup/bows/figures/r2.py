"""R² panel: how well each feature can be read out, linearly and by the model itself.

Bars: R² of the best linear decoder of x_i from the bottleneck h = Wx
(computed from the covariance, `analysis.linear_r2`). Diamonds: R² of the
model's own reconstruction σ(WᵀWx + b). The dashed line is the threshold
(`analysis.R2_THRESHOLD`, 0.5, the paper's line): a bar above it is a feature
in *linear* superposition; a bar below it with a diamond above it is in
*nonlinear* superposition (only the ReLU recovers it); both below: not
represented. Values below −1 (early in training) are drawn at −1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.bows import analysis
from tempsup.bows.figures._common import (
    LINEAR_R2,
    MAX_BARS,
    MODEL_R2,
    THRESHOLD,
    short_labels,
    shown_features,
)
from tempsup.figures._common import rnd, text_at
from tempsup.figures.panel import Parts, Selection

FLOOR = -1.0
TOP = 1.25  # room above R² = 1 for the counts line


def prepare(sel: Selection) -> dict[str, Any]:
    run, s = sel.run, sel.seed
    idx = shown_features(run, MAX_BARS)
    lin = run["r2_linear"][:, s].astype(float)  # (F, d)
    mod = run["r2_model"][:, s].astype(float)
    kinds = [analysis.superposition_kinds(lin[f], mod[f]) for f in range(run.n_frames)]
    counts = [{k: int((kd == k).sum()) for k in ("linear", "nonlinear", "absent")} for kd in kinds]
    lo = float(np.nanmin(np.clip(np.concatenate([lin[:, idx], mod[:, idx]]), FLOOR, 1.0)))
    return {"idx": idx, "lin": lin[:, idx], "mod": mod[:, idx], "counts": counts, "lo": lo}


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    run = sel.run
    idx = d["idx"]
    x = list(range(len(idx)))
    names = [run.labels[i] for i in idx]
    lin, mod = d["lin"][frame], d["mod"][frame]
    c = d["counts"][frame]
    text = (
        f"linear superposition: {c['linear']} · nonlinear: {c['nonlinear']}"
        f" · not represented: {c['absent']}"
    )
    return [
        {
            "type": "bar",
            "x": x,
            "y": rnd(np.clip(lin, FLOOR, 1.0)),
            "marker": {"color": LINEAR_R2},
            "name": "linear decoder from h = Wx",
            "customdata": [[n, v] for n, v in zip(names, rnd(lin), strict=True)],
            "hovertemplate": "%{customdata[0]}: linear R² = %{customdata[1]}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": x,
            "y": rnd(np.clip(mod, FLOOR, 1.0)),
            "mode": "markers",
            "marker": {"color": MODEL_R2, "symbol": "diamond", "size": 9,
                       "line": {"color": "white", "width": 1}},
            "name": "the model's own reconstruction",
            "customdata": [[n, v] for n, v in zip(names, rnd(mod), strict=True)],
            "hovertemplate": "%{customdata[0]}: model R² = %{customdata[1]}<extra></extra>",
        },
        text_at(text, -0.55, TOP - 0.01, "superposition counts"),
    ]  # fmt: skip


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    run = sel.run
    n = len(d["idx"])
    labels = short_labels(run, d["idx"])
    t = analysis.R2_THRESHOLD
    ticks = (
        {"tickmode": "array", "tickvals": list(range(n)), "ticktext": labels}
        if n <= 40
        else {"showticklabels": False}
    )
    line = {
        "type": "line",
        "xref": "x domain",
        "yref": "y",
        "x0": 0,
        "x1": 1,
        "y0": t,
        "y1": t,
        "line": {"color": THRESHOLD, "width": 2, "dash": "dash"},
    }
    shown = "" if n == run.d else f"; the {n} most frequent of {run.d} words"
    return Parts(
        title=f"Per-feature R²<br><sup>dashed: threshold {t:g} for linear superposition"
        f"{shown}</sup>",
        axes={
            "xaxis": {"range": [-0.6, n - 0.4], "title": {"text": "feature"}, **ticks},
            "yaxis": {"range": rnd([min(d["lo"], 0.0) - 0.05, TOP]), "title": {"text": "R²"}},
        },
        moving=(0, 1, 2),
        shapes=(line,),
    )
