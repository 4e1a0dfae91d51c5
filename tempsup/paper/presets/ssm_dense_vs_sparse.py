"""SSM: dense vs sparse.

With sparse inputs the SSM packs its largest directions into the interference-free
half-space: the best seed's kθ is ≈ 270° where the dense one's is ≈ 90°, and the
spectral radius drops.

Dense and sparse runs train as one batch; kθ is read in the canonical gauge, the
packing through the gauge-free a_s ≤ 0.

Sources: science.md §1, §1b.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tempsup.analysis.measures import (
    ALIVE,
    TOL,
    angle_gap,
    canonical,
    kernel,
    leading_eigenvalue,
    swept,
)
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.preset import ClaimResult, Preset, card, deg, fixed, listed, result, rounded

# the gallery card's picture (run label, panel or "summary": the preset's figure):
# the sparse run's directions in the interference-free half-space
THUMBNAIL = ("sparse", "directions")
NAME = "ssm-dense-vs-sparse"
TITLE, CLAIM = card(__doc__)

# regime -> |kθ| its task features span, the claim after "(S = …): ", the per-seed test
SPANS = {
    "dense": (
        100.0,
        "the task features span |kθ| ≈ 90–110°",
        "||kθ| − 100°| ≤ 30° (kθ swept from w_0 to w_k, sign = handedness)",
    ),
    "sparse": (270.0, "they span |kθ| ≈ 270°", "||kθ| − 270°| ≤ 30°"),
}


@dataclass(frozen=True)
class Regimes:
    """What the claims read, computed once: the dense and the sparse run, their best seeds
    and their kernels a_s = w_yᵀw_s per seed (gauge free)."""

    dense: Run
    sparse: Run
    a_dense: np.ndarray  # (M, T)
    a_sparse: np.ndarray  # (M, T)

    @classmethod
    def of(cls, dense: Run, sparse: Run) -> Regimes:
        return cls(dense, sparse, kernel(dense), kernel(sparse))

    @property
    def k(self) -> int:
        return self.sparse.config.k

    @property
    def best(self) -> tuple[int, int]:
        """The dense and the sparse best seed."""
        return self.dense.best, self.sparse.best


def largest_free(a: np.ndarray, k: int, n_largest: int) -> tuple[np.ndarray, list[list[int]]]:
    """Whether the n largest directions w_s, s ≠ k, s < T, all have a_s ≤ TOL: (M,), and
    their ages per seed, from the kernel `a` (M, T).

    "Largest" is ranked by |a_s| = |w_yᵀw_s|, which no change of basis moves
    (science.md §1d): ‖w_s‖ is gauge dependent even under the tied readout.
    """
    size = np.abs(a)
    size[:, k] = -np.inf
    order = np.argsort(-size, axis=1, kind="stable")[:, :n_largest]  # (M, n)
    free = np.take_along_axis(a, order, axis=1) <= TOL
    return free.all(axis=1), order.tolist()


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claims, one function each, on the dense and the sparse run."""
    r = Regimes.of(runs["dense"], runs["sparse"])
    return [
        angle(r.dense, "dense"),
        angle(r.sparse, "sparse"),
        radius_drops(r),
        intermediate_free(r),
        largest_packed(r),
    ]


def angle(run: Run, regime: str) -> ClaimResult:
    """The angle the task features span: kθ ≈ 90–110° dense, ≈ 270° sparse (`SPANS`)."""
    target, spans, test = SPANS[regime]
    th, b = swept(run), run.best
    ok = angle_gap(np.abs(th), target) <= 30.0
    return result(
        f"{regime} (S = {run.config.sparsity:g}): {spans}",
        ok,
        bool(ok[b]),
        {"k_theta_deg": rounded(th[b], 1), "k_theta_deg_per_seed": rounded(th, 0)},
        f"per seed: {test}; held on the best seed",
        said=said_angle,
    )


def said_angle(m: dict[str, Any]) -> str:
    """The best seed's kθ and where the other seeds ended."""
    others = sorted(set(m["k_theta_deg_per_seed"]))
    return f"kθ = {deg(m['k_theta_deg'], 1)}; the seeds end at {listed(others, 0)}°."


def radius_drops(r: Regimes) -> ClaimResult:
    """ρ(W_h) of the sparse seeds below the dense best seed's."""
    (bd, bs), dense, sparse = r.best, r.dense, r.sparse
    rho_d, rho_s = np.abs(leading_eigenvalue(dense)), np.abs(leading_eigenvalue(sparse))
    w0_d = np.asarray(canonical(dense)["w0_norm"], dtype=float)  # canonical gauge
    w0_s = np.asarray(canonical(sparse)["w0_norm"], dtype=float)
    return result(
        "the spectral radius drops from the dense to the sparse regime",
        rho_s < rho_d[bd],
        bool(rho_s[bs] < rho_d[bd]),
        {
            "rho_dense": rounded(rho_d[bd]),
            "rho_sparse": rounded(rho_s[bs]),
            "w0_norm_dense": rounded(w0_d[bd]),
            "w0_norm_sparse": rounded(w0_s[bs]),
        },
        "per sparse seed: ρ(W_h) below the dense best seed's; held when the sparse best "
        "seed's ρ is below the dense best seed's (‖w_0‖ reported too, in the canonical gauge)",
        said=said_radius,
    )


