"""Tests for tempsup.theory.closed_form against Monte Carlo simulation (science.md §1 and §1b).

A small numpy simulator runs the model on sampled sparse inputs, computes the
loss exactly as defined (L = Σ_t Σ_i I_i (y_{t,i} − ŷ_{t,i})²) and averages it
over many sequences; the closed forms must agree within 4 standard errors of
that average (computed from the samples). Sequences are simulated in
vectorised chunks so the whole file runs in a few seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from tempsup.errors import TempsupError
from tempsup.theory import closed_form as th
from tempsup.theory import geometry as g
from tests.helpers import rot

N_SEQ = 200_000


def sample_u(rng: np.random.Generator, dist: str, shape: tuple[int, ...]) -> np.ndarray:
    if dist == "uniform":
        return rng.random(shape)
    if dist == "constant":
        return np.ones(shape)
    return rng.exponential(1.0, shape)


def simulate(
    W_x: np.ndarray,
    W_h: np.ndarray,
    W_y: np.ndarray,
    b: np.ndarray | None,
    k: int,
    T: int,
    p: float,
    dist: str,
    seed: int,
    n_seq: int = N_SEQ,
    importance: np.ndarray | None = None,
    relu_readout: bool = False,
    relu_hidden: bool = False,
    chunk: int = 100_000,
) -> tuple[float, float]:
    """Monte Carlo mean of L over n_seq sequences and its standard error."""
    rng = np.random.default_rng(seed)
    n_h, n_x = W_x.shape
    imp = np.ones(n_x) if importance is None else importance
    losses = []
    for start in range(0, n_seq, chunk):
        c = min(chunk, n_seq - start)
        x = (rng.random((c, T, n_x)) < p) * sample_u(rng, dist, (c, T, n_x))  # (B, T, N_x)
        h = np.zeros((c, n_h))
        L = np.zeros(c)
        for t in range(T):  # t = 0 here is the paper's t = 1
            prev = np.maximum(h, 0.0) if relu_hidden else h
            h = x[:, t] @ W_x.T + prev @ W_h.T  # (B, N_h)
            y_hat = h @ W_y + (0.0 if b is None else b)  # (B, N_x)
            if relu_readout:
                y_hat = np.maximum(y_hat, 0.0)
            y = x[:, t - k] if t >= k else 0.0
            L += (imp * (y - y_hat) ** 2).sum(axis=-1)
        losses.append(L)
    L = np.concatenate(losses)
    return float(L.mean()), float(L.std(ddof=1) / np.sqrt(L.size))


def random_weights(seed: int, n_h: int, n_x: int = 1, radius: float = 0.85) -> tuple:
    rng = np.random.default_rng(seed)
    W_h = rng.normal(size=(n_h, n_h))
    W_h *= radius / np.abs(np.linalg.eigvals(W_h)).max()
    W_x = rng.normal(size=(n_h, n_x))
    W_y = rng.normal(size=(n_h, n_x)) / np.sqrt(n_h)
    return W_x, W_h, W_y


def kernel(W_x, W_h, W_y, T: int, relu_hidden: bool = False) -> np.ndarray:
    return g.projections(W_y, g.feature_directions(W_x, W_h, T, relu_hidden))  # (T, N_x, N_x)


def assert_matches(mc: float, se: float, theory: float) -> None:
    assert abs(mc - theory) < 4 * se + 1e-12, f"MC {mc:.6g} ± {se:.2g} vs theory {theory:.6g}"


# ---- moments ---------------------------------------------------------------------------


def test_input_moments() -> None:
    assert th.input_moments("uniform") == pytest.approx((0.5, 1 / 3))
    assert th.input_moments("constant") == (1.0, 1.0)
    assert th.input_moments("exponential") == (1.0, 2.0)
    with pytest.raises(TempsupError, match="uniform"):
        th.input_moments("gaussian")


# ---- linear RNN: exact ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "n_h, k, p, dist",
    [
        (2, 3, 0.1, "uniform"),
        (2, 1, 0.5, "uniform"),
        (3, 2, 0.3, "exponential"),
        (4, 0, 0.8, "constant"),
        (3, 4, 0.05, "constant"),
        (4, 3, 0.2, "exponential"),
    ],
)
def test_linear_scalar_matches_monte_carlo(n_h: int, k: int, p: float, dist: str) -> None:
    T = 8
    W_x, W_h, W_y = random_weights(10 * n_h + k, n_h)
    mu, nu = th.input_moments(dist)
    mc, se = simulate(W_x, W_h, W_y, None, k, T, p, dist, seed=k)
    assert_matches(mc, se, th.expected_loss(kernel(W_x, W_h, W_y, T), k, p, mu, nu, T))


@pytest.mark.parametrize("dist", ["uniform", "exponential"])
def test_linear_with_readout_bias(dist: str) -> None:
    T, k, p = 8, 2, 0.3
    W_x, W_h, W_y = random_weights(5, 3)
    b = np.array([-0.4])
    mu, nu = th.input_moments(dist)
    mc, se = simulate(W_x, W_h, W_y, b, k, T, p, dist, seed=6)
    A = kernel(W_x, W_h, W_y, T)
    assert_matches(mc, se, th.expected_loss(A, k, p, mu, nu, T, b_y=b))
    assert abs(mc - th.expected_loss(A, k, p, mu, nu, T)) > 20 * se  # the bias matters


def test_linear_vector_input_with_importance() -> None:
    T, k, p, n_x = 7, 2, 0.25, 3
    W_x, W_h, W_y = random_weights(7, 4, n_x)
    imp = 0.7 ** np.arange(n_x)
    b = np.array([0.1, -0.2, 0.05])
    mu, nu = th.input_moments("uniform")
    A = kernel(W_x, W_h, W_y, T)
    mc, se = simulate(W_x, W_h, W_y, None, k, T, p, "uniform", seed=8, importance=imp)
    assert_matches(mc, se, th.expected_loss(A, k, p, mu, nu, T, importance=imp))
    mc, se = simulate(W_x, W_h, W_y, b, k, T, p, "uniform", seed=9, importance=imp)
    assert_matches(mc, se, th.expected_loss(A, k, p, mu, nu, T, importance=imp, b_y=b))


def test_second_moment_is_needed_not_variance() -> None:
    T, k, p = 8, 3, 0.5
    W_x, W_h, W_y = random_weights(11, 2)
    mu, nu = th.input_moments("uniform")
    var = nu - mu**2  # Var(U) = 1/12
    A = kernel(W_x, W_h, W_y, T)
    mc, se = simulate(W_x, W_h, W_y, None, k, T, p, "uniform", seed=12)
    assert_matches(mc, se, th.expected_loss(A, k, p, mu, nu, T))
    assert abs(mc - th.expected_loss(A, k, p, mu, var, T)) > 20 * se


def test_terms_sum_and_scalar_formula_by_hand() -> None:
    a = np.array([0.3, -0.2, 0.9, 0.1])  # k = 2, T = 4
    k, p, mu, nu, T = 2, 0.2, 0.5, 1 / 3, 4
    terms = th.loss_terms(a[:, None, None], k, p, mu, nu, T)
    expected = np.zeros(4)
    for t in range(1, T + 1):
        s = np.arange(t)
        other = s[s != k]
        on = k <= t - 1
        expected += [
            p * nu * (a[k] - 1) ** 2 * on,
            -2 * p**2 * mu**2 * a[other].sum() * on,
            p * nu * (a[other] ** 2).sum(),
            p**2 * mu**2 * (a[s].sum() ** 2 - (a[s] ** 2).sum()),
        ]
    np.testing.assert_allclose(terms, expected)
    np.testing.assert_allclose(terms.sum(), th.expected_loss(a[:, None, None], k, p, mu, nu, T))


def test_batched_p_sweep_and_leading_axes() -> None:
    rng = np.random.default_rng(13)
    A = rng.normal(size=(3, 2, 6, 2, 2))  # (sparsities, seeds, n, N_x, N_x)
    p = np.array([0.1, 0.5, 0.9])[:, None]
    b = rng.normal(size=(2, 2))  # per seed
    imp = np.array([1.0, 0.7])
    terms = th.loss_terms(A, 2, p, 0.5, 1 / 3, 5, importance=imp, b_y=b)
    assert terms.shape == (3, 2, 4)
    for i in range(3):
        for j in range(2):
            one = th.loss_terms(A[i, j], 2, float(p[i, 0]), 0.5, 1 / 3, 5, imp, b[j])
            np.testing.assert_allclose(terms[i, j], one)
    np.testing.assert_allclose(th.expected_loss(A, 2, p, 0.5, 1 / 3, 5, imp, b), terms.sum(-1))


def test_zero_output_loss() -> None:
    imp = 0.7 ** np.arange(3)
    zero = np.zeros((10, 3, 3))
    expected = th.expected_loss(zero, 3, 0.2, 0.5, 1 / 3, 10, importance=imp)
    assert th.zero_output_loss(3, 0.2, 1 / 3, 10, importance=imp) == pytest.approx(expected)
    assert th.zero_output_loss(3, 0.2, 1 / 3, 10) == pytest.approx(7 * 0.2 / 3)
    np.testing.assert_allclose(th.zero_output_loss(1, np.array([0.1, 0.2]), 2.0, 3), [0.4, 0.8])


# ---- ReLU readout: high sparsity ---------------------------------------------------------------

# Tolerance: the sparse approximation drops the O(p²) interactions of two inputs
# active in the same window. Its relative error is about p × (number of ages that
# can pair with an input, at most T) <= 0.005 × 8 = 4 % (measured: ≈ 0.5 p), on
# top of 4 standard errors of a 400k-sequence estimate (≈ 1 % each).
P_SPARSE = 0.005
T_SPARSE, K_SPARSE = 8, 2
N_SPARSE = 400_000


SSM = (np.array([[1.0], [0.3]]), 0.8 * rot(50.0), np.array([[0.2], [0.9]]))  # a_s of both signs


def assert_sparse_matches(mc: float, se: float, approx: float) -> None:
    tol = 4 * se + P_SPARSE * T_SPARSE * approx
    assert abs(mc - approx) < tol, f"MC {mc:.6g} ± {se:.2g} vs approx {approx:.6g}"


def test_ssm_sparse_approx_matches_monte_carlo() -> None:
    W_x, W_h, W_y = SSM
    T, k, p = T_SPARSE, K_SPARSE, P_SPARSE
    A = kernel(W_x, W_h, W_y, T)
    assert (A[:, 0, 0] > 0).any() and (A[:, 0, 0] < 0).any()
    mc, se = simulate(W_x, W_h, W_y, None, k, T, p, "uniform", 20, N_SPARSE, relu_readout=True)
    assert_sparse_matches(mc, se, float(th.relu_sparse_approx(A, k, p, 1 / 3, T)))


@pytest.mark.parametrize("dist", ["uniform", "constant", "exponential"])
def test_ssm_sparse_approx_with_negative_bias(dist: str) -> None:
    W_x, W_h, W_y = SSM
    T, k, p = T_SPARSE, K_SPARSE, P_SPARSE
    b = np.array([-0.15])
    _, nu = th.input_moments(dist)
    A = kernel(W_x, W_h, W_y, T)
    mc, se = simulate(W_x, W_h, W_y, b, k, T, p, dist, 21, N_SPARSE, relu_readout=True)
    approx = float(th.relu_sparse_approx(A, k, p, nu, T, b_y=b, dist=dist))
    assert_sparse_matches(mc, se, approx)
    assert approx < float(th.relu_sparse_approx(A, k, p, nu, T))  # the bias silences small a_s
    with pytest.raises(TempsupError, match="dist"):
        th.relu_sparse_approx(A, k, p, nu, T, b_y=b)
    with pytest.raises(TempsupError, match="<= 0"):
        th.relu_sparse_approx(A, k, p, nu, T, b_y=-b, dist=dist)


def test_relu_rnn_sparse_approx_uses_impulse_response() -> None:
    W_h = np.array([[0.5, -1.0], [1.0, 0.5]])
    W_x, W_y = np.array([[1.0], [-0.5]]), np.array([[0.3], [1.0]])
    T, k, p = T_SPARSE, K_SPARSE, P_SPARSE
    A = kernel(W_x, W_h, W_y, T, relu_hidden=True)
    mc, se = simulate(
        W_x, W_h, W_y, None, k, T, p, "uniform", 22, N_SPARSE, relu_readout=True, relu_hidden=True
    )
    assert_sparse_matches(mc, se, float(th.relu_sparse_approx(A, k, p, 1 / 3, T)))


def test_relu_terms_equal_sparse_approx_to_first_order() -> None:
    rng = np.random.default_rng(23)
    A = rng.normal(size=(2, 9, 3, 3))  # (seeds, n, N_x, N_x)
    imp = 0.7 ** np.arange(3)
    T, k, mu, nu = 9, 3, 0.5, 1 / 3
    gaps = []
    for p in (1e-3, 1e-4):
        terms = th.relu_readout_terms(A, k, p, mu, nu, T, importance=imp)
        approx = th.relu_sparse_approx(A, k, p, nu, T, importance=imp)
        np.testing.assert_allclose(terms[..., 0] + terms[..., 2], approx)  # the p-linear terms
        gaps.append(terms.sum(-1) - approx)  # only p² terms remain
    np.testing.assert_allclose(gaps[0] / gaps[1], 100.0, rtol=1e-9)  # exactly quadratic in p


def test_bad_inputs_raise_tempsup_error() -> None:
    A = np.zeros((5, 1, 1))
    with pytest.raises(TempsupError, match="n >= T"):
        th.expected_loss(A, 1, 0.1, 0.5, 1 / 3, 6)
    with pytest.raises(TempsupError, match="a\\[..., None, None\\]"):
        th.expected_loss(np.zeros((5, 1)), 1, 0.1, 0.5, 1 / 3, 5)
    with pytest.raises(TempsupError, match="p: expected values in \\[0, 1\\]"):
        th.expected_loss(A, 1, 1.5, 0.5, 1 / 3, 5)
    with pytest.raises(TempsupError, match="importance"):
        th.expected_loss(A, 1, 0.1, 0.5, 1 / 3, 5, importance=np.ones(2))
    with pytest.raises(TempsupError, match="broadcast"):
        th.expected_loss(np.zeros((3, 5, 1, 1)), 1, np.ones(2) * 0.1, 0.5, 1 / 3, 5)


A1 = np.zeros((5, 1, 1))  # n = 5 ages, N_x = 1
A2 = np.zeros((3, 5, 2, 2))  # 3 models, N_x = 2
REFUSED = [
    # (function, args, kwargs, the whole message)
    ("loss_terms", (np.zeros((5, 1, 2)), 1, 0.1, 0.5, 0.3, 5), {},
     "A: expected projections of shape (..., n, N_x, N_x), got (5, 1, 2) "
     "(for a scalar kernel a of shape (..., n) pass a[..., None, None])"),
    ("loss_terms", (np.zeros((1, 1)), 1, 0.1, 0.5, 0.3, 1), {},
     "A: expected projections of shape (..., n, N_x, N_x), got (1, 1) "
     "(for a scalar kernel a of shape (..., n) pass a[..., None, None])"),
    ("loss_terms", (A1, -1, 0.1, 0.5, 0.3, 5), {}, "k: expected an integer >= 0, got -1"),
    ("loss_terms", (A1, 1, 0.1, 0.5, 0.3, 0), {}, "T: expected an integer >= 1, got 0"),
    ("loss_terms", (A1, 1, 1.5, 0.5, 0.3, 5), {}, "p: expected values in [0, 1], got 1.5"),
    ("loss_terms", (A1, 1, -0.0001, 0.5, 0.3, 5), {}, "p: expected values in [0, 1], got -0.0001"),
    ("loss_terms", (A1, 1, 0.1, -1.0, 0.3, 5), {}, "mu: expected values in [0, inf], got -1.0"),
    ("loss_terms", (A1, 1, 0.1, 0.5, np.nan, 5), {}, "nu: expected values in [0, inf], got nan"),
    ("loss_terms", (A1, 1, 0.1, 0.5, 0.3, 5), {"importance": np.array([-1.0])},
     "importance: expected values in [0, inf], got -1.0"),
    ("loss_terms", (A2, 1, 0.1, 0.5, 0.3, 5), {"importance": np.ones(3)},
     "importance: expected shape (..., N_x) with N_x = 2, got (3,)"),
    ("loss_terms", (A2, 1, 0.1, 0.5, 0.3, 5), {"b_y": np.zeros(3)},
     "b_y: expected shape (..., N_x) with N_x = 2, got (3,)"),
    ("loss_terms", (A2, 1, np.full(2, 0.1), 0.5, 0.3, 5), {},
     "p: expected leading axes that broadcast against A's (3,), got (2,)"),
    ("loss_terms", (A2, 1, 0.1, np.full(2, 0.5), 0.3, 5), {},
     "mu: expected leading axes that broadcast against A's (3,), got (2,)"),
    ("loss_terms", (A2, 1, 0.1, 0.5, np.full(2, 0.3), 5), {},
     "nu: expected leading axes that broadcast against A's (3,), got (2,)"),
    ("loss_terms", (A2, 1, 0.1, 0.5, 0.3, 5), {"importance": np.ones((2, 2))},
     "importance: expected leading axes that broadcast against A's (3,), got (2,)"),
    ("loss_terms", (A2, 1, 0.1, 0.5, 0.3, 5), {"b_y": np.zeros((2, 2))},
     "b_y: expected leading axes that broadcast against A's (3,), got (2,)"),
    ("zero_output_loss", (-1, 0.1, 0.3, 5), {}, "k: expected an integer >= 0, got -1"),
    ("zero_output_loss", (1, 0.1, 0.3, 0), {}, "T: expected an integer >= 1, got 0"),
    ("zero_output_loss", (1, 1.01, 0.3, 5), {}, "p: expected values in [0, 1], got 1.01"),
    ("zero_output_loss", (1, 0.1, -0.3, 5), {}, "nu: expected values in [0, inf], got -0.3"),
    ("zero_output_loss", (1, 0.1, 0.3, 5), {"importance": np.array([1.0, -2.0])},
     "importance: expected values in [0, inf], got -2.0"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "args", "kwargs", "message"), REFUSED)
def test_refusals_name_the_argument_and_its_range(fn, args, kwargs, message) -> None:
    with pytest.raises(TempsupError) as info:
        getattr(th, fn)(*args, **kwargs)
    assert str(info.value) == message


def test_the_ranges_include_their_ends() -> None:
    A = np.zeros((1, 1, 1))
    th.loss_terms(A, 0, 1.0, 0.0, 0.0, 1)  # k = 0, T = 1 = n, p = 1, μ = ν = 0
    th.loss_terms(A, 0, 0.0, np.inf, np.inf, 1, importance=np.zeros(1))
    assert th.zero_output_loss(0, 1.0, 0.0, 1) == 0.0
    # the number of target steps never goes negative: k ≥ T gives 0, not a negative loss
    assert th.zero_output_loss(7, 0.5, 1.0, 5) == 0.0
    np.testing.assert_allclose(th.zero_output_loss(1, 0.5, 1.0, 3, importance=np.float64(2.0)), 2.0)
    # importance per model: the sum is over features only
    np.testing.assert_allclose(
        th.zero_output_loss(1, 0.5, 1.0, 3, importance=np.array([[1.0, 1.0], [3.0, 0.0]])),
        [2.0, 3.0],
    )


# ---- the first-order loss of a ReLU readout with a negative bias, by brute force ----------


def lone_input_cost(A, k, T, b, imp, dist):
    """The p-coefficient of the loss, summed input by input: one input of size U on feature
    j at time τ, nothing else in the window; E over U by a fine quadrature."""
    if dist == "constant":
        u, w = np.ones(1), np.ones(1)
    elif dist == "uniform":
        n = 200_000
        u, w = (np.arange(n) + 0.5) / n, np.full(n, 1.0 / n)
    else:  # exponential(1), cut at 40
        n, hi = 400_000, 40.0
        u = (np.arange(n) + 0.5) * hi / n
        w = np.exp(-u) * hi / n
    n_x, total = A.shape[-1], 0.0
    for tau in range(1, T + 1):
        for j in range(n_x):
            for t in range(tau, T + 1):
                s = t - tau
                for i in range(n_x):
                    y = u if (s == k and i == j) else 0.0
                    total += imp[i] * np.sum(w * (y - np.maximum(A[s, i, j] * u + b[i], 0.0)) ** 2)
    return total


@pytest.mark.parametrize("dist", ["uniform", "exponential", "constant"])
@pytest.mark.parametrize("n_x", [1, 2])
def test_relu_sparse_approx_with_a_negative_bias_against_brute_force(dist, n_x) -> None:
    rng = np.random.default_rng(10 * n_x + len(dist))
    T, k = 5, 2
    A = rng.normal(size=(T, n_x, n_x))
    A[k] += 0.8 * np.eye(n_x)
    b = -rng.uniform(0.05, 0.6, size=n_x)
    imp = rng.uniform(0.5, 1.5, size=n_x)
    nu = th.input_moments(dist)[1]
    for bias in (b, np.zeros(n_x)):
        want = lone_input_cost(A, k, T, bias, imp, dist)
        got = th.relu_sparse_approx(A, k, 0.01, nu, T, importance=imp, b_y=bias, dist=dist)
        np.testing.assert_allclose(got / 0.01, want, rtol=1e-8)


def test_relu_sparse_approx_refuses_a_positive_bias_and_a_missing_law() -> None:
    A = np.ones((4, 1, 1))
    for b in ([0.1], [-0.1, 0.2]):
        A2 = np.ones((4, len(b), len(b)))
        with pytest.raises(TempsupError, match="b_y"):
            th.relu_sparse_approx(A2, 1, 0.1, 1 / 3, 4, b_y=np.array(b), dist="uniform")
    with pytest.raises(TempsupError) as info:
        th.relu_sparse_approx(A, 1, 0.1, 1 / 3, 4, b_y=np.array([-0.1]))
    assert str(info.value) == (
        "dist: expected the input law (one of uniform, constant, exponential) when b_y < 0, "
        "got None"
    )
    with pytest.raises(TempsupError) as info:
        th.relu_sparse_approx(A, 1, 0.1, 0.5, 4, b_y=np.array([-0.1]), dist="uniform")
    assert str(info.value) == "nu: expected E[U²] = 0.333333 of dist 'uniform', got [0.5]"
    with pytest.raises(TempsupError) as info:
        th.input_moments("gamma")
    assert str(info.value) == "dist: expected one of uniform, constant, exponential, got 'gamma'"


def test_relu_readout_terms_book_the_bias_in_the_mean_correction() -> None:
    rng = np.random.default_rng(4)
    A = rng.normal(size=(6, 2, 2))
    b = np.array([-0.3, 0.2])
    with_b = th.relu_readout_terms(A, 2, 0.1, 0.5, 1 / 3, 6, b_y=b)
    without = th.relu_readout_terms(A, 2, 0.1, 0.5, 1 / 3, 6)
    np.testing.assert_allclose(
        with_b, th.loss_terms(np.maximum(A, 0), 2, 0.1, 0.5, 1 / 3, 6, b_y=b)
    )
    np.testing.assert_array_equal(with_b[[0, 2, 3]], without[[0, 2, 3]])
    assert abs(with_b[1] - without[1]) > 0.1


def test_target_older_than_the_window_never_enters() -> None:
    # k = n: the target's projection is outside A, so the task term is the whole target
    A = np.full((4, 1, 1), 0.5)
    terms = th.loss_terms(A, 4, 0.1, 0.5, 1 / 3, 4)
    np.testing.assert_allclose(terms, [0.0, 0.0, 0.1 / 3 * 4 * 0.25 * 10 / 4, terms[3]], rtol=1e-12)
