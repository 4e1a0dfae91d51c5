"""The training loss's fast paths (tempsup.training.losses) against the plain per-time-step
reference.

Every path must give the same per-model loss and the same gradients as the
model's recurrence run step by step and scored by the textbook formula: for
the three models, tied and free readout, with and without bias, scalar and
vector input with importance, several M, models that differ in p and in k,
and wide inputs that leave the Toeplitz paths. In float64 they agree to
rounding; in float32, at the training setting, to float tolerance.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from tempsup.errors import TempsupError
from tempsup.model.config import RunConfig, importance_weights
from tempsup.model.data import delayed_targets, sample_inputs
from tempsup.model.recurrences import CONV_MAX_SIDE, BatchedRNN
from tempsup.theory import closed_form as theory
from tempsup.theory import geometry, relu_terms
from tempsup.training import losses
from tempsup.training import trainer as train_module
from tempsup.training.losses import expected_loss, lagged_gram, lagged_inputs, sampled_loss
from tempsup.training.trainer import train


def reference_loss(net: BatchedRNN, x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Σ_t Σ_i I_i (y − σ_y(W_yᵀh_t + b))² / B per model, h_t by the plain time loop."""
    y = delayed_targets(x, net.k, net.n_models)
    z = net._recur(x) + net.bias().view(net.n_models, 1, -1, 1)
    y_hat = torch.relu(z) if net.relu_readout else z
    return (((y_hat - y) ** 2) * weights.view(1, 1, -1, 1)).sum(dim=(1, 2, 3)) / x.shape[-1]


def make_net(model: str, ks: list[int], hidden: int, inputs: int, tied: bool, bias: bool):
    net = BatchedRNN(
        model, len(ks), hidden, inputs, torch.tensor(ks), tied, bias, list(range(len(ks)))
    )
    if bias:
        with torch.no_grad():
            net.b_y.copy_(
                torch.randn(net.b_y.shape, generator=torch.Generator().manual_seed(9)) * 0.3
            )
    return net


def compare(net, x, p, weights) -> float:
    """Largest relative difference of loss and gradients, fast path vs reference.

    The gradient of Σ_m c_m L_m with distinct c_m: a model's loss must reach its own weights only.
    """
    coef = torch.arange(1, net.n_models + 1, dtype=x.dtype)
    params = [q for q in net.parameters()]
    fast = sampled_loss(net, x, p, weights)
    ref = reference_loss(net, x, weights)
    g_fast = torch.autograd.grad((fast * coef).sum(), params)
    g_ref = torch.autograd.grad((ref * coef).sum(), params)
    assert fast.shape == ref.shape == (net.n_models,)
    assert fast.dtype == ref.dtype == x.dtype  # the model's precision, not the float64 inside
    errs = [((fast - ref).abs().max() / ref.abs().max()).item()]
    errs += [
        ((a - b).abs().max() / b.abs().max()).item() for a, b in zip(g_fast, g_ref, strict=True)
    ]
    return max(errs)


CASES = list(
    itertools.product(
        ["linear", "ssm", "rnn"],
        [True, False],  # tied
        [False, True],  # bias
        [1, 3],  # N_x
    )
)


