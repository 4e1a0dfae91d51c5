"""The canonical gauge: one documented hidden basis per function (science.md §1d).

Why. A change of hidden basis h -> G h leaves a recurrent network's function
unchanged but moves its feature directions. With

    W_x -> G W_x,   W_h -> G W_h G⁻¹,   W_y -> G⁻ᵀ W_y                       (1)

every projection W_yᵀ W_h^s W_x, every eigenvalue of W_h and every loss stays
put, while ‖w_s‖, ‖w_0‖ and the angles between the w_s (kθ) do not. Which G
are admissible depends on the model:

- linear recurrence (`linear`, `ssm`), free readout: any invertible G.
- linear recurrence, tied readout W_y := W_k = W_h^k W_x: the readout is not a
  parameter but moves as W_k -> G W_k, so (1) keeps the tie iff

      GᵀG W_k = W_k          (each column w_k of W_k, one per input feature)  (2)

  i.e. S = GᵀG is the identity on V = span(W_k) and any SPD map on V⊥: for
  N_h = 2 and scalar input a stretch S = ŵŵᵀ + λ ŵ⊥ŵ⊥ᵀ orthogonal to w_k
  (plus rotations and reflections); when W_k has rank N_h (vector input with
  N_x ≥ N_h) only the orthogonal G are left.
- ReLU recurrence (`rnn`): only G = D P with D positive diagonal and P a
  permutation commutes with the ReLU (ReLU(DPh) = DP ReLU(h)). With the tied
  readout (2) becomes D² w_k = w_k: a unit may only be rescaled where every
  column of W_k (the impulse response) is zero.

The canonical representative. G = Q S^{1/2} with Q orthogonal, and the norm
of the weights after (1) depends on S alone:

    f(S) = tr(W_xᵀ S W_x) + tr(W_hᵀ S W_h S⁻¹) [+ tr(W_yᵀ S⁻¹ W_y), free readout]   (3)

We take the admissible S that minimises (3): the minimum-norm representative
‖W_x‖² + ‖W_h‖² (+ ‖W_y‖² when the readout is free; with the tie ‖W_y‖ is fixed
by (2)), the one a vanishing weight decay would select. Along any curve
G = exp(tH) G₀ with H symmetric, f is a sum of exponentials Σ c e^{2tω} (the
tuple (1) is a linear representation of GL(N_h)), hence convex: f is
geodesically convex on the SPD cone, every local minimum is global, and at the
minimum the "balance" condition holds on the admissible directions,

    Π( W_x W_xᵀ + W_h W_hᵀ − W_hᵀ W_h [− W_y W_yᵀ] ) = 0,                   (4)

Π the projection onto admissible symmetric directions (Π H = P⊥ H P⊥ with P⊥
the projector onto V⊥ for the tie; the diagonal of the free units for `rnn`).
We solve (4) by Newton's method in the current basis: the model
f(e^H) ≈ f + 2⟨H, M⟩ + 2 tr(H² C) + 2‖[H, W_h]‖² (M the matrix in (4),
C = W_x W_xᵀ [+ W_y W_yᵀ]) is minimised by conjugate gradients, and the step
length by backtracking on the exact sum of exponentials along the step. It is
batched over any leading axes and pure numpy. For N_h = 2 with the tie the
admissible family is one stretch, so CG is exact and the 1-D convex problem is
solved by safeguarded Newton. When the minimum is not attained (a
non-minimal network: a part of the hidden state the input never reaches or
the readout never sees, a dead ReLU unit) the iteration moves towards the
limit, where the weights that cause it vanish, until the gradient is round-off
(those weights are then ~1e-8 of the others) or after `MAX_ITER` steps; such
networks agree with each other to about that level instead of to round-off.

The remaining orthogonal freedom Q (rotations and reflections, always
admissible) is fixed by a frame convention for the linear recurrence:
Gram–Schmidt on, in order, the readout columns w_y (feature 0, 1, …), then
w_0, w_1, … of feature 0, then those of the other features (then W_hᵀ w_y,
…, as fallbacks), each new axis pointing towards the vector that made it. So
w_y (feature 0) lies along +h_1. For N_h = 2 the reflection is decided
instead by the handedness: h_2 is chosen so that the swept angle kθ from w_0 to
w_k (feature 0) is ≥ 0, counter-clockwise (exactly 0: w_0, or the next w_s, in
the upper half-plane). For the ReLU recurrence the permutation is fixed by
sorting units by their readout weight (largest first), ties by w_0, w_1, …
(values compared to 9 significant digits, so round-off does not reorder). No
reflection is admissible there, so for N_h = 2 that order, not a choice of
handedness, sets the sign of kθ: it may be negative (`tempsup.analysis.captions` says so).

What stays gauge-dependent in spirit: the convention, not the function.
Two runs computing the same function (and with the same tie) give the same
canonical weights, hence the same ‖w_s‖, ‖w_0‖ and kθ; these numbers are
"in the canonical gauge" and should be labelled so (`GAUGE_NAME`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tempsup.core.arrays import as_float, check_count
from tempsup.errors import TempsupError

GAUGE_NAME = "minimum-norm"
# One line for captions and the CLI: what the canonical gauge is.
GAUGE_DESCRIPTION = (
    "the hidden basis with the smallest ‖W_x‖² + ‖W_h‖² (+ ‖W_y‖² for a free readout) among "
    "those computing the same function; then w_y along +h_1 and kθ ≥ 0 for N_h = 2 (ReLU "
    "RNN: units sorted by readout weight, which sets the sign of kθ)"
)


def convention(relu_hidden: bool) -> str:
    """The canonical gauge in one line, for the model's recurrence (captions, `inspect`)."""
    if relu_hidden:
        return (
            "ReLU units rescaled, where the tied readout allows, to the smallest "
            "‖W_x‖² + ‖W_h‖² (+ ‖W_y‖²), then sorted by readout weight"
        )
    return (
        "the basis with the smallest ‖W_x‖² + ‖W_h‖² (+ ‖W_y‖² if free) computing the same "
        "function, w_y along +h_1, kθ ≥ 0 for N_h = 2"
    )


