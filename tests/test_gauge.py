"""The canonical gauge (tempsup.theory.gauge, science.md §1d) on hand-built weights.

Every test applies random *admissible* changes of basis (same function, tie
intact) and checks that the canonical representative does not notice: for the
linear recurrence stretches orthogonal to w_k, rotations and reflections (any
invertible G for a free readout); for the ReLU recurrence positive scalings of
the units the tied readout ignores, and permutations.
"""

from __future__ import annotations

import numpy as np
import pytest

from tempsup.errors import TempsupError
from tempsup.theory import gauge
from tempsup.theory import geometry as g
from tests.helpers import rot

TOL = 1e-6  # the invariance the CLI and the panels rely on (measured: ~1e-12)
N_GAUGES = 25


def tied_G(W_k: np.ndarray, rng: np.random.Generator, spread: float = 1.5) -> np.ndarray:
    """A random G with GᵀG W_k = W_k: an SPD stretch on span(W_k)⊥, then a random orthogonal
    map (a reflection half the time)."""
    n = W_k.shape[0]
    U, s, _ = np.linalg.svd(W_k, full_matrices=True)
    r = int((s > 1e-9 * s[0]).sum())
    V, Vp = U[:, :r], U[:, r:]
    m = n - r
    B = rng.normal(size=(m, m))
    lam, E = np.linalg.eigh(B + B.T)
    root = (E * np.exp(spread * lam / max(np.abs(lam).max(initial=1.0), 1e-12))) @ E.T
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return Q @ (V @ V.T + Vp @ root @ Vp.T)


