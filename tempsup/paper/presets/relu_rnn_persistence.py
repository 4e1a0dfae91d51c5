"""ReLU RNN with persistent inputs: are the intermediate directions still parked?

When inputs persist in time (x_t repeats x_{t−1} with probability q), the ReLU RNN still
puts all k intermediate directions in the interference-free half-space, although the ages
next to the output one now co-occur with it.

A finding, measured (issue 43): the sharp-forgetting preset's tied ReLU RNN (N_h = 2,
k = 3, S = 0.97) at q = 0, 0.5 and 0.8. Correlated features interfere constructively
(the correlations paper, science.md §2): in time, a neighbour of age k carries
information about x_{t−k}.

Sources: science.md §1, §2; issue 43 (persistence).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from tempsup.analysis.measures import ALIVE, TOL, kernel
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.preset import ClaimResult, Preset, card, listed, result, rounded

# the gallery card's picture (run label, panel or "summary": the preset's figure)
THUMBNAIL = ("q=0.5", "directions")
NAME = "relu-rnn-persistence"
TITLE, CLAIM = card(__doc__)
PERSISTENCES = (0.0, 0.5, 0.8)


def label(q: float) -> str:
    return f"q={q:g}"


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claim: the intermediate directions in the half-space, per q."""
    return [still_parked(runs)]


def still_parked(runs: dict[str, Run]) -> ClaimResult:
    """All k intermediate a_s ≤ TOL (and a_k alive) on the best seed at every q > 0."""
    per_q, ok, held = {}, [], True
    for run in sorted(runs.values(), key=lambda r: r.config.persistence):
        a, b, k = kernel(run), run.best, run.config.k
        alive = a[:, k] >= ALIVE
        parked = (a[:, :k] <= TOL).all(axis=1) & alive
        q = run.config.persistence
        if q > 0:
            ok.append(parked)
            held &= bool(parked[b])
        per_q[f"{q:g}"] = {
            "a_best": rounded(a[b, : k + 4]),
            "intermediate_free_best": int((a[b, :k] <= TOL).sum()),
            "alive_best": bool(alive[b]),
            "alive_seeds": int(alive.sum()),
            "parked_seeds": int(parked.sum()),
            "seeds": int(alive.size),
            "loss_best": rounded(float(run.final_loss[b]), 4),
        }
    return result(
        "with persistent inputs the ReLU RNN still parks all k intermediate directions in "
        "the interference-free half-space",
        np.concatenate(ok) if ok else np.zeros(0, bool),
        held and bool(ok),
        {"k": 3, "per_q": per_q},
        f"per seed: a_k ≥ {ALIVE} and a_s ≤ {TOL} for every s < k; held when the best seed "
        "(lowest loss) of every q > 0 run does so; q = 0 is reported as the reference and "
        "not counted",
        said=said,
    )


def said(m: dict[str, Any]) -> str:
    """Per q: how many intermediate directions of the best seed are free, and its a_s."""
    parts = [
        f"q = {q}: {r['intermediate_free_best']} of {m['k']} intermediate a_s ≤ 0, a_0…"
        f"a_{len(r['a_best']) - 1} = {listed(r['a_best'])}"
        f"{'' if r['alive_best'] else ' (a_k below ' + str(ALIVE) + ')'}, "
        f"{r['parked_seeds']} of {r['seeds']} seeds parked"
        for q, r in m["per_q"].items()
    ]
    return "; ".join(parts) + "."


def figure(runs: dict[str, Run]) -> go.Figure:
    fig = go.Figure(layout=base_layout("a_s of the best seed against the age s, per q"))
    for run in sorted(runs.values(), key=lambda r: r.config.persistence):
        a = kernel(run)[run.best]
        name = f"q = {run.config.persistence:g}"
        fig.add_scatter(x=list(range(len(a))), y=a.tolist(), mode="lines+markers", name=name)
    fig.update_xaxes(title="age s")
    return fig


def build(quick: bool = False) -> Preset:
    steps = 1000 if quick else 2000
    base = RunConfig("rnn", k=3, sparsity=0.97, seeds=16, steps=steps, snapshot_every=steps // 10)
    qs = PERSISTENCES[:2] if quick else PERSISTENCES
    configs = tuple(base.replace(persistence=q) for q in qs)
    labels = tuple(label(q) for q in qs)
    recipe = (
        f"the sharp-forgetting preset's ReLU RNN (tied readout, N_h = 2, k = 3, T = 20, "
        f"S = 0.97, {base.seeds} seeds, most die) for {base.steps} steps, at persistence "
        f"q = {', '.join(f'{q:g}' for q in qs)}",
    )
    return Preset(NAME, TITLE, CLAIM, configs, labels, recipe, main=label(0.5), checker=check,
                  figure=figure)  # fmt: skip
