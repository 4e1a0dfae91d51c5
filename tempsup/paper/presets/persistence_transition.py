"""SSM: persistent inputs move the basin switch to higher sparsity.

With inputs that repeat their previous value with probability q (corr(x_t, x_{t−d}) =
q^d, the same marginal sparsity), the SSM's best seed switches from the ≈ 90° to the
≈ 270° basin at a higher sparsity than with inputs independent in time.

A finding, measured (issue 43): the ssm-jump sweep's recipe at q = 0, 0.5 and 0.8 on a
sparsity grid that reaches S = 0.99. Runs of ones make neighbours in time co-occur, so
the interference the sparse basin avoids is more frequent at the same sparsity.

Sources: science.md §1; issue 43 (persistence).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

import tempsup.paper.presets.ssm_dense_vs_sparse as ssm_dense_vs_sparse
from tempsup.analysis.measures import swept
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, card, deg, result
from tempsup.paper.presets.ssm_jump import story

# the gallery card's picture (run label, panel or "summary": the preset's figure)
THUMBNAIL = ("q=0 S=0.9", "summary")
NAME = "persistence-transition"
TITLE, CLAIM = card(__doc__)
COUNTED = "persistences q > 0 whose switch lies at a higher sparsity than at q = 0"


def label(q: float, s: float) -> str:
    return f"q={q:g} S={s:g}"


def by_persistence(runs: dict[str, Run]) -> dict[float, list[Run]]:
    """The runs of each q, by increasing sparsity."""
    out: dict[float, list[Run]] = {}
    for run in runs.values():
        out.setdefault(run.config.persistence, []).append(run)
    return {q: sorted(rs, key=lambda r: r.config.sparsity) for q, rs in sorted(out.items())}


def first_sparse(sparsities: Sequence[float], regimes: str) -> float | None:
    """The lowest sparsity from which the best seed is in the ≈ 270° basin at every higher
    one (None: not even at the grid's sparsest point). Unlike `ssm_jump.jump` it does not
    ask for a clean d…d s…s: at q > 0 the dense basin's |kθ| drifts past 130°."""
    n = len(regimes) - len(regimes.rstrip("s"))
    return None if n == 0 else float(sparsities[len(regimes) - n])


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claim: where the best seed switches basin, per q."""
    return [switch_moves(runs)]


def switch_moves(runs: dict[str, Run]) -> ClaimResult:
    """The switch (first sparsity of the ≈ 270° basin for good) lies higher for q > 0."""
    per_q: dict[str, Any] = {}
    where: dict[float, float] = {}
    for q, group in by_persistence(runs).items():
        m = story(group)
        first = first_sparse(m["sparsity"], m["regime_best"])
        where[q] = np.inf if first is None else first
        per_q[f"{q:g}"] = {
            "sparsity": m["sparsity"],
            "k_theta_deg_best": m["k_theta_deg_best"],
            "regime_best": m["regime_best"],
            "rho_best": m["rho_best"],
            "first_sparse": first,
        }
    q0, later = min(where), [q for q in where if q > min(where)]
    moved = np.array([where[q] > where[q0] for q in later])
    return result(
        "persistence moves the SSM's ≈ 90° → ≈ 270° switch to a higher sparsity",
        moved,
        bool(moved.size and moved.all()),
        {"q0": q0, "per_q": per_q},
        "per q: the best seed's regime at each sparsity (d ≈ 90°, s ≈ 270°, ±30°; '.' "
        "neither); the switch is the lowest sparsity from which it reads s at every higher "
        "one (none on the grid: beyond it); held when it lies higher for every q > 0 than "
        "at q = 0",
        said=said,
        counted=COUNTED,
    )


def said(m: dict[str, Any]) -> str:
    """Per q: where the best seed reaches the ≈ 270° basin, and its |kθ| on either side."""
    parts = []
    for q, r in m["per_q"].items():
        S, th, first = r["sparsity"], r["k_theta_deg_best"], r["first_sparse"]
        if first is None:
            parts.append(
                f"q = {q}: no switch up to S = {S[-1]:g} (kθ {deg(th[0])} → {deg(th[-1])}, "
                f"regimes {r['regime_best']})"
            )
            continue
        i = S.index(first)
        before = f" from {deg(th[i - 1])} at S = {S[i - 1]:g}" if i else ""
        parts.append(f"q = {q}: the ≈ 270° basin from S = {first:g} on ({deg(th[i])}{before})")
    return "; ".join(parts) + "."


def figure(runs: dict[str, Run]) -> go.Figure:
    fig = go.Figure(layout=base_layout("|kθ| of the best seed against sparsity, per q"))
    for q, group in by_persistence(runs).items():
        y = [abs(float(swept(r)[r.best])) for r in group]
        x = [r.config.sparsity for r in group]
        fig.add_scatter(x=x, y=y, mode="lines+markers", name=f"q = {q:g}")
    fig.update_xaxes(title="sparsity S")
    fig.update_yaxes(title="|kθ| (deg)")
    return fig


def build(quick: bool = False) -> Preset:
    base = ssm_dense_vs_sparse.build(quick).configs[0]
    if quick:  # the suite's stand-in: either side of the switch, two q
        grid, qs = (0.5, 0.9, 0.97), (0.0, 0.5)
        base = base.replace(seeds=4, steps=1000, snapshot_every=100)
    else:
        grid, qs = (0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99), (0.0, 0.5, 0.8)
        base = base.replace(seeds=8, steps=2000, snapshot_every=200)
    configs = tuple(base.replace(sparsity=s, persistence=q) for q in qs for s in grid)
    labels = tuple(label(c.persistence, c.sparsity) for c in configs)
    recipe = (
        f"the SSM preset's recipe (tied readout, N_h = 2, k = 3, T = 20, {base.seeds} seeds, "
        f"{base.steps} steps) at S = {', '.join(f'{g:g}' for g in grid)}, each at persistence "
        f"q = {', '.join(f'{q:g}' for q in qs)} (one batch per q)",
        "every point starts from the same init seeds; the inputs of a q > 0 run repeat their "
        "previous value with probability q, the marginal sparsity unchanged",
    )
    main = label(0.0, 0.9)
    return Preset(NAME, TITLE, CLAIM, configs, labels, recipe, main=main, checker=check,
                  figure=figure)  # fmt: skip
