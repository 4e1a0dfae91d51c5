"""Closed-form expected loss of the k-delay task from the output projections.

Implements science.md §1 "Four-term expected loss" (exact for the linear RNN)
and §1 "ReLU readout, high sparsity" (first order in p for the SSM and the ReLU
RNN). Everything is pure numpy on the projections A = W_yᵀ W_s of
`tempsup.theory.geometry.projections`, shape (..., n, N_x, N_x) with n >= T, batched
over any leading axes (snapshots, seeds, sweeps). Scalar input is N_x = 1:
pass `a[..., None, None]` for a kernel a of shape (..., n).

Inputs are x_{t,j} = B U with B ~ Bernoulli(p), U >= 0 i.i.d., μ = E[U] and
ν = E[U²] — the second moment, not the variance: the algebra needs E[x²] = pν
(science.md §1b: with Var(U) the formula is off by up to 86 %).

Vector-input algebra (the scalar case is N_x = 1, I = 1). The model's output i
at step t is Σ_{s<t} Σ_j A_{s,ij} x_{t-s,j} + b_i and its target is x_{t-k,i}
(for t > k), so the error is

    e_{t,i} = Σ_{s<t} Σ_j C_{s,ij} x_{t-s,j} + b_i,    C_{s,ij} = A_{s,ij} − [s = k][i = j][t > k].

The inputs x_{t-s,j} at distinct (s, j) are independent with mean pμ and
variance p(ν − pμ²), hence

    E[e_{t,i}²] = p(ν − pμ²) Σ_{s,j} C_{s,ij}² + (pμ Σ_{s,j} C_{s,ij} + b_i)²,

and E[L] = Σ_{t=1}^{T} Σ_i I_i E[e_{t,i}²]. Expanding around the target pair
(k, i) gives the four terms of science.md, with "ages" now pairs (s, j), s < t:

    task          pν (A_{k,ii} − 1)²                                  [t > k]
    mean corr.    −2p²μ² Σ_{(s,j)≠(k,i)} A_{s,ij} [t > k]  + 2b_i pμ Σ_{s,j} C_{s,ij} + b_i²
    projection    pν Σ_{(s,j)≠(k,i)} A_{s,ij}²
    composition   p²μ² Σ_{(s,j)≠(s',j')} A_{s,ij} A_{s',ij'}

The bias's whole contribution (also at steps t <= k, where only b_i² and its
cross term with the A remain) is booked under the mean correction, so the four
terms always sum to the exact expected loss.
"""

from __future__ import annotations

import numpy as np

from tempsup.core.arrays import as_float, check_count
from tempsup.errors import TempsupError
from tempsup.model.config import INPUT_DISTS

TERM_NAMES: tuple[str, ...] = (
    "task",
    "mean correction",
    "projection interference",
    "composition interference",
)

# (μ, ν) = (E[U], E[U²]) for the input laws of `RunConfig.input_dist`.
_MOMENTS: dict[str, tuple[float, float]] = {
    "uniform": (0.5, 1.0 / 3.0),  # U ~ uniform[0, 1]
    "constant": (1.0, 1.0),  # U = 1: binary inputs
    "exponential": (1.0, 2.0),  # U ~ exponential(rate 1)
}


def input_moments(dist: str) -> tuple[float, float]:
    """(μ, ν) = (E[U], E[U²]) of the input magnitude law named `dist`."""
    if dist not in _MOMENTS:
        raise TempsupError(f"dist: expected one of {', '.join(INPUT_DISTS)}, got {dist!r}")
    return _MOMENTS[dist]


# ---- linear RNN: exact -------------------------------------------------------------


