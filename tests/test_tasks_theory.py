"""Tasks beyond one delay and inputs persistent in time (issue 43): tempsup.model.tasks,
tempsup.theory.tasks_loss, tempsup.theory.tasks_mc.

The closed form is checked against things computed another way: closed_form's four
terms (q = 0, recall), the compact quadratic form with an explicit covariance matrix,
and a Monte Carlo simulation of the linear model written here with plain loops (its
targets from their definitions, not from `targets`), on the library's own sampler.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tempsup.errors import TempsupError
from tempsup.model.data import delayed_targets, sample_inputs
from tempsup.model.tasks import (
    cued_inputs,
    n_inputs,
    n_outputs,
    output_importance,
    persistent_inputs,
    sample_cues,
    target_weights,
    targets,
)
from tempsup.theory import closed_form, tasks_loss, tasks_mc
from tempsup.theory.expected_loss import ssm_expected_loss

DISTS = ("uniform", "constant", "exponential")
TASKS = {"recall": (2, 1), "multi": ((2, 5), 1), "sum": (1, 3)}  # task: (ks, window)


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---- persistent inputs --------------------------------------------------------------------


@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("p", [[0.3], [0.2, 0.2], [0.1, 0.6]])
def test_persistence_zero_is_todays_draw_exactly(dist: str, p: list[float]) -> None:
    a, b = gen(11), gen(11)
    x = persistent_inputs(a, torch.tensor(p), 16, 9, 3, dist, 0.0)
    y = sample_inputs(b, torch.tensor(p), 16, 9, 3, dist)
    assert x.shape == y.shape and x.dtype == y.dtype
    assert torch.equal(x, y)
    assert torch.equal(a.get_state(), b.get_state())  # the next batch is today's too


def test_per_model_persistence_shares_the_fresh_draws() -> None:
    """Common random numbers: the q = 0 model sees today's inputs, the others repeat them."""
    p = torch.tensor([0.3, 0.3])
    x = persistent_inputs(gen(5), p, 64, 12, 2, "uniform", torch.tensor([0.0, 0.8]))
    today = sample_inputs(gen(5), p, 64, 12, 2, "uniform")[0]
    assert x.shape == (2, 12, 2, 64)
    assert torch.equal(x[0], today)
    assert torch.equal(x[1, 0], today[0])  # t = 0 is always fresh
    moved = x[1, 1:] != x[1, :-1]  # a change is a fresh draw, which is today's value
    assert torch.equal(x[1, 1:][moved], today[1:][moved])


@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("q", [0.0, 0.5, 0.9])
def test_persistent_marginals_and_lag_correlation(dist: str, q: float) -> None:
    """P(x_t ≠ 0) = p at every step and corr(x_t, x_{t−d}) = q^d, each within 4 standard
    errors of per-sequence statistics (sequences are independent, steps are not)."""
    p, T, B = 0.3, 24, 20_000
    mu, nu = closed_form.input_moments(dist)
    x = persistent_inputs(gen(7), torch.tensor([p]), B, T, 1, dist, q)[0, :, 0].double().numpy()
    active = (x != 0).mean(axis=0)  # (B,) per sequence
    se = active.std(ddof=1) / math.sqrt(B)
    assert abs(active.mean() - p) < 4 * se, (active.mean(), p, se)
    for t in (0, T - 1):  # each step's own marginal (independent across sequences)
        rate = (x[t] != 0).mean()
        assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / B), (t, rate)
    mean = x.mean(axis=0)
    assert abs(mean.mean() - p * mu) < 4 * mean.std(ddof=1) / math.sqrt(B)
    var = p * nu - (p * mu) ** 2
    for d in (1, 2, 4):
        prod = ((x[d:] * x[:-d]).mean(axis=0) - (p * mu) ** 2) / var  # (B,) corr estimates
        se = prod.std(ddof=1) / math.sqrt(B)
        assert abs(prod.mean() - q**d) < 4 * se, (d, prod.mean(), q**d, se)


def test_persistent_inputs_refuse_bad_values() -> None:
    p = torch.tensor([0.3, 0.4])
    for q in (1.0, -0.1, torch.tensor([0.1, 0.2, 0.3])):
        with pytest.raises(TempsupError, match="q:"):
            persistent_inputs(gen(), p, 4, 5, 1, "uniform", q)
    with pytest.raises(TempsupError, match="p:"):
        persistent_inputs(gen(), torch.tensor(0.3), 4, 5, 1, "uniform", 0.5)
    with pytest.raises(TempsupError, match="input_dist"):
        persistent_inputs(gen(), p, 4, 5, 1, "gaussian", 0.5)


