"""Loss panel: measured loss and the four loss terms over training, with a step cursor.

The whole history is drawn in every frame; only the cursor (a vertical line
trace at the frame's step, and a dot on the shown seed's loss) moves, so
`Parts.moving` is just those two traces. `frame_traces` still returns the
history too (identical in every frame), so that swapping `figure["data"]`
needs no special case; a client that wants to send less may keep the history
and replace only the `moving` traces.

Y axis: logarithmic, because learning comes in steps over orders of magnitude
(science.md §1, "staircase"). Non-positive values cannot be drawn on it and
leave gaps (a term that is exactly 0, e.g. the task term once a_k = 1). The
mean-correction term −2p²μ²Σ a_s is usually negative: it is drawn as its
magnitude (named "−mean correction" when it is never positive, "|mean
correction|" otherwise); the hover shows the signed value. The dotted line is
the sum of the four terms; beside it the expected loss E[L] itself (for the
linear model the same curve: the terms are exact) and the remainder E[L] −
Σ terms, the part of the loss that takes three or more co-active inputs
(ReLU readouts, whose terms are exact to second order in p). A label at the
cursor says how much of E[L] the four terms explain at that frame; for the
ReLU RNN, whose E[L] is a Monte Carlo estimate, it also gives its standard error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup import budget
from tempsup.figures._common import (
    log_range,
    loss_axes,
    positive,
    rnd,
    step_cursor,
    thin,
)
from tempsup.figures.panel import MARGIN, Parts, Selection
from tempsup.palette import CURSOR, EXPECTED, LOSS, OTHER_SEEDS, REMAINDER, TERM_COLORS
from tempsup.run import TERM_NAMES

HISTORY_POINTS = 400  # each curve keeps at most this many steps (long runs are thinned)
OTHER_SEEDS_SHOWN = 24  # faint curves of at most this many other seeds
DECADES = 6  # the y axis shows at most this many decades below the largest value
MEAN = TERM_NAMES.index("mean correction")


def prepare(sel: Selection) -> dict[str, Any]:
    run, s = sel.run, sel.seed
    loss = run["loss"].astype(float)  # (F, M)
    terms = run["terms"][:, s].astype(float)  # (F, 4)
    mean = terms[:, MEAN]
    mean_name = "−mean correction" if (mean <= 0).all() else "|mean correction|"
    drawn = terms.copy()
    drawn[:, MEAN] = np.abs(mean)
    total = terms.sum(axis=1)
    expected = run["expected_loss"][:, s].astype(float)  # (F,)
    se = run["expected_loss_se"][:, s].astype(float)
    remainder = expected - total
    # The range follows the shown seed; other seeds may leave it (e.g. huge initial losses).
    values = np.concatenate([loss[:, sel.seed], drawn.ravel(), total, expected])
    return {
        "loss": loss,
        "terms": terms,
        "drawn": drawn,
        "total": total,
        "expected": expected,
        "se": se,
        "remainder": remainder,
        "last_step": int(sel.config.steps),  # the configured length: the same while streaming
        "mean_name": mean_name,
        "log_range": log_range(values, DECADES),
    }


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    run, seed = sel.run, sel.seed
    cursor = step_cursor(int(run["step"][frame]), d["log_range"], d["loss"][frame, seed : seed + 1])
    return history(sel, d) + cursor + [_explained(int(run["step"][frame]), d, frame)]


def history(sel: Selection, d: dict[str, Any]) -> list[dict[str, Any]]:
    """The traces every frame shares (the curves over training), built once per `d`:
    a stream of new frames draws the same history for each of them."""
    if "history" not in d:
        d["history"] = _history(sel, d)
    return list(d["history"])


def _history(sel: Selection, d: dict[str, Any]) -> list[dict[str, Any]]:
    run, seed = sel.run, sel.seed
    keep = thin(run.n_frames, HISTORY_POINTS)  # history indices; the cursor uses `frame`
    steps = [int(x) for x in run["step"][keep]]
    loss, terms, drawn, total = (d[n][keep] for n in ("loss", "terms", "drawn", "total"))
    out: list[dict[str, Any]] = []
    others = [m for m in range(loss.shape[1]) if m != seed][:OTHER_SEEDS_SHOWN]
    if loss.shape[1] > 1:  # every other seed in one faint trace, separated by gaps
        xs, ys = [], []
        for m in others:
            xs += [*steps, None]
            ys += [*positive(loss[:, m]), None]
        out.append(_line(xs, ys, "other seeds (measured)", OTHER_SEEDS, 1.0, hover=False))
    expected, remainder = d["expected"][keep], d["remainder"][keep]
    out.append(_line(steps, positive(expected), "expected loss E[L]", EXPECTED, 3.0))
    out.append(_line(steps, positive(loss[:, seed]), f"measured loss (seed {seed})", LOSS, 2.0))
    out.append(_line(steps, positive(total), "sum of the four terms", LOSS, 1.5, dash="dot"))
    if sel.config.relu_readout:  # the linear terms are exact: no remainder to draw
        trace = _line(steps, positive(np.abs(remainder)), "|remainder| (3+ inputs)", REMAINDER, 1.2)
        trace["line"]["dash"] = "dashdot"
        trace["customdata"] = rnd(remainder)
        trace["hovertemplate"] = "step %{x}: remainder = %{customdata}<extra></extra>"
        out.append(trace)
    for t, name in enumerate(TERM_NAMES):
        label = d["mean_name"] if t == MEAN else name
        dash = "dash" if t == MEAN else "solid"  # dashed: drawn as a magnitude
        trace = _line(steps, positive(drawn[:, t]), label, TERM_COLORS[name], 1.8, dash)
        if t == MEAN:
            trace["customdata"] = rnd(terms[:, t])
            trace["hovertemplate"] = "step %{x}: mean correction = %{customdata}<extra></extra>"
        out.append(trace)
    return out


def explained_text(d: dict[str, Any], frame: int) -> str:
    """ "four terms = 99.6 % of E[L]" at one frame (± the estimate's standard error)."""
    expected, total, se = (float(d[n][frame]) for n in ("expected", "total", "se"))
    if not (np.isfinite(expected) and np.isfinite(total)):
        return "terms or E[L] not computed at this frame"
    if expected <= 0:
        return "E[L] = 0"
    text = f"four terms = {100 * total / expected:.1f} % of E[L]"
    if se > 0:
        text += f" (E[L] ± {100 * se / expected:.1f} %)"
    return text


def _explained(step: int, d: dict[str, Any], frame: int) -> dict[str, Any]:
    """The moving label at the cursor's top: how much of the loss the terms explain.

    It sits right of the cursor in the first half of training and left of it
    after, so it never leaves the plot.
    """
    late = step > d["last_step"] / 2
    return {
        "type": "scatter",
        "x": [step],
        "y": [10.0 ** d["log_range"][1]],
        "mode": "text",
        "text": [explained_text(d, frame)],
        "textposition": "bottom left" if late else "bottom right",
        "textfont": {"color": CURSOR, "size": 11},
        "name": "explained",
        "showlegend": False,
        "hoverinfo": "skip",
    }


def _line(x, y, name, color, width, dash="solid", hover=True) -> dict[str, Any]:
    trace = {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": name,
        "line": {"color": color, "width": width, "dash": dash},
    }
    if hover:
        trace["hovertemplate"] = f"step %{{x}}: %{{y}}<extra>{name}</extra>"
    else:
        trace["hoverinfo"] = "skip"
    return trace


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    cfg, run = sel.config, sel.run
    steps = run["step"]
    if cfg.relu_readout:
        title = "Loss and its four terms (exact to second order in p)"
    else:
        title = "Loss and its four terms (exact: linear model)"
    note = budget.plan(cfg).note
    sub = "log scale; dotted: sum of the four terms; grey dashed: current step"
    title += f"<br><sup>{sub}{'<br>' + note if note else ''}</sup>"
    n_traces = (
        (1 if run["loss"].shape[1] > 1 else 0)
        + 3  # measured loss, sum of the terms, expected loss
        + (1 if cfg.relu_readout else 0)  # remainder
        + len(TERM_NAMES)
        + 3  # cursor line, cursor dot, explained label
    )
    return Parts(
        title=title,
        axes=loss_axes(int(steps[-1]) if len(steps) else 1, d["log_range"]),
        moving=(n_traces - 3, n_traces - 2, n_traces - 1),
        # room for the decades' labels (10⁻⁶) and the nine legend entries in three rows (a
        # panel 480–970 px wide): with less, automargin draws the panel twice (50 ms)
        extra={"margin": {**MARGIN, "l": 80, "b": 170}},
    )