@pytest.mark.parametrize(("model", "tied", "bias", "inputs"), CASES)
@pytest.mark.parametrize(
    ("ks", "ps"),
    [
        ([3], [0.1]),  # one model
        ([3, 3, 3, 3], [0.1] * 4),  # one run: shared inputs and delay
        ([1, 3, 3, 0], [0.3, 0.3, 0.1, 0.3]),  # a sweep: groups of (p, k)
    ],
)
def test_fast_path_equals_the_time_loop_in_float64(model, tied, bias, inputs, ks, ps) -> None:
    net = make_net(model, ks, 4 if inputs > 1 else 2, inputs, tied, bias).double()
    p = torch.tensor(ps, dtype=torch.float64)
    x = sample_inputs(torch.Generator().manual_seed(5), p, 48, 12, inputs, "uniform").double()
    weights = torch.tensor([0.7**i for i in range(inputs)], dtype=torch.float64)
    assert compare(net, x, p, weights) < 1e-10


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_two_inputs_weigh_each_output_by_its_importance(model: str) -> None:
    # N_x = 2: neither the scalar-output shortcuts (N_x = 1, I_0 = 1) nor the N_x = 3 cases
    net = make_net(model, [1, 3, 3, 0], 3, 2, False, True).double()
    p = torch.tensor([0.3, 0.3, 0.1, 0.3], dtype=torch.float64)
    x = sample_inputs(torch.Generator().manual_seed(6), p, 32, 10, 2, "uniform").double()
    assert compare(net, x, p, torch.tensor([1.0, 0.4], dtype=torch.float64)) < 1e-10


def test_a_probability_per_model_or_a_refusal() -> None:
    # a p shorter than the models would drop the last ones from the loss
    net = make_net("linear", [3, 3, 1], 2, 1, True, False)
    p = torch.full((3,), 0.1)
    x = sample_inputs(torch.Generator().manual_seed(7), p, 16, 8, 1, "uniform")
    with pytest.raises(ValueError, match="zip"):
        sampled_loss(net, x, p[:2], torch.ones(1))


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_fast_path_in_float32_at_the_training_setting(model: str) -> None:
    # the benchmark's setting (T = 20, k = 3, N_h = 2, S = 0.9) at a smaller batch: float tolerance
    net = make_net(model, [3] * 8, 2, 1, True, False)
    p = torch.full((8,), 0.1)
    x = sample_inputs(torch.Generator().manual_seed(1), p, 256, 20, 1, "uniform")
    assert compare(net, x, p, torch.ones(1)) < 2e-6  # measured: ≤ 3.5e-7


@pytest.mark.parametrize("model", ["linear", "ssm"])
def test_wide_inputs_take_the_time_loop_and_agree(model: str, monkeypatch) -> None:
    inputs = 3
    seq_len = CONV_MAX_SIDE // inputs + 2  # T * N_x > CONV_MAX_SIDE: no Toeplitz matrix
    net = make_net(model, [2, 2], 3, inputs, False, True).double()
    p = torch.tensor([0.05, 0.05], dtype=torch.float64)
    x = sample_inputs(torch.Generator().manual_seed(2), p, 8, seq_len, inputs, "uniform").double()
    loops = []
    time_loop = losses.recurrent_loss

    def counted(*args):
        loops.append(1)
        return time_loop(*args)

    monkeypatch.setattr(losses, "recurrent_loss", counted)
    assert compare(net, x, p, torch.tensor([1.0, 0.7, 0.49], dtype=torch.float64)) < 1e-10
    assert loops == [1]  # no (B·T × T·N_x) Toeplitz or Gram matrix built


