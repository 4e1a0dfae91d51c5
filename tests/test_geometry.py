"""Tests for tempsup.theory.geometry on hand-built matrices (science.md §1 "Feature directions")."""

from __future__ import annotations

import numpy as np
import pytest

from tempsup.errors import TempsupError
from tempsup.theory import geometry as g
from tests.helpers import rot

E1 = np.array([[1.0], [0.0]])  # W_x = e_1, scalar input


# ---- spiral sink: W_h = r R(θ) -------------------------------------------------------


@pytest.mark.parametrize("r, theta, k", [(0.8, 30.0, 3), (0.5, 90.0, 3), (0.9, -40.0, 2)])
def test_spiral_sink_norms_angles_spectrum(r: float, theta: float, k: int) -> None:
    W_h = r * rot(theta)
    W_s = g.feature_directions(E1, W_h, 6, relu_hidden=False)
    assert W_s.shape == (6, 2, 1)
    np.testing.assert_allclose(g.norms(W_s)[:, 0], r ** np.arange(6))
    np.testing.assert_allclose(np.degrees(g.step_angles(W_s))[:, 0], theta)
    np.testing.assert_allclose(g.swept_angle(W_s, k), [k * theta])  # 270° for θ = 90°, k = 3
    np.testing.assert_allclose(g.spectral_radius(W_h), r)
    lam = g.eigenvalues(W_h)
    np.testing.assert_allclose(lam, r * np.exp(1j * np.radians([abs(theta), -abs(theta)])))


def test_swept_angle_beyond_180_and_negative() -> None:
    W_s = g.feature_directions(E1, 0.7 * rot(90.0), 5, relu_hidden=False)
    assert g.swept_angle(W_s, 3)[0] == pytest.approx(270.0)
    W_s = g.feature_directions(E1, 0.7 * rot(-90.0), 5, relu_hidden=False)
    assert g.swept_angle(W_s, 3)[0] == pytest.approx(-270.0)
    assert g.swept_angle(W_s, 0)[0] == 0.0


def test_unsigned_angles_when_hidden_is_not_2d() -> None:
    W_h = np.eye(3)
    W_h[:2, :2] = 0.9 * rot(-60.0)
    W_x = np.array([[1.0], [0.0], [0.0]])
    W_s = g.feature_directions(W_x, W_h, 4, relu_hidden=False)
    np.testing.assert_allclose(np.degrees(g.step_angles(W_s))[:, 0], 60.0)
    np.testing.assert_allclose(g.swept_angle(W_s, 3), [180.0])


def test_zero_vectors_give_zero_angle_not_nan() -> None:
    for n_h in (2, 3):
        W_s = np.zeros((4, n_h, 2))
        W_s[0, 0, 0] = 1.0  # one nonzero then zeros
        ang = g.step_angles(W_s)
        assert np.all(np.isfinite(ang)) and np.all(ang == 0.0)


# ---- ReLU recurrence -----------------------------------------------------------------


def test_relu_impulse_response_by_hand() -> None:
    W_h = np.array([[0.5, -1.0], [1.0, 0.5]])
    W_x = np.array([[1.0], [-2.0]])
    W_s = g.feature_directions(W_x, W_h, 4, relu_hidden=True)[..., 0]
    # w0 = (1,-2), ReLU -> (1,0); w1 = (0.5,1), ReLU same; w2 = (-0.75,1), ReLU -> (0,1);
    # w3 = (-1,0.5)
    expected = [[1.0, -2.0], [0.5, 1.0], [-0.75, 1.0], [-1.0, 0.5]]
    np.testing.assert_allclose(W_s, expected)
    linear = g.feature_directions(W_x, W_h, 2, relu_hidden=False)[1, :, 0]
    np.testing.assert_allclose(linear, [2.5, 0.0])  # differs: the ReLU matters


def test_relu_impulse_response_is_exact_for_a_lone_nonnegative_input() -> None:
    rng = np.random.default_rng(0)
    W_h, W_x = rng.normal(size=(3, 3)), rng.normal(size=(3, 2))
    W_s = g.feature_directions(W_x, W_h, 5, relu_hidden=True)
    u = np.array([0.7, 0.0])
    h = W_x @ u  # h_1, the input arrives at t = 1
    for s in range(1, 5):
        h = W_h @ np.maximum(h, 0.0)
        np.testing.assert_allclose(h, W_s[s] @ u)


# ---- projections and the interference-free half-space -----------------------------------


