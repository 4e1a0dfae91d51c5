"""ReLU RNN, dense: approximately the spiral sink.

In the dense regime the nonlinear RNN also finds approximately the linear RNN's spiral
sink.

With dense inputs there is little room to hide interference: the check compares the
best seed's eigenvalue and kernel a_s with the linear RNN's at the same sparsity.

Sources: science.md §1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tempsup.paper.presets.linear_any_sparsity as linear_any_sparsity
import tempsup.paper.presets.relu_rnn_sharp_forgetting as relu_rnn_sharp_forgetting
from tempsup.analysis.measures import swept
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, card, deg, fixed, result, rounded
from tempsup.paper.presets._sinks import Sinks

KERNEL_GAP = 0.1  # a_s of two solutions "approximately equal": max |Δa_s| over s ≤ 2k


# the gallery card's picture (run label, panel or "summary": the preset's figure):
# the dense ReLU RNN's spiral
THUMBNAIL = ("rnn", "directions")
NAME = "relu-rnn-dense"
TITLE, CLAIM = card(__doc__)


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claim, on the dense ReLU RNN beside the linear RNN."""
    return [dense_sink(Sinks.of(runs, ("rnn", "linear")))]


def dense_sink(s: Sinks) -> ClaimResult:
    """The dense ReLU RNN: nearly the linear RNN's spiral sink, a_s peaking at k."""
    rnn, k = s.runs["rnn"], s.k
    sp, full, b = s.spirals["rnn"], s.kernels["rnn"], rnn.best
    a, a_lin = s.window()
    gap = float(np.abs(a - a_lin).max())
    lam = sp["lam"][b]
    ok = sp["sink"] & (full.argmax(axis=1) == k) & (full[:, k] > 0)  # dead seeds: a = 0
    return result(
        f"dense (S = {rnn.config.sparsity:g}): the ReLU RNN also finds approximately the "
        "spiral sink",
        ok,
        bool(ok[b]) and gap <= KERNEL_GAP,
        {
            "lambda": [rounded(lam.real), rounded(lam.imag)],
            "abs_lambda": rounded(sp["abs"][b]),
            "k_arg_lambda_deg": rounded(k * sp["arg"][b], 1),
            "k_theta_deg": rounded(swept(rnn)[b], 1),
            "a": rounded(a),
            "linear_a": rounded(a_lin),
            "max_kernel_gap": rounded(gap),
            "k_arg_lambda_deg_per_seed": rounded(k * sp["arg"], 0),
        },
        f"per seed: W_h has a complex pair inside the unit circle with |k·arg λ − 90°| ≤ "
        f"20° and a_s peaking at s = k (dense: a_k ≈ 0.3, not 1); held when the best seed "
        f"does and its a_0..a_{{2k}} are "
        f"within {KERNEL_GAP} of the linear RNN's at the same sparsity",
        said=said_dense_sink,
    )


def said_dense_sink(m: dict[str, Any]) -> str:
    """λ, k·arg λ and kθ of the best seed, and how close its a_s are to the linear RNN's."""
    re, im = m["lambda"]
    return (
        f"λ = {fixed(re)} ± {fixed(abs(im))}i, |λ| = {fixed(m['abs_lambda'], 2)}, k·arg λ = "
        f"{deg(m['k_arg_lambda_deg'], 1)} (kθ = {deg(m['k_theta_deg'], 1)} in the canonical "
        f"gauge); a_s within {fixed(m['max_kernel_gap'])} of the linear RNN's."
    )


def build(quick: bool = False) -> Preset:
    tied = relu_rnn_sharp_forgetting.build(quick).config("tied")
    rnn = tied.replace(sparsity=0.3)
    linear = linear_any_sparsity.build(quick).config("S=0.3")
    recipe = (
        f"the ReLU RNN preset's recipe (tied readout, N_h = 2, k = 3, T = 20, {rnn.seeds} "
        f"seeds, {rnn.steps} steps) at S = 0.3, one batch with the sparse run",
        "compared with the linear RNN at the same sparsity (the linear-any-sparsity run)",
    )
    return Preset(
        NAME, TITLE, CLAIM, (rnn, linear), ("rnn", "linear"), recipe, main="rnn", checker=check
    )
