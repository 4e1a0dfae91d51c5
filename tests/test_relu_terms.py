"""Loss terms for ReLU readouts and the expected loss (tempsup.theory.relu_terms,
tempsup.theory.expected_loss).

Every check is against something computed another way: brute-force quadrature,
the linear closed form (σ the identity), or a Monte Carlo simulation of the
network in plain numpy (`tests.helpers.simulate`), independent of the library's sampler.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tempsup.analysis.sweeps import train_runs
from tempsup.model.config import RunConfig
from tempsup.theory import closed_form as theory
from tempsup.theory import expected_loss as E
from tempsup.theory import geometry, relu_terms
from tests.helpers import simulate

T, K = 20, 3


def random_weights(m, n_h, n_x, seed, tied=True, scale=0.6):
    rng = np.random.default_rng(seed)
    W_x = rng.normal(size=(m, n_h, n_x))
    W_h = scale * rng.normal(size=(m, n_h, n_h)) / math.sqrt(n_h)
    if tied:
        W_y = geometry.feature_directions(W_x, W_h, K + 1, False)[..., K, :, :]
    else:
        W_y = rng.normal(size=(m, n_h, n_x)) / math.sqrt(n_h)
    return W_x, W_h, W_y


def kernel(W_x, W_h, W_y, relu_hidden=False):
    return geometry.projections(W_y, geometry.feature_directions(W_x, W_h, T, relu_hidden))


@pytest.fixture(scope="module")
def trained() -> dict[str, dict[str, np.ndarray]]:
    """Best-seed weights of short real trainings in the sparse regime of each ReLU model."""
    configs = {  # one torch thread: tests/conftest.py
        "ssm": RunConfig(model="ssm", sparsity=0.9, steps=600, batch=256, seeds=3),
        "rnn": RunConfig(model="rnn", sparsity=0.95, steps=600, batch=256, seeds=3),
    }
    out = {}
    for name, cfg in configs.items():
        (run,) = train_runs([cfg])
        out[name] = {n: v[None] for n, v in run.weights(-1).items()}
    return out


# ---- the pair integrals ------------------------------------------------------------


EDGE = np.array(
    [[1.0, -1.0], [0.0, 2.0], [-3.0, 0.0], [0.7, 0.7], [-0.2, -0.5], [2.0, -0.1], [-0.1, 2.0]]
)


@pytest.mark.parametrize("dist", ["uniform", "exponential", "constant"])
def test_pair_moments_against_brute_force(dist: str) -> None:
    rng = np.random.default_rng(0)
    ab = np.concatenate([EDGE, rng.normal(size=(12, 2)) * 2])
    a, b = ab[:, 0], ab[:, 1]
    G, H = relu_terms.pair_moments(a, b, dist)
    if dist == "constant":
        u = v = np.ones(1)
        w = np.ones(1)
    else:  # a fine midpoint rule on the square (uniform) or on [0, 40]² (exponential)
        n, hi = (1200, 1.0) if dist == "uniform" else (3000, 40.0)
        x = (np.arange(n) + 0.5) * hi / n
        wx = np.full(n, hi / n) * (np.exp(-x) if dist == "exponential" else 1.0)
        u, v = np.meshgrid(x, x, indexing="ij")
        u, v, w = u.ravel(), v.ravel(), np.outer(wx, wx).ravel()
    for i in range(len(a)):
        z = np.maximum(a[i] * u + b[i] * v, 0.0)
        scale = 1.0 + abs(a[i]) + abs(b[i])
        assert G[i] == pytest.approx((w * z * z).sum(), abs=2e-4 * scale**2), (a[i], b[i])
        assert H[i] == pytest.approx((w * u * z).sum(), abs=2e-4 * scale), (a[i], b[i])


# ---- the expansion reduces to the linear closed form -------------------------------


@pytest.mark.parametrize("dist", ["uniform", "exponential", "constant"])
@pytest.mark.parametrize("n_x", [1, 3])
def test_identity_readout_gives_the_linear_terms_exactly(dist: str, n_x: int) -> None:
    """σ the identity: both ways of building the tables give the four linear terms to 1e-9."""
    mu, nu = theory.input_moments(dist)
    W_x, W_h, W_y = random_weights(4, 2, n_x, seed=n_x, tied=False)
    A = kernel(W_x, W_h, W_y)
    imp = 0.7 ** np.arange(n_x)
    for p in (0.05, 0.4):
        want = theory.loss_terms(A, K, p, mu, nu, T, importance=imp)
        closed = relu_terms.expand(relu_terms.ssm_tables(A, dist, relu=False), K, p, nu, T, imp)
        passes = relu_terms.network_tables(W_x, W_h, W_y, None, T, dist, False, relu_readout=False)
        forward = relu_terms.expand(passes, K, p, nu, T, imp)
        scale = np.abs(want).max()
        np.testing.assert_allclose(closed, want, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(forward, want, rtol=0, atol=1e-9 * scale)


def test_identity_readout_with_a_bias_sums_to_the_linear_expected_loss() -> None:
    W_x, W_h, W_y = random_weights(3, 2, 2, seed=4, tied=False)
    b = np.array([[0.3, -0.2], [-0.5, 0.1], [0.0, 0.4]])
    A = kernel(W_x, W_h, W_y)
    want = theory.expected_loss(A, K, 0.2, 0.5, 1 / 3, T, b_y=b)
    tab = relu_terms.network_tables(W_x, W_h, W_y, b, T, "uniform", False, relu_readout=False)
    got = relu_terms.expand(tab, K, 0.2, 1 / 3, T, np.ones(2)).sum(-1)
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_ssm_closed_forms_agree_with_forward_passes() -> None:
    """Two independent routes to the SSM's tables: closed forms, and the network on nodes."""
    W_x, W_h, W_y = random_weights(5, 2, 2, seed=7)
    A = kernel(W_x, W_h, W_y)
    closed = relu_terms.expand(relu_terms.ssm_tables(A, "uniform"), K, 0.1, 1 / 3, T, np.ones(2))
    tab = relu_terms.network_tables(W_x, W_h, W_y, None, T, "uniform", False)
    forward = relu_terms.expand(tab, K, 0.1, 1 / 3, T, np.ones(2))
    np.testing.assert_allclose(forward, closed, rtol=1e-3, atol=1e-4 * np.abs(closed).max())