def test_projections_match_explicit_dot_products() -> None:
    rng = np.random.default_rng(1)
    W_s = rng.normal(size=(4, 3, 2))  # (n, N_h, N_x)
    W_y = rng.normal(size=(3, 2))
    A = g.projections(W_y, W_s)
    assert A.shape == (4, 2, 2)
    for s in range(4):
        for i in range(2):
            for j in range(2):
                assert A[s, i, j] == pytest.approx(W_y[:, i] @ W_s[s, :, j])


def test_interference_free_hand_picked() -> None:
    A = np.array([[[-1.0, 0.5], [0.0, 0.2]], [[1e-17, -0.3], [0.3, -2.0]]])  # (n=2, 2, 2)
    expected = np.array([[[True, False], [True, False]], [[True, True], [False, True]]])
    np.testing.assert_array_equal(g.interference_free(A), expected)
    # bias b_i belongs to readout i (rows): b = (-0.6, 0) silences row 0's 0.5, not row 1's 0.2
    with_b = g.interference_free(A, np.array([-0.6, 0.0]))
    np.testing.assert_array_equal(with_b[0], [[True, True], [True, False]])
    np.testing.assert_array_equal(with_b[1], expected[1])


def test_in_half_space() -> None:
    pts = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0], [0.1, 5.0]])
    w = np.array([1.0, 0.0])
    np.testing.assert_array_equal(g.in_half_space(pts, w), [False, True, True, False])
    np.testing.assert_array_equal(g.in_half_space(pts, w, b=-0.5), [False, True, True, True])


# ---- batching over leading axes ----------------------------------------------------------


def test_broadcasting_over_snapshot_and_seed_axes() -> None:
    rng = np.random.default_rng(2)
    W_h = rng.normal(size=(3, 2, 2, 2)) * 0.6  # (snapshots, seeds, N_h, N_h)
    W_x = rng.normal(size=(2, 1))  # shared
    W_y = rng.normal(size=(1, 2, 2, 1))  # (1 snapshot broadcasts, seeds, N_h, N_x)
    W_s = g.feature_directions(W_x, W_h, 5, relu_hidden=True)
    assert W_s.shape == (3, 2, 5, 2, 1)
    A = g.projections(W_y, W_s)
    assert A.shape == (3, 2, 5, 1, 1)
    summ = g.summary(W_x, W_h, W_y, None, k=2, relu_hidden=True)
    for i in range(3):
        for j in range(2):
            one = g.summary(W_x, W_h[i, j], W_y[0, j], None, k=2, relu_hidden=True)
            for key, value in one.items():
                np.testing.assert_allclose(summ[key][i, j], value, err_msg=key)
    assert g.eigenvalues(W_h).shape == (3, 2, 2)
    assert g.spectral_radius(W_h).shape == (3, 2)
    assert g.swept_angle(W_s, 2).shape == (3, 2, 1)


# ---- summary and gauge -----------------------------------------------------------------------


def test_summary_on_spiral_sink_with_tied_readout() -> None:
    W_h = 0.8 * rot(90.0)
    s = g.summary(E1, W_h, None, None, k=3, relu_hidden=False)  # tied: W_y = w_3 = 0.512 (0,-1)
    assert set(g.GAUGE_INVARIANT) | set(g.GAUGE_DEPENDENT) <= set(s)
    assert not set(g.GAUGE_INVARIANT) & set(g.GAUGE_DEPENDENT)
    assert s["a"].shape == (7,)  # default n = k + 4
    assert s["swept_angle_deg"] == pytest.approx(270.0)
    assert s["spectral_radius"] == pytest.approx(0.8)
    # the canonical gauge stretches along e1 ⊥ w_3 by λ minimising λ² + 0.64 (λ² + λ⁻²)
    assert s["w0_norm"] == pytest.approx((0.64 / 1.64) ** 0.25)
    raw = g.summary(E1, W_h, None, None, k=3, relu_hidden=False, canonical=False)
    assert raw["w0_norm"] == pytest.approx(1.0)
    assert raw["swept_angle_deg"] == pytest.approx(270.0)
    np.testing.assert_allclose(s["eig_imag"], [0.8, -0.8], atol=1e-12)
    # w_s points along e1, e2, -e1, -e2, e1, ...: only s = 3 and s = 7 project positively
    a = s["a"]
    assert a[3] == pytest.approx(0.512**2)
    assert s["n_interference_free"] == 6  # every s != k in 0..6 is <= 0 (orthogonal or opposite)
    assert s["n_intermediate_free"] == 3