def loss_terms(
    A: np.ndarray,
    k: int,
    p: float | np.ndarray,
    mu: float | np.ndarray,
    nu: float | np.ndarray,
    T: int,
    importance: np.ndarray | None = None,
    b_y: np.ndarray | None = None,
) -> np.ndarray:
    """Exact expected loss of the linear RNN split into its four terms, shape (..., 4).

    Order: `TERM_NAMES` = task, mean correction, projection interference,
    composition interference; summed over t = 1..T and weighted over outputs by
    `importance` (default all ones). Only A[..., s, :, :] with s < T is used.
    `p`, `mu`, `nu` are floats or arrays that broadcast (numpy rules) against the
    leading axes of A, e.g. p[:, None] for a sparsity sweep of shape (S, seeds).
    `b_y` (..., N_x) is the readout bias; its contribution sits in the mean
    correction (see the module docstring for the algebra).
    """
    A, k, T, p, mu, nu, imp, b = _prepare(A, k, p, mu, nu, T, importance, b_y)
    A = A[..., :T, :, :]  # (..., T, N_x, N_x)
    S1 = np.cumsum(A.sum(axis=-1), axis=-2)  # (..., T, N_x): row t-1 holds Σ_{s<t} Σ_j A_{s,ij}
    S2 = np.cumsum((A**2).sum(axis=-1), axis=-2)  # (..., T, N_x): Σ_{s<t} Σ_j A_{s,ij}²
    m, akk = _target(A, k, T)  # (T, 1), (..., 1, N_x)
    p, mu, nu = p[..., None, None], mu[..., None, None], nu[..., None, None]

    task = p * nu * (akk - 1.0) ** 2 * m
    mean = -2.0 * p**2 * mu**2 * m * (S1 - m * akk)
    proj = p * nu * (S2 - m * akk**2)
    comp = p**2 * mu**2 * (S1**2 - S2)  # (Σ A)² − Σ A² = Σ over distinct pairs
    if b is not None:
        b = b[..., None, :]  # (..., 1, N_x)
        mean = mean + 2.0 * b * p * mu * (S1 - m) + b**2  # S1 − m = Σ_{s,j} C_{s,ij}
    imp = imp[..., None, :]  # (..., 1, N_x)
    terms = [(imp * x).sum(axis=(-2, -1)) for x in np.broadcast_arrays(task, mean, proj, comp)]
    return np.stack(terms, axis=-1)  # (..., 4)


def expected_loss(
    A: np.ndarray,
    k: int,
    p: float | np.ndarray,
    mu: float | np.ndarray,
    nu: float | np.ndarray,
    T: int,
    importance: np.ndarray | None = None,
    b_y: np.ndarray | None = None,
) -> np.ndarray:
    """Exact expected loss E[L] of the linear RNN, shape (...): the sum of `loss_terms`."""
    return loss_terms(A, k, p, mu, nu, T, importance, b_y).sum(axis=-1)


# ---- ReLU readout (SSM, ReLU RNN): first order in p -----------------------------------


def relu_readout_terms(
    A: np.ndarray,
    k: int,
    p: float | np.ndarray,
    mu: float | np.ndarray,
    nu: float | np.ndarray,
    T: int,
    importance: np.ndarray | None = None,
    b_y: np.ndarray | None = None,
) -> np.ndarray:
    """The four terms for a ReLU readout, (..., 4): `loss_terms` on the rectified projections.

    A lone input u >= 0 of age s reaches output i as ReLU(A_{s,ij}) u, and the
    target's error is (1 − ReLU(A_{k,ii})) u, so with ReLU(A) in place of A the
    terms linear in p (task + projection) equal `relu_sparse_approx` exactly.
    The p² terms (mean correction, composition) are the linear model's on the
    rectified kernel: a heuristic for how co-active inputs interact, not the
    SSM's exact loss (the ReLU of a sum is not the sum of ReLUs, which is what
    the interference-free packing exploits). For the ReLU RNN pass the A of the
    ReLU impulse response (`geometry.feature_directions(..., relu_hidden=True)`).
    A readout bias enters as in the linear formula (booked under the mean
    correction) — a rough guide only; for b_y <= 0 the first-order loss is
    `relu_sparse_approx(..., b_y=, dist=)`.
    """
    A = as_float("A", A, min_ndim=0)  # shape checked by loss_terms
    return loss_terms(np.maximum(A, 0.0), k, p, mu, nu, T, importance, b_y)


