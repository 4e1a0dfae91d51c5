"""Exact expected loss of a linear readout for any linear target and inputs persistent in time.

Issue 43, part 3: the four terms of `tempsup.theory.closed_form` (science.md §1) for a
target that is any linear function of the past (`tempsup.model.tasks.target_weights`:
recall, multi, sum) and inputs with persistence q (`tempsup.model.tasks.persistent_inputs`),
plus the one term the four do not cover, the temporal covariance. Pure numpy on the
projections A = W_yᵀ W_s, shape (..., n, n_out, N_x) with n >= T (not square for
multi), batched over any leading axes like closed_form. The linear model's output o at
step t (1-based) is Σ_{s<t} Σ_j A_{s,oj} x_{t−s,j} + b_o.

Algebra. The target is Σ_{s<t} Σ_j c_{s,oj} x_{t−s,j}: the task's weights c (one
set for every step: the past before the sequence is silent, as for recall's
y_t = 0 for t <= k, see tasks' module docstring), so with C = A − c the error is

    e_{t,o} = Σ_{s<t} Σ_j C_{s,oj} x_{t−s,j} + b_o.

Write σ = (s, j) for a slot (age, feature), s < t. The inputs have E[x] = pμ,
E[x²] = pν (μ = E[U], ν = E[U²]) and variance σ_x² = pν − p²μ². Under persistence
x_t equals x_{t−d} with probability q^d and is independent of it otherwise, so two
slots of the same feature at ages s ≠ s' have Cov = q^{|s−s'|} σ_x², and slots of
different features are independent:

    E[x_σ x_σ'] = pν                                 σ = σ'
                = p²μ² + q^{|s−s'|} σ_x²             j = j', s ≠ s'
                = p²μ²                               j ≠ j'.

Hence (exactly; compactly E[e²] = (pμ Σ_σ C_σ + b)² + σ_x² Σ_j Σ_{s,s'} q^{|s−s'|} C_{s,j} C_{s',j})

    E[e_{t,o}²] = pν Σ_σ C_σ² + p²μ² Σ_{σ≠σ'} C_σ C_σ' + 2b pμ Σ_σ C_σ + b²
                + σ_x² Σ_j Σ_{s≠s'} q^{|s−s'|} C_{s,j} C_{s',j},

and E[L] = Σ_{t=1}^{T} Σ_o I_o E[e_{t,o}²]. The terms (`TERM_NAMES`), with P_t the
target's support at step t (the slots with c_σ ≠ 0, s < t) and all sums over s, s' < t:

    task                      pν Σ_{σ∈P} (A_σ − c_σ)²
    mean correction           p²μ² [−2 Σ_{σ≠σ'} A_σ c_σ' + Σ_{σ≠σ'} c_σ c_σ']
                              + 2b pμ Σ_σ C_σ + b²
    projection interference   pν Σ_{σ∉P} A_σ²
    composition interference  p²μ² Σ_{σ≠σ'} A_σ A_σ'
    temporal covariance       σ_x² Σ_j Σ_{s≠s'} q^{|s−s'|} C_{s,j} C_{s',j}

The rule behind the split: task and projection are the slots' own second moments
(pν C_σ²), on the target's support and off it; mean correction and composition are
the products of two distinct slots' means (p²μ² C_σ C_σ'), those involving the
target's weights and those of the model alone (the target's own pairs, nonzero for a
sum, sit in the mean correction with the bias, which is booked there as in
closed_form); the temporal covariance is what persistence adds: the covariance of one
feature's inputs at two ages, in C (model minus target) on both sides. For recall,
c = δ_{s,k}δ_{oj}: Σ_{σ≠σ'} A_σ c_σ' = Σ_{σ≠(k,o)} A_σ and Σ c_σ c_σ' = 0, so the
first four are closed_form's term by term, and at q = 0 the fifth vanishes.

The temporal covariance is computed through r_s = Σ_{s'<s} q^{s−s'} C_{s'} (an
exponential filter of C over age): Σ_{s≠s'<t} q^{|s−s'|} C_s C_s' = Σ_{s<t} 2 C_s r_s.

Where this is used: any linear readout (the linear RNN, any recurrence whose
projections A are given) and any linear task at any q is exact here. A cued target
is no linear function of the past (target_weights raises), and a ReLU readout is not
a linear model: both are estimated by Monte Carlo, `tempsup.theory.tasks_mc`.
"""

from __future__ import annotations

import numpy as np

from tempsup.core.arrays import as_float, check_count
from tempsup.errors import TempsupError
from tempsup.theory import closed_form

TERM_NAMES: tuple[str, ...] = (*closed_form.TERM_NAMES, "temporal covariance")