def relu_G(n: int, W_k: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """P D: positive scalings (only of units W_k leaves at 0 when tied) and a permutation."""
    d = np.exp(rng.normal(scale=1.5, size=n))
    if W_k is not None:
        d[(np.abs(W_k) > 0).any(-1)] = 1.0
    return np.eye(n)[rng.permutation(n)] @ np.diag(d)


def impulse(W_x, W_h, n, relu):
    return g.feature_directions(W_x, W_h, n, relu)


def weights_norm(X, Wh, Y, tied):
    return (X**2).sum() + (Wh**2).sum() + (0.0 if tied else (Y**2).sum())


def max_dev(c1: dict, c0: dict) -> float:
    return max(float(np.abs(c1[n] - c0[n]).max()) for n in ("W_x", "W_h", "W_y"))


# (label, N_h, N_x, k, relu_hidden, tied): the shapes the presets use, and their gauges
CASES = [
    ("ssm, N_h = 2, tied (one stretch)", 2, 1, 3, False, True),
    ("linear, N_h = 2, free readout", 2, 1, 3, False, False),
    ("ssm, N_h = 3, tied", 3, 1, 2, False, True),
    ("ssm, N_h = 5, N_x = 2, tied", 5, 2, 2, False, True),
    ("linear, N_h = 6, N_x = 3, free readout", 6, 3, 2, False, False),
    ("rnn, N_h = 4, tied", 4, 1, 2, True, True),
    ("rnn, N_h = 5, N_x = 2, free readout", 5, 2, 1, True, False),
]


def hand_built(n_h: int, n_x: int, k: int, relu: bool, tied: bool, seed: int):
    rng = np.random.default_rng(seed)
    W_x = rng.normal(size=(n_h, n_x))
    W_h = 0.9 * rng.normal(size=(n_h, n_h)) / np.sqrt(n_h)
    if relu:
        W_x = np.abs(W_x)  # units that respond to a positive input
        W_h[0] = 0.0  # unit 0 gets no recurrent input: w_k[0] = 0, so its scale is free
    W_k = impulse(W_x, W_h, k + 1, relu)[k]
    W_y = W_k if tied else rng.normal(size=(n_h, n_x))
    return W_x, W_h, W_y, W_k


@pytest.mark.parametrize("label, n_h, n_x, k, relu, tied", CASES, ids=[c[0] for c in CASES])
def test_admissible_changes_of_basis_give_the_same_canonical_weights(
    label, n_h, n_x, k, relu, tied
) -> None:
    rng = np.random.default_rng(7)
    W_x, W_h, W_y, W_k = hand_built(n_h, n_x, k, relu, tied, seed=n_h + 10 * n_x)
    c0 = gauge.canonical(W_x, W_h, W_y, None, k, relu, tied)
    assert c0["converged"]
    n = k + 4
    a0 = g.projections(W_y, impulse(W_x, W_h, n, relu))
    s0 = g.summary(W_x, W_h, W_y, None, k, relu, tied=tied)
    worst = 0.0
    for _ in range(N_GAUGES):
        if relu:
            G = relu_G(n_h, W_k if tied else None, rng)
        else:
            G = tied_G(W_k, rng) if tied else rng.normal(size=(n_h, n_h))
        assert gauge.is_admissible(G, W_y, relu, tied)
        X1, Wh1, Y1 = gauge.transform(G, W_x, W_h, W_y)
        # the function and the tie survive
        np.testing.assert_allclose(g.projections(Y1, impulse(X1, Wh1, n, relu)), a0, atol=1e-9)
        if tied:
            np.testing.assert_allclose(Y1, impulse(X1, Wh1, k + 1, relu)[k], atol=1e-9)
        c1 = gauge.canonical(X1, Wh1, Y1, None, k, relu, tied)
        worst = max(worst, max_dev(c1, c0))
        # the canonical representative is the smallest of the family
        assert c0["norm2"] <= weights_norm(X1, Wh1, Y1, tied) + 1e-9
        s1 = g.summary(X1, Wh1, Y1, None, k, relu, tied=tied)
        for key in (*g.GAUGE_DEPENDENT, *g.GAUGE_INVARIANT):
            np.testing.assert_allclose(s1[key], s0[key], rtol=TOL, atol=TOL, err_msg=key)
    assert worst < TOL, f"{label}: canonical weights moved by {worst:.2e}"


@pytest.mark.parametrize("label, n_h, n_x, k, relu, tied", CASES, ids=[c[0] for c in CASES])
def test_canonical_weights_compute_the_same_function(label, n_h, n_x, k, relu, tied) -> None:
    W_x, W_h, W_y, _ = hand_built(n_h, n_x, k, relu, tied, seed=3 * n_h + n_x)
    c = gauge.canonical(W_x, W_h, W_y, np.full(n_x, 0.2), k, relu, tied)
    n = 12
    np.testing.assert_allclose(
        g.projections(c["W_y"], impulse(c["W_x"], c["W_h"], n, relu)),
        g.projections(W_y, impulse(W_x, W_h, n, relu)),
        atol=1e-10,
    )
    np.testing.assert_allclose(g.eigenvalues(c["W_h"]), g.eigenvalues(W_h), atol=1e-10)
    np.testing.assert_array_equal(c["b_y"], np.full(n_x, 0.2))  # the bias lives in output space
    if tied:  # the tie survives: W_y is still W_k
        np.testing.assert_allclose(
            c["W_y"], impulse(c["W_x"], c["W_h"], k + 1, relu)[k], atol=1e-10
        )
    # G is the change of basis that was applied, and it is admissible
    G = c["G"]
    np.testing.assert_allclose(G @ c["G_inv"], np.eye(n_h), atol=1e-10)
    np.testing.assert_allclose(G @ W_x, c["W_x"], atol=1e-10)
    assert gauge.is_admissible(G, W_y, relu, tied)
    # a second pass changes nothing: the canonical form is a fixed point
    again = gauge.canonical(c["W_x"], c["W_h"], c["W_y"], None, k, relu, tied)
    assert max_dev(again, c) < 1e-9


def test_the_minimum_is_balanced_on_the_admissible_directions() -> None:
    """At the minimum Π(W_x W_xᵀ + W_h W_hᵀ − W_hᵀ W_h [− W_y W_yᵀ]) = 0 (module docstring, (4))."""
    W_x, W_h, W_y, _ = hand_built(4, 1, 2, False, False, seed=1)
    c = gauge.canonical(W_x, W_h, W_y, None, 2, False, tied=False)
    X, Wh, Y = c["W_x"], c["W_h"], c["W_y"]
    M = X @ X.T + Wh @ Wh.T - Wh.T @ Wh - Y @ Y.T
    assert np.abs(M).max() < 1e-9 * c["norm2"]
    # tied: the balance holds on span(w_k)⊥ only
    W_x, W_h, W_y, _ = hand_built(4, 1, 2, False, True, seed=1)
    c = gauge.canonical(W_x, W_h, W_y, None, 2, False, tied=True)
    X, Wh, Y = c["W_x"], c["W_h"], c["W_y"]
    u = Y[:, 0] / np.linalg.norm(Y)
    P = np.eye(4) - np.outer(u, u)
    assert np.abs(P @ (X @ X.T + Wh @ Wh.T - Wh.T @ Wh) @ P).max() < 1e-9 * c["norm2"]


# ---- N_h = 2 with the tie: a one-parameter stretch, checked against a grid --------------------


def test_spiral_sink_closed_form() -> None:
    """W_h = 0.8 R(90°), W_x = e1, tied k = 3: w_3 ∥ e2, so the family stretches e1 by λ and
    ‖W_x‖² + ‖W_h‖² = λ² + 0.64 (λ² + λ⁻²) is smallest at λ⁴ = 0.64 / 1.64."""
    W_h, W_x = 0.8 * rot(90.0), np.array([[1.0], [0.0]])
    W_k = np.linalg.matrix_power(W_h, 3) @ W_x
    c = gauge.canonical(W_x, W_h, W_k, None, 3, False, True)
    lam = (0.64 / 1.64) ** 0.25
    assert np.linalg.norm(c["W_x"]) == pytest.approx(lam, rel=1e-10)
    assert c["norm2"] == pytest.approx(lam**2 + 0.64 * (lam**2 + lam**-2), rel=1e-12)
    assert c["W_y"][0, 0] > 0 and c["W_y"][1, 0] == pytest.approx(0.0, abs=1e-15)  # +h_1
    s = g.summary(W_x, W_h, None, None, 3, False)
    assert s["swept_angle_deg"] == pytest.approx(270.0)  # 90° steps survive the stretch
    assert s["w0_norm"] == pytest.approx(lam)
    # the mirror spiral has kθ = -270° in raw weights, +270° canonically, and the same picture
    M = np.diag([1.0, -1.0])
    c_m = gauge.canonical(M @ W_x, M @ W_h @ M, M @ W_k, None, 3, False, True)
    assert max_dev(c_m, c) < 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_one_dimensional_stretch_matches_a_grid_search(seed: int) -> None:
    rng = np.random.default_rng(seed)
    W_x, W_h = rng.normal(size=(2, 1)), 0.7 * rng.normal(size=(2, 2))
    W_k = np.linalg.matrix_power(W_h, 3) @ W_x
    c = gauge.canonical(W_x, W_h, W_k, None, 3, False, True)
    u = W_k[:, 0] / np.linalg.norm(W_k)
    perp = np.array([-u[1], u[0]])
    t = np.linspace(-6, 6, 24001)[:, None, None]  # S^(1/2) = uuᵀ + e^t perp perpᵀ
    G = np.outer(u, u) + np.exp(t) * np.outer(perp, perp)
    X1, Wh1, _ = gauge.transform(G, W_x, W_h, W_k)
    best = float(((X1**2).sum((-2, -1)) + (Wh1**2).sum((-2, -1))).min())
    assert c["norm2"] <= best + 1e-12
    assert c["norm2"] == pytest.approx(best, rel=1e-6)
    # far-away starting points (stretch e^±5) land on the same weights
    for t in (-5.0, 5.0):
        G = np.outer(u, u) + np.exp(t) * np.outer(perp, perp)
        c1 = gauge.canonical(*gauge.transform(G, W_x, W_h, W_k), None, 3, False, True)
        assert max_dev(c1, c) < TOL


def test_kθ_is_non_negative_for_two_hidden_units() -> None:
    rng = np.random.default_rng(11)
    W_x, W_h = rng.normal(size=(20, 2, 1)), 0.8 * rng.normal(size=(20, 2, 2))
    s = g.summary(W_x, W_h, None, None, 3, False)
    assert np.all(s["swept_angle_deg"] >= 0.0)
    raw = g.summary(W_x, W_h, None, None, 3, False, canonical=False)
    assert np.any(raw["swept_angle_deg"] < 0)  # raw weights: either handedness


# ---- the other cases: only rotations left, non-minimal networks, ReLU order -------------------


def test_full_rank_tie_leaves_only_rotations() -> None:
    """N_x >= N_h with W_k of full rank: S = I, the norm cannot change, only the frame does."""
    rng = np.random.default_rng(2)
    W_x, W_h = rng.normal(size=(3, 4)), 0.5 * rng.normal(size=(3, 3))
    W_k = np.linalg.matrix_power(W_h, 2) @ W_x
    c = gauge.canonical(W_x, W_h, W_k, None, 2, False, True)
    assert c["norm2"] == pytest.approx(weights_norm(W_x, W_h, W_k, True), rel=1e-12)
    np.testing.assert_allclose(c["G"] @ c["G"].T, np.eye(3), atol=1e-12)  # orthogonal
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    c1 = gauge.canonical(*gauge.transform(Q, W_x, W_h, W_k), None, 2, False, True)
    assert max_dev(c1, c) < 1e-10
    # the frame: w_y of feature 0 along +h_1, feature 1's readout in the (h_1, h_2) plane
    assert c["W_y"][0, 0] > 0 and np.allclose(c["W_y"][1:, 0], 0.0, atol=1e-12)
    assert c["W_y"][1, 1] > 0 and abs(c["W_y"][2, 1]) < 1e-12


def test_a_part_the_input_never_reaches_is_shrunk_away() -> None:
    """Non-minimal network: h_2 is never excited, so W_h[0, 1] does nothing; the infimum
    is at W_h[0, 1] -> 0, approached (not attained) until the gradient is round-off."""
    W_x = np.array([[1.0], [0.0]])
    W_h = np.array([[0.5, 2.0], [0.0, 0.3]])
    W_y = np.array([[1.0], [0.0]])
    c = gauge.canonical(W_x, W_h, W_y, None, 2, False, tied=False)
    assert abs(c["W_h"][0, 1]) < 1e-6
    assert c["norm2"] == pytest.approx(2.0 + 0.5**2 + 0.3**2, rel=1e-12)  # the limit's norm
    np.testing.assert_allclose(
        g.projections(c["W_y"], impulse(c["W_x"], c["W_h"], 8, False)),
        g.projections(W_y, impulse(W_x, W_h, 8, False)),
        atol=1e-12,
    )


def test_relu_units_are_sorted_by_readout_weight_and_used_units_keep_their_scale() -> None:
    W_x, W_h, W_y, W_k = hand_built(4, 1, 2, True, True, seed=5)
    c = gauge.canonical(W_x, W_h, W_y, None, 2, True, True)
    ry = c["W_y"][:, 0]
    assert np.all(np.diff(ry) <= 0)  # readout weights in decreasing order
    # units the readout uses are only permuted: their readout weights are the original ones
    np.testing.assert_allclose(np.sort(ry), np.sort(W_y[:, 0]), atol=1e-12)
    G = c["G"]
    assert np.all(G >= 0) and np.all((G > 0).sum(0) == 1) and np.all((G > 0).sum(1) == 1)
    used = np.abs(W_k[:, 0]) > 0
    np.testing.assert_allclose(G[:, used][G[:, used] > 0], 1.0)


def test_non_admissible_changes_are_recognised() -> None:
    W_x, W_h = np.array([[1.0], [0.5]]), 0.6 * rot(40.0)
    W_k = np.linalg.matrix_power(W_h, 3) @ W_x
    u = W_k[:, 0] / np.linalg.norm(W_k)
    along = np.eye(2) + np.outer(u, u)  # stretches w_k: breaks the tie
    assert not gauge.is_admissible(along, W_k, False, True)
    assert gauge.is_admissible(along, W_k, False, False)  # fine for a free readout
    assert not gauge.is_admissible(
        rot(30.0), W_k, True, False
    )  # a rotation does not commute with ReLU
    assert gauge.is_admissible(np.array([[0.0, 2.0], [3.0, 0.0]]), W_k, True, False)


def test_batched_over_frames_and_seeds_equals_one_by_one() -> None:
    rng = np.random.default_rng(4)
    W_x, W_h = rng.normal(size=(3, 2, 3, 1)), 0.6 * rng.normal(size=(3, 2, 3, 3))
    W_k = g.feature_directions(W_x, W_h, 3, False)[..., 2, :, :]
    c = gauge.canonical(W_x, W_h, W_k, None, 2, False, True)
    assert c["W_h"].shape == (3, 2, 3, 3) and c["converged"].shape == (3, 2)
    for i in range(3):
        for j in range(2):
            one = gauge.canonical(W_x[i, j], W_h[i, j], W_k[i, j], None, 2, False, True)
            assert max_dev({n: c[n][i, j] for n in ("W_x", "W_h", "W_y")}, one) < 1e-10


def test_bad_inputs() -> None:
    with pytest.raises(TempsupError, match="square"):
        gauge.canonical(np.ones((2, 1)), np.ones((2, 3)), None, None, 1, False, True)
    with pytest.raises(TempsupError, match="required for a free readout"):
        gauge.canonical(np.ones((2, 1)), np.eye(2), None, None, 1, False, False)
    with pytest.raises(TempsupError, match="W_y"):
        gauge.canonical(np.ones((2, 1)), np.eye(2), np.ones((3, 1)), None, 1, False, False)
