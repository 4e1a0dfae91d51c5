"""Linear RNN: the same spiral sink at every sparsity.

The linear RNN has no interference-free space: it finds nearly the same spiral sink (arg
λ, |λ|) whatever the sparsity.

The linear RNN has no interference-free half-space to pack into, so sparsity cannot
change its solution: the best seeds' leading eigenvalues are compared across S = 0.1 to
0.97, trained as one batch with the spiral-sink run.

Sources: science.md §1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

import tempsup.paper.presets.spiral_sink as spiral_sink
from tempsup.analysis.measures import sorted_by, spiral
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, card, fixed, listed, result, rounded
from tempsup.paper.presets._sinks import Sinks
from tempsup.paper.summary import against_sparsity

SINK_ARG_SPREAD = 8.0  # "nearly the same spiral sink": best seeds' arg λ within this many degrees
SINK_ABS_SPREAD = 0.1  # ... and |λ| within this


# the gallery card's picture (run label, panel or "summary": the preset's figure):
# the same angle at every sparsity (its figure across runs)
THUMBNAIL = ("S=0.9", "summary")
NAME = "linear-any-sparsity"
TITLE, CLAIM = card(__doc__)


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claim, on the linear runs over increasing sparsity."""
    return [same_sink(Sinks.of(runs, sorted_by(runs, "sparsity")))]


def same_sink(s: Sinks) -> ClaimResult:
    """The best seeds of every sparsity: one spiral sink, nearly the same eigenvalue."""
    labels, sp, k = s.labels, s.spirals, s.k
    args, mods = s.at_best("arg"), s.at_best("abs")
    sinks = [bool(sink) for sink in s.at_best("sink")]
    mid_arg, mid_abs = float(np.median(args)), float(np.median(mods))
    ok = np.concatenate(
        [
            sp[lab]["sink"]
            & (np.abs(sp[lab]["arg"] - mid_arg) <= SINK_ARG_SPREAD / 2)
            & (np.abs(sp[lab]["abs"] - mid_abs) <= SINK_ABS_SPREAD / 2)
            for lab in labels
        ]
    )
    held = (
        all(sinks)
        and float(np.ptp(args)) <= SINK_ARG_SPREAD
        and float(np.ptp(mods)) <= SINK_ABS_SPREAD
    )
    return result(
        "the linear RNN finds nearly the same spiral sink at every sparsity",
        ok,
        held,
        {
            "sparsity": [s.runs[lab].config.sparsity for lab in labels],
            "arg_lambda_deg": rounded(args, 1),
            "abs_lambda": rounded(mods),
            "k_arg_lambda_deg": rounded(k * args, 1),
            "spiral_sink": sinks,
            "arg_spread_deg": rounded(np.ptp(args), 1),
            "abs_spread": rounded(np.ptp(mods)),
            "kernel_spread_max": rounded(np.ptp(s.window(), axis=0).max()),
            "sink_seeds_per_sparsity": [int(sp[lab]["sink"].sum()) for lab in labels],
        },
        f"best seed of every sparsity a spiral sink (complex λ, |λ| < 1, |k·arg λ − 90°| "
        f"≤ 20°), max − min over sparsity of arg λ ≤ {SINK_ARG_SPREAD:g}° and of |λ| ≤ "
        f"{SINK_ABS_SPREAD:g} (eigenvalues are gauge free); per (sparsity, seed): a sink "
        "within half those spreads of the best seeds' median",
        said=said_same_sink,
    )


def said_same_sink(m: dict[str, Any]) -> str:
    """arg λ and |λ| of the best seed at each sparsity, and how far they spread."""
    S = ", ".join(f"{s:g}" for s in m["sparsity"])
    return (
        f"at S = {S}: arg λ = {listed(m['arg_lambda_deg'], 1)}° and |λ| = "
        f"{listed(m['abs_lambda'])} (spreads {fixed(m['arg_spread_deg'], 1)}° and "
        f"{fixed(m['abs_spread'])}); k·arg λ = {listed(m['k_arg_lambda_deg'], 1)}°; sink "
        f"seeds per sparsity {listed(m['sink_seeds_per_sparsity'])}."
    )


def figure(runs: dict[str, Run]) -> go.Figure:
    y = [float(spiral(runs[lab])["arg"][runs[lab].best]) for lab in sorted_by(runs, "sparsity")]
    return against_sparsity(runs, y, "arg λ of the best seed against sparsity", "arg λ (deg)")


def build(quick: bool = False) -> Preset:
    base = spiral_sink.build(quick).configs[0]
    configs = tuple(base.replace(sparsity=s) for s in (0.1, 0.3, 0.5, 0.9, 0.97))
    labels = tuple(f"S={c.sparsity:g}" for c in configs)
    recipe = (
        f"the spiral-sink recipe (linear RNN, N_h = 2, k = 3, T = 20, lr 3e-3, "
        f"{base.seeds} seeds, {base.steps} steps) at S = 0.1, 0.3, 0.5, 0.9, 0.97, trained "
        "as one batch with the spiral-sink run",
    )
    return Preset(
        NAME, TITLE, CLAIM, configs, labels, recipe, main="S=0.9", checker=check, figure=figure
    )