def said_radius(m: dict[str, Any]) -> str:
    """ρ(W_h) and ‖w_0‖ of the dense and the sparse best seed."""
    return (
        f"ρ(W_h) {fixed(m['rho_dense'])} → {fixed(m['rho_sparse'])}; ‖w_0‖ "
        f"{fixed(m['w0_norm_dense'], 2)} → {fixed(m['w0_norm_sparse'], 2)} (canonical gauge)."
    )


def intermediate_free(r: Regimes) -> ClaimResult:
    """Sparse: every intermediate a_s (s < k) ≤ 0, the output one alive."""
    (bd, bs), k, a_s, a_d = r.best, r.k, r.a_sparse, r.a_dense
    inter = (a_s[:, :k] <= TOL).all(axis=1) & (a_s[:, k] >= ALIVE)
    return result(
        "sparse: the intermediate directions (s < k) project ≤ 0 on the readout "
        "(interference-free)",
        inter,
        bool(inter[bs]),
        {
            "a_sparse": rounded(a_s[bs, : k + 4]),
            "a_dense": rounded(a_d[bd, : k + 4]),
            "dense_intermediate_free": int((a_d[bd, :k] <= TOL).sum()),
        },
        f"per seed: a_s ≤ {TOL} for every s < k and a_k ≥ {ALIVE}; held on the best seed",
        said=said_free,
    )


def said_free(m: dict[str, Any]) -> str:
    """The projections a_s of the sparse and the dense best seed."""
    return (
        f"a_0…a_{len(m['a_sparse']) - 1} sparse = {listed(m['a_sparse'])}; dense = "
        f"{listed(m['a_dense'])} ({m['dense_intermediate_free']} dense intermediate "
        "direction(s) ≤ 0)."
    )


def largest_packed(r: Regimes) -> ClaimResult:
    """Sparse: the k largest |a_s| (s ≠ k) all in the interference-free half-space."""
    (bd, bs), k, a_s, a_d = r.best, r.k, r.a_sparse, r.a_dense
    big_s, order_s = largest_free(a_s, k, k)
    big_d, order_d = largest_free(a_d, r.dense.config.k, k)
    ok = big_s & (a_s[:, k] >= ALIVE)
    return result(
        "sparse: the largest directions are packed into the interference-free half-space",
        ok,
        bool(ok[bs]),
        {
            "largest_ages_sparse": order_s[bs],
            "their_a_sparse": rounded(a_s[bs, order_s[bs]]),
            "largest_ages_dense": order_d[bd],
            "their_a_dense": rounded(a_d[bd, order_d[bd]]),
            "dense_all_free": bool(big_d[bd]),
        },
        f"per seed: the k largest |a_s| (s ≠ k, s < T; gauge free, unlike ‖w_s‖) all "
        f"have a_s ≤ {TOL}, and "
        f"a_k ≥ {ALIVE}; held on the best seed",
        said=said_largest,
    )


def said_largest(m: dict[str, Any]) -> str:
    """Which ages have the largest |a_s| and on which side of the readout they lie."""
    sparse = _ages(m["largest_ages_sparse"], m["their_a_sparse"])
    dense = _ages(m["largest_ages_dense"], m["their_a_dense"])
    free = "also" if m["dense_all_free"] else "not"
    return f"sparse: the largest |a_s| at {sparse}; dense: {dense} ({free} all ≤ 0)."


def _ages(ages: list[int], a: list[float]) -> str:
    """A run's largest directions for a sentence: "s = 1, 2 with a_s = −0.31, −0.05"."""
    return f"s = {listed(ages)} with a_s = {listed(a)}"


def build(quick: bool = False) -> Preset:
    base = RunConfig(model="ssm", k=3, seeds=16, steps=1000 if quick else 2000, snapshot_every=20)
    dense, sparse = base.replace(sparsity=0.3), base.replace(sparsity=0.9)
    recipe = (
        f"SSM (linear recurrence, ReLU readout), tied readout, N_h = 2, k = 3, T = 20, "
        f"S = 0.3 and 0.9 trained as one batch, {base.seeds} seeds each, {base.steps} steps",
    )
    labels = ("dense", "sparse")
    return Preset(NAME, TITLE, CLAIM, (dense, sparse), labels, recipe, main="sparse", checker=check)