def relu_sparse_approx(
    A: np.ndarray,
    k: int,
    p: float | np.ndarray,
    nu: float | np.ndarray,
    T: int,
    importance: np.ndarray | None = None,
    b_y: np.ndarray | None = None,
    dist: str | None = None,
) -> np.ndarray:
    """High-sparsity loss of a ReLU readout, first order in p, shape (...) (science.md §1).

    At most one input is active in the window, so each (age, feature) pair costs
    its lone-input error, for U >= 0 and no bias E(U − ReLU(aU))² = ν(1 − ReLU(a))²:

        E[L] ≈ p Σ_t Σ_i I_i [ ν(1 − ReLU(A_{k,ii}))² [t > k]
                             + ν Σ_{(s,j)≠(k,i), s<t} ReLU(A_{s,ij})² ]

    A readout bias b_i <= 0 keeps a silent network silent and only shifts each
    lone-input cost: ReLU(aU + b) = a(U − β)_+ with β = −b/a for a > 0, whose
    moments depend on the law of U, so `dist` (one of `INPUT_DISTS`, with
    `nu` its ν) is then required. A positive bias costs ReLU(b)² at every step
    without input (order p⁰), outside this approximation: it is refused.
    Exact in the limit p → 0; the neglected p² terms are the interactions of
    pairs of co-active inputs (relative size about p × the kernel's length).
    """
    A, k, T, p, _, nu, imp, b = _prepare(A, k, p, 0.0, nu, T, importance, b_y)
    A = A[..., :T, :, :]  # (..., T, N_x, N_x)
    pos = np.maximum(A, 0.0)
    if b is None or not np.any(b < 0):
        if b is not None and np.any(b > 0):
            raise _positive_bias(b)
        nu_ = nu[..., None, None, None]
        other = nu_ * pos**2  # (..., T, N_x, N_x): cost of a lone non-target input
        _, pkk = _target(pos, k, T)  # (..., 1, N_x)
        target = nu[..., None, None] * (1.0 - pkk) ** 2  # (..., 1, N_x)
    else:
        if np.any(b > 0):
            raise _positive_bias(b)
        if dist is None:
            raise TempsupError(
                "dist: expected the input law (one of "
                f"{', '.join(INPUT_DISTS)}) when b_y < 0, got None"
            )
        _, nu_d = input_moments(dist)
        if not np.allclose(nu, nu_d):
            raise TempsupError(
                f"nu: expected E[U²] = {nu_d:g} of dist {dist!r}, got {np.unique(nu)}"
            )
        bb = b[..., None, :, None]  # (..., 1, N_x, 1): b_i of readout i
        safe = np.where(A > 0, A, 1.0)
        beta = np.where(A > 0, -bb / safe, np.inf)  # (..., T, N_x, N_x)
        m1, m2 = _shifted_moments(dist, beta)  # E[U (U−β)_+], E[(U−β)_+²]
        other = pos**2 * m2  # E[ReLU(aU + b)²]
        _, pkk = _target(pos, k, T)
        _, m1kk = _target(m1, k, T)
        _, m2kk = _target(m2, k, T)
        target = nu_d - 2.0 * pkk * m1kk + pkk**2 * m2kk  # E[(U − ReLU(aU + b))²]
    m, okk = _target(other, k, T)  # (T, 1), (..., 1, N_x)
    per_t = np.cumsum(other.sum(axis=-1), axis=-2) - m * okk + m * target  # (..., T, N_x)
    total = (imp[..., None, :] * per_t).sum(axis=(-2, -1))
    return p * total


def zero_output_loss(
    k: int,
    p: float | np.ndarray,
    nu: float | np.ndarray,
    T: int,
    importance: np.ndarray | None = None,
) -> np.ndarray:
    """Exact loss of a network that always outputs 0 (a dead ReLU network): Σ_{t>k} pν Σ_i I_i.

    The baseline a seed must beat to count as having learned anything.
    """
    check_count("k", k, 0)
    check_count("T", T, 1)
    p = check_array("p", p, 0.0, 1.0)
    nu = check_array("nu", nu, 0.0, np.inf)
    imp = np.ones(1) if importance is None else check_array("importance", importance, 0, np.inf)
    if imp.ndim == 0:
        imp = imp[None]
    return max(T - k, 0) * p * nu * imp.sum(axis=-1)


# ---- helpers --------------------------------------------------------------------------