def loss_terms(
    A: np.ndarray,
    c: np.ndarray,
    p: float | np.ndarray,
    mu: float | np.ndarray,
    nu: float | np.ndarray,
    T: int,
    q: float | np.ndarray = 0.0,
    importance: np.ndarray | None = None,
    b_y: np.ndarray | None = None,
) -> np.ndarray:
    """Exact expected loss of a linear readout on target weights `c`, split in 5, (..., 5).

    Order: `TERM_NAMES` (closed_form's four, then the temporal covariance), summed over
    t = 1..T and weighted over outputs by `importance` (..., n_out) (default ones).
    `c` (n_c, n_out, N_x) or with leading axes that broadcast against A's: the target
    weights of `tempsup.model.tasks.target_weights` (ages past n_c are zero; only
    ages s < T of A and c are used). `p`, `mu`, `nu`, `q` are floats or arrays that
    broadcast against A's leading axes; `b_y` (..., n_out) is the readout bias.
    """
    A, c, T, p, mu, nu, q, imp, b = _prepare(A, c, p, mu, nu, T, q, importance, b_y)
    A = A[..., :T, :, :]  # (..., T, n_out, N_x)
    C = A - c
    on = c != 0  # the target's support

    def cum(x: np.ndarray) -> np.ndarray:  # row t−1 holds Σ_{s<t} Σ_j x_{s,oj}: (..., T, n_out)
        return np.cumsum(x.sum(axis=-1), axis=-2)

    sA, sc = cum(A), cum(c)
    sA2, sc2, sAc = cum(A**2), cum(c**2), cum(A * c)
    p, mu, nu = p[..., None, None], mu[..., None, None], nu[..., None, None]
    m2 = p**2 * mu**2  # (pμ)²
    var = p * nu - m2  # Var(x)

    task = p * nu * cum(np.where(on, C**2, 0.0))
    proj = p * nu * cum(np.where(on, 0.0, A**2))
    comp = m2 * (sA**2 - sA2)
    mean = m2 * (-2.0 * (sA * sc - sAc) + (sc**2 - sc2))
    if b is not None:
        b = b[..., None, :]  # (..., 1, n_out)
        mean = mean + 2.0 * b * p * mu * (sA - sc) + b**2
    temporal = var * cum(2.0 * C * _filtered(C, q, T))
    imp = imp[..., None, :]  # (..., 1, n_out)
    parts = np.broadcast_arrays(task, mean, proj, comp, temporal)
    return np.stack([(imp * x).sum(axis=(-2, -1)) for x in parts], axis=-1)


def expected_loss(
    A: np.ndarray,
    c: np.ndarray,
    p: float | np.ndarray,
    mu: float | np.ndarray,
    nu: float | np.ndarray,
    T: int,
    q: float | np.ndarray = 0.0,
    importance: np.ndarray | None = None,
    b_y: np.ndarray | None = None,
) -> np.ndarray:
    """Exact expected loss E[L] of a linear readout, shape (...): the sum of `loss_terms`."""
    return loss_terms(A, c, p, mu, nu, T, q, importance, b_y).sum(axis=-1)


def _filtered(C: np.ndarray, q: np.ndarray, T: int) -> np.ndarray:
    """r_s = Σ_{s'<s} q^{s−s'} C_{s'} along the age axis of C (..., T, n_out, N_x)."""
    d = np.arange(T)[:, None] - np.arange(T)[None, :]  # s − s'
    lower = d > 0
    qq = q[..., None, None]
    L = np.where(lower, qq ** np.where(lower, d, 1), 0.0)  # (..., T, T)
    flat = C.reshape(C.shape[:-2] + (-1,))  # (..., T, n_out·N_x)
    return (L @ flat).reshape(np.broadcast_shapes(L.shape[:-2], C.shape[:-3]) + C.shape[-3:])


def _prepare(
    A: object,
    c: object,
    p: object,
    mu: object,
    nu: object,
    T: object,
    q: object,
    importance: object,
    b_y: object,
) -> tuple:
    """Validate once at the public boundary; return float arrays ready to broadcast."""
    A = as_float("A", A, min_ndim=0)
    if A.ndim < 3:
        raise TempsupError(
            f"A: expected projections of shape (..., n, n_out, N_x), got {A.shape} "
            "(for a scalar kernel a of shape (..., n) pass a[..., None, None])"
        )
    check_count("T", T, 1)
    if A.shape[-3] < T:
        raise TempsupError(
            f"A: expected at least T = {T} ages (n >= T), got n = {A.shape[-3]} in shape {A.shape}"
        )
    c = as_float("c", c, min_ndim=0)
    if c.ndim < 3 or c.shape[-2:] != A.shape[-2:]:
        raise TempsupError(
            f"c: expected target weights of shape (n_c, n_out, N_x) = (n_c, {A.shape[-2]}, "
            f"{A.shape[-1]}) like A's last axes, got {c.shape}"
        )
    if c.shape[-3] >= T:
        c = c[..., :T, :, :]
    else:  # a target's weights past its last age are zero
        pad = [(0, 0)] * c.ndim
        pad[-3] = (0, T - c.shape[-3])
        c = np.pad(c, pad)
    lead, n_out = A.shape[:-3], A.shape[-2]
    p = closed_form.check_array("p", p, 0.0, 1.0)
    mu = closed_form.check_array("mu", mu, 0.0, np.inf)
    nu = closed_form.check_array("nu", nu, 0.0, np.inf)
    q = closed_form.check_array("q", q, 0.0, 1.0)
    if np.any(q >= 1.0):
        raise TempsupError(f"q: expected a persistence in [0, 1), got {float(np.max(q))!r}")
    imp, b = closed_form.importance_and_bias(importance, b_y, n_out, "n_out")
    closed_form.check_leading(
        lead, {"c": c[..., 0, 0, 0], "p": p, "mu": mu, "nu": nu, "q": q}, imp, b
    )
    return A, c, T, p, mu, nu, q, imp, b
