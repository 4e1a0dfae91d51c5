"""Loss panel: measured loss and the four loss terms over training, with a step cursor.

The whole history is drawn in every frame; only the cursor (a vertical line
trace at the frame's step, and a dot on the shown seed's loss) moves, so
`Parts.moving` is just those two traces and the label. `frame_traces` still
returns the history too (identical in every frame), so that swapping
`figure["data"]` needs no special case; a client that wants to send less may
keep the history and replace only the `moving` traces.

Y axis: symmetric-logarithmic, built by hand (plotly has none): a value v is
drawn at sign(v)·log10(1 + |v|/c) and the ticks are labelled in the values (0,
±10ⁿ). Why not the log axis this panel had: learning comes in steps over orders
of magnitude (science.md §1, "staircase"), which needs decades, but the terms
are signed. For ReLU readouts the mean correction and composition interference
are each larger than the loss and of opposite signs (default SSM, late frames:
+0.12 and −0.068 against E[L] = 0.053), and a log axis could not draw the
negative one at all. A linear axis would draw both but flatten the staircase
into the first frames; positive and negative parts on two stacked axes would
break a term that changes sign in two. The symmetric log keeps the decades on
both sides of zero and every curve continuous; c, the half-width of the linear
band around zero, is four decades below the loss of a silent output (the loss at
the start, about), a number of the config alone: a frame streamed in while a run
trains is drawn where the finished run draws it.

Every curve is signed and every one is inside the axis range (the range covers
all of them; only other seeds may leave it). The legend and the caption come
from `tempsup.analysis.captions.loss_curves`: a piece the run did not compute (NaN at
every frame, `tempsup.theory.budget`) is neither drawn nor in the legend, and frames a
piece skipped are left out of its line rather than drawn as gaps. At most five
curves are drawn when the panel opens (the measured loss and the four terms); the
rest are in the legend, one click away (Plotly's "legendonly"). The hover
shows each value as it is (not its axis position). The dotted line is the sum
of the four terms; beside it the expected loss E[L] (for the linear model the
same curve: the terms are exact) and, for ReLU readouts, the remainder E[L] −
Σ terms, the part of the loss that takes three or more co-active inputs. A
label in the top-left corner says how much of E[L] the four terms explain at the
frame shown; for the ReLU RNN, whose E[L] is a Monte Carlo estimate, it also gives
its standard error. It hangs in a band left empty above the curves, and the cursor
stops below that band, so the two never touch wherever the cursor is (at step 0 it
is under the label, not through it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.analysis import captions
from tempsup.core.palette import CURSOR
from tempsup.figures._common import (
    clipped_range,
    cursor_traces,
    rnd,
    symlog,
    symlog_axis,
    symlog_ranges,
    symlog_scale,
    thin,
)
from tempsup.figures.panel import MARGIN, Parts, Selection
from tempsup.io.run import TERM_NAMES
from tempsup.model.config import RunConfig, importance_weights
from tempsup.theory import closed_form as theory

HISTORY_POINTS = 400  # each curve keeps at most this many steps (long runs are thinned)
OTHER_SEEDS_SHOWN = 24  # faint curves of at most this many other seeds
DECADES = 4  # the linear band's half-width c: this many decades below the silent loss


def silent_loss(config: RunConfig) -> float:
    """E[L] of a network that always outputs 0: (T − k)·p·E[U²]·Σ_i I_i. It fixes the axis's
    scale from the config alone, so a frame drawn while a run streams in is drawn where the
    finished run draws it."""
    _, nu = theory.input_moments(config.input_dist)
    weights = sum(importance_weights(config))
    return (config.seq_len - config.k) * config.p * nu * weights


def symlog_band(config: RunConfig) -> float:
    """The linear band c of the loss panel's symmetric-log axis: DECADES below the silent
    loss, a function of the config alone (Compare shares a scale only between equal bands)."""
    return symlog_scale(silent_loss(config), DECADES)


def prepare(sel: Selection) -> dict[str, Any]:
    run, s = sel.run, sel.seed
    loss = run["loss"].astype(float)  # (F, M)
    terms = run["terms"][:, s].astype(float)  # (F, 4)
    expected = run["expected_loss"][:, s].astype(float)  # (F,)
    computed = captions.Computed.of_run(terms, expected)
    total = terms.sum(axis=1)
    se = run["expected_loss_se"][:, s].astype(float)
    values = {
        "loss": loss[:, s],
        "expected": expected,
        "total": total,
        "remainder": expected - total,
        "missed": loss[:, s] - expected,  # gated models: what the linearisation misses
        **{name: terms[:, t] for t, name in enumerate(TERM_NAMES)},
    }
    curves = captions.loss_curves(sel.config, computed, s, loss.shape[1])
    c = symlog_band(sel.config)
    # the range over every curve of the shown seed, at each frame over the frames so far
    ranges = symlog_ranges(np.stack([values[v.key] for v in curves if v.key != "others"], -1), c)
    return {
        "loss": loss,
        "values": values,
        "total": total,
        "expected": expected,
        "se": se,
        "computed": computed,
        "curves": curves,
        "c": c,
        # the range covers every curve of the shown seed (other seeds may leave it); the
        # plot shows it with room above for the moving label (the ticks are the range's)
        "range": (rng := [float(v) for v in ranges[-1]]),
        "plot_range": _with_label_room(rng),
        "curves_top": ranges[:, 1],  # (F,): the top of the curves over the frames so far
        # what a frame's label says and where it hangs, from the frames up to it alone
        # (`causal`): whether the terms and E[L] were computed by then, and the plot's
        # range over those frames (the page hangs it from the top of the range it draws)
        "terms_by": np.logical_or.accumulate(np.isfinite(terms).any(axis=-1)),
        "expected_by": np.logical_or.accumulate(np.isfinite(expected)),
        "plot_range_at": np.stack(_with_label_room([ranges[:, 0], ranges[:, 1]]), -1),
    }


# Above the curves, this share of their span is left empty for the label in the corner
# (three short lines hanging from the top: up to a quarter of a phone's plot), so that
# it is never drawn over the loss, which sits at the top of the range once trained, nor
# over the cursor, which stops at the curves' top.
LABEL_ROOM = 0.4


def _with_label_room(rng: Any) -> list[Any]:
    low, high = rng
    return [low, high + LABEL_ROOM * (high - low)]


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    run, seed = sel.run, sel.seed
    step = int(run["step"][frame])
    return (
        history(sel, d)
        + _cursor(step, d, frame, float(d["loss"][frame, seed]))
        + [_explained(step, d, frame)]
    )


def history(sel: Selection, d: dict[str, Any]) -> list[dict[str, Any]]:
    """The traces every frame shares (the curves over training), built once per `d`:
    a stream of new frames draws the same history for each of them."""
    if "history" not in d:
        d["history"] = _history(sel, d)
    return list(d["history"])


def _history(sel: Selection, d: dict[str, Any]) -> list[dict[str, Any]]:
    run, seed, c = sel.run, sel.seed, d["c"]
    keep = thin(run.n_frames, HISTORY_POINTS)  # history indices; the cursor uses `frame`
    steps = np.asarray(run["step"][keep], dtype=int)
    out: list[dict[str, Any]] = []
    for curve in d["curves"]:
        if curve.key == "others":  # every other seed in one faint trace, separated by gaps
            loss = d["loss"][keep]
            xs: list = []
            ys: list = []
            for m in [m for m in range(loss.shape[1]) if m != seed][:OTHER_SEEDS_SHOWN]:
                xs += [*steps.tolist(), None]
                ys += [*rnd(symlog(loss[:, m], c)), None]
            out.append(_line(curve, xs, ys))
            continue
        v = d["values"][curve.key][keep]
        ok = np.isfinite(v)  # frames the budget skipped: left out, so the line joins the rest
        trace = _line(curve, steps[ok].tolist(), rnd(symlog(v[ok], c)))
        trace["customdata"] = rnd(v[ok])
        trace["hovertemplate"] = f"step %{{x}}: %{{customdata}}<extra>{curve.name}</extra>"
        out.append(trace)
    return out


def _line(curve: captions.Curve, x: list, y: list) -> dict[str, Any]:
    trace: dict[str, Any] = {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": curve.name,
        "line": {"color": curve.color, "width": curve.width, "dash": curve.dash},
    }
    if not curve.shown:  # in the legend, drawn once clicked there
        trace["visible"] = "legendonly"
    if curve.key == "others":
        trace["hoverinfo"] = "skip"
    return trace


# The cursor's line reaches this far (symmetric-log units: decades) below 0, past any
# axis this panel draws, which clips it to what is shown: on a wider scale (Compare draws
# both runs on the range holding both) it still reaches the panel's bottom, and autoscale
# stops at the axis's range (`autorangeoptions`), as the directions panel's half-space
# does. Upwards it stops at the top of the curves (of the frames so far, `causal`): the
# band above is the label's, and the cursor never runs through it.
CURSOR_REACH = 100.0


def _cursor(step: int, d: dict[str, Any], frame: int, loss: float) -> list[dict[str, Any]]:
    """The moving traces: a dashed line at the frame's step from the panel's bottom to the
    curves' top, and a dot on the shown seed's loss (drawn on the symmetric-log axis,
    hovered as its value)."""
    line = [-CURSOR_REACH, float(d["curves_top"][frame])]
    return cursor_traces(step, rnd(line), rnd(symlog([loss], d["c"])), rnd([loss]))


def causal(config: RunConfig) -> bool:
    """Each frame is drawn from the frames up to it alone (`PanelSet.causal`): the cursor's
    reach, the label's words and place come from those frames."""
    return True