# ---- targets ------------------------------------------------------------------------------


def test_recall_targets_are_delayed_targets() -> None:
    x = persistent_inputs(gen(1), torch.tensor([0.5]), 8, 10, 3, "uniform", 0.5)
    assert torch.equal(targets("recall", x, 3), delayed_targets(x, torch.tensor([3]), 1))
    assert torch.equal(targets("sum", x, 3, window=1), targets("recall", x, 3))


def test_multi_and_sum_targets_by_hand() -> None:
    x = torch.arange(1.0, 1 + 6 * 2).view(1, 6, 2, 1)  # x[t, j] = 1 + 2t + j
    y = targets("multi", x, (1, 3))[0, :, :, 0]  # outputs: (d=1, j=0), (d=1, j=1), (d=3, ...)
    assert y.shape == (6, 4)
    assert y[:, 0].tolist() == [0, 1, 3, 5, 7, 9]
    assert y[:, 1].tolist() == [0, 2, 4, 6, 8, 10]
    assert y[:, 2].tolist() == [0, 0, 0, 1, 3, 5]
    assert y[:, 3].tolist() == [0, 0, 0, 2, 4, 6]
    s = targets("sum", x, 1, window=3)[0, :, 0, 0]  # x_{t−1} + x_{t−2} + x_{t−3}, silent past
    assert s.tolist() == [0, 1, 1 + 3, 1 + 3 + 5, 3 + 5 + 7, 5 + 7 + 9]
    assert n_outputs("multi", (1, 3), 2) == 4 and n_outputs("sum", 1, 2) == 2
    assert output_importance("multi", (1, 3), [1.0, 0.7]).tolist() == [1.0, 0.7, 1.0, 0.7]


def test_target_weights_layout() -> None:
    c = target_weights("multi", (2, 5), 1, 8, 2)
    assert c.shape == (8, 4, 2)
    assert c[2, 0, 0] == c[2, 1, 1] == c[5, 2, 0] == c[5, 3, 1] == 1 and c.sum() == 4
    c = target_weights("sum", 1, 3, 8, 1)[:, 0, 0]
    assert c.tolist() == [0, 1, 1, 1, 0, 0, 0, 0]
    assert np.array_equal(target_weights("recall", 3, 1, 8, 2)[3], np.eye(2))


def test_cued_targets_by_hand() -> None:
    x = torch.arange(1.0, 7.0).view(1, 6, 1, 1)  # x[t] = t + 1
    cues = torch.tensor([[0], [1], [2], [1], [0], [2]])  # delays (1, 2, 4)[cue]
    y = targets("cued", x, (1, 2, 4), cues=cues)[0, :, 0, 0]
    # t=0: d=1 before the sequence; t=1: d=2 before; t=2: d=4 before; t=3: d=2 -> x[1];
    # t=4: d=1 -> x[3]; t=5: d=4 -> x[1]
    assert y.tolist() == [0, 0, 0, 2, 4, 2]
    inp = cued_inputs(x, cues, 3)[0, :, :, 0]
    assert inp.shape == (6, 4) and n_inputs("cued", (1, 2, 4), 1) == 4
    assert inp[:, 0].tolist() == x[0, :, 0, 0].tolist()  # features first, then the cues
    assert inp[:, 1:].argmax(dim=1).tolist() == cues[:, 0].tolist()
    assert inp[:, 1:].sum(dim=1).tolist() == [1.0] * 6


def test_cues_are_uniform_over_the_delays() -> None:
    cues = sample_cues(gen(3), (1, 3, 5), 20_000, 10)
    assert cues.shape == (10, 20_000)
    n = cues.numel()
    for i in range(3):
        rate = (cues == i).double().mean().item()
        assert abs(rate - 1 / 3) < 4 * math.sqrt(2 / 9 / n), (i, rate)


