"""Selective SSM: does it gate what it stores?

A selective SSM (its step Δ_t = softplus(w·x_t + b) set by the current input) trained on
the k = 3 delay at S = 0.9 and 0.97 responds to a real input differently from a silent
one: its memory is nonlinear, the input opening or closing its own gate.

A finding, measured: the distance between the readout kernel of the active response (one
input of the law's mean value) and the linearised one at rest (`nonlinearity`, 0 for a
linear recurrence), with the step at rest softplus(b) against the step an input of the
mean value opens, softplus(w·μ + b). Free readout: with the tied readout the selective
SSM stayed near the silent loss in every trial.

Sources: science.md §1; issue 42 (selective SSMs, S6-style discretisation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from tempsup.analysis.measures import active_kernel, kernel
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.preset import ClaimResult, Preset, card, fixed, result, rounded
from tempsup.theory.closed_form import input_moments

# the gallery card's picture: the best seeds' kernels at rest and for a real input
THUMBNAIL = ("S=0.97", "summary")
NAME = "selective-gating"
TITLE, CLAIM = card(__doc__)
GATES = 0.1  # the active kernel at least this far (relative) from the silent one: it gates


def softplus(v: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, v)


def steps_of(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """Per seed: Δ at rest, softplus(b), and for an input of the mean value μ on every
    feature, softplus(w·μ + b)."""
    mu, _ = input_moments(run.config.input_dist)
    w, b = run["net_w"][-1].astype(float), run["net_b"][-1].astype(float)  # (M, N_x), (M, 1)
    return softplus(b[:, 0]), softplus(w.sum(axis=1) * mu + b[:, 0])


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The gating claim over both sparsities."""
    return [gates(runs)]


def gates(runs: dict[str, Run]) -> ClaimResult:
    """nonlinearity > GATES on the best seed of every run."""
    ok, held, per_run = [], True, {}
    for lab, run in runs.items():
        nl = np.asarray(run["nonlinearity"][-1], dtype=float)
        rest, active = steps_of(run)
        b = run.best
        ok.append(nl > GATES)
        held &= bool(nl[b] > GATES)
        per_run[lab] = {
            "nonlinearity_best": rounded(nl[b]),
            "nonlinearity_median": rounded(float(np.median(nl))),
            "delta_rest_best": rounded(rest[b]),
            "delta_active_best": rounded(active[b]),
            "loss_best": rounded(float(run.final_loss[b]), 4),
        }
    return result(
        "the selective SSM gates what it stores: a real input's response differs from the "
        f"silent one by more than {GATES:.0%}",
        np.concatenate(ok),
        held,
        {"runs": per_run},
        f"per seed: ‖a_active − a_silent‖ / ‖a_silent‖ > {GATES:g} over ages 0 … T−1 (the "
        "active response to one input of the law's mean value, divided by it); held on "
        "the best seed (lowest measured loss) of every run",
        said=said_gates,
    )


def said_gates(m: dict[str, Any]) -> str:
    """Per run: the best seed's distance and its step at rest and for an input."""
    parts = [
        f"{lab}: {fixed(r['nonlinearity_best'])} (median over seeds "
        f"{fixed(r['nonlinearity_median'])}), Δ {fixed(r['delta_rest_best'])} at rest and "
        f"{fixed(r['delta_active_best'])} for an input of the mean value"
        for lab, r in m["runs"].items()
    ]
    return "Active against silent kernel of the best seeds, " + "; ".join(parts) + "."


def figure(runs: dict[str, Run]) -> go.Figure:
    fig = go.Figure(layout=base_layout("a_s of the best seeds: at rest (linearised) and active"))
    for lab, run in runs.items():
        b = run.best
        for name, a, dash in (
            ("at rest", kernel(run), "dot"),
            ("active", active_kernel(run), None),
        ):
            fig.add_scatter(
                x=list(range(a.shape[1])), y=a[b].tolist(), mode="lines+markers",
                name=f"{lab} {name}", line={"dash": dash},
            )  # fmt: skip
    fig.update_xaxes(title="age s")
    fig.update_yaxes(title="a_s", type="linear")
    return fig


def build(quick: bool = False) -> Preset:
    base = RunConfig(
        "selective", k=3, tied=False, seeds=4 if quick else 8, steps=600 if quick else 3000,
        snapshot_every=50,
    )  # fmt: skip
    grid = (0.97,) if quick else (0.9, 0.97)
    configs = tuple(base.replace(sparsity=s) for s in grid)
    labels = tuple(f"S={s:g}" for s in grid)
    recipe = (
        f"selective SSM (diagonal A = −exp(A_log), Δ_t = softplus(w·x_t + b), h_t = "
        f"exp(Δ_t A) h_(t−1) + Δ_t B x_t, ReLU readout), free readout, N_h = 2, k = 3, "
        f"T = 20, {base.seeds} seeds, {base.steps} steps, at S = "
        + ", ".join(f"{s:g}" for s in grid),
    )
    return Preset(
        NAME, TITLE, CLAIM, configs, labels, recipe, main="S=0.97", checker=check, figure=figure
    )
