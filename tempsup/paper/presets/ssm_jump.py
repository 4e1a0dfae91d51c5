"""SSM: where the best seed switches basin.

A fine sparsity sweep: the best seed's kθ switches from the ≈ 90° basin to the ≈ 270° one
within a narrow band of sparsity. Whether a seed itself moves, or keeps its basin while the
other basin's lowest loss overtakes, is measured seed by seed.

Every sparsity starts from the same init seeds, so a seed index can be followed across
the sweep; the lowest loss of each basin shows which one wins on each side of the jump.

Sources: science.md §1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

import tempsup.paper.presets.ssm_dense_vs_sparse as ssm_dense_vs_sparse
from tempsup.analysis.measures import (
    ALIVE,
    TOL,
    basin,
    kernel,
    leading_eigenvalue,
    sorted_by,
    swept,
)
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, card, deg, fixed, num, result, rounded
from tempsup.paper.summary import against_sparsity

JUMP_WIDTH = 0.1  # the best seed switches basin within this much sparsity

# the gallery card's picture (run label, panel or "summary": the preset's figure):
# kθ against S across the sweep: where it jumps
THUMBNAIL = ("S=0.5", "summary")
NAME = "ssm-jump"
TITLE, CLAIM = card(__doc__)
COUNTED = "seeds switch basin themselves"  # what the claim's seed count counts


def jump(sparsities: Sequence[float], regimes: Sequence[str]) -> dict[str, Any] | None:
    """Where a sequence of regimes over increasing sparsity switches from dense to sparse.

    Clean when it reads d…d s…s (at least one of each, nothing else); then the jump
    lies between the last dense and the first sparse sparsity: its location is the
    midpoint and its width their distance. None when not clean.
    """
    r = "".join(regimes)
    n_d = len(r) - len(r.lstrip("d"))
    if n_d == 0 or n_d == len(r) or set(r[n_d:]) != {"s"}:
        return None
    lo, hi = float(sparsities[n_d - 1]), float(sparsities[n_d])
    return {"between": [lo, hi], "location": round((lo + hi) / 2, 3), "width": round(hi - lo, 3)}


def ranking_loss(run: Run) -> np.ndarray:
    """Each seed's final loss as the best seed is ranked: the expected loss where it was
    computed for every seed (exact for the SSM), else the measured loss."""
    expected = np.asarray(run["expected_loss"][-1], dtype=float)
    return expected if np.isfinite(expected).all() else np.asarray(run.final_loss, dtype=float)


def story(runs: Sequence[Run]) -> dict[str, Any]:
    """The basin story of a sparsity sweep (runs of one k, same seeds), measured once.

    Per sparsity: the best seed's kθ and regime, ρ(W_h), and each basin's lowest loss;
    per seed index (the same init at every sparsity): its regimes, whether it switches
    from dense to sparse itself (a clean d…d s…s) and whether it keeps one regime
    throughout. The phase page reads the same function on its own sweep.
    """
    runs = sorted(runs, key=lambda r: r.config.sparsity)
    S = [r.config.sparsity for r in runs]
    theta = np.array([swept(r) for r in runs])  # (P, M)
    best = [r.best for r in runs]
    best_theta = theta[np.arange(len(runs)), best]
    best_reg = basin(best_theta)
    found = jump(S, best_reg)
    regimes = basin(theta)  # (P, M)
    seed_jumps = [jump(S, regimes[:, m]) for m in range(theta.shape[1])]
    rho = [float(np.abs(leading_eigenvalue(r))[b]) for r, b in zip(runs, best, strict=True)]
    loss = np.array([ranking_loss(r) for r in runs])  # (P, M)

    def basin_best(which: str) -> list[float | None]:  # lowest loss among seeds in a regime
        return [
            rounded(loss[i][regimes[i] == which].min(), 4) if (regimes[i] == which).any() else None
            for i in range(len(runs))
        ]

    one_regime = [len(set(regimes[:, m])) == 1 for m in range(theta.shape[1])]
    measured: dict[str, Any] = {
        "sparsity": S,
        "k_theta_deg_best": rounded(best_theta, 0),
        "regime_best": "".join(best_reg),
        "jump_best": found,
        "rho_best": rounded(rho),
        "lowest_loss_dense_seeds": basin_best("d"),
        "lowest_loss_sparse_seeds": basin_best("s"),
        "seeds": int(theta.shape[1]),
        "seeds_switching": int(sum(switches(j) for j in seed_jumps)),
        "jump_per_seed": [j and j["between"] for j in seed_jumps],
        "seeds_in_one_regime_at_every_sparsity": int(sum(one_regime)),
        "regimes_per_seed": ["".join(regimes[:, m]) for m in range(theta.shape[1])],
    }
    if found is not None:
        i = S.index(found["between"][0])
        measured["jump_deg"] = rounded(abs(best_theta[i + 1]) - abs(best_theta[i]), 0)
    return measured


def switches(found: dict[str, Any] | None) -> bool:
    """Whether a `jump` is clean and within JUMP_WIDTH of sparsity."""
    return found is not None and found["width"] <= JUMP_WIDTH + 1e-9


def said_of_sweep(runs: Sequence[Run]) -> str:
    """The same sentence for any finished sparsity sweep (the phase page's own): per
    persistence q and per k when it spans several, and a plain statement when one of them
    has a single sparsity."""
    by_k: dict[tuple[float, int], list[Run]] = {}
    for run in runs:
        by_k.setdefault((run.config.persistence, run.config.k), []).append(run)
    qs, ks = {q for q, _ in by_k}, {k for _, k in by_k}
    out = []
    for (q, k), group in sorted(by_k.items()):
        names = [f"q = {q:g}"] * (len(qs) > 1) + [f"k = {k}"] * (len(ks) > 1)
        head = ", ".join(names) + ": " if names else ""
        if len({r.config.sparsity for r in group}) < 2:
            out.append(f"{head}one sparsity only, so no switch of basin to locate.")
        else:
            out.append(head + said(story(group)))
    return " ".join(out)


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claim, on the SSM runs over increasing sparsity."""
    return [basin_switch(runs)]


def basin_switch(runs: dict[str, Run]) -> ClaimResult:
    """The best seed's kθ jumps from the dense to the sparse basin within a narrow ΔS."""
    labels = sorted_by(runs, "sparsity")
    ordered = [runs[lab] for lab in labels]
    measured = story(ordered)
    switched = [
        switches(jump(measured["sparsity"], regimes)) for regimes in measured["regimes_per_seed"]
    ]
    k = ordered[0].config.k
    kern = [kernel(r)[r.best] for r in ordered]
    measured["intermediates_packed_best"] = [
        bool((a[:k] <= TOL).all() and a[k] >= ALIVE) for a in kern
    ]
    return result(
        "the best seed's kθ switches from the ≈ 90° to the ≈ 270° basin within "
        f"ΔS ≤ {JUMP_WIDTH:g} as sparsity grows",
        np.array(switched),
        switches(measured["jump_best"]),
        measured,
        f"regimes: dense ||kθ| − 100°| ≤ 30°, sparse ||kθ| − 270°| ≤ 30° (d, s; '.' "
        f"neither); held when the best seeds over increasing sparsity read d…d s…s and the "
        f"last dense and first sparse sparsity are ≤ {JUMP_WIDTH:g} apart (location = "
        "their midpoint, width = their distance); counted per seed index (the same init "
        "at every sparsity) when its own sequence does so; the lowest loss (expected "
        "loss, exact for the SSM) among dense- and among sparse-regime seeds per sparsity "
        "shows which basin wins. kθ is gauge "
        "dependent (read in the canonical gauge; a stretch of the hidden basis moves dense "
        "values by ~20°, not the 270° "
        "ones); the gauge-free a_s packing and ρ(W_h) are reported beside it",
        said=said,
        counted=COUNTED,
    )


def said(m: dict[str, Any]) -> str:
    """The one sentence of the sweep's story: where the best seed switches basin, and that
    this is a change of the winning basin, not seeds moving (gallery, lesson, phase page,
    report and README all read it)."""
    S, th, rho = m["sparsity"], m["k_theta_deg_best"], m["rho_best"]
    dense, sparse = m["lowest_loss_dense_seeds"], m["lowest_loss_sparse_seeds"]
    found = m["jump_best"]
    if found is not None:
        lo, hi = found["between"]
        i = S.index(lo)
        first = (
            f"The best seed switches basin between S = {lo:g} and {hi:g}: its kθ goes from "
            f"{deg(th[i])} to {deg(th[i + 1])} and ρ(W_h) from {num(rho[i])} to "
            f"{num(rho[i + 1])}"
        )
        if None not in (dense[i], sparse[i], dense[i + 1], sparse[i + 1]):
            first += (
                f", because the ≈ 270° basin's lowest loss ({fixed(sparse[i])} → "
                f"{fixed(sparse[i + 1])}) falls below the ≈ 90° basin's ({fixed(dense[i])} → "
                f"{fixed(dense[i + 1])})"
            )
        first += "."
    else:
        first = (
            f"The best seed does not switch cleanly from the ≈ 90° to the ≈ 270° basin over "
            f"S = {S[0]:g}–{S[-1]:g} (its regimes read {m['regime_best']}: d ≈ 90°, "
            "s ≈ 270°, . neither)."
        )
    n, moved, kept = m["seeds"], m["seeds_switching"], m["seeds_in_one_regime_at_every_sparsity"]
    if moved == 0:
        second = (
            f"Individual seeds do not move: 0 of {n} switch basin themselves, and {kept} of "
            f"{n} keep one basin at every sparsity."
        )
    else:
        second = (
            f"{moved} of {n} seeds switch basin themselves; {kept} of {n} keep one basin at "
            "every sparsity."
        )
    return f"{first} {second}"


def figure(runs: dict[str, Run]) -> go.Figure:
    y = [float(swept(runs[lab])[runs[lab].best]) for lab in sorted_by(runs, "sparsity")]
    return against_sparsity(runs, y, "kθ of the best seed against sparsity", "kθ (deg)")


def build(quick: bool = False) -> Preset:
    base = ssm_dense_vs_sparse.build(quick).configs[0]
    grid = (
        (0.3, 0.4, 0.5, 0.6, 0.8, 0.85, 0.9)
        if quick
        else (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.85, 0.9)
    )
    configs = tuple(base.replace(sparsity=s) for s in grid)
    labels = tuple(f"S={c.sparsity:g}" for c in configs)
    recipe = (
        f"the SSM preset's recipe (tied readout, N_h = 2, k = 3, T = 20, {base.seeds} seeds, "
        f"{base.steps} steps) at S = {', '.join(f'{g:g}' for g in grid)}, one batch with "
        "the dense and sparse runs",
        "every sparsity starts from the same init seeds, so a seed index can be followed "
        "across the sweep",
    )
    return Preset(
        NAME, TITLE, CLAIM, configs, labels, recipe, main="S=0.5", checker=check, figure=figure
    )
