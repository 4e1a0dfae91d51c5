"""Loss panel: the training loss ‖x − x̂‖² of every seed over training, with a step cursor.

Log scale (the loss falls over orders of magnitude when m approaches d); the
shown seed is black, the others faint. Only the cursor and the current-loss
dot move; they, the log range and the axes are the RNN loss panel's
(`tempsup.figures._common`).
"""

from __future__ import annotations

from typing import Any

from tempsup.core.palette import LOSS, OTHER_SEEDS
from tempsup.figures._common import log_range, loss_axes, positive, step_cursor, thin
from tempsup.figures.panel import Parts, Selection

HISTORY_POINTS = 400
DECADES = 6


def prepare(sel: Selection) -> dict[str, Any]:
    loss = sel.run["loss"].astype(float)  # (F, S)
    return {"loss": loss, "log_range": log_range(loss[:, sel.seed], DECADES)}


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
            ys += [*positive(loss[:, s]), None]
    cursor = step_cursor(int(run["step"][frame]), d["log_range"], d["loss"][frame, seed : seed + 1])
    return [
        {
            "type": "scatter", "x": xs, "y": ys, "mode": "lines", "name": "other seeds",
            "line": {"color": OTHER_SEEDS, "width": 1}, "hoverinfo": "skip",
        },
        {
            "type": "scatter", "x": steps, "y": positive(loss[:, seed]), "mode": "lines",
            "name": f"loss (seed {seed})", "line": {"color": LOSS, "width": 2.5},
            "hovertemplate": "step %{x}: loss %{y}<extra></extra>",
        },
    ] + cursor  # fmt: skip


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    return Parts(
        title="Training loss ‖x − x̂‖²<br><sup>log scale; grey dashed: current step</sup>",
        axes=loss_axes(max(int(sel.run["step"][-1]), 1), d["log_range"], narrow_dtick="D2"),
        moving=(2, 3),
    )
