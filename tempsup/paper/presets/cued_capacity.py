"""Cued recall: does a wider ReLU RNN select the cued delay better?

On the cued task (a cue channel names which of the delays 1 and 3 to output at each
step) the ReLU RNN with N_h = 4 reaches a lower loss than with N_h = 2, and both below
the linear RNN, whose output cannot switch by cue.

A finding, measured (issue 43): the best seed's expected loss (Monte Carlo ± se) as a
fraction of the silent loss (the loss of outputting 0) at S = 0.9, 8 seeds.

Sources: science.md §1; issue 43 (the cued task).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from tempsup.core.palette import base_layout
from tempsup.io import tasks_frame
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.preset import ClaimResult, Preset, card, fixed, result, rounded
from tempsup.paper.presets.ssm_jump import ranking_loss

# the gallery card's picture (run label, panel or "summary": the preset's figure)
THUMBNAIL = ("rnn N_h=4", "summary")
NAME = "cued-capacity"
TITLE, CLAIM = card(__doc__)
BETTER = 0.9  # "lower" means at most this fraction of the other's loss
GRID = (("rnn", 2), ("rnn", 4), ("linear", 2))


def label(model: str, hidden: int) -> str:
    return f"{model} N_h={hidden}"


def fractions(runs: dict[str, Run]) -> dict[str, dict[str, Any]]:
    """Per run: every seed's final loss over the silent loss, and the best seed's."""
    out = {}
    for lab, run in runs.items():
        silent = tasks_frame.silent_loss(run.config)
        frac = ranking_loss(run) / silent
        out[lab] = {"all": frac, "best": float(frac[run.best]), "silent": silent}
    return out


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """Width helps the ReLU RNN; the ReLU RNN beats the linear one."""
    f = fractions(runs)
    return [wider(f), beats_linear(f)]


def _measured(f: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "loss_over_silent_best": {lab: rounded(r["best"]) for lab, r in f.items()},
        "silent_loss": rounded(next(iter(f.values()))["silent"]),
    }


def wider(f: dict[str, dict[str, Any]]) -> ClaimResult:
    """N_h = 4's best loss ≤ BETTER × N_h = 2's."""
    two, four = f[label("rnn", 2)], f[label("rnn", 4)]
    ok = four["all"] <= BETTER * two["best"]
    return result(
        "the ReLU RNN with N_h = 4 reaches a lower cued loss than with N_h = 2",
        ok,
        bool(four["best"] <= BETTER * two["best"]),
        _measured(f),
        f"the best seed's final loss (Monte Carlo) over the silent loss; held when N_h = 4's "
        f"is at most {BETTER:g} × N_h = 2's; counted per N_h = 4 seed against N_h = 2's best",
        said=said,
    )


def beats_linear(f: dict[str, dict[str, Any]]) -> ClaimResult:
    """Both ReLU RNNs' best loss ≤ BETTER × the linear RNN's."""
    lin = f[label("linear", 2)]["best"]
    relu = [r for lab, r in f.items() if lab.startswith("rnn")]
    ok = np.concatenate([r["all"] <= BETTER * lin for r in relu])
    return result(
        "the ReLU RNN's cued loss is below the linear RNN's, which cannot select by cue",
        ok,
        all(r["best"] <= BETTER * lin for r in relu),
        _measured(f),
        f"as above; held when the best seed of each ReLU RNN is at most {BETTER:g} × the "
        "linear RNN's best; counted per ReLU seed",
        said=said,
    )


def said(m: dict[str, Any]) -> str:
    parts = [f"{lab} {fixed(v)}" for lab, v in m["loss_over_silent_best"].items()]
    return (
        "Best seeds' final loss over the silent loss "
        f"({fixed(m['silent_loss'])}): " + ", ".join(parts) + "."
    )


def figure(runs: dict[str, Run]) -> go.Figure:
    f = fractions(runs)
    fig = go.Figure(layout=base_layout("Cued recall: final loss / silent loss, every seed"))
    for lab, r in f.items():
        fig.add_scatter(x=[lab] * len(r["all"]), y=r["all"].tolist(), mode="markers", name=lab)
    fig.update_yaxes(title="loss / silent loss")
    return fig


def build(quick: bool = False) -> Preset:
    steps, seeds = (600, 4) if quick else (2000, 8)
    base = RunConfig("rnn", sparsity=0.9, seeds=seeds, steps=steps, snapshot_every=steps // 10,
                     task="cued", ks=(1, 3))  # fmt: skip
    configs = tuple(base.replace(model=m, hidden=h) for m, h in GRID)
    labels = tuple(label(*g) for g in GRID)
    recipe = (
        f"task cued, delays 1 and 3 (a one-hot cue channel per delay), S = 0.9, T = 20, free "
        f"readout, {base.seeds} seeds, {base.steps} steps: the ReLU RNN with N_h = 2 and 4, "
        "and the linear RNN with N_h = 2",
    )
    return Preset(NAME, TITLE, CLAIM, configs, labels, recipe, main=label("rnn", 4),
                  checker=check, figure=figure)  # fmt: skip