def test_clear_errors_of_the_tasks() -> None:
    with pytest.raises(TempsupError, match="not a fixed linear function of the past"):
        target_weights("cued", (1, 3, 5), 1, 10)
    with pytest.raises(TempsupError, match="task: expected one of"):
        target_weights("copy", 2, 1, 10)
    with pytest.raises(TempsupError, match="one delay k"):
        target_weights("recall", (2, 5), 1, 10)
    with pytest.raises(TempsupError, match="distinct"):
        target_weights("multi", (2, 2), 1, 10)
    with pytest.raises(TempsupError, match="only task 'sum' has a window"):
        target_weights("recall", 2, 3, 10)
    with pytest.raises(TempsupError, match="smaller than T"):
        target_weights("sum", 3, 5, 7)
    with pytest.raises(TempsupError, match="ks:"):
        target_weights("multi", (2, -1), 1, 10)
    x = torch.zeros(1, 5, 1, 2)
    with pytest.raises(TempsupError, match="cues:"):
        targets("cued", x, (1, 2))
    with pytest.raises(TempsupError, match="cues:"):
        targets("cued", x, (1, 2), cues=torch.full((5, 2), 2))
    with pytest.raises(TempsupError, match="cues:"):
        targets("recall", x, 1, cues=torch.zeros(5, 2, dtype=torch.long))


# ---- the closed form ----------------------------------------------------------------------


def random_model(task: str, T: int, n_x: int, seed: int, lead: tuple[int, ...] = ()):
    ks, window = TASKS[task]
    c = target_weights(task, ks, window, T, n_x)
    rng = np.random.default_rng(seed)
    A = 0.5 * rng.normal(size=lead + (T + 2,) + c.shape[1:])
    b = 0.3 * rng.normal(size=lead + (c.shape[1],))
    imp = output_importance(task, ks, [0.7**j for j in range(n_x)])
    return A, b, c, imp


def test_recall_at_q0_is_closed_form_term_by_term() -> None:
    T, k = 12, 3
    for n_x, bias in ((1, False), (3, True), (2, True)):
        rng = np.random.default_rng(n_x)
        A = rng.normal(size=(4, 2, T, n_x, n_x))
        b = rng.normal(size=(4, 2, n_x)) if bias else None
        imp = rng.uniform(0.2, 1.0, size=n_x)
        p = np.array([0.05, 0.3, 0.6, 1.0])[:, None]  # a sparsity sweep (4, seeds)
        c = target_weights("recall", k, 1, T, n_x)
        for dist in DISTS:
            mu, nu = closed_form.input_moments(dist)
            new = tasks_loss.loss_terms(A, c, p, mu, nu, T, 0.0, imp, b)
            old = closed_form.loss_terms(A, k, p, mu, nu, T, imp, b)
            assert new.shape == (4, 2, 5)
            np.testing.assert_allclose(new[..., :4], old, rtol=1e-12, atol=1e-12)
            assert np.all(new[..., 4] == 0.0)
    assert tasks_loss.TERM_NAMES[:4] == closed_form.TERM_NAMES


def compact(A, c, p, mu, nu, T, q, imp, b):
    """E[L] = Σ_t Σ_o I_o [(pμ ΣC + b)² + Cᵀ Σ C] with the slots' covariance matrix Σ built
    explicitly, (s, j) × (s', j'): q^{|s−s'|} Var(x) [j = j']."""
    var = p * nu - (p * mu) ** 2
    total = 0.0
    for t in range(1, T + 1):
        for o in range(A.shape[-2]):
            C = (A[:t, o, :] - c[:t, o, :]).ravel()  # slots (s, j), age-major
            s = np.repeat(np.arange(t), A.shape[-1])
            j = np.tile(np.arange(A.shape[-1]), t)
            cov = var * q ** np.abs(s[:, None] - s[None, :]) * (j[:, None] == j[None, :])
            total += imp[o] * ((p * mu * C.sum() + b[o]) ** 2 + C @ cov @ C)
    return total


@pytest.mark.parametrize("q", [0.0, 0.3, 0.9])
def test_the_terms_sum_to_the_quadratic_form(q: float) -> None:
    """Any target weights c (not only the tasks'): the five terms add up to E[e²]."""
    rng = np.random.default_rng(4)
    T, n_out, n_x = 7, 3, 2
    A = rng.normal(size=(T, n_out, n_x))
    c = rng.normal(size=(T, n_out, n_x)) * (rng.uniform(size=(T, n_out, n_x)) < 0.4)
    b, imp = rng.normal(size=n_out), rng.uniform(size=n_out)
    for p, dist in ((0.2, "uniform"), (0.7, "exponential")):
        mu, nu = closed_form.input_moments(dist)
        got = tasks_loss.expected_loss(A, c, p, mu, nu, T, q, imp, b)
        assert got == pytest.approx(compact(A, c, p, mu, nu, T, q, imp, b), rel=1e-12)


