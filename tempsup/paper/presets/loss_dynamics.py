"""Loss dynamics: align, then separate.

Early in training every w_s aligns with the readout; then the directions separate in
temporal order, one step of the loss staircase after another.

Read on the spiral-sink run itself, frame by frame, through the gauge-free
a_s = w_yᵀw_s: all a_s > 0 early on, then a_0, a_1, …, a_k settle one after another.

Sources: science.md §1, "staircase".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

import tempsup.paper.presets.spiral_sink as spiral_sink
from tempsup.analysis.measures import SETTLE, expected_loss, kernel_history, settle_steps
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, card, fixed, listed, result, rounded
from tempsup.theory import geometry

# the gallery card's picture (run label, panel or "summary": the preset's figure):
# a_s over training: align, then separate
THUMBNAIL = ("linear", "summary")
NAME = "loss-dynamics"
TITLE, CLAIM = card(__doc__)


@dataclass(frozen=True)
class History:
    """What both claims read, computed once: a_s at every frame and the frames at which
    every a_s is positive while the expected loss has made less than half of its drop."""

    run: Run
    a: np.ndarray  # (F, M, T)
    cos: np.ndarray  # (F, M, T): cos(w_s, w_y)
    aligned: np.ndarray  # (F, M)

    @classmethod
    def of(cls, run: Run) -> History:
        cfg = run.config
        a = kernel_history(run)  # (F, M, T)
        exp = expected_loss(run)  # (F, M)
        norms = np.linalg.norm(
            geometry.feature_directions(
                run["W_x"].astype(float), run["W_h"].astype(float), cfg.seq_len, cfg.relu_hidden
            )[..., 0],
            axis=-1,
        )  # (F, M, T)
        w_y = np.linalg.norm(run["W_y"].astype(float)[..., 0], axis=-1)  # (F, M)
        cos = a / np.maximum(norms * w_y[..., None], 1e-12)
        early = exp >= exp[-1] + 0.5 * (exp[:1] - exp[-1])  # (F, M): before half the drop
        early[0] = False  # the random init does not count
        return cls(run, a, cos, early & (a > 0).all(axis=-1))

    @property
    def steps(self) -> np.ndarray:
        return np.asarray(self.run["step"])

    @property
    def ever_aligned(self) -> np.ndarray:
        """(M,) aligned at some frame."""
        return self.aligned.any(axis=0)


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claims, one function each, on the spiral-sink run's history."""
    h = History.of(runs["linear"])
    return [align(h), separate_in_order(h)]


def align(h: History) -> ClaimResult:
    """Early on, every a_s > 0: every w_s on the readout's side."""
    b, k, a, steps = h.run.best, h.run.config.k, h.a, h.steps
    ok1 = h.ever_aligned
    min_cos = np.where(h.aligned, h.cos.min(axis=-1), -np.inf)
    f_al = int(np.argmax(min_cos[:, b])) if ok1[b] else None
    return result(
        "early in training every w_s aligns with the readout (all a_s > 0)",
        ok1,
        bool(ok1[b]),
        {
            "step": int(steps[f_al]) if f_al is not None else None,
            "a_at_that_step": rounded(a[f_al, b, : k + 4]) if f_al is not None else None,
            "min_cos_w_s_w_y": rounded(min_cos[f_al, b], 2) if f_al is not None else None,
            "final_a": rounded(a[-1, b, : k + 4]),
            "seeds_aligned_at_some_frame": int(ok1.sum()),
        },
        "per seed: a frame after the first, while the expected loss has made less than "
        "half of its drop, at which a_s > 0 for every s < T (gauge free; cos(w_s, w_y) "
        "at that frame reported, meaningful under the tied readout); held on the best seed",
        said=said_aligned,
    )


def said_aligned(m: dict[str, Any]) -> str:
    """When every a_s is positive, and how aligned the directions are then."""
    if m["step"] is None:
        return "the best seed never has every a_s > 0 early in training."
    return (
        f"at step {m['step']}: a_0…a_{len(m['a_at_that_step']) - 1} = "
        f"{listed(m['a_at_that_step'])}, all positive; the smallest cos(w_s, w_y) is "
        f"{fixed(m['min_cos_w_s_w_y'], 2)}; at the end a = {listed(m['final_a'])}."
    )


def separate_in_order(h: History) -> ClaimResult:
    """Then a_0, a_1, …, a_k settle one after another."""
    b, k, a, steps = h.run.best, h.run.config.k, h.a, h.steps
    ok1 = h.ever_aligned
    dt = int(np.median(np.diff(steps))) if len(steps) > 1 else 0
    settle = np.array([settle_steps(a[:, m, : k + 1], steps) for m in range(h.run.config.seeds)])
    strict = (np.diff(settle, axis=1) >= 0).all(axis=1)
    ordered = (np.diff(settle, axis=1) >= -dt).all(axis=1)
    ok2 = ordered & ok1
    return result(
        "then the w_s separate in temporal order: a_0, a_1, …, a_k settle one after another",
        ok2,
        bool(ok2[b]),
        {
            "settle_steps_s_0_to_k": settle[b].tolist(),
            "strictly_ordered": bool(strict[b]),
            "frame_interval": dt,
            "seeds_strictly_ordered": int((strict & ok1).sum()),
        },
        f"per seed: aligned as above, and the step after which a_s stays within {SETTLE} "
        "× max_s |a_s(final)| of its final value is non-decreasing in s = 0..k up to one "
        "frame interval (the time resolution; strict order reported too); held on the "
        "best seed",
        said=said_order,
    )


def said_order(m: dict[str, Any]) -> str:
    """The steps at which a_0 … a_k settle, and whether strictly in order."""
    steps = m["settle_steps_s_0_to_k"]
    order = (
        "strictly in order"
        if m["strictly_ordered"]
        else f"in order only to within one frame ({m['frame_interval']} steps), not strictly"
    )
    return (
        f"a_0…a_{len(steps) - 1} settle at steps {listed(steps)}: {order}; "
        f"seeds strictly ordered: {m['seeds_strictly_ordered']}."
    )


def figure(runs: dict[str, Run]) -> go.Figure:
    run = runs["linear"]
    a = kernel_history(run, run.config.k + 3)[:, run.best]  # (F, k+3)
    fig = go.Figure(layout=base_layout("a_s = w_yᵀw_s over training (best seed)"))
    for s in range(a.shape[1]):
        fig.add_scatter(x=run["step"].tolist(), y=a[:, s].tolist(), mode="lines", name=f"s = {s}")
    fig.update_xaxes(title="step")
    return fig


def build(quick: bool = False) -> Preset:
    cfg = spiral_sink.build(quick).configs[0]
    recipe = (
        "the spiral-sink run itself (a frame every 10 steps at lr 3e-3), read frame by "
        "frame through the gauge-free a_s = w_yᵀw_s",
    )
    return Preset(
        NAME, TITLE, CLAIM, (cfg,), ("linear",), recipe, main="linear", checker=check, figure=figure
    )