def explained_share(d: dict[str, Any], frame: int) -> float:
    """Σ terms / E[L] in % at one frame, as the label prints it; NaN where either was not
    computed or E[L] ≤ 0 (the caption's headline reads it here too)."""
    expected, total = float(d["expected"][frame]), float(d["total"][frame])
    if not (np.isfinite(expected) and np.isfinite(total)) or expected <= 0:
        return float("nan")
    return 100 * total / expected


def explained_text(d: dict[str, Any], frame: int) -> str:
    """ "four terms: 99.6 % of E[L]" at one frame (± the estimate's standard error)."""
    if not (d["terms_by"][frame] and d["expected_by"][frame]):
        return ""  # none computed so far: the panel's note says what was not computed
    expected, total, se = (float(d[n][frame]) for n in ("expected", "total", "se"))
    if not (np.isfinite(expected) and np.isfinite(total)):
        return "terms or E[L] not computed at this frame"
    if expected <= 0:
        return "E[L] = 0"
    # short lines: in its corner the label stays inside a panel a phone's width wide
    text = f"four terms:<br>{explained_share(d, frame):.1f} % of E[L]"
    if se > 0:
        text += f"<br>(E[L] ± {100 * se / expected:.1f} %)"
    return text


LABEL_INSET = 0.02  # the label hangs this share of the axes' spans in from the top-left corner
X_PAD = 0.02  # the x axis reaches this share of the last step beyond 0 and the last step