def test_gauge_invariant_keys_survive_a_change_of_basis() -> None:
    rng = np.random.default_rng(3)
    W_h, W_x, W_y = 0.5 * rng.normal(size=(2, 2)), rng.normal(size=(2, 1)), rng.normal(size=(2, 1))
    b = np.array([-0.1])
    G = np.array([[2.0, 0.5], [-0.3, 1.0]])  # not orthogonal
    Gi = np.linalg.inv(G)
    s0 = g.summary(W_x, W_h, W_y, b, k=2, relu_hidden=False)
    s1 = g.summary(G @ W_x, G @ W_h @ Gi, Gi.T @ W_y, b, k=2, relu_hidden=False)
    for key in g.GAUGE_INVARIANT:
        np.testing.assert_allclose(s1[key], s0[key], atol=1e-10, err_msg=key)
    # raw norms move with the basis ...
    r0 = g.summary(W_x, W_h, W_y, b, k=2, relu_hidden=False, canonical=False)
    r1 = g.summary(G @ W_x, G @ W_h @ Gi, Gi.T @ W_y, b, k=2, relu_hidden=False, canonical=False)
    assert not np.allclose(r1["norms"], r0["norms"])
    # ... but in the canonical gauge (the default) every key survives it
    for key in g.GAUGE_DEPENDENT:
        np.testing.assert_allclose(s1[key], s0[key], rtol=1e-8, atol=1e-10, err_msg=key)
    # tied readout, raw weights: a reflection keeps norms and projections, flips kθ's sign;
    # the canonical gauge fixes the reflection (kθ >= 0 for N_h = 2)
    F = np.diag([1.0, -1.0])
    raw = {"relu_hidden": False, "canonical": False}
    t0 = g.summary(W_x, W_h, None, None, k=2, **raw)
    t1 = g.summary(F @ W_x, F @ W_h @ F, None, None, k=2, **raw)
    np.testing.assert_allclose(t1["norms"], t0["norms"])
    np.testing.assert_allclose(t1["a"], t0["a"])
    assert t1["swept_angle_deg"] == pytest.approx(-t0["swept_angle_deg"])
    c0 = g.summary(W_x, W_h, None, None, k=2, relu_hidden=False)
    c1 = g.summary(F @ W_x, F @ W_h @ F, None, None, k=2, relu_hidden=False)
    assert c1["swept_angle_deg"] == pytest.approx(c0["swept_angle_deg"])
    assert c0["swept_angle_deg"] >= 0.0


# ---- errors at the public boundary -----------------------------------------------------------


def test_bad_inputs_raise_tempsup_error() -> None:
    with pytest.raises(TempsupError, match="square"):
        g.feature_directions(E1, np.ones((2, 3)), 3, relu_hidden=False)
    with pytest.raises(TempsupError, match="N_h = 3"):
        g.feature_directions(E1, np.eye(3), 3, relu_hidden=False)
    with pytest.raises(TempsupError, match="n: expected an integer >= 1"):
        g.feature_directions(E1, np.eye(2), 0, relu_hidden=False)
    with pytest.raises(TempsupError, match="broadcast"):
        g.feature_directions(np.ones((3, 2, 1)), np.ones((4, 2, 2)), 2, relu_hidden=False)
    W_s = g.feature_directions(E1, np.eye(2), 3, relu_hidden=False)
    with pytest.raises(TempsupError, match="k \\+ 1 = 4"):
        g.swept_angle(W_s, 3)
    with pytest.raises(TempsupError, match="n must exceed k"):
        g.summary(E1, np.eye(2), None, None, k=3, relu_hidden=False, n=3)
    with pytest.raises(TempsupError, match="b_y"):
        g.interference_free(np.zeros((3, 2, 2)), np.zeros(3))


# ---- refusals, word for word ------------------------------------------------------------

