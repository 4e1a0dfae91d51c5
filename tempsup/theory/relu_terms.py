"""The four loss terms for ReLU readouts, exact to second order in p (science.md §1c).

The first-order formula (`tempsup.theory.closed_form.relu_sparse_approx`) vanishes at the
solutions the paper is about (a_k ≈ 1, every other a_s ≤ 0): what is left of
the loss there comes from *pairs* of co-active inputs, which is where the
interference-free packing pays or fails. This module expands the expected loss
over the sets of active inputs and keeps every set of at most two.

Slots. An input slot σ = (s, j) is feature j at age s < T (ages of the readout
window). For readout i, ℓ_i(A) is the loss at one step when exactly the slots in
A are active (magnitudes u_σ ~ U i.i.d.) and all others silent; the step must
be late enough for every slot to fit, which n(A) = T − max age(A) steps are.
With Δ(A) = Σ_{R⊆A} (−1)^{|A∖R|} E ℓ(R) (inclusion–exclusion), exactly

    E[L] = Σ_i I_i Σ_A p^{|A|} n(A) Δ_i(A).

Split ℓ = y² − 2yŷ + ŷ² (y = u_{(k,i)} when the target slot is active, else 0)
and keep |A| ≤ 2; with σ* = (k, i) the target slot of readout i:

    task            p n(k) Δ({σ*})             = p n(k) E(U − ŷ_{σ*})²  (no bias)
    projection      p Σ_{σ≠σ*} n(σ) Δ({σ})      = p Σ n(σ) ν ReLU(A_σ)²   (no bias)
    mean correction −2p² Σ_{σ≠σ*} n(σ*, σ) E[u_{σ*} (ŷ_{σ*σ} − ŷ_{σ*})]
    composition     p² Σ_{σ<σ'} n(σ, σ') E[ŷ_{σσ'}² − ŷ_σ² − ŷ_σ'² + ŷ_∅²]   (all pairs)

The remainder (|A| ≥ 3) is `expected_loss − sum(terms)`. With σ the identity
these are exactly the four linear terms of `tempsup.theory.closed_form.loss_terms`
(ŷ_{σ*σ} − ŷ_{σ*} = A_σ u_σ, and the pairs give 2 A_σ A_σ' μ²) — a test holds
them to 1e-9.

Two readouts, one expansion:
- `ssm` (linear recurrence): ŷ_i(A) = ReLU(Σ_{σ∈A} A_{σ,i} u_σ); the pair
  integrals E[ReLU(au + bv)²] and E[u ReLU(au + bv)] have closed forms for
  each input law (`pair_moments`).
- `rnn` (ReLU recurrence): the hidden ReLU composes co-active inputs, so the
  impulse responses alone do not suffice: each pair is a forward pass of the
  network from the older input through the newer one, evaluated on the nodes
  of a quadrature for (u, v). Without a bias ŷ is positively homogeneous of
  degree 1, so E[g(u, v)] = ∫_0^{π/2} g(cos φ, sin φ) W(φ) dφ with the law's
  radial weight W (uniform: 1/(4 max(cos φ, sin φ)⁴); exponential:
  6/(cos φ + sin φ)⁴): a one-dimensional rule of 32 Gauss–Legendre nodes.

Vector input and importance are handled throughout (slots are (age, feature)
pairs; the dense pair tables are (T·N_x)² per readout, 0.4 M numbers for
N_x = 5, T = 20). A readout bias b makes ℓ(∅) = ReLU(b)² nonzero and breaks the
homogeneity: the pair integrals then use a product rule (16 × 16 nodes), and,
as in the linear formula, the bias's whole contribution (the expansion with b
minus the expansion without) is booked under the mean correction.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from tempsup.theory.closed_form import input_moments

# Gauss–Legendre rule per panel, and panels per half of [0, π/2] (angular rule)
# or of [0, 1] (product rule). 2 × 8 per half agree with 16 × 8 to 5e-4 on trained
# ReLU RNNs and SSMs (kinks); smooth integrands are exact to round-off.
_GL_NODES = 8
_PANELS = 2


# ---- quadrature for E[g(U, V)], U, V i.i.d. from the input law ----------------------


def _gauss_legendre(lo: float, hi: float, panels: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss–Legendre rule on [lo, hi]: nodes and weights, (panels * nodes,)."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(lo, hi, panels + 1)
    half = np.diff(edges)[:, None] / 2.0
    mid = (edges[:-1] + edges[1:])[:, None] / 2.0
    return (mid + half * x).ravel(), (half * w).ravel()


def pair_nodes(dist: str, homogeneous: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes (u, v) and weights w with E[g(U, V)] ≈ Σ w g(u, v), each (Q,).

    `homogeneous`: g is positively homogeneous of degree 2 (no readout bias), so
    a 1-D angular rule suffices (module docstring). Otherwise a product rule:
    Gauss–Legendre on [0, 1] for the uniform law, Gauss–Laguerre for the
    exponential. The constant law U = 1 is a single node either way.
    """
    input_moments(dist)  # validates the name
    if dist == "constant":
        one = np.ones(1)
        return one, one, one
    if homogeneous:
        parts = [
            _gauss_legendre(a, b, _PANELS, _GL_NODES)
            for a, b in ((0, np.pi / 4), (np.pi / 4, np.pi / 2))
        ]
        phi = np.concatenate([p[0] for p in parts])
        wphi = np.concatenate([p[1] for p in parts])
        c, s = np.cos(phi), np.sin(phi)
        # uniform: ∫_0^{1/max(c,s)} r³ dr; exponential: ∫_0^∞ r³ e^{-r(c+s)} dr
        radial = 1.0 / (4.0 * np.maximum(c, s) ** 4) if dist == "uniform" else 6.0 / (c + s) ** 4
        return c, s, wphi * radial
    x, w = _law_nodes(dist)
    u, v = np.meshgrid(x, x, indexing="ij")
    return u.ravel(), v.ravel(), np.outer(w, w).ravel()


