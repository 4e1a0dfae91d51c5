"""ReLU RNN: interference-free packing and sharp forgetting.

The ReLU RNN puts all k intermediate directions in the interference-free half-space and
forgets old inputs at once (a_s = 0 after k), where the linear RNN forgets smoothly.

A free readout warm-started from the tied solution keeps the same gauge-free geometry;
the linear RNN of the spiral-sink preset is the smooth forgetting it is compared to.

Sources: science.md §1, §1b.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

import tempsup.paper.presets.spiral_sink as spiral_sink
from tempsup.analysis.measures import ALIVE, EXACT_ZERO, TOL, final_weights, kernel
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.preset import ClaimResult, Preset, card, fixed, listed, num, result, rounded
from tempsup.theory import geometry

# the gallery card's picture (run label, panel or "summary": the preset's figure):
# the intermediate directions in the half-space
THUMBNAIL = ("tied", "directions")
NAME = "relu-rnn-sharp-forgetting"
TITLE, CLAIM = card(__doc__)


def sharp(a: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per seed: alive, all intermediate free, exactly zero after k; and max |a_s|/a_k, s > k."""
    ak = a[:, k]
    alive = ak >= ALIVE
    free = (a[:, :k] <= TOL).all(axis=1) & alive
    after = np.abs(a[:, k + 1 :]).max(axis=1) / np.maximum(np.abs(ak), 1e-12)
    return free, alive & (after <= EXACT_ZERO), after


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claims, one function each: the tied ReLU RNN, against the linear RNN
    and the free readout."""
    tied, free_run, linear = runs["tied"], runs["free readout"], runs["linear"]
    return [intermediate_free(tied), sharp_forgetting(tied, linear), free_readout(tied, free_run)]


def intermediate_free(tied: Run) -> ClaimResult:
    """All k intermediate a_s ≤ 0, the output one alive."""
    k, b = tied.config.k, tied.best
    a = kernel(tied)
    free, _, _ = sharp(a, k)
    dead = np.abs(a).max(axis=1) < EXACT_ZERO
    w = final_weights(tied)
    W_s = geometry.feature_directions(w["W_x"], w["W_h"], k, True)[b, :, :, 0]  # (k, N_h)
    quadrants = {tuple(np.sign(v).astype(int).tolist()) for v in W_s} if W_s.size else set()
    return result(
        "all k intermediate directions lie in the interference-free half-space",
        free,
        bool(free[b]),
        {
            "a": rounded(a[b, : k + 4]),
            "intermediate_free": int((a[b, :k] <= TOL).sum()),
            "k": k,
            "intermediate_sign_patterns": sorted(map(list, quadrants)),
            "dead_seeds": int(dead.sum()),
        },
        f"per seed: a_k ≥ {ALIVE} and a_s ≤ {TOL} for every s < k; held on the best seed "
        "(dead seeds output 0 and fail)",
        said=said_free,
    )


def said_free(m: dict[str, Any]) -> str:
    """a_s of the best seed and how many intermediate directions are free."""
    return (
        f"a_0…a_{len(m['a']) - 1} = {listed(m['a'])}: {m['intermediate_free']} of k = "
        f"{m['k']} intermediate directions ≤ 0; {m['dead_seeds']} seeds silent (dead)."
    )


def sharp_forgetting(tied: Run, linear: Run) -> ClaimResult:
    """a_s = 0 exactly after k in the ReLU RNN; the linear RNN's tail does not vanish."""
    k, b, bl = tied.config.k, tied.best, linear.best
    a, a_lin = kernel(tied), kernel(linear)
    _, is_sharp, after = sharp(a, k)
    after_lin = np.abs(a_lin[:, k + 1 :]).max(axis=1) / np.maximum(np.abs(a_lin[:, k]), 1e-12)
    lin_next = a_lin[bl, k + 1] / a_lin[bl, k] if abs(a_lin[bl, k]) > 1e-12 else float("nan")
    return result(
        "sharp forgetting: a_s = 0 exactly after s = k (the linear RNN forgets smoothly)",
        is_sharp,
        bool(is_sharp[b] and after_lin[bl] > 0.1),
        {
            "relu_max_after_k_over_a_k": float(f"{after[b]:.3g}"),
            "linear_max_after_k_over_a_k": rounded(after_lin[bl]),
            "linear_a_k_plus_1_over_a_k": rounded(lin_next),
            "linear_a": rounded(a_lin[bl, : k + 4]),
        },
        f"per seed: a_k ≥ {ALIVE} and |a_s| ≤ {EXACT_ZERO:g}·a_k for all k < s < T; held "
        "when the ReLU best seed is sharp and the linear best seed's max_{s>k} |a_s|/a_k "
        "exceeds 0.1",
        said=said_sharp,
    )