Z = np.zeros
REFUSED = [
    ("feature_directions", (Z(3), Z((2, 2)), 3, False),
     "W_x: expected at least 2 dimension(s), got shape (3,)"),
    ("feature_directions", (Z((2, 1)), Z(2), 3, False),
     "W_h: expected at least 2 dimension(s), got shape (2,)"),
    ("feature_directions", (Z((2, 1)), Z((2, 3)), 3, False),
     "W_h: expected a square (..., N_h, N_h) matrix, got (2, 3)"),
    ("feature_directions", (Z((3, 1)), Z((2, 2)), 3, False),
     "W_x: expected shape (..., N_h, N_x) with N_h = 2 (from W_h), got (3, 1)"),
    ("feature_directions", (Z((4, 2, 1)), Z((3, 2, 2)), 3, False),
     "W_x and W_h: expected leading (snapshot, seed, ...) axes that broadcast, got (4,) and (3,)"),
    ("projections", (Z(2), Z((3, 2, 1))), "W_y: expected at least 2 dimension(s), got shape (2,)"),
    ("projections", (Z((2, 1)), Z((2, 1))),
     "W_s: expected at least 3 dimension(s), got shape (2, 1)"),
    ("projections", (Z((3, 1)), Z((3, 2, 1))),
     "W_y: expected shape (..., N_h, N_x) with N_h = 2 (from W_s), got (3, 1)"),
    ("projections", (Z((4, 2, 1)), Z((3, 3, 2, 1))),
     "W_y and W_s: expected leading (snapshot, seed, ...) axes that broadcast, got (4,) and (3,)"),
    ("eigenvalues", (Z(2),), "W_h: expected at least 2 dimension(s), got shape (2,)"),
    ("eigenvalues", (Z((2, 3)),), "W_h: expected a square (..., N_h, N_h) matrix, got (2, 3)"),
    ("spectral_radius", (Z((2, 3)),), "W_h: expected a square (..., N_h, N_h) matrix, got (2, 3)"),
    ("spectral_radius", (Z(3),), "W_h: expected at least 2 dimension(s), got shape (3,)"),
    ("norms", (Z((2, 1)),), "W_s: expected at least 3 dimension(s), got shape (2, 1)"),
    ("step_angles", (Z((2, 1)),), "W_s: expected at least 3 dimension(s), got shape (2, 1)"),
    ("swept_angle", (Z((2, 1)), 1), "W_s: expected at least 3 dimension(s), got shape (2, 1)"),
    ("swept_angle", (Z((3, 2, 1)), 3),
     "W_s: expected at least k + 1 = 4 directions to reach w_k, got 3"),
    ("swept_angle", (Z((3, 2, 1)), -1), "k: expected an integer >= 0, got -1"),
    ("interference_free", (Z((3, 2)), Z(2)),
     "A: expected at least 3 dimension(s), got shape (3, 2)"),
    ("interference_free", (Z((3, 2, 2)), Z(3)),
     "b_y: expected shape (..., N_x) with N_x = 2 (from A), got (3,)"),
    ("interference_free", (Z((4, 3, 2, 2)), Z((3, 2))),
     "A and b_y: expected leading (snapshot, seed, ...) axes that broadcast, got (4,) and (3,)"),
    ("interference_free", (Z((3, 2, 2)), Z(())),
     "b_y: expected at least 1 dimension(s), got shape ()"),
    ("in_half_space", (Z(()), Z(2)), "points: expected at least 1 dimension(s), got shape ()"),
    ("in_half_space", (Z((5, 2)), Z(())), "w_y: expected at least 1 dimension(s), got shape ()"),
    ("in_half_space", (Z((5, 2)), Z(3)),
     "w_y: expected shape (..., N_h) with N_h = 2 (from points), got (3,)"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "args", "message"), REFUSED)
def test_refusals_name_the_array_and_the_shape_it_needs(fn, args, message):
    with pytest.raises(TempsupError) as info:
        getattr(g, fn)(*args)
    assert str(info.value) == message