def test_batched_axes_broadcast() -> None:
    """p, q and the weights broadcast over leading axes, each slice its own call."""
    A, b, c, imp = random_model("sum", 9, 2, 0, lead=(3, 2))
    p = np.array([0.1, 0.4, 0.8])[:, None]
    q = np.array([0.0, 0.7])
    got = tasks_loss.loss_terms(A, c, p, 0.5, 1 / 3, 9, q, imp, b)
    assert got.shape == (3, 2, 5)
    for i in range(3):
        for m in range(2):
            one = tasks_loss.loss_terms(A[i, m], c, p[i, 0], 0.5, 1 / 3, 9, q[m], imp, b[i, m])
            np.testing.assert_allclose(got[i, m], one, rtol=1e-12, atol=1e-12)


def simulate(A, b, task, p, dist, T, q, imp, seed, B):
    """Per-sequence losses of ŷ_t = Σ_{s<=t} A_s x_{t−s} + b, plain loops, targets from
    their definitions with a silent past."""
    ks, window = TASKS[task]
    n_x = A.shape[-1]
    x = persistent_inputs(gen(seed), torch.tensor([p]), B, T, n_x, dist, q)[0].double().numpy()
    delays = ks if task == "multi" else (ks,)
    loss = np.zeros(B)
    for t in range(T):
        y_hat = b[:, None] + sum(A[s] @ x[t - s] for s in range(t + 1))  # (n_out, B)
        if task == "sum":
            y = sum(x[t - s] for s in range(ks, ks + window) if s <= t)
        else:  # recall / multi: one block of N_x outputs per delay
            y = np.concatenate([x[t - d] if d <= t else 0 * x[t] for d in delays])
        loss += imp @ (y_hat - y) ** 2
    return loss


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("q", [0.0, 0.5, 0.9])
def test_closed_form_matches_monte_carlo(q: float, task: str, dist: str, seed: int) -> None:
    T, n_x, p, B = 8, 2, 0.3, 12_000
    A, b, c, imp = random_model(task, T, n_x, 100 * seed + 7)
    mu, nu = closed_form.input_moments(dist)
    terms = tasks_loss.loss_terms(A, c, p, mu, nu, T, q, imp, b)
    loss = simulate(A, b, task, p, dist, T, q, imp, seed, B)
    mean, se = loss.mean(), loss.std(ddof=1) / math.sqrt(B)
    assert abs(mean - terms.sum()) < 4 * se, (terms.sum(), mean, se)


@pytest.mark.parametrize("model", ["silent", "one step late"])
def test_monte_carlo_sees_the_temporal_covariance(model: str) -> None:
    """The comparison has the power to see persistence: on a silent network (sum, w = 3:
    neighbours in the window co-occur, +) and on recall one step late (the late input
    stands in for the target, −) the fifth term is many standard errors from 0, and the
    Monte Carlo agrees with all five terms, not with the first four."""
    T, p, q, B = 8, 0.3, 0.9, 12_000
    task = "sum" if model == "silent" else "recall"
    ks, window = TASKS[task]
    c = target_weights(task, ks, window, T, 1)
    A = np.zeros_like(c) if model == "silent" else np.roll(c, 1, axis=0)
    b, imp = np.zeros(1), np.ones(1)
    mu, nu = closed_form.input_moments("uniform")
    terms = tasks_loss.loss_terms(A, c, p, mu, nu, T, q, imp, b)
    loss = simulate(A, b, task, p, "uniform", T, q, imp, 3, B)
    mean, se = loss.mean(), loss.std(ddof=1) / math.sqrt(B)
    assert (terms[4] > 10 * se) if model == "silent" else (terms[4] < -10 * se), (terms, se)
    assert abs(mean - terms.sum()) < 4 * se, (terms, mean, se)
    assert abs(mean - terms[:4].sum()) > 10 * se


def test_monte_carlo_loss_is_the_simulation() -> None:
    """tasks_mc draws its sequences as the simulation above does (one chunk, its seed)."""
    T, n_x, p = 8, 2, 0.3
    for task in TASKS:
        ks, window = TASKS[task]
        A, b, _, imp = random_model(task, T, n_x, 3, lead=(2,))
        mean, se = tasks_mc.monte_carlo_loss(
            A, task, ks, p, "uniform", T, window=window, q=0.6, importance=imp, b_y=b,
            readout="linear", sequences=1000, seed=9,
        )  # fmt: skip
        assert mean.shape == se.shape == (2,)
        for m in range(2):
            loss = simulate(A[m], b[m], task, p, "uniform", T, 0.6, imp, 9, 1000)
            assert mean[m] == pytest.approx(loss.mean(), rel=1e-9)
            assert se[m] == pytest.approx(loss.std(ddof=1) / math.sqrt(1000), rel=1e-6)


