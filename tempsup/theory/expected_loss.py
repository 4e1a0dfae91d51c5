"""The expected loss itself, to all orders in p: what the four terms are measured against.

Three models, three methods (each batched over leading axes, e.g. seeds):

- `linear`: the closed form of `tempsup.theory.closed_form.expected_loss` (exact).
- `ssm`: the readout sees Z_i = Σ_σ A_{σ,i} x_σ (+ b_i), a sum of independent
  terms (1 − p)δ_0 + p·Law(A_{σ,i} U). Its distribution is computed by
  numerical convolution on a grid (FFT), and
      E[L] = Σ_t Σ_i I_i { (1 − p) E ReLU(Z'_t)² + p E_u E(u − ReLU(a* u + Z'_t))² }
  for t > k (Z'_t leaves out the target slot, whose magnitude u is integrated
  separately), E ReLU(Z_t)² for t ≤ k. Each term's law is a weighted set of
  quadrature nodes spread onto the grid by linear interpolation (mean kept);
  with 1024 grid points the error is about 0.03 % (tested against Monte Carlo).
- `rnn`: no closed form: a Monte Carlo estimate on fixed common random
  numbers (the same sequences at every frame, so curves are smooth), stratified
  by the number K of active input slots among the Q = T·N_x. The strata K ≤ 2
  are known exactly from the second-order expansion (`tempsup.theory.relu_terms`):
  with D_r = Σ_{|A|=r} n(A) Δ(A), E[L | K] = Σ_{r≤K} C(Q−r, K−r)/C(Q, K) D_r.
  Only K ≥ 3 is sampled, in proportion to P(K), and with a control variate:
  the same expansion evaluated on each sampled sequence's active slots,
  C = D_0 + Σ_σ r_σ + Σ_{σ<σ'} R_σσ' (r, R: the one- and two-slot Δ summed over the
  steps at which they are seen), whose stratum mean is known exactly. The
  estimate is then of L − C, the part of the loss beyond pairs, which is small
  wherever the terms explain the loss.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from tempsup.theory import closed_form as theory
from tempsup.theory.relu_terms import Deltas

GRID = 1024  # least points of the convolution grid (the sum's whole support fits in half)
LAW_NODES = 32  # quadrature nodes per input law on the grid
MC_SEQUENCES = 3072  # sequences behind the ReLU RNN's estimate (about 1 % standard error)
MC_SEED = 20_260_101  # fixed: common random numbers across frames
# The convolution's accuracy (module docstring, about 0.03 %): two SSM losses closer than
# this fraction are not told apart.
SSM_REL_ERROR = 3e-4
# Refining a Monte Carlo estimate (`refine`): fresh sets of MC_SEQUENCES sequences, each on
# its own fixed seed (REFINE_SEED, REFINE_SEED + 1, …), so a refined estimate is the same in
# every process; at most REFINE_CHUNKS of them per network (standard error ÷ 8).
REFINE_SEED = MC_SEED + 1
REFINE_CHUNKS = 64


def _law_nodes(dist: str) -> tuple[np.ndarray, np.ndarray]:
    """Nodes u_n and weights w_n with E f(U) ≈ Σ w_n f(u_n), on a bounded range."""
    if dist == "constant":
        return np.ones(1), np.ones(1)
    x, w = np.polynomial.legendre.leggauss(4)
    if dist == "uniform":
        lo, hi, panels = 0.0, 1.0, LAW_NODES // 4
    else:  # exponential(1) truncated at 20 (tail mass 2e-9)
        lo, hi, panels = 0.0, 20.0, LAW_NODES // 2
    edges = np.linspace(lo, hi, panels + 1)
    half, mid = np.diff(edges)[:, None] / 2, (edges[:-1] + edges[1:])[:, None] / 2
    u, wu = (mid + half * x).ravel(), (half * w).ravel()
    if dist == "exponential":
        wu = wu * np.exp(-u)
    return u, wu


# ---- SSM: the distribution of the readout's input by convolution ---------------------


def ssm_expected_loss(
    A: np.ndarray,
    k: int,
    p: float,
    dist: str,
    T: int,
    importance: np.ndarray | None = None,
    b_y: np.ndarray | None = None,
    grid: int | None = None,
) -> np.ndarray:
    """E[L] of a linear recurrence with a ReLU readout, shape A.shape[:-3].

    `A` (..., n >= T, N_x(i), N_x(j)) are the projections W_yᵀ W_s; `b_y` (..., N_x).
    """
    A = np.asarray(A, dtype=float)[..., :T, :, :]
    lead, n_x = A.shape[:-3], A.shape[-1]
    imp = np.ones(n_x) if importance is None else np.asarray(importance, dtype=float)
    b = np.zeros(lead + (n_x,)) if b_y is None else np.broadcast_to(b_y, lead + (n_x,))
    # per readout i: coefficients c_q of the slots q = s * N_x + j, age-major
    c = np.moveaxis(A, -3, -2).reshape(-1, T * n_x)  # (B = lead * i, Q)
    bias = b.reshape(-1)  # (B,)
    nb, nq = c.shape
    if grid is None:
        grid = max(GRID, 1 << int(np.ceil(np.log2(8 * nq))))
    u, wu = _law_nodes(dist)
    umax = u.max()
    span = umax * np.abs(c).sum(axis=1)  # width of the support of Σ c_q x_q
    h = np.maximum(span, 1e-12) / (grid // 2 - 2 * nq - 4)  # (B,) grid step: no wrap-around
    # each slot's law on the grid: (1 - p) δ_0 + p Σ_n w_n δ(c u_n), linearly interpolated
    pos = c[:, :, None] * u / h[:, None, None]  # (B, Q, n) in grid units
    lo = np.floor(pos)
    frac = pos - lo
    idx = lo.astype(np.int64) % grid
    rows = (np.arange(nb * nq) * grid).reshape(nb, nq, 1)
    mass = p * wu
    dens = np.bincount(
        np.concatenate([(rows + idx).ravel(), (rows + (idx + 1) % grid).ravel()]),
        weights=np.concatenate([(mass * (1 - frac)).ravel(), (mass * frac).ravel()]),
        minlength=nb * nq * grid,
    ).reshape(nb, nq, grid)
    dens[:, :, 0] += 1.0 - p
    spec = np.fft.rfft(dens, axis=-1)  # (B, Q, grid/2 + 1)
    i_of_row = np.tile(np.arange(n_x), nb // n_x)  # readout i of each row
    target = k * n_x + i_of_row  # (B,) the target slot of each row
    spec[np.arange(nb), target] = 1.0  # left out of Z': its magnitude is integrated apart
    cum = np.empty((nb, T, spec.shape[-1]), dtype=spec.dtype)  # product over ages < t
    acc = np.ones_like(spec[:, 0])
    for q in range(nq):
        acc *= spec[:, q]
        if q % n_x == n_x - 1:  # the last slot of age s = q // N_x: Z'_t for t = s + 1
            cum[:, q // n_x] = acc
    m = np.arange(grid)
    z = np.where(m < grid // 2, m, m - grid) * h[:, None] + bias[:, None]  # (B, grid)
    a_star = c[np.arange(nb), target]  # (B,)
    fired = _target_error(a_star[:, None], z, dist, u, wu)  # (B, grid): E(u − ReLU(a*u + z))²
    # Σ_z P_t(z) f(z) by Parseval, in the half spectrum: no inverse transform per step t
    half = np.full(grid // 2 + 1, 2.0 / grid)
    half[[0, -1]] = 1.0 / grid
    f_hat = np.fft.rfft(np.stack([np.maximum(z, 0.0) ** 2, fired]), axis=-1).conj() * half
    silent, active = np.einsum("btm,fbm->fbt", cum, f_hat).real  # (B, T) each
    late = np.arange(1, T + 1) > k  # steps with a target
    per_t = np.where(late, (1 - p) * silent + p * active, silent)  # (B, T)
    per_i = per_t.sum(-1).reshape(lead + (n_x,))
    return (imp * per_i).sum(-1)


def _target_error(
    a: np.ndarray, z: np.ndarray, dist: str, u: np.ndarray, wu: np.ndarray
) -> np.ndarray:
    """E_u (u − ReLU(a u + z))²: the target's error when it arrives on top of z.

    Uniform[0, 1]: exact, integrating the polynomial over the interval [l, r] of
    u where a u + z > 0; other laws on their quadrature nodes.
    """
    if dist != "uniform":
        return ((u - np.maximum(a[..., None] * u + z[..., None], 0.0)) ** 2 * wu).sum(-1)
    a, z = np.broadcast_arrays(a, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(a != 0, -z / a, 0.0)
    lo = np.where(a > 0, np.clip(root, 0, 1), np.where((a == 0) & (z <= 0), 1.0, 0.0))
    hi = np.where(a < 0, np.clip(root, 0, 1), 1.0)
    hi = np.maximum(hi, lo)
    d1, d2, d3 = hi - lo, (hi**2 - lo**2), (hi**3 - lo**3)
    sq = a * a * d3 / 3 + a * z * d2 + z * z * d1  # ∫ (au + z)² over [lo, hi]
    lin = a * d3 / 3 + z * d2 / 2  # ∫ u (au + z)
    return 1.0 / 3.0 - 2.0 * lin + sq


# ---- any network: stratified Monte Carlo on common random numbers --------------------


def _binomial(n: int, kk: int, p: float) -> float:
    """P(K = kk) for K ~ Binomial(n, p), 0 < p < 1."""
    logc = math.lgamma(n + 1) - math.lgamma(kk + 1) - math.lgamma(n - kk + 1)
    return math.exp(logc + kk * math.log(p) + (n - kk) * math.log1p(-p))


def _strata(n_slots: int, p: float, n_seq: int, first: int) -> list[tuple[int, float, int]]:
    """(K, P(K), sequences) for K >= first active slots, sequences in proportion to P(K)."""
    out = [(kk, _binomial(n_slots, kk, p)) for kk in range(first, n_slots + 1)]
    out = [(kk, w) for kk, w in out if w >= 1e-12]
    total = sum(w for _, w in out) or 1.0
    return [(kk, w, max(4, round(n_seq * w / total))) for kk, w in out]


def network_expected_loss(
    W_x: np.ndarray,
    W_h: np.ndarray,
    W_y: np.ndarray,
    b_y: np.ndarray | None,
    k: int,
    p: float,
    dist: str,
    T: int,
    importance: np.ndarray | None = None,
    relu_hidden: bool = True,
    relu_readout: bool = True,
    n_seq: int = MC_SEQUENCES,
    seed: int = MC_SEED,
    low_orders: Deltas | None = None,
    memo: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Stratified Monte Carlo E[L] and its standard error, each of shape of the leading axes.

    Weights (..., N_h, N_x) etc. as in `tempsup.theory.geometry`; any leading axes
    broadcast. `seed` fixes the sequences (common random numbers): the same
    weights always give the same estimate. `low_orders`, the importance-weighted
    Δ of `tempsup.theory.relu_terms.analyse`, makes the strata K <= 2 exact and serves
    as the control variate (module docstring); without it every stratum K >= 1
    is sampled plainly (an independent check). `memo=False` does not keep the sequences
    (`refine`'s, used once).
    """
    W_x, W_h, W_y = (np.asarray(w, dtype=float) for w in (W_x, W_h, W_y))
    n_h, n_x = W_x.shape[-2:]
    lead = np.broadcast_shapes(W_x.shape[:-2], W_h.shape[:-2], W_y.shape[:-2])
    imp = np.ones(n_x) if importance is None else np.asarray(importance, dtype=float)
    b = np.zeros(lead + (n_x,)) if b_y is None else np.broadcast_to(b_y, lead + (n_x,))
    act_h = (lambda v: np.maximum(v, 0.0)) if relu_hidden else (lambda v: v)
    act_y = (lambda v: np.maximum(v, 0.0)) if relu_readout else (lambda v: v)
    n_slots = T * n_x
    if low_orders is None:  # K = 0 alone is exact: no input, ŷ = act(b) at every step
        exact = (1 - p) ** n_slots * T * (imp * act_y(b) ** 2).sum(-1)  # (lead)
        first, r1, r2, D = 1, None, None, None
    else:
        r1, r2 = _seen(low_orders, T, lead)  # (lead, Q), (lead, Q, Q)
        D = [
            np.broadcast_to(T * low_orders.empty[..., 0], lead),
            r1.sum(-1),
            np.triu(r2, 1).sum((-2, -1)),
        ]
        exact = sum(_binomial(n_slots, kk, p) * _stratum_mean(D, n_slots, kk) for kk in range(3))
        first = 3
    strata = _strata(n_slots, p, n_seq, first)
    if not strata:
        return exact + np.zeros(lead), np.zeros(lead)
    sizes = np.array([n for _, _, n in strata])
    probs = np.array([w for _, w, _ in strata])
    sequences = _sequences if memo else _sequences.__wrapped__
    order, xt, started, by_start = sequences(tuple(strata), T, n_x, dist, seed)
    losses = np.empty(lead + (xt.shape[-1],))
    losses[..., by_start] = _sequence_losses(W_x, W_h, W_y, b, xt, started, k, imp, act_h, act_y)
    if r1 is not None:  # control variate: the expansion on these slots, its mean added back
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        for (kk, _, _), lo, size in zip(strata, starts, sizes, strict=True):
            idx = order[lo : lo + size, :kk]  # the active slots of this stratum's sequences
            pairs = 0.5 * r2[..., idx[:, :, None], idx[:, None, :]].sum((-2, -1))
            control = D[0][..., None] + r1[..., idx].sum(-1) + pairs  # D_0: the silent steps
            known = _stratum_mean(D, n_slots, kk)[..., None]
            losses[..., lo : lo + size] += known - control
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    sums = np.add.reduceat(losses, starts, axis=-1)  # (lead, strata)
    sq = np.add.reduceat(losses**2, starts, axis=-1)
    means = sums / sizes
    var_k = np.maximum(sq - sizes * means**2, 0.0) / np.maximum(sizes - 1, 1)
    mean = exact + (probs * means).sum(-1)
    se = np.sqrt((probs**2 * var_k / sizes).sum(-1))
    return mean, se