def x_range(last_step: int) -> list[float]:
    """The x axis's range for a run whose last frame is at `last_step`."""
    pad = max(last_step, 1) * X_PAD
    return [-pad, last_step + pad]


def _explained(step: int, d: dict[str, Any], frame: int) -> dict[str, Any]:
    """The moving label: how much of the loss the terms explain, at the top-left corner of
    the axes (`meta.corner`), not at the cursor: it hangs in the band above the curves,
    which the cursor does not enter. Placed on the axes of the frames up to this one
    (`causal`); a page or a figure drawing other ranges moves it to their corner."""
    x0, x1 = x_range(step)
    low, high = d["plot_range_at"][frame]
    return {
        "type": "scatter",
        "x": [rnd(x0 + LABEL_INSET * (x1 - x0))],
        "y": [rnd(float(high - LABEL_INSET * (high - low)))],
        # the page keeps it at this inset from the top-left corner of the ranges it draws
        # (assets/tempsup.js atCorners; `tempsup.figures.panel.at_corners`)
        "meta": {"corner": LABEL_INSET},
        "mode": "text",
        "text": [explained_text(d, frame)],
        "textposition": "bottom right",
        "textfont": {"color": CURSOR, "size": 11},
        "name": "explained",
        "showlegend": False,
        "hoverinfo": "skip",
    }


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    cfg, run = sel.config, sel.run
    steps = run["step"]
    last = int(steps[-1]) if len(steps) else 1
    n = len(d["curves"])
    return Parts(
        title=captions.loss_title(cfg, d["computed"]),
        axes={
            "xaxis": {"range": rnd(x_range(last)), "title": {"text": "training step"}},
            "yaxis": {
                **symlog_axis(d["c"], d["range"], "loss (symmetric log)"),
                **clipped_range(rnd(d["plot_range"])),  # the cursor reaches past it
            },
        },
        moving=(n, n + 1, n + 2),  # after the history: cursor line, cursor dot, label
        # room for the ticks' labels (−10⁻³) and the ten legend entries in three rows (a
        # panel 480–970 px wide): with less, automargin draws the panel twice (50 ms)
        extra={"margin": {**MARGIN, "l": 80, "b": 170}},
    )