def _target(A: np.ndarray, k: int, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Target mask m_t = [t > k] (T, 1) and the target projections A_{k,ii} (..., 1, N_x)."""
    m = (np.arange(1, T + 1) > k).astype(float)[:, None]  # (T, 1)
    if k < A.shape[-3]:
        akk = np.diagonal(A[..., k, :, :], axis1=-2, axis2=-1)[..., None, :]
    else:  # the target is older than the window: it never enters
        akk = np.zeros(A.shape[:-3] + (1, A.shape[-1]))
    return m, akk


def _shifted_moments(dist: str, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E[U (U − β)_+] and E[(U − β)_+²] for β >= 0 (β = inf gives 0)."""
    with np.errstate(invalid="ignore", over="ignore"):
        if dist == "constant":
            r = np.clip(1.0 - beta, 0.0, None)
            return r, r**2
        if dist == "uniform":
            c = np.clip(beta, 0.0, 1.0)
            return (1.0 - c**3) / 3.0 - c * (1.0 - c**2) / 2.0, (1.0 - c) ** 3 / 3.0
        tail = np.exp(-beta)  # exponential(1) is memoryless: U − β | U > β ~ U
        return np.where(np.isinf(beta), 0.0, tail * (beta + 2.0)), 2.0 * tail


def _positive_bias(b: np.ndarray) -> TempsupError:
    return TempsupError(
        f"b_y: expected a readout bias <= 0 for the sparse approximation "
        f"(a positive bias costs at every step), got max {float(np.max(b)):g}"
    )


def _prepare(
    A: object,
    k: object,
    p: object,
    mu: object,
    nu: object,
    T: object,
    importance: object,
    b_y: object,
) -> tuple:
    """Validate once at the public boundary; return float arrays ready to broadcast."""
    A = as_float("A", A, min_ndim=0)
    if A.ndim < 3 or A.shape[-1] != A.shape[-2]:
        raise TempsupError(
            f"A: expected projections of shape (..., n, N_x, N_x), got {A.shape} "
            "(for a scalar kernel a of shape (..., n) pass a[..., None, None])"
        )
    check_count("k", k, 0)
    check_count("T", T, 1)
    if A.shape[-3] < T:
        raise TempsupError(
            f"A: expected at least T = {T} ages (n >= T), got n = {A.shape[-3]} in shape {A.shape}"
        )
    lead, n_x = A.shape[:-3], A.shape[-1]
    p = check_array("p", p, 0.0, 1.0)
    mu = check_array("mu", mu, 0.0, np.inf)
    nu = check_array("nu", nu, 0.0, np.inf)
    imp, b = importance_and_bias(importance, b_y, n_x, "N_x")
    check_leading(lead, {"p": p, "mu": mu, "nu": nu}, imp, b)
    return A, k, T, p, mu, nu, imp, b


def check_leading(
    lead: tuple[int, ...], scalars: dict[str, np.ndarray], imp: np.ndarray, b: np.ndarray | None
) -> None:
    """Every argument's leading axes broadcast against A's `lead`: the laws' parameters
    whole, the importance weights and the bias without their last (output) axis."""
    shapes = {name: x.shape for name, x in scalars.items()} | {"importance": imp.shape[:-1]}
    if b is not None:
        shapes["b_y"] = b.shape[:-1]
    for name, shape in shapes.items():
        try:
            np.broadcast_shapes(lead, shape)
        except ValueError:
            raise TempsupError(
                f"{name}: expected leading axes that broadcast against A's {lead}, got {shape}"
            ) from None


def importance_and_bias(
    importance: object, b_y: object, n: int, what: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """The per-output importance weights (ones when None) and the readout bias (or None),
    checked against the readout's width `n` (named `what` in messages: N_x, n_out)."""
    if importance is None:
        imp = np.ones(n)
    else:
        imp = check_array("importance", importance, 0.0, np.inf)
        if imp.ndim == 0 or imp.shape[-1] != n:
            raise TempsupError(
                f"importance: expected shape (..., {what}) with {what} = {n}, got {imp.shape}"
            )
    if b_y is None:
        return imp, None
    b = as_float("b_y", b_y, min_ndim=1)
    if b.shape[-1] != n:
        raise TempsupError(f"b_y: expected shape (..., {what}) with {what} = {n}, got {b.shape}")
    return imp, b


def check_array(name: str, x: object, lo: float, hi: float) -> np.ndarray:
    arr = as_float(name, x, min_ndim=0)
    if not np.all((arr >= lo) & (arr <= hi)):  # also rejects NaN
        bad = float(arr[~((arr >= lo) & (arr <= hi))].ravel()[0])  # "1.5", not "np.float64(1.5)"
        raise TempsupError(f"{name}: expected values in [{lo:g}, {hi:g}], got {bad!r}")
    return arr