@pytest.mark.parametrize("bias", [None, 0.15], ids=["homogeneous", "bias"])
def test_forward_pass_tables_do_not_depend_on_how_models_are_grouped(monkeypatch, bias) -> None:
    """The pair tables are computed a few models at a time (to stay in the cache): one
    model per group, and broadcast leading axes, give what all models at once give."""
    rng = np.random.default_rng(11)
    W_x = rng.standard_normal((3, 2, 2, 3))
    W_h = 0.6 * rng.standard_normal((1, 2, 2, 2))  # broadcast over the first leading axis
    W_y = rng.standard_normal((3, 2, 2, 3))
    b = None if bias is None else np.full((3, 2, 3), bias)
    whole = relu_terms.network_tables(W_x, W_h, W_y, b, 6, "exponential", True)
    monkeypatch.setattr(relu_terms, "_CHUNK_BYTES", 1)  # one model per group
    grouped = relu_terms.network_tables(W_x, W_h, W_y, b, 6, "exponential", True)
    for a, c in zip(whole, grouped, strict=True):  # equal but for the order of sums
        np.testing.assert_allclose(a, c, rtol=1e-13, atol=1e-15)
    one = relu_terms.network_tables(W_x[2, 1], W_h[0, 1], W_y[2, 1], None if b is None else b[2, 1],
                                    6, "exponential", True)  # fmt: skip
    for a, c in zip(whole, one, strict=True):
        np.testing.assert_allclose(a[2, 1], c, rtol=1e-13, atol=1e-15)


# ---- second order is exact: the strata of one and two active inputs ---------------


@pytest.mark.parametrize("relu_hidden", [False, True], ids=["ssm", "rnn"])
@pytest.mark.parametrize("source", ["random", "trained"])
def test_one_and_two_input_strata_are_exact(relu_hidden: bool, source: str, trained) -> None:
    """E[L | exactly K inputs] for K = 1, 2 from the terms equals plain sampling of that stratum.

    The terms divided by p and p² are the sums D_1, D_2 of the expansion; a sequence
    with exactly K active slots out of Q = T has E[L | K] = Σ_r C(Q−r, K−r)/C(Q, K) D_r.
    """
    if source == "random":
        W_x, W_h, W_y = random_weights(3, 2, 1, seed=11)
    else:
        w = trained["rnn" if relu_hidden else "ssm"]
        W_x, W_h, W_y = w["W_x"], w["W_h"], w["W_y"]
    p = 0.1
    terms = relu_terms.relu_loss_terms(W_x, W_h, W_y, None, K, p, "uniform", T, relu_hidden)
    d1 = (terms[..., 0] + terms[..., 2]) / p  # task + projection
    d2 = (terms[..., 1] + terms[..., 3]) / p**2  # mean correction + composition
    for kk, want in ((1, d1 / T), (2, (T - 1) / math.comb(T, 2) * d1 + d2 / math.comb(T, 2))):
        L = simulate(W_x, W_h, W_y, p, "uniform", relu_hidden, 100_000, seed=kk, active=kk)
        mean, se = L.mean(-1), L.std(-1) / math.sqrt(L.shape[-1])
        assert np.all(np.abs(mean - want) < 4.5 * se + 1e-4 * np.abs(want)), (kk, mean, want, se)