def refine(
    W_x: np.ndarray,
    W_h: np.ndarray,
    W_y: np.ndarray,
    b_y: np.ndarray | None,
    k: int,
    p: float,
    dist: str,
    T: int,
    importance: np.ndarray | None,
    low_orders: Deltas | None,
    chunk: int,
    chunks: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Another `chunks` × MC_SEQUENCES sequences of `network_expected_loss` (ReLU hidden
    and readout) as one estimate and its standard error, each of the leading axes' shape.

    Chunk number `chunk` uses the fixed seed REFINE_SEED + chunk, independent of the
    frames' own sequences (MC_SEED), so a refined estimate is the same in every process;
    `pooled` combines chunks. Its sequences are not memoised (they are large and used once).
    Used to tell apart seeds whose frame estimates lie within a standard error of each
    other (`tempsup.io.run.choose_best`).
    """
    return network_expected_loss(
        W_x, W_h, W_y, b_y, k, p, dist, T, importance, n_seq=chunks * MC_SEQUENCES,
        seed=REFINE_SEED + chunk, low_orders=low_orders, memo=False,
    )  # fmt: skip


def pooled(means: np.ndarray, ses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean of independent equal-size estimates (axis 0) and its standard error."""
    n = means.shape[0]
    return means.mean(axis=0), np.sqrt((ses**2).sum(axis=0)) / n


@functools.lru_cache(maxsize=8)
def _sequences(
    strata: tuple[tuple[int, float, int], ...], T: int, n_x: int, dist: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The sampled sequences of the strata, ready for `_sequence_losses`.

    Returns the slot orders (n, Q) in stratum order, and, sorted by the time
    of the first input, the inputs xt (T, N_x, n) in float32, the number of
    sequences begun by each step (T,), and that sorting permutation (n,).

    A pure function of its arguments (common random numbers), memoised because
    every frame of a run asks for the same ones; the arrays are read-only.
    """
    rng = np.random.default_rng(seed)
    n_slots = T * n_x
    sizes = [n for _, _, n in strata]
    ks = np.repeat([kk for kk, _, _ in strata], sizes)  # active slots of each sequence
    n = int(sum(sizes))
    order = rng.random((n, n_slots)).argsort(axis=1)  # a uniformly random order of the slots
    active = np.zeros((n, n_slots), dtype=bool)  # its first K slots: K distinct, uniform
    np.put_along_axis(active, order, np.arange(n_slots) < ks[:, None], axis=1)
    x = (active * theory_sample(rng, (n, n_slots), dist)).reshape(n, T, n_x)
    first = active.argmax(axis=1) // n_x  # the time of each sequence's first input
    by_start = np.argsort(first, kind="stable")
    xt = np.ascontiguousarray(np.moveaxis(x[by_start], 0, -1), dtype=np.float32)  # (T, N_x, n)
    started = np.searchsorted(first[by_start], np.arange(T), side="right")  # begun by step t
    for arr in (order, xt, started, by_start):
        arr.flags.writeable = False
    return order, xt, started, by_start


def _stratum_mean(D: list[np.ndarray], n_slots: int, kk: int) -> np.ndarray:
    """E[Σ_{r<=2} of the expansion | K = kk active slots] = Σ_r C(Q−r, K−r)/C(Q, K) D_r."""
    total = math.comb(n_slots, kk)
    return sum(math.comb(n_slots - r, kk - r) / total * D[r] for r in range(min(kk, 2) + 1))


def _seen(d: Deltas, T: int, lead: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The Δ of slots and pairs of *absolute* positions, summed over the steps that see them.

    Slot (τ, j) — feature j at time τ — has age t − τ at step t >= τ, so
    r[τ, j] = Σ_{t>=τ} Δ({(t−τ, j)}) and R[(τ, j), (τ', j')] = Σ_{t>=max τ} Δ(the pair of ages).
    Slots are time-major (q = τ·N_x + j), like the ages of `Deltas`.
    """
    one = np.broadcast_to(d.one[..., 0, :], lead + d.one.shape[-1:])  # (lead, Q) by age
    two = np.broadcast_to(d.two[..., 0, :, :], lead + d.two.shape[-2:])
    Q = one.shape[-1]
    n_x = Q // T
    r1, r2 = np.zeros(lead + (Q,)), np.zeros(lead + (Q, Q))
    for t in range(T):
        seen = (t + 1) * n_x  # slots of times 0..t, whose ages at step t are t..0
        ages = (t - np.arange(t + 1))[:, None] * n_x + np.arange(n_x)  # age slot of each time slot
        ages = ages.ravel()  # (seen,)
        r1[..., :seen] += one[..., ages]
        r2[..., :seen, :seen] += two[..., ages[:, None], ages[None, :]]
    return r1, r2


def theory_sample(rng: np.random.Generator, shape: tuple[int, ...], dist: str) -> np.ndarray:
    """Magnitudes U of active inputs (numpy twin of `tempsup.model.data.sample_values`)."""
    theory.input_moments(dist)  # validates the name
    if dist == "uniform":
        return rng.random(shape)
    if dist == "exponential":
        return rng.exponential(size=shape)
    return np.ones(shape)


def _sequence_losses(W_x, W_h, W_y, b, xt, started, k, imp, act_h, act_y) -> np.ndarray:  # noqa: ANN001
    """Σ_t Σ_i I_i (y_t − ŷ_t)² per sequence: (lead, n), for inputs xt (T, N_x, n) sorted by
    their first input; `started[t]` sequences have begun by step t.

    Batch last, (lead, N_h, n), in float32: each step is a small matmul over a
    contiguous batch, twice as fast as float64 and far more precise than the
    estimate's standard error. Before its first input a sequence's state is 0
    and its loss per step the constant Σ_i I_i act(b_i)²: step t simulates only
    the sequences that have started (a prefix, since x is sorted) and books the
    rest in closed form.
    """
    f32 = np.float32
    T, _, n = xt.shape
    W_x, W_h = W_x.astype(f32), W_h.astype(f32)
    Wyt = np.swapaxes(W_y, -1, -2).astype(f32)  # (lead, N_x, N_h)
    bias = b.astype(f32)[..., :, None]  # (lead, N_x, 1)
    w = np.asarray(imp, dtype=f32)[:, None]  # (N_x, 1)
    idle = (w[:, 0] * act_y(bias[..., 0]) ** 2).sum(-1)  # (lead,) loss of a step before any input
    drive = W_x[..., None, :, :] @ xt  # (lead, T, N_h, n)
    total = np.zeros(drive.shape[:-3] + (n,), dtype=f32)
    h = np.zeros(drive.shape[:-3] + drive.shape[-2:], dtype=f32)  # (lead, N_h, n)
    for t in range(T):
        m = int(started[t])
        total[..., m:] += idle[..., None]
        if m == 0:
            continue
        h[..., :m] = drive[..., t, :, :m] + (W_h @ act_h(h[..., :m]) if t else 0.0)
        err = act_y(Wyt @ h[..., :m] + bias)  # ŷ_t (lead, N_x, m)
        if t >= k:
            err = err - xt[t - k, :, :m]  # y_t = x_{t-k}
        total[..., :m] += (err * err * w).sum(-2)
    return total.astype(float)