def test_in_half_space_sums_over_the_hidden_axis_of_any_batch():
    points = np.array([[[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]] * 2)  # (2, 3, N_h = 2)
    w_y = np.array([1.0, 2.0])
    np.testing.assert_array_equal(g.in_half_space(points, w_y), [[False, False, True]] * 2)
    np.testing.assert_array_equal(g.in_half_space(points, w_y, -1.0), [[True, False, True]] * 2)
    b = np.array([[-2.5], [0.0]])  # one bias per batch row
    np.testing.assert_array_equal(
        g.in_half_space(points, w_y, b), [[True, True, True], [False, False, True]]
    )


@pytest.mark.parametrize(
    ("relu_hidden", "b", "a", "n_free", "n_intermediate"),
    [
        # w_s = (-0.5)^s: a_s alternates in sign, odd ages are silent
        (False, None, [1, -0.5, 0.25, -0.125, 0.0625, -0.03125], 3, 1),
        # a bias of -0.3 silences a_2 = 0.25 (the target, not counted) and a_4 too
        (False, -0.3, [1, -0.5, 0.25, -0.125, 0.0625, -0.03125], 4, 1),
        # the hidden ReLU cuts the first negative state: w_s = 0 from s = 2 on
        (True, None, [1, -0.5, 0, 0, 0, 0], 4, 1),
    ],
)
def test_summary_counts_the_silent_ages(relu_hidden, b, a, n_free, n_intermediate):
    W_x, W_h, W_y = np.array([[1.0]]), np.array([[-0.5]]), np.array([[1.0]])
    b_y = None if b is None else np.array([b])
    s = g.summary(W_x, W_h, W_y, b_y, k=2, relu_hidden=relu_hidden, canonical=False)
    np.testing.assert_allclose(s["a"], a, atol=1e-12)
    assert s["n_interference_free"] == n_free
    assert s["n_intermediate_free"] == n_intermediate


def test_summary_counts_intermediate_ages_below_k_only():
    # a = 1, -1, -1 (target k = 2, silent), 1, ...: k itself never counts
    W_x, W_h = np.array([[1.0], [0.0]]), rot(90.0)  # w_s turns by 90° a step
    W_y = np.array([[-1.0], [-1.0]]) / np.sqrt(2)
    s = g.summary(W_x, W_h, W_y, None, k=2, relu_hidden=False, canonical=False)
    np.testing.assert_allclose(s["a"][:4] * np.sqrt(2), [-1, -1, 1, 1], atol=1e-12)
    assert s["n_intermediate_free"] == 2  # ages 0 and 1
    assert s["n_interference_free"] == 2 + 2  # and ages 4, 5 (w_4 = w_0, w_5 = w_1)


def test_eigenvalues_sorted_by_modulus_then_imaginary_part():
    lam = g.eigenvalues(np.diag([0.6, -0.9, 0.75]))
    np.testing.assert_allclose(lam, [-0.9, 0.75, 0.6])  # |λ| descending, however close
    spiral = g.eigenvalues(0.8 * rot(30.0))  # a conjugate pair of equal modulus
    assert spiral[0].imag > 0 > spiral[1].imag
    batch = g.eigenvalues(np.stack([np.diag([0.1, 0.5]), np.diag([0.7, 0.2])]))
    np.testing.assert_allclose(batch, [[0.5, 0.1], [0.7, 0.2]])  # per model, on the last axis


def test_summary_accepts_k_0_and_the_shortest_window():
    W_x, W_h = np.array([[1.0], [0.0]]), 0.5 * rot(45.0)
    s = g.summary(W_x, W_h, None, None, k=0, relu_hidden=False, n=1, canonical=False)
    assert s["a"].shape == (1,) and s["swept_angle_deg"] == 0.0
    s = g.summary(W_x, W_h, None, None, k=2, relu_hidden=False, n=3, canonical=False)
    np.testing.assert_allclose(s["swept_angle_deg"], 90.0)
    with pytest.raises(TempsupError) as info:
        g.summary(W_x, W_h, None, None, k=2, relu_hidden=False, n=2)
    assert str(info.value) == (
        "n: expected an integer >= 3, got 2 (n must exceed k so that w_k is included)"
    )
    with pytest.raises(TempsupError) as info:
        g.summary(W_x, W_h, None, None, k=-1, relu_hidden=False)
    assert str(info.value) == "k: expected an integer >= 0, got -1"


def test_batched_shapes_are_checked_on_the_matrix_axes():
    with pytest.raises(TempsupError, match="square"):
        g.eigenvalues(np.zeros((2, 3, 2)))  # 2 models of 3×2 matrices: shape[1] = 3 ≠ 2
    W_x = np.zeros((4, 3, 2, 1))  # (S, M, N_h, N_x) with M ≠ N_h
    W_h = np.zeros((4, 3, 2, 2))
    assert g.feature_directions(W_x, W_h, 3, False).shape == (4, 3, 3, 2, 1)
    # W_x with more leading axes than W_h: broadcast, not cut
    W_s = g.feature_directions(np.ones((5, 2, 1)), np.eye(2), 2, False)
    assert W_s.shape == (5, 2, 2, 1)
    A = np.zeros((3, 4, 2, 2))  # (M, n, N_x, N_x)
    assert g.interference_free(A, np.zeros((3, 2))).shape == (3, 4, 2, 2)
    with pytest.raises(TempsupError, match="b_y: expected shape"):
        g.interference_free(np.zeros((2, 4, 3, 3)), np.zeros(2))