@pytest.mark.parametrize("model", ["ssm", "rnn"])
def test_terms_explain_the_loss_of_trained_sparse_models(model: str, trained) -> None:
    """At high sparsity three co-active inputs are rare: the four terms ≈ E[L] (within 5 %)."""
    w = trained[model]
    cfg = RunConfig(model=model, sparsity=0.9 if model == "ssm" else 0.95)
    terms = relu_terms.relu_loss_terms(
        w["W_x"], w["W_h"], w["W_y"], None, K, cfg.p, "uniform", T, cfg.relu_hidden
    )
    L = simulate(w["W_x"], w["W_h"], w["W_y"], cfg.p, "uniform", cfg.relu_hidden, 200_000, 3)
    mc, se = L.mean(-1), L.std(-1) / math.sqrt(L.shape[-1])
    assert np.all(np.abs(terms.sum(-1) - mc) < 0.05 * mc + 4 * se), (terms.sum(-1), mc)


def test_first_order_limit() -> None:
    """As p → 0 the terms' leading order is the first-order formula of science.md §1."""
    W_x, W_h, W_y = random_weights(3, 2, 1, seed=5)
    A = kernel(W_x, W_h, W_y)
    p = 1e-6
    first = theory.relu_sparse_approx(A, K, p, 1 / 3, T)
    terms = relu_terms.relu_loss_terms(W_x, W_h, W_y, None, K, p, "uniform", T, False)
    np.testing.assert_allclose(terms.sum(-1), first, rtol=1e-4)


# ---- the expected loss -------------------------------------------------------------


@pytest.mark.parametrize("p", [0.03, 0.1, 0.5])
@pytest.mark.parametrize(("n_x", "dist"), [(1, "uniform"), (2, "uniform"), (1, "constant")])
def test_ssm_expected_loss_matches_monte_carlo(p: float, n_x: int, dist: str) -> None:
    W_x, W_h, W_y = random_weights(3, 2, n_x, seed=int(100 * p) + n_x)
    imp = 0.7 ** np.arange(n_x)
    got = E.ssm_expected_loss(kernel(W_x, W_h, W_y), K, p, dist, T, imp)
    L = simulate(W_x, W_h, W_y, p, dist, False, 100_000, seed=1, imp=imp)
    mc, se = L.mean(-1), L.std(-1) / math.sqrt(L.shape[-1])
    assert np.all(np.abs(got - mc) < 4 * se + 0.005 * mc), (got, mc, se)


def test_ssm_expected_loss_of_trained_weights(trained) -> None:
    w = trained["ssm"]
    for p in (0.1, 0.5):
        got = E.ssm_expected_loss(kernel(w["W_x"], w["W_h"], w["W_y"]), K, p, "uniform", T)
        L = simulate(w["W_x"], w["W_h"], w["W_y"], p, "uniform", False, 200_000, seed=2)
        mc, se = L.mean(-1), L.std(-1) / math.sqrt(L.shape[-1])
        assert np.all(np.abs(got - mc) < 4 * se + 0.005 * mc), (p, got, mc, se)


@pytest.mark.parametrize("source", ["random", "trained"])
@pytest.mark.parametrize("p", [0.03, 0.2, 0.5])
def test_rnn_expected_loss_estimate(source: str, p: float, trained) -> None:
    """The stratified estimate (exact strata K <= 2 + control variate) against plain sampling."""
    if source == "random":
        W_x, W_h, W_y = random_weights(2, 3, 1, seed=9)
    else:
        w = trained["rnn"]
        W_x, W_h, W_y = w["W_x"], w["W_h"], w["W_y"]
    _, deltas = relu_terms.analyse(W_x, W_h, W_y, None, K, p, "uniform", T, True)
    got, got_se = E.network_expected_loss(
        W_x, W_h, W_y, None, K, p, "uniform", T, low_orders=deltas
    )
    L = simulate(W_x, W_h, W_y, p, "uniform", True, 200_000, seed=4)
    mc, se = L.mean(-1), L.std(-1) / math.sqrt(L.shape[-1])
    assert np.all(np.abs(got - mc) < 4 * np.hypot(se, got_se)), (got, got_se, mc, se)
    assert np.all(got_se < 0.03 * got)
    # without the exact strata the estimate is a plain stratified one: unbiased too
    plain, plain_se = E.network_expected_loss(W_x, W_h, W_y, None, K, p, "uniform", T)
    assert np.all(np.abs(plain - mc) < 4 * np.hypot(se, plain_se))


def test_rnn_estimate_uses_common_random_numbers() -> None:
    """The same weights give the same estimate: curves over frames are not jagged by noise."""
    W_x, W_h, W_y = random_weights(2, 2, 1, seed=3)
    one = E.network_expected_loss(W_x, W_h, W_y, None, K, 0.1, "uniform", T)
    two = E.network_expected_loss(W_x, W_h, W_y, None, K, 0.1, "uniform", T)
    np.testing.assert_array_equal(one[0], two[0])