def test_relu_monte_carlo_matches_the_ssm_convolution() -> None:
    """ReLU readout, recall, q = 0: tasks_mc agrees with expected_loss's convolution."""
    T, k, p = 10, 3, 0.2
    rng = np.random.default_rng(2)
    A = rng.normal(size=(3, T, 2, 2))
    b = -0.2 * rng.uniform(size=(3, 2))
    imp = np.array([1.0, 0.7])
    exact = ssm_expected_loss(A, k, p, "uniform", T, imp, b)
    mean, se = tasks_mc.monte_carlo_loss(
        A, "recall", k, p, "uniform", T, importance=imp, b_y=b, sequences=40_000
    )
    assert np.all(np.abs(mean - exact) < 4 * se + 3e-4 * exact), (mean, exact, se)


def test_cued_monte_carlo_zero_and_oracle() -> None:
    """A silent network costs Σ_t Σ_j I_j pν P(d_t <= t) on cued; an oracle reading the
    cue costs nothing; a linear readout is estimated too (no closed form)."""
    T, n_x, p, delays = 9, 2, 0.4, (1, 3, 5)
    imp = np.array([1.0, 0.5])
    _, nu = closed_form.input_moments("exponential")
    seen = sum(sum(d <= t for d in delays) / len(delays) for t in range(T))
    zero_loss = seen * p * nu * imp.sum()

    def zero(x):
        return np.zeros((T, n_x, x.shape[-1]))

    def oracle(x):
        cue = x[:, n_x:].argmax(axis=1)  # (T, B)
        out = np.zeros((T, n_x, x.shape[-1]))
        for t in range(T):
            for i, d in enumerate(delays):
                if d <= t:
                    out[t] += x[t - d, :n_x] * (cue[t] == i)
        return out

    for q in (0.0, 0.8):
        args = ("cued", delays, p, "exponential", T, n_x)
        mean, se = tasks_mc.monte_carlo_loss_of(zero, *args, q=q, importance=imp, sequences=20_000)
        assert abs(mean - zero_loss) < 4 * se, (q, mean, zero_loss, se)
        mean, se = tasks_mc.monte_carlo_loss_of(oracle, *args, q=q, importance=imp, sequences=2000)
        assert mean == 0.0 and se == 0.0
    A = np.zeros((T, n_x, n_x + len(delays)))
    mean, se = tasks_mc.monte_carlo_loss(
        A, "cued", delays, p, "exponential", T, q=0.5, importance=imp, readout="linear",
        sequences=20_000,
    )  # fmt: skip
    assert abs(mean - zero_loss) < 4 * se  # A = 0 is the silent network


def test_clear_errors_of_the_loss() -> None:
    A, b, c, imp = random_model("multi", 8, 2, 0)
    mu, nu = closed_form.input_moments("uniform")
    with pytest.raises(TempsupError, match="q:"):
        tasks_loss.loss_terms(A, c, 0.3, mu, nu, 8, 1.0)
    with pytest.raises(TempsupError, match="c:"):
        tasks_loss.loss_terms(A, c[:, :2], 0.3, mu, nu, 8)
    with pytest.raises(TempsupError, match="A:"):
        tasks_loss.loss_terms(A[:5], c, 0.3, mu, nu, 8)
    with pytest.raises(TempsupError, match="importance:"):
        tasks_loss.loss_terms(A, c, 0.3, mu, nu, 8, 0.5, imp[:2])
    with pytest.raises(TempsupError, match="b_y:"):
        tasks_loss.loss_terms(A, c, 0.3, mu, nu, 8, 0.5, imp, b[:2])
    with pytest.raises(TempsupError, match="readout:"):
        tasks_mc.monte_carlo_loss(A, "multi", (2, 5), 0.3, "uniform", 8, readout="tanh")
    with pytest.raises(TempsupError, match="outputs"):
        tasks_mc.monte_carlo_loss(A[:, :2], "multi", (2, 5), 0.3, "uniform", 8)
    with pytest.raises(TempsupError, match="predict:"):
        tasks_mc.monte_carlo_loss_of(lambda x: x[:1], "recall", 2, 0.3, "uniform", 8, 2)