MAX_ITER = 100  # Newton steps; converged problems stop early (a few steps in practice)
GRAD_RTOL = 1e-15  # done when ‖Π M‖ <= GRAD_RTOL * f: the balance condition (4) to round-off
STEP_TOL = 1e-10  # done when a Newton step moves log S by less than this
CG_MAX = 200  # conjugate-gradient steps per Newton step (exact when the family is small)
RANK_RTOL = 1e-9  # a readout column smaller than this (relative) does not pin the basis
FRAME_RTOL = 1e-6  # a Gram–Schmidt residual below this fraction of its vector adds no axis
ANGLE_ATOL = 1e-7  # degrees: |kθ| below this leaves the reflection to Gram–Schmidt
SORT_DIGITS = 9  # significant digits of the ReLU units' sort keys
_STEPS = 2.0 ** -np.arange(41)  # backtracking step lengths 1, 1/2, …, 2^-40


def canonical(
    W_x: np.ndarray,
    W_h: np.ndarray,
    W_y: np.ndarray | None,
    b_y: np.ndarray | None,
    k: int,
    relu_hidden: bool,
    tied: bool,
    max_iter: int = MAX_ITER,
) -> dict[str, np.ndarray]:
    """The canonical representative of (W_x, W_h, W_y, b_y), batched over leading axes.

    `W_y` is the effective readout (`None` with `tied`: computed as W_k); with
    `tied` it must be W_k, as run files store it. Returns the transformed
    "W_x" (..., N_h, N_x), "W_h" (..., N_h, N_h), "W_y" (..., N_h, N_x), "b_y"
    (unchanged: it lives in output space; zeros when None), the change of
    basis "G" with h_canonical = G h and its inverse "G_inv", "norm2" (the
    minimised ‖W_x‖² + ‖W_h‖² [+ ‖W_y‖²]) and "converged" (...) bool: the
    balance (4) holds to round-off or the last Newton step was negligible (False:
    still moving after `max_iter` steps, towards a minimum that is not attained). The
    function is kept exactly: W_yᵀ W_s and the eigenvalues of W_h change only
    by round-off.
    """
    check_count("k", k, 0)
    W_x = as_float("W_x", W_x, min_ndim=2)
    W_h = as_float("W_h", W_h, min_ndim=2)
    n_h, n_x = W_h.shape[-1], W_x.shape[-1]
    if W_h.shape[-2] != n_h:
        raise TempsupError(f"W_h: expected a square (..., N_h, N_h) matrix, got {W_h.shape}")
    if W_x.shape[-2] != n_h:
        raise TempsupError(f"W_x: expected shape (..., {n_h}, N_x) (N_h from W_h), got {W_x.shape}")
    if W_y is None:
        if not tied:
            raise TempsupError("W_y: required for a free readout (None means the tied W_k)")
        W_y = _impulse(W_x, W_h, k + 1, relu_hidden)[k]
    W_y = as_float("W_y", W_y, min_ndim=2)
    if W_y.shape[-2:] != (n_h, n_x):
        raise TempsupError(f"W_y: expected shape (..., {n_h}, {n_x}), got {W_y.shape}")
    try:
        lead = np.broadcast_shapes(W_x.shape[:-2], W_h.shape[:-2], W_y.shape[:-2])
    except ValueError:
        raise TempsupError(
            f"W_x, W_h and W_y: expected leading axes that broadcast, got "
            f"{W_x.shape[:-2]}, {W_h.shape[:-2]} and {W_y.shape[:-2]}"
        ) from None
    X = np.array(np.broadcast_to(W_x, lead + (n_h, n_x)))
    Wh = np.array(np.broadcast_to(W_h, lead + (n_h, n_h)))
    Y = np.array(np.broadcast_to(W_y, lead + (n_h, n_x)))
    b = np.zeros(lead + (n_x,)) if b_y is None else as_float("b_y", b_y, min_ndim=1)
    b = np.array(np.broadcast_to(b, lead + (n_x,)))

    c_y = 0.0 if tied else 1.0
    proj, dim = _projector(Y, tied, relu_hidden)
    X, Wh, Y, G, G_inv, converged = _minimise(X, Wh, Y, proj, dim, c_y, max_iter)
    Q = _unit_order(X, Wh, Y, k) if relu_hidden else _frame(X, Wh, Y, k)
    X, Wh, Y = Q @ X, Q @ Wh @ _T(Q), Q @ Y
    return {
        "W_x": X,
        "W_h": Wh,
        "W_y": Y,
        "b_y": b,
        "G": Q @ G,
        "G_inv": G_inv @ _T(Q),
        "norm2": _norm2(X, Wh, Y, c_y),
        "converged": converged,
    }