def test_lagged_gram_is_the_gram_of_the_toeplitz_matrix() -> None:
    x = torch.rand(7, 2, 5, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    # row (b, t), column (q, j) holds x_{t-s, j, b} with s = T-1-q, zero before the sequence starts
    toeplitz = lagged_inputs(x, False).view(5, 7, 7, 2)
    assert toeplitz[3, 4, 7 - 1 - 1, 1] == x[4 - 1, 1, 3]
    assert toeplitz[3, 4, 7 - 1 - 5, 0] == 0
    # the Gram matrix orders lags s = 0, 1, …: reverse the columns' lags
    lag_order = torch.arange(7 * 2).view(7, 2).flip(0).reshape(-1)
    for bias in (False, True):
        lagged = lagged_inputs(x, bias)  # (B·T, side)
        assert lagged.shape == (5 * 7, 7 * 2 + bias)
        cols = torch.cat([lag_order, torch.tensor([14])]) if bias else lag_order
        lagged = lagged[:, cols]
        torch.testing.assert_close(lagged_gram(x, bias), lagged.T @ lagged / 5)
        if bias:
            assert bool((lagged[:, -1] == 1).all())


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_training_follows_the_reference_trajectory(model: str, monkeypatch) -> None:
    # the same run trained with the reference loss: the same weights after 30 steps
    cfg = RunConfig(model=model, steps=30, seeds=3, batch=64, snapshot_every=30, curriculum=0.5)
    fast = list(train(cfg))[-1]

    def reference(net, x, p, weights):  # noqa: ARG001 - the signature of sampled_loss
        return reference_loss(net, x, weights)

    monkeypatch.setattr(train_module, "sampled_loss", reference)
    ref = list(train(cfg))[-1]
    for name in ("W_x", "W_h", "W_y", "loss"):
        torch.testing.assert_close(
            torch.as_tensor(getattr(fast, name)),
            torch.as_tensor(getattr(ref, name)),
            rtol=1e-4,
            atol=1e-5,
        )


# ---- the expected objective ------------------------------------------------------------------


def theory_expected(cfg: RunConfig, snap) -> np.ndarray:
    """tempsup.theory.closed_form's closed form for a snapshot's weights, per model."""
    mu, nu = theory.input_moments(cfg.input_dist)
    w_s = geometry.feature_directions(snap.W_x, snap.W_h, cfg.seq_len, False)
    A = geometry.projections(snap.W_y, w_s)  # (M, T, N_x, N_x)
    imp = np.array(importance_weights(cfg))
    b_y = snap.b_y if cfg.bias else None
    return theory.expected_loss(A, cfg.k, cfg.p, mu, nu, cfg.seq_len, imp, b_y)


@pytest.mark.parametrize(
    "changes",
    [{}, {"bias": True, "tied": False}, {"inputs": 3, "hidden": 3, "input_dist": "exponential"}],
)
def test_expected_objective_is_theorys_closed_form_at_init(changes: dict) -> None:
    cfg = RunConfig(
        model="linear", objective="expected", steps=1, snapshot_every=1, seeds=3, **changes
    )
    first = next(iter(train(cfg)))
    np.testing.assert_allclose(first.loss, theory_expected(cfg, first), rtol=1e-5)


def test_expected_objective_lowers_the_expected_loss_without_noise() -> None:
    cfg = RunConfig(
        model="linear", objective="expected", steps=300, snapshot_every=10, seeds=4, lr=0.01
    )

    def curves(config: RunConfig) -> tuple[np.ndarray, np.ndarray]:
        frames = list(train(config))
        expected = np.stack([theory_expected(config, f) for f in frames])  # (F, M)
        return expected, np.stack([f.loss for f in frames])

    expected, reported = curves(cfg)
    assert bool((expected[-1] < 0.8 * expected[0]).all())
    # E[L] falls frame after frame, but for Adam's momentum (< 0.1 %)
    assert (np.diff(expected, axis=0) / expected[:-1]).max() < 1e-3
    # no noise: a frame's loss, the mean of E[L] over its steps, lies between the E[L] of
    # the weights before and after them
    assert (reported[1:] >= expected[1:] * (1 - 1e-3)).all()
    assert (reported[1:] <= expected[:-1] * (1 + 1e-3)).all()
    # on samples, the measured loss strays from that band with the batches
    expected, reported = curves(cfg.replace(objective="sampled"))
    assert bool((expected[-1] < 0.8 * expected[0]).all())
    band = (reported[1:] >= expected[1:] * (1 - 1e-3)) & (
        reported[1:] <= expected[:-1] * (1 + 1e-3)
    )
    assert not band.all()


def test_expected_loss_of_a_sweep_is_theorys_closed_form_per_model() -> None:
    # models that differ in p and k, groups of one and a group of two apart, a non-zero bias,
    # vector input with importance: each model's E[L] is tempsup.theory.closed_form's,
    # to float64 rounding
    ks, ps, seq_len = [1, 3, 3, 3, 0], [0.3, 0.3, 0.1, 0.3, 0.3], 6
    net = make_net("linear", ks, 3, 3, False, True).double()
    weights = torch.tensor([1.0, 0.7, 0.49], dtype=torch.float64)
    fast = expected_loss(net, torch.tensor(ps, dtype=torch.float64), weights, seq_len, "uniform")
    assert fast.dtype == torch.float64
    mu, nu = theory.input_moments("uniform")
    kernel = net.kernel(seq_len).detach().numpy()  # (M, T, N_x, N_x)
    b_y = net.b_y.detach().numpy()
    want = [
        theory.expected_loss(kernel[m], ks[m], ps[m], mu, nu, seq_len, weights.numpy(), b_y[m])
        for m in range(len(ks))
    ]
    np.testing.assert_allclose(fast.detach().numpy(), want, rtol=1e-12)


def test_expected_loss_of_an_ssm_sweep_is_the_second_order_expansion_per_model() -> None:
    # the SSM's objective per (p, k) group, back in model order: tempsup.theory.relu_terms' numpy
    # expansion with its closed-form pair moments (tests/test_expected_objective.py: one group)
    ks, ps, seq_len = [1, 3, 3, 3, 0], [0.3, 0.3, 0.1, 0.3, 0.3], 6
    net32 = make_net("ssm", ks, 3, 2, False, False)  # float32, as the trainer builds it
    net = make_net("ssm", ks, 3, 2, False, False).double()
    weights = torch.tensor([1.0, 0.7], dtype=torch.float64)
    for dist in ("uniform", "exponential"):
        fast = expected_loss(net, torch.tensor(ps, dtype=torch.float64), weights, seq_len, dist)
        assert fast.shape == (len(ks),) and fast.dtype == torch.float64
        w_x, w_h, w_y = (w.detach().numpy() for w in (net.W_x, net.W_h, net.readout()))
        want = [
            relu_terms.analyse(
                w_x[m], w_h[m], w_y[m], None, ks[m], ps[m], dist, seq_len, False, weights.numpy()
            )[0].sum()
            for m in range(len(ks))
        ]
        np.testing.assert_allclose(fast.detach().numpy(), want, rtol=1e-4)  # measured: 1.5e-5
        # a float32 model gets its objective in float32 (not float64 from numpy's nodes)
        fast32 = expected_loss(net32, torch.tensor(ps), weights.float(), seq_len, dist)
        assert fast32.dtype == torch.float32
        torch.testing.assert_close(fast32.double(), fast, rtol=1e-5, atol=0)


def test_expected_loss_refuses_the_relu_rnn_and_an_ssm_with_a_bias() -> None:
    p, weights = torch.tensor([0.1]), torch.ones(1)
    with pytest.raises(TempsupError, match=r"needs model 'linear' or 'ssm', got model 'rnn'"):
        expected_loss(make_net("rnn", [3], 2, 1, True, False), p, weights, 6, "uniform")
    with pytest.raises(TempsupError, match="for the SSM needs no readout bias"):
        expected_loss(make_net("ssm", [3], 2, 1, False, True), p, weights, 6, "uniform")


def test_expected_objective_is_refused_for_the_relu_rnn() -> None:
    # the SSM's second-order objective: tests/test_expected_objective.py
    with pytest.raises(TempsupError, match=r"objective: 'expected' needs model 'linear'"):
        RunConfig(model="rnn", objective="expected")


def test_the_default_objective_keeps_every_key() -> None:
    # a config written before the field existed has the same key as one that names the default
    cfg = RunConfig(model="rnn", sparsity=0.97)
    payload = cfg._key_payload()
    assert "objective" not in payload
    assert RunConfig.from_dict({**cfg.to_dict(), "objective": "sampled"}).key == cfg.key
    assert cfg.replace(model="linear", objective="expected").key != cfg.replace(model="linear").key
