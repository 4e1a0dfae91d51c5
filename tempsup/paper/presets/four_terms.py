"""The four loss terms track the measured loss.

Task, mean correction, projection and composition add up to the measured loss: exactly
for the linear RNN, to second order in p for the sparse SSM and ReLU RNN.

No training of its own: it reads the runs of the spiral-sink, ssm-jump and ReLU RNN
presets, and judges each where second order suffices.

Sources: science.md §1c.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

import tempsup.paper.presets.relu_rnn_sharp_forgetting as relu_rnn_sharp_forgetting
import tempsup.paper.presets.spiral_sink as spiral_sink
import tempsup.paper.presets.ssm_jump as ssm_jump
from tempsup.analysis.measures import expected_loss, term_values
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, card, fixed, num, result, rounded
from tempsup.paper.presets._loss_terms import late, terms_sentence

TERMS_GAP = 0.05  # the four terms (and the expected loss) within 5 % of the measured loss
TERMS_JUDGED = {"linear": 0.0, "ssm": 0.85, "rnn": 0.95}  # judged from this sparsity up


# the gallery card's picture (run label, panel or "summary": the preset's figure):
# measured loss against the four terms, per run
THUMBNAIL = ("ssm S=0.9", "summary")
NAME = "four-terms"
TITLE, CLAIM = card(__doc__)


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """One claim per run in the judged range (TERMS_JUDGED); denser runs are skipped."""
    judged = [terms_add_up(label, run) for label, run in runs.items()]
    return [r for r in judged if r is not None]


def terms_add_up(label: str, run: Run) -> ClaimResult | None:
    """One run's four terms (and E[L]) against its measured loss, late in training; None
    for a run denser than the judged range."""
    cfg, b = run.config, run.best
    if cfg.sparsity < TERMS_JUDGED[cfg.model] - 1e-9:
        return None  # dense ReLU readouts: third order and up matter (science.md §1c)
    last = late(run)
    terms = run["terms"].astype(float)  # (F, M, 4)
    measured = run["loss"][last].astype(float).mean(axis=0)  # (M,)
    four = terms[last].sum(axis=-1).mean(axis=0)
    exp = expected_loss(run)[last].mean(axis=0)
    rel4 = np.abs(four - measured) / np.maximum(measured, 1e-12)
    rel_e = np.abs(exp - measured) / np.maximum(measured, 1e-12)
    ok = (rel4 <= TERMS_GAP) & (rel_e <= TERMS_GAP)
    return result(
        f"{label}: the four terms add up to the measured loss",
        ok,
        bool(ok[b]),
        {
            "terms": term_values(terms[-1, b]),
            "four_terms": rounded(four[b], 4),
            "expected_loss": rounded(exp[b], 4),
            "measured_loss": rounded(measured[b], 4),
            "gap_four_terms": rounded(rel4[b], 3),
            "gap_expected_loss": rounded(rel_e[b], 3),
            "has_expected_loss": "expected_loss" in run.arrays,
        },
        f"per seed: |Σ terms − measured| and |expected − measured| ≤ {TERMS_GAP:.0%} "
        "of the measured loss, each averaged over the last quarter of the frames (the "
        "measured loss of a frame is one minibatch); judged for the linear RNN at every "
        f"sparsity, the SSM at S ≥ {TERMS_JUDGED['ssm']} and the ReLU RNN at S ≥ "
        f'{TERMS_JUDGED["rnn"]} (README, "The four loss terms"); held on the best seed',
        said=said_sum,
    )


def said_sum(m: dict[str, Any]) -> str:
    """The four terms, their sum, E[L] and the measured loss, late in training."""
    return (
        terms_sentence(m["terms"], m["four_terms"], m["measured_loss"])
        + f" ({num(100 * m['gap_four_terms'], 2)} % apart; E[L] {fixed(m['expected_loss'], 4)}, "
        f"{num(100 * m['gap_expected_loss'], 2)} %)."
    )


def figure(runs: dict[str, Run]) -> go.Figure:
    labels = list(runs)
    measured = [float(runs[lab]["loss"][-1, runs[lab].best]) for lab in labels]
    four = [float(runs[lab]["terms"][-1, runs[lab].best].sum()) for lab in labels]
    fig = go.Figure(layout=base_layout("Final loss of the best seed: measured vs four terms"))
    fig.add_bar(x=labels, y=measured, name="measured")
    fig.add_bar(x=labels, y=four, name="four terms")
    fig.update_yaxes(type="log")
    return fig


def build(quick: bool = False) -> Preset:
    linear = spiral_sink.build(quick).configs[0]
    ssm = ssm_jump.build(quick)
    rnn = relu_rnn_sharp_forgetting.build(quick).config("tied")
    configs = (linear, ssm.config("S=0.85"), ssm.config("S=0.9"), rnn)
    recipe = (
        "no training of its own: the runs of the spiral-sink, ssm-jump and ReLU RNN presets",
        'terms as in the README, "The four loss terms" (linear: exact; ReLU readouts: '
        "second order in p); judged where second order suffices (SSM S ≥ 0.85, ReLU RNN "
        "S ≥ 0.95)",
    )
    labels = ("linear S=0.9", "ssm S=0.85", "ssm S=0.9", "rnn S=0.97")
    return Preset(
        NAME, TITLE, CLAIM, configs, labels, recipe, main="ssm S=0.9", checker=check, figure=figure
    )