def said_sharp(m: dict[str, Any]) -> str:
    """How much of the input survives after k, ReLU against linear."""
    return (
        f"max_(s>k) |a_s|/a_k = {num(m['relu_max_after_k_over_a_k'])} for the ReLU RNN "
        f"against {fixed(m['linear_max_after_k_over_a_k'])} for the linear RNN (a_(k+1)/a_k "
        f"= {fixed(m['linear_a_k_plus_1_over_a_k'])})."
    )


def free_readout(tied: Run, free_run: Run) -> ClaimResult:
    """The free readout, warm-started from the tied one, keeps the gauge-free geometry."""
    k, bf = tied.config.k, free_run.best
    af = kernel(free_run)
    ffree, fsharp, fafter = sharp(af, k)
    ok = ffree & fsharp
    return result(
        "free readout, warm-started from the tied solution: the same gauge-free geometry "
        "(intermediate a_s ≤ 0, a_s = 0 after k)",
        ok,
        bool(ok[bf]),
        {"a": rounded(af[bf, : k + 4]), "max_after_k_over_a_k": float(f"{fafter[bf]:.3g}")},
        "per seed: as the two claims above on a_s = w_yᵀw_s, which is gauge invariant; "
        "held on the best seed",
        said=said_free_readout,
    )


def said_free_readout(m: dict[str, Any]) -> str:
    """a_s of the free-readout best seed."""
    return (
        f"a_0…a_{len(m['a']) - 1} = {listed(m['a'])}; max_(s>k) |a_s|/a_k = "
        f"{num(m['max_after_k_over_a_k'])}."
    )


def figure(runs: dict[str, Run]) -> go.Figure:
    fig = go.Figure(layout=base_layout("Forgetting: a_s / a_k against the age s"))
    for label in ("tied", "linear"):
        run = runs[label]
        a = kernel(run)[run.best]
        k = run.config.k
        fig.add_scatter(
            x=list(range(len(a))), y=(a / a[k]).tolist(), mode="lines+markers",
            name=f"{label} ({run.config.model})",
        )  # fmt: skip
    fig.update_xaxes(title="age s")
    return fig


def build(quick: bool = False) -> Preset:
    steps = 1000 if quick else 2000
    tied = RunConfig("rnn", k=3, sparsity=0.97, seeds=16, steps=steps, snapshot_every=20)
    free = tied.replace(
        tied=False, seeds=4, steps=300 if quick else 600, snapshot_every=10, warm_start=tied.key
    )
    linear = spiral_sink.build(quick).configs[0]
    recipe = (
        f"ReLU RNN, tied readout, N_h = 2, k = 3, T = 20, S = 0.97, {tied.seeds} seeds "
        f"(most die: how many succeed is the card's count), {tied.steps} steps",
        f"free readout: warm start from the tied run's best seed (warm_start = its key), "
        f"{free.seeds} seeds with 5 % noise, {free.steps} steps (a warm start from a "
        "sparse SSM solution instead stayed silent)",
        "the linear RNN of the spiral-sink preset, for the smooth forgetting it is compared to",
    )
    configs, labels = (tied, free, linear), ("tied", "free readout", "linear")
    return Preset(
        NAME, TITLE, CLAIM, configs, labels, recipe, main="tied", checker=check, figure=figure
    )