def pair_moments(a: np.ndarray, b: np.ndarray, dist: str) -> tuple[np.ndarray, np.ndarray]:
    """Closed forms of G = E[ReLU(aU + bV)²] and H = E[U ReLU(aU + bV)], U, V i.i.d.

    Uniform[0, 1]: G = ((a+b)₊⁴ − a₊⁴ − b₊⁴) / (12ab), written case by case so
    that no case cancels; H = ½ ∂G/∂a (d/da ReLU(z)² = 2 u ReLU(z)).
    Exponential(1): memorylessness gives G = 2a³/(a − b) for a > 0 ≥ b.
    Constant 1: G = ReLU(a + b)², H = ReLU(a + b). Elementwise, any shapes that
    broadcast; each case is evaluated on its own entries only (the pair tables
    of vector inputs are large).
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    if dist == "constant":
        r = np.maximum(a + b, 0.0)
        return r**2, r
    if dist not in ("uniform", "exponential"):
        input_moments(dist)  # raises the standard message
    G, H = np.zeros(a.shape), np.zeros(a.shape)
    pos_a, pos_b = a > 0, b > 0
    cases = _UNIFORM_CASES if dist == "uniform" else _EXPONENTIAL_CASES
    for where, formula in cases:
        mask = where(pos_a, pos_b, a, b)
        if mask.any():
            G[mask], H[mask] = formula(a[mask], b[mask])
    return G, H


# (which entries, (G, H) on them) per case; a > 0 >= b is where the kink line cuts the domain
_UNIFORM_CASES = (
    (
        lambda pa, pb, a, b: pa & pb,
        lambda a, b: ((2 * a * a + 3 * a * b + 2 * b * b) / 6, a / 3 + b / 4),
    ),
    (
        lambda pa, pb, a, b: pa & ~pb & (a + b > 0),
        lambda a, b: (
            a * a / 3 + a * b / 2 + b * b / 3 + b**3 / (12 * a),
            a / 3 + b / 4 - b**3 / (24 * a * a),
        ),
    ),
    (
        lambda pa, pb, a, b: pa & ~pb & (a + b <= 0),
        lambda a, b: (-(a**3) / (12 * b), -(a * a) / (8 * b)),
    ),
    (
        lambda pa, pb, a, b: pb & ~pa & (a + b > 0),
        lambda a, b: (
            b * b / 3 + a * b / 2 + a * a / 3 + a**3 / (12 * b),
            a / 3 + b / 4 + a * a / (8 * b),
        ),
    ),
    (
        lambda pa, pb, a, b: pb & ~pa & (a + b <= 0),
        lambda a, b: (-(b**3) / (12 * a), b**3 / (24 * a * a)),
    ),
)
_EXPONENTIAL_CASES = (  # exponential(1): μ = 1, ν = 2
    (lambda pa, pb, a, b: pa & pb, lambda a, b: (2 * (a * a + a * b + b * b), 2 * a + b)),
    (
        lambda pa, pb, a, b: pa & ~pb,
        lambda a, b: (2 * a**3 / (a - b), (2 * a**3 - 3 * a * a * b) / (a - b) ** 2),
    ),
    (lambda pa, pb, a, b: pb & ~pa, lambda a, b: (-2 * b**3 / (a - b), b**3 / (a - b) ** 2)),
)


# ---- the expansion -----------------------------------------------------------------


class Tables(NamedTuple):
    """One- and two-slot expectations per readout i; slots q = s·N_x + j (age s, feature j).

    single_sq  (..., N_x, Q)     E ŷ_i({q})²
    single_lin (..., N_x, Q)     E[u_q ŷ_i({q})]
    pair_sq    (..., N_x, Q, Q)  E ŷ_i({q, q'})²            (symmetric; diagonal unused)
    pair_cross (..., N_x, Q, Q)  E[u_q ŷ_i({q, q'})]         (the magnitude of row q)
    empty_sq   (..., N_x)        ŷ_i(∅)², nonzero only with a positive bias
    """

    single_sq: np.ndarray
    single_lin: np.ndarray
    pair_sq: np.ndarray
    pair_cross: np.ndarray
    empty_sq: np.ndarray


class Deltas(NamedTuple):
    """The inclusion–exclusion differences Δ(A) of one- and two-slot sets, per readout.

    one   (..., N_x, Q)     Δ({q}) = E ℓ({q}) − ℓ(∅)
    two   (..., N_x, Q, Q)  Δ({q, q'}), symmetric, zero on the diagonal
    empty (..., N_x)        ℓ(∅) = ŷ(∅)²
    Split by ℓ = y² − 2yŷ + ŷ²: `two` = `comp` + `mean` (the −2yŷ part, nonzero
    only on the target's row and column).
    """

    one: np.ndarray
    comp: np.ndarray
    mean: np.ndarray
    empty: np.ndarray

    @property
    def two(self) -> np.ndarray:
        return self.comp + self.mean


def deltas(tab: Tables, k: int, nu: float, T: int) -> Deltas:
    """Δ of every slot and pair of slots from the expectations in `tab`."""
    n_x, Q = tab.single_sq.shape[-2:]
    ii = np.arange(n_x)
    tq = k * n_x + ii  # the target slot σ* = (k, i) of readout i
    e0 = tab.empty_sq
    t_lin = tab.single_lin[..., ii, tq]  # E[u ŷ_i({σ*})], (..., N_x)
    one = tab.single_sq - e0[..., None]
    one[..., ii, tq] += nu - 2.0 * t_lin  # the target's own y² − 2yŷ
    comp = (
        tab.pair_sq
        - tab.single_sq[..., :, None]
        - tab.single_sq[..., None, :]
        + e0[..., None, None]
    )
    off = ~np.eye(Q, dtype=bool)
    comp = np.where(off, comp, 0.0)
    # −2 E[u_σ* (ŷ({σ*, q}) − ŷ({σ*}))] on the target's row and column
    row = -2.0 * (tab.pair_cross[..., ii, tq, :] - t_lin[..., None])  # (..., N_x, Q)
    row = np.where(off[tq], row, 0.0)
    mean = np.zeros_like(comp)
    mean[..., ii, tq, :] = row
    np.swapaxes(mean, -1, -2)[..., ii, tq, :] = row  # and its column (a view)
    return Deltas(one, comp, mean, e0)


def expand(
    tab: Tables, k: int, p: np.ndarray, nu: float, T: int, importance: np.ndarray
) -> np.ndarray:
    """The four terms (..., 4) — task, mean correction, projection, composition — from `tab`.

    `p` broadcasts against the leading axes; `importance` is (N_x,) or (..., N_x).
    """
    d = deltas(tab, k, nu, T)
    n_x = d.one.shape[-2]
    n1, n2 = fits(T, n_x)
    p = np.asarray(p, dtype=float)[..., None]  # against the readout axis
    ii = np.arange(n_x)
    is_target = np.zeros(d.one.shape[-2:], dtype=bool)
    is_target[ii, k * n_x + ii] = True
    task = p * np.where(is_target, d.one * n1, 0.0).sum(-1)
    proj = p * np.where(is_target, 0.0, d.one * n1).sum(-1)
    upper = np.triu(np.ones(n2.shape, dtype=bool), 1)
    comp = p**2 * np.where(upper, d.comp * n2, 0.0).sum(axis=(-2, -1))
    mean = p**2 * np.where(upper, d.mean * n2, 0.0).sum(axis=(-2, -1)) + T * d.empty
    terms = np.stack(np.broadcast_arrays(task, mean, proj, comp), axis=-1)  # (..., N_x, 4)
    return (np.asarray(importance, dtype=float)[..., :, None] * terms).sum(axis=-2)


def fits(T: int, n_x: int) -> tuple[np.ndarray, np.ndarray]:
    """n(A) = T − max age(A): the steps at which a slot (Q,) or a pair (Q, Q) fits."""
    ages = np.repeat(np.arange(T), n_x)  # slot q = s * N_x + j has age s
    return (T - ages).astype(float), (T - np.maximum(ages[:, None], ages[None, :])).astype(float)


def ssm_tables(A: np.ndarray, dist: str, relu: bool = True) -> Tables:
    """`Tables` of a linear recurrence from its projections A (..., T, N_x(i), N_x(j)), no bias.

    Closed forms (`pair_moments`); `relu=False` is the identity readout (the
    linear RNN), which checks the expansion against the linear closed form.
    """
    mu, nu = input_moments(dist)
    T, n_x = A.shape[-3], A.shape[-1]
    a = np.moveaxis(A, -3, -2).reshape(A.shape[:-3] + (n_x, T * n_x))  # (..., i, q)
    x, y = a[..., :, None], a[..., None, :]
    if relu:
        r = np.maximum(a, 0.0)
        G, H = pair_moments(x, y, dist)
        return Tables(nu * r**2, nu * r, G, H, np.zeros(a.shape[:-1]))
    G = nu * (x**2 + y**2) + 2 * mu**2 * x * y
    H = nu * x + mu**2 * y
    return Tables(nu * a**2, nu * a, G, H, np.zeros(a.shape[:-1]))


def network_tables(
    W_x: np.ndarray,
    W_h: np.ndarray,
    W_y: np.ndarray,
    b_y: np.ndarray | None,
    T: int,
    dist: str,
    relu_hidden: bool,
    relu_readout: bool = True,
) -> Tables:
    """`Tables` by forward passes of the network on quadrature nodes (the ReLU RNN; any bias).

    For every pair of slots — the older (s + d, j') and the newer (s, j) — the
    state just after the newer input is u W_x[:, j] + v w_d[:, j'] (w_d the
    older input's impulse response d steps on: exact by positive homogeneity);
    then s more steps h ← W_h σ_h(h), and the readout. All offsets d, features
    and nodes run at once: T steps, each one matrix product per model (`_pair_tables`).
    """
    _, nu = input_moments(dist)
    n_h, n_x = W_x.shape[-2], W_x.shape[-1]
    lead = np.broadcast_shapes(W_x.shape[:-2], W_h.shape[:-2], W_y.shape[:-2])
    act_h = _relu if relu_hidden else _identity
    act_y = _relu if relu_readout else _identity
    b = np.zeros(lead + (n_x,)) if b_y is None else np.broadcast_to(b_y, lead + (n_x,))
    homogeneous = not np.any(b)
    resp = [np.broadcast_to(W_x, lead + (n_h, n_x))]  # impulse responses w_d (..., N_h, N_x)
    for _ in range(1, T):
        resp.append(W_h @ act_h(resp[-1]))
    resp = np.stack(resp, axis=-3)  # (..., T, N_h, N_x)
    a1 = np.swapaxes(W_y, -1, -2)[..., None, :, :] @ resp  # (..., T, i, j)
    if homogeneous:  # ŷ(u) = u ŷ(1): E ŷ² = ν ŷ(1)², E[u ŷ] = ν ŷ(1)
        y1 = act_y(a1)
        single_sq, single_lin = nu * y1**2, nu * y1
    else:
        x1, w1 = _law_nodes(dist)
        y1 = act_y(a1[..., None] * x1 + b[..., None, :, None, None])  # (..., T, i, j, n)
        single_sq, single_lin = (y1**2 * w1).sum(-1), (y1 * x1 * w1).sum(-1)
    to_slots = lambda t: np.moveaxis(t, -3, -2).reshape(lead + (n_x, T * n_x))  # noqa: E731
    pair_sq, pair_cross = _pair_tables(
        W_x, W_h, W_y, b, resp, lead, dist, homogeneous, act_h, relu_readout
    )
    return Tables(to_slots(single_sq), to_slots(single_lin), pair_sq, pair_cross, act_y(b) ** 2)


_CHUNK_BYTES = 4 * 2**20  # readouts computed at once by `_pair_tables` (measured: 2-8 MB)


def _pair_tables(
    W_x: np.ndarray,
    W_h: np.ndarray,
    W_y: np.ndarray,
    b: np.ndarray,
    resp: np.ndarray,
    lead: tuple[int, ...],
    dist: str,
    homogeneous: bool,
    act_h: Any,
    relu_readout: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """pair_sq and pair_cross (lead + (N_x, Q, Q)) of `network_tables` by forward passes.

    Layout: the hidden units come right after the flattened leading axes, all
    pairs and nodes after them, h (L, N_h, d, j, j', node); so each product with
    W_h or W_y is one matrix product per model over every pair at once, and each
    node sum one matrix-vector product (stacks of tiny products are slow).
    """
    T, n_h, n_x = resp.shape[-3], W_x.shape[-2], W_x.shape[-1]
    L = math.prod(lead)
    flat = lambda a, tail: np.broadcast_to(a, lead + tail).reshape((L, *tail))  # noqa: E731
    Wx, Wh = flat(W_x, (n_h, n_x)), flat(W_h, (n_h, n_h))
    Wy_t = np.swapaxes(flat(W_y, (n_h, n_x)), 1, 2)  # (L, i, N_h)
    bb = flat(b, (n_x,))[:, :, None]  # (L, i, 1)
    r = np.moveaxis(flat(resp, (T, n_h, n_x)), 2, 1)  # (L, N_h, d, j')
    u, v, w = pair_nodes(dist, homogeneous)
    Q = T * n_x
    pair_sq = np.zeros((L, n_x, Q, Q))
    pair_cross = np.zeros((L, n_x, Q, Q))
    # a few models at a time: the readouts of every pair of one model (N_x · T · N_x² ·
    # nodes numbers) are already megabytes, and a pass over them stays in the cache
    step = max(1, _CHUNK_BYTES // (8 * n_x * T * n_x * n_x * u.size))
    for lo in range(0, L, step):
        part = slice(lo, lo + step)
        _pairs_into(
            pair_sq[part], pair_cross[part], Wx[part], Wh[part], Wy_t[part], bb[part],
            r[part], (u, v, w), homogeneous, act_h, relu_readout,
        )  # fmt: skip
    shape = lead + (n_x, Q, Q)
    return pair_sq.reshape(shape), pair_cross.reshape(shape)


def _pairs_into(
    pair_sq: np.ndarray,
    pair_cross: np.ndarray,
    Wx: np.ndarray,
    Wh: np.ndarray,
    Wy_t: np.ndarray,
    bb: np.ndarray,
    r: np.ndarray,
    nodes: tuple[np.ndarray, np.ndarray, np.ndarray],
    homogeneous: bool,
    act_h: Any,
    relu_readout: bool,
) -> None:
    """Fill pair_sq and pair_cross (L, N_x, Q, Q) of L models (see `_pair_tables`)."""
    L, n_h, T, n_x = r.shape
    u, v, w = nodes
    n = u.size
    # state just after the newer input: u W_x[:, j] + v w_d[:, j'], (L, N_h, d, j, j', node)
    h = Wx[:, :, None, :, None, None] * u + r[:, :, :, None, :, None] * v
    d_all, j = np.arange(T), np.arange(n_x)
    weights = np.stack([u * w, v * w], axis=-1)  # (node, 2): E[U ·], E[V ·]
    for s in range(T):
        D = T - s  # h keeps the offsets whose older slot s + d is in the window
        y = Wy_t @ h.reshape(L, n_h, -1)  # (L, i, D·j·j'·node), a fresh array
        if not homogeneous:
            y += bb
        if relu_readout:
            np.maximum(y, 0.0, out=y)
        rows = y.reshape(-1, n)  # one row per (model, readout, pair)
        both = (rows @ weights).reshape(L, n_x, D, n_x, n_x, 2)
        sq = (np.square(rows, out=rows) @ w).reshape(L, n_x, D, n_x, n_x)
        d = d_all[:D]
        qn = np.broadcast_to((s * n_x + j)[None, :, None], (D, n_x, n_x))
        qo = np.broadcast_to(((s + d)[:, None] * n_x + j)[:, None, :], (D, n_x, n_x))
        pair_sq[:, :, qn, qo] = sq
        pair_sq[:, :, qo, qn] = sq
        pair_cross[:, :, qn, qo] = both[..., 0]
        pair_cross[:, :, qo, qn] = both[..., 1]
        if s < T - 1:
            h = (Wh @ act_h(h[:, :, : D - 1]).reshape(L, n_h, -1)).reshape(
                L, n_h, D - 1, n_x, n_x, n
            )


def _relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0)


def _identity(z: np.ndarray) -> np.ndarray:
    return z


def _law_nodes(dist: str) -> tuple[np.ndarray, np.ndarray]:
    """1-D rule for E[f(U)]: Gauss–Legendre (uniform), Gauss–Laguerre (exponential), U = 1."""
    if dist == "uniform":
        return _gauss_legendre(0.0, 1.0, _PANELS, _GL_NODES)
    if dist == "exponential":
        return np.polynomial.laguerre.laggauss(_PANELS * _GL_NODES)
    return np.ones(1), np.ones(1)


# ---- the public entry --------------------------------------------------------------


def relu_loss_terms(*args: Any, **kwargs: Any) -> np.ndarray:
    """Task, mean correction, projection and composition (..., 4) of a ReLU readout.

    The arguments of `analyse`. `relu_hidden=False` is the SSM (closed-form
    pair integrals), True the ReLU RNN (forward passes); weights as in
    `tempsup.theory.geometry`, any leading axes. With a bias the terms are those of the
    network without it, and everything the bias changes is booked under the
    mean correction, as in the linear formula.
    """
    return analyse(*args, **kwargs)[0]


def analyse(
    W_x: np.ndarray,
    W_h: np.ndarray,
    W_y: np.ndarray,
    b_y: np.ndarray | None,
    k: int,
    p: float | np.ndarray,
    dist: str,
    T: int,
    relu_hidden: bool,
    importance: np.ndarray | None = None,
) -> tuple[np.ndarray, Deltas]:
    """`relu_loss_terms` and the Δ of the network as it is (bias included).

    The Δ are summed over readouts with their importance (readout axis of
    size 1): `tempsup.theory.expected_loss.network_expected_loss` uses them to know the
    strata of at most two active inputs exactly and as a control variate for the rest.
    """
    _, nu = input_moments(dist)
    W_x, W_h, W_y = (np.asarray(w, dtype=float) for w in (W_x, W_h, W_y))
    n_x = W_x.shape[-1]
    imp = np.ones(n_x) if importance is None else np.asarray(importance, dtype=float)

    def tables(bias: np.ndarray | None) -> Tables:
        if relu_hidden or bias is not None:
            return network_tables(W_x, W_h, W_y, bias, T, dist, relu_hidden)
        lead = np.broadcast_shapes(W_x.shape[:-2], W_h.shape[:-2])
        W_s = [np.broadcast_to(W_x, lead + W_x.shape[-2:])]
        for _ in range(1, T):
            W_s.append(W_h @ W_s[-1])
        A = np.swapaxes(W_y, -1, -2)[..., None, :, :] @ np.stack(W_s, axis=-3)  # (..., T, i, j)
        return ssm_tables(A, dist)

    tab = tables(None)
    terms = expand(tab, k, p, nu, T, imp)
    if b_y is not None and np.any(b_y):
        tab = tables(np.asarray(b_y, dtype=float))  # the network as it is, for the Δ
        with_bias = expand(tab, k, p, nu, T, imp)
        terms[..., 1] += with_bias.sum(-1) - terms.sum(-1)
    d = deltas(tab, k, nu, T)
    w1, w2 = imp[..., :, None], imp[..., :, None, None]
    weighted = Deltas(
        (w1 * d.one).sum(-2, keepdims=True),
        (w2 * d.comp).sum(-3, keepdims=True),
        (w2 * d.mean).sum(-3, keepdims=True),
        (imp * d.empty).sum(-1, keepdims=True),
    )
    return terms, weighted