def transform(
    G: np.ndarray, W_x: np.ndarray, W_h: np.ndarray, W_y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply the change of basis (1): (G W_x, G W_h G⁻¹, G⁻ᵀ W_y). Keeps the function for
    any invertible G (linear recurrence) or G = D P (ReLU); keeps a tie iff (2) holds."""
    G = as_float("G", G, min_ndim=2)
    G_inv = np.linalg.inv(G)
    return G @ W_x, G @ W_h @ G_inv, _T(G_inv) @ W_y


def is_admissible(
    G: np.ndarray, W_y: np.ndarray, relu_hidden: bool, tied: bool, rtol: float = 1e-9
) -> np.ndarray:
    """Whether G keeps the function (D P for the ReLU recurrence) and the tie (2), (...)."""
    G = as_float("G", G, min_ndim=2)
    W_y = as_float("W_y", W_y, min_ndim=2)
    scale = np.linalg.norm(G, axis=(-2, -1)) + 1e-300
    ok = np.ones(G.shape[:-2], dtype=bool)
    if relu_hidden:  # one positive entry per row and column
        tol = rtol * scale[..., None, None]
        pos, neg = np.greater(G, tol), np.less(G, -tol)
        ok &= ~neg.any(axis=(-2, -1)) & (pos.sum(-1) == 1).all(-1) & (pos.sum(-2) == 1).all(-1)
    if tied:
        S = _T(G) @ G
        err = np.linalg.norm(S @ W_y - W_y, axis=(-2, -1))
        ok &= err <= rtol * (np.linalg.norm(S, axis=(-2, -1)) * np.linalg.norm(W_y, axis=(-2, -1)))
    return ok


# ---- the admissible directions Π ----------------------------------------------------


def _projector(
    Y: np.ndarray, tied: bool, relu_hidden: bool
) -> tuple[Callable[[np.ndarray], np.ndarray], int]:
    """Π: symmetric H -> its admissible part (generators of admissible S = e^{2H}), and
    the largest dimension of the admissible family over the batch (CG needs no more steps)."""
    n_h = Y.shape[-2]
    if relu_hidden:  # diagonal generators, zero on units the tied readout uses
        free = np.ones(Y.shape[:-1], dtype=bool)  # (..., N_h)
        if tied:
            scale = np.abs(Y).max(axis=(-2, -1), keepdims=True)  # (..., 1, 1)
            free = (np.abs(Y) <= RANK_RTOL * scale).all(axis=-1)
        eye = np.eye(n_h, dtype=bool)

        def proj_diag(H: np.ndarray) -> np.ndarray:
            d = np.diagonal(H, axis1=-2, axis2=-1) * free
            return d[..., :, None] * eye

        return proj_diag, int(free.sum(-1).max(initial=0))
    if not tied:
        return _sym, n_h * (n_h + 1) // 2
    # P⊥ = I − P_V, V = span(columns of W_k): generators with H w_k = 0 keep S w_k = w_k
    U, s, _ = np.linalg.svd(Y, full_matrices=False)  # U (..., N_h, r0)
    keep = s > RANK_RTOL * s[..., :1]
    P_perp = np.eye(n_h) - (U * keep[..., None, :]) @ _T(U)

    def proj_tied(H: np.ndarray) -> np.ndarray:
        return _sym(P_perp @ H @ P_perp)

    m = n_h - int(keep.sum(-1).min(initial=n_h))
    return proj_tied, m * (m + 1) // 2


# ---- Newton's method on the SPD cone -----------------------------------------------------


def _minimise(
    X: np.ndarray,
    Wh: np.ndarray,
    Y: np.ndarray,
    proj: Callable[[np.ndarray], np.ndarray],
    dim: int,
    c_y: float,
    max_iter: int,
) -> tuple[np.ndarray, ...]:
    """Minimise (3) over admissible S; returns the moved weights, G, G⁻¹ and convergence."""
    n_h = Wh.shape[-1]
    lead = Wh.shape[:-2]
    G = np.broadcast_to(np.eye(n_h), lead + (n_h, n_h)).copy()
    G_inv = G.copy()
    done = np.zeros(lead, dtype=bool)  # the last Newton step was negligible
    converged = np.ones(lead, dtype=bool)  # nothing to do when the family is only O(N_h)
    for _ in range(max_iter if dim > 0 else 0):
        f = _norm2(X, Wh, Y, c_y)
        M = X @ _T(X) + Wh @ _T(Wh) - _T(Wh) @ Wh - c_y * (Y @ _T(Y))
        g = proj(M)
        converged = done | (_fro(g) <= GRAD_RTOL * np.maximum(f, 1e-300))
        if converged.all():
            break
        C = X @ _T(X) + c_y * (Y @ _T(Y))

        def hess(H: np.ndarray, C: np.ndarray = C, Wh: np.ndarray = Wh) -> np.ndarray:
            K = H @ Wh - Wh @ H
            return proj(H @ C + C @ H + _sym(K @ _T(Wh) - _T(Wh) @ K) * 2.0)

        # inexact Newton: solve the model to a relative residual sqrt(‖Π M‖ / f) (at most 0.1),
        # which keeps the convergence superlinear at a fraction of the CG steps
        forcing = np.minimum(0.1, np.sqrt(_fro(g) / np.maximum(f, 1e-300)))
        D = _cg(hess, proj, -g, ~converged, f, dim, forcing)
        D = np.where(converged[..., None, None], 0.0, D)
        lam, U = np.linalg.eigh(D)
        t = _step_length(lam, U, X, Wh, Y, c_y, slope=2.0 * _inner(D, M))
        done = converged | (t * np.abs(lam).max(-1, initial=0.0) <= STEP_TOL)
        e = np.exp(t[..., None] * lam)
        E = (U * e[..., None, :]) @ _T(U)
        E_inv = (U / e[..., None, :]) @ _T(U)
        X, Wh, Y = E @ X, E @ Wh @ E_inv, E_inv @ Y
        G, G_inv = E @ G, G_inv @ E_inv
    else:
        if dim > 0:
            converged = done
    return X, Wh, Y, G, G_inv, converged


def _cg(
    apply: Callable[[np.ndarray], np.ndarray],
    proj: Callable[[np.ndarray], np.ndarray],
    b: np.ndarray,
    active: np.ndarray,
    scale: np.ndarray,
    dim: int,
    forcing: np.ndarray,
) -> np.ndarray:
    """Conjugate gradients for apply(x) = b on the admissible subspace, batched: at most
    `dim` steps (exact in exact arithmetic), or until the residual is `forcing` (...)
    times ‖b‖; every iterate is a descent direction for the model.

    Every iterate is projected back with Π, so round-off never leaves the
    family (it would break the tie). The Hessian is only semi-definite where
    the family has flat directions; CG stops there, and falls back to b itself
    when it could not take one step.
    """
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rr = _inner(r, r)
    stop = np.sqrt(rr) * np.maximum(forcing, 1e-14)
    active = active & (rr > 0)
    for _ in range(min(dim, CG_MAX)):
        if not active.any():
            break
        Ap = apply(p)
        pAp = _inner(p, Ap)
        ok = active & (pAp > 1e-14 * _inner(p, p) * np.maximum(scale, 1e-300))
        alpha = np.where(ok, rr / np.where(ok, pAp, 1.0), 0.0)
        x = x + alpha[..., None, None] * p
        r = proj(r - alpha[..., None, None] * Ap)
        rr_new = _inner(r, r)
        beta = np.where(ok, rr_new / np.where(rr > 0, rr, 1.0), 0.0)
        p = proj(r + beta[..., None, None] * p)
        rr = rr_new
        active = ok & (np.sqrt(rr) > stop)
    none = _inner(x, x) == 0
    return proj(np.where(none[..., None, None], b, x))


def _step_length(
    lam: np.ndarray,
    U: np.ndarray,
    X: np.ndarray,
    Wh: np.ndarray,
    Y: np.ndarray,
    c_y: float,
    slope: np.ndarray,
) -> np.ndarray:
    """The longest t in 1, 1/2, … with Armijo decrease of f(e^{tD}) (0 if none), (...).

    In D's eigenbasis f(t) = Σ a_i e^{2tλ_i} + Σ c_ij e^{2t(λ_i−λ_j)} + Σ b_i e^{−2tλ_i}
    is exact and cheap, so the line search never forms a matrix exponential.
    """
    a = (_T(U) @ X) ** 2  # (..., N_h, N_x)
    a = a.sum(-1)
    c = (_T(U) @ Wh @ U) ** 2  # (..., N_h, N_h)
    bb = c_y * ((_T(U) @ Y) ** 2).sum(-1)
    t = _STEPS.reshape((-1,) + (1,) * (lam.ndim - 1))  # (S, 1, ..., 1), one per problem
    with np.errstate(over="ignore", invalid="ignore"):
        el = np.exp(2.0 * t[..., None] * lam)  # (S, ..., N_h)
        f_t = (
            (a * el).sum(-1)
            + (c * el[..., :, None] / el[..., None, :]).sum((-2, -1))
            + (bb / el).sum(-1)
        )
    f0 = a.sum(-1) + c.sum((-2, -1)) + bb.sum(-1)
    # Armijo, with slack for round-off in f: near the minimum f cannot resolve the
    # last Newton steps (they change f by ~ eps), and refusing them would leave
    # log S accurate to only sqrt(eps)
    ok = np.isfinite(f_t) & (f_t <= f0 + 1e-4 * t * slope + 1e-14 * f0) & (slope < 0)
    first = np.argmax(ok, axis=0)  # the longest accepted step
    return np.where(ok.any(axis=0), _STEPS[first], 0.0)


# ---- the orthogonal part: frame (linear) and unit order (ReLU) ---------------------------


def _frame(X: np.ndarray, Wh: np.ndarray, Y: np.ndarray, k: int) -> np.ndarray:
    """Rows of the canonical orthonormal frame Q (..., N_h, N_h): h_canonical = Q h."""
    n_h, n_x = X.shape[-2:]
    lead = X.shape[:-2]
    W_s = _impulse(X, Wh, max(k + 4, n_h), relu_hidden=False)  # list of (..., N_h, N_x)
    cands = [Y[..., :, j] for j in range(n_x)]
    cands += [w[..., :, j] for j in range(n_x) for w in W_s]
    v = Y
    for _ in range(n_h):  # fallbacks for readouts that see little: W_hᵀ w_y, …
        v = _T(Wh) @ v
        cands += [v[..., :, j] for j in range(n_x)]
    scale = np.max([np.linalg.norm(c, axis=-1) for c in cands], axis=0)  # (...)
    basis = np.zeros(lead + (n_h, n_h))
    count = np.zeros(lead, dtype=int)
    units = [np.broadcast_to(e, lead + (n_h,)) for e in np.eye(n_h)]  # last resort
    for vec in [*cands, *units]:
        if (count == n_h).all():
            break
        r = vec - ((basis @ vec[..., None])[..., 0][..., None, :] @ basis)[..., 0, :]
        r = r - ((basis @ r[..., None])[..., 0][..., None, :] @ basis)[..., 0, :]  # twice is enough
        nr, nv = np.linalg.norm(r, axis=-1), np.linalg.norm(vec, axis=-1)
        take = (count < n_h) & (nr > FRAME_RTOL * nv) & (nv > 1e-12 * scale + 1e-300)
        idx = np.minimum(count, n_h - 1)
        row = np.where(take[..., None], r / np.where(take, nr, 1.0)[..., None], 0.0)
        onehot = (np.arange(n_h) == idx[..., None]) & take[..., None]  # (..., N_h)
        basis = basis + onehot[..., :, None] * row[..., None, :]
        count = count + take
    if n_h == 2:  # reflection by handedness: kθ from w_0 to w_k of feature 0 is >= 0
        w = np.stack([basis @ W_s[s][..., :, 0, None] for s in range(k + 1)], -3)[..., 0]
        swept = _swept_2d(w)
        flip = swept < -ANGLE_ATOL
        basis[..., 1, :] = np.where(flip[..., None], -basis[..., 1, :], basis[..., 1, :])
    return basis


def _swept_2d(w: np.ndarray) -> np.ndarray:
    """Signed angle (degrees) swept by the planar vectors w (..., k+1, 2), step by step."""
    u, v = w[..., :-1, :], w[..., 1:, :]
    cross = u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]
    dot = (u * v).sum(-1)
    return np.degrees(np.arctan2(cross, dot).sum(-1))


def _unit_order(X: np.ndarray, Wh: np.ndarray, Y: np.ndarray, k: int) -> np.ndarray:
    """Permutation matrix P (..., N_h, N_h) sorting the ReLU units: readout weight first."""
    n_h, n_x = X.shape[-2:]
    W_s = _impulse(X, Wh, k + 4, relu_hidden=True)
    cols = [Y[..., :, j] for j in range(n_x)] + [w[..., :, j] for w in W_s for j in range(n_x)]
    cols += [np.diagonal(Wh, axis1=-2, axis2=-1), Wh.sum(-1), Wh.sum(-2)]
    keys = np.stack(cols)  # (K, ..., N_h), most significant first
    scale = np.abs(keys).max(axis=(0, -1), keepdims=True)
    q = np.round(keys / np.where(scale > 0, scale, 1.0), SORT_DIGITS)
    order = np.lexsort(-q[::-1], axis=-1)  # descending, first key decides
    return np.eye(n_h)[order]  # row i picks the unit placed i-th


# ---- small helpers -------------------------------------------------------------------------


def _impulse(X: np.ndarray, Wh: np.ndarray, n: int, relu_hidden: bool) -> list[np.ndarray]:
    """w_0 … w_{n-1} (each (..., N_h, N_x)): W_h^s W_x, or the ReLU impulse response."""
    out = [np.asarray(X, dtype=float)]
    for _ in range(1, n):
        prev = np.maximum(out[-1], 0.0) if relu_hidden else out[-1]
        out.append(Wh @ prev)
    return out


def _norm2(X: np.ndarray, Wh: np.ndarray, Y: np.ndarray, c_y: float) -> np.ndarray:
    return (X**2).sum((-2, -1)) + (Wh**2).sum((-2, -1)) + c_y * (Y**2).sum((-2, -1))


def _T(A: np.ndarray) -> np.ndarray:
    return np.swapaxes(A, -1, -2)


def _sym(A: np.ndarray) -> np.ndarray:
    return 0.5 * (A + _T(A))


def _inner(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return (A * B).sum((-2, -1))


def _fro(A: np.ndarray) -> np.ndarray:
    return np.sqrt(_inner(A, A))
