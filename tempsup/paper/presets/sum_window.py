"""A sum over w steps: the kernel takes the window's shape, carried by one direction.

Trained to output the sum of the w inputs of ages k … k + w − 1, the SSM's output
projections a_s ≈ 1 across the window, and the window's directions w_k … w_{k+w−1}
lie close to one line: one direction for the window rather than w.

A finding, measured (issue 43): the SSM and, for contrast, the linear RNN at S = 0.9,
k = 2, w = 1, 2, 3. The angles between directions depend on the hidden basis (read in
the basis training gives); their spread σ_2/σ_1 is reported beside the gauge-free a_s.

Sources: science.md §1; issue 43 (the sum task).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from tempsup.analysis.measures import final_weights, kernel
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.preset import ClaimResult, Preset, card, fixed, listed, result, rounded
from tempsup.theory import geometry

# the gallery card's picture (run label, panel or "summary": the preset's figure)
THUMBNAIL = ("ssm w=3", "summary")
NAME = "sum-window"
TITLE, CLAIM = card(__doc__)
SHAPE_TOL = 0.25  # the window's a_s count as ≈ 1 within this
ONE_LINE = 0.3  # the window's directions lie on one line when σ_2/σ_1 is at most this
WINDOWS = (1, 2, 3)
MODELS = ("ssm", "linear")


def label(model: str, w: int) -> str:
    return f"{model} w={w}"


def window_of(run: Run) -> dict[str, np.ndarray]:
    """Per seed: the window's a_s (M, w), its largest |a_s − 1|, and σ_2/σ_1 of the
    window's directions [w_k … w_{k+w−1}] (0 for w = 1)."""
    cfg, w = run.config, run.config.window
    a = kernel(run)[:, cfg.k : cfg.k + w]
    W = final_weights(run)
    W_s = geometry.feature_directions(W["W_x"], W["W_h"], cfg.k + w, cfg.relu_hidden)
    win = W_s[:, cfg.k : cfg.k + w, :, 0]  # (M, w, N_h)
    sv = np.linalg.svd(win, compute_uv=False)  # (M, min(w, N_h))
    spread = sv[:, 1] / np.maximum(sv[:, 0], 1e-12) if w > 1 else np.zeros(len(a))
    return {"a": a, "gap": np.abs(a - 1).max(axis=1), "spread": spread}


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The window's shape in a_s, then how many directions carry it, SSM first."""
    return [shape(runs), one_direction(runs)]


def _per_run(runs: dict[str, Run], models: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    out = {}
    for lab, run in runs.items():
        if run.config.model in models:
            r, b = window_of(run), run.best
            out[lab] = {"w": run.config.window, **{n: v[b] for n, v in r.items()}, "all": r}
    return out


def shape(runs: dict[str, Run]) -> ClaimResult:
    """|a_s − 1| ≤ SHAPE_TOL across the window on the SSM's best seed at every w."""
    per = _per_run(runs, MODELS)
    ssm = [lab for lab in per if lab.startswith("ssm")]
    ok = np.concatenate([per[lab]["all"]["gap"] <= SHAPE_TOL for lab in ssm])
    held = all(per[lab]["gap"] <= SHAPE_TOL for lab in ssm)
    measured = {
        "runs": {lab: {"a_window_best": rounded(p["a"]), "max_gap_best": rounded(p["gap"])}
                 for lab, p in per.items()},
    }  # fmt: skip
    return result(
        "the SSM's kernel takes the window's shape: a_s ≈ 1 for k ≤ s < k + w",
        ok,
        held,
        measured,
        f"per seed: max over the window of |a_s − 1| ≤ {SHAPE_TOL:g}; held on the SSM's "
        "best seed at every w (the linear RNN's numbers are reported beside it, not counted)",
        said=said_shape,
    )


def said_shape(m: dict[str, Any]) -> str:
    parts = [
        f"{lab}: a = {listed(r['a_window_best'])} (max |a_s − 1| {fixed(r['max_gap_best'], 2)})"
        for lab, r in m["runs"].items()
    ]
    return "The window's a_s of the best seeds: " + "; ".join(parts) + "."


def one_direction(runs: dict[str, Run]) -> ClaimResult:
    """σ_2/σ_1 of the window's directions ≤ ONE_LINE on the best seed of every w ≥ 2 run."""
    per = {lab: p for lab, p in _per_run(runs, MODELS).items() if p["w"] > 1}
    ok = np.concatenate([p["all"]["spread"] <= ONE_LINE for p in per.values()])
    held = all(p["spread"] <= ONE_LINE for p in per.values())
    measured = {"runs": {lab: {"spread_best": rounded(p["spread"])} for lab, p in per.items()}}
    return result(
        "one direction carries the window: w_k … w_{k+w−1} lie close to one line",
        ok,
        held,
        measured,
        f"per seed: σ_2/σ_1 of the matrix of the window's directions ≤ {ONE_LINE:g} (in the "
        "basis training gives; a stretch of the hidden basis changes it); held on the best "
        "seed of every run with w ≥ 2, SSM and linear",
        said=said_one,
    )


def said_one(m: dict[str, Any]) -> str:
    parts = [f"{lab} {fixed(r['spread_best'], 2)}" for lab, r in m["runs"].items()]
    return "σ_2/σ_1 of the window's directions, best seeds: " + ", ".join(parts) + "."


def figure(runs: dict[str, Run]) -> go.Figure:
    fig = go.Figure(layout=base_layout("a_s of the best seeds against the age s"))
    for lab, run in runs.items():
        a = kernel(run)[run.best]
        fig.add_scatter(x=list(range(len(a))), y=a.tolist(), mode="lines+markers", name=lab)
    fig.update_xaxes(title="age s")
    return fig


def build(quick: bool = False) -> Preset:
    steps, seeds = (1000, 4) if quick else (2000, 8)
    base = RunConfig("ssm", k=2, sparsity=0.9, seeds=seeds, steps=steps,
                     snapshot_every=steps // 10, task="sum")  # fmt: skip
    grid = tuple((m, w) for m in MODELS for w in ((1, 3) if quick else WINDOWS))
    configs = tuple(base.replace(model=m, window=w) for m, w in grid)
    labels = tuple(label(*g) for g in grid)
    recipe = (
        f"task sum (y_t = x_(t−k) + … + x_(t−k−w+1)), k = 2, S = 0.9, N_h = 2, T = 20, tied "
        f"readout, {base.seeds} seeds, {base.steps} steps, w = "
        f"{', '.join(str(w) for m, w in grid if m == 'ssm')}; the SSM and the linear RNN",
    )
    return Preset(NAME, TITLE, CLAIM, configs, labels, recipe, main=label("ssm", grid[-1][1]),
                  checker=check, figure=figure)  # fmt: skip
