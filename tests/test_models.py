"""The batched models and the training loss (tempsup.model.recurrences, train.SquaredError).

Checks that the two forward paths compute the same function, that they compute
the function of science.md §1 (against a hand-written simulation), that the
fused loss and its gradient are right, and that the measured loss agrees with
the exact expected loss of `run.derived` for the linear model, on random
weights and on trained ones (science.md §1b).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tempsup.io.run import derived
from tempsup.model.config import RunConfig, importance_weights
from tempsup.model.data import delayed_targets, sample_inputs
from tempsup.model.recurrences import CONV_MAX_SIDE, BatchedRNN
from tempsup.theory import geometry
from tempsup.training.losses import SquaredError
from tempsup.training.trainer import model_seeds, train


def make(
    model: str,
    ks: list[int],
    hidden: int = 3,
    inputs: int = 1,
    tied: bool = True,
    bias: bool = False,
    seed: int = 0,
    double: bool = True,
) -> BatchedRNN:
    m = BatchedRNN(
        model,
        len(ks),
        hidden,
        inputs,
        torch.tensor(ks),
        tied,
        bias,
        [seed * 100 + i for i in range(len(ks))],
    )
    if bias:
        with torch.no_grad():
            g = torch.Generator().manual_seed(seed + 1)
            m.b_y.copy_(torch.randn(m.b_y.shape, generator=g) * 0.3)
    return m.double() if double else m


def rand_x(shape: tuple[int, ...], seed: int = 0, nonneg: bool = False) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    return x.abs() if nonneg else x


# ---- the two forward paths -------------------------------------------------------------


@pytest.mark.parametrize("model", ["linear", "ssm"])
@pytest.mark.parametrize("inputs", [1, 3])
@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("shared_x", [True, False])
def test_convolution_equals_time_loop(
    model: str, inputs: int, tied: bool, bias: bool, shared_x: bool
) -> None:
    ks = [0, 2, 5]  # per-model delays (a k sweep in one batch)
    net = make(model, ks, hidden=3, inputs=inputs, tied=tied, bias=bias)
    T, B = 9, 5
    x = rand_x((1 if shared_x else len(ks), T, inputs, B))
    with torch.no_grad():
        conv, loop = net._convolve(x), net._recur(x)
        pre = net.preactivation(x)
    assert conv.shape == loop.shape == (len(ks), T, inputs, B)
    torch.testing.assert_close(conv, loop, rtol=1e-10, atol=1e-10)
    # T * N_x is small: preactivation takes the convolution path, plus the bias
    torch.testing.assert_close(pre, conv + net.bias().view(len(ks), 1, inputs, 1))


def test_long_sequences_take_the_loop_and_agree() -> None:
    net = make("ssm", [1, 4], hidden=2, inputs=3, tied=False, bias=True)
    T = CONV_MAX_SIDE // 3 + 5  # T * N_x > CONV_MAX_SIDE
    x = rand_x((1, T, 3, 2))
    with torch.no_grad():
        pre = net.preactivation(x)
        loop = net._recur(x) + net.bias().view(2, 1, 3, 1)
        conv = net._convolve(x) + net.bias().view(2, 1, 3, 1)
    torch.testing.assert_close(pre, loop, rtol=0, atol=0)
    torch.testing.assert_close(conv, loop, rtol=1e-9, atol=1e-9)


def test_convolution_gradients_equal_loop_gradients() -> None:
    x = rand_x((1, 8, 2, 4))

    def grads(path: str) -> list[torch.Tensor]:
        net = make("linear", [1, 3], hidden=2, inputs=2, tied=True, bias=True)
        z = getattr(net, path)(x)
        (z**2).sum().backward()
        return [p.grad for p in (net.W_x, net.W_h)]

    for a, b in zip(grads("_convolve"), grads("_recur"), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)


# ---- directions and the tied readout ------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 20])
@pytest.mark.parametrize("inputs", [1, 3])
def test_doubling_equals_repeated_matmul_and_geometry(n: int, inputs: int) -> None:
    net = make("linear", [0, 1], hidden=3, inputs=inputs)
    with torch.no_grad():
        got = net.directions(n).detach()
    assert got.shape == (2, n, 3, inputs)
    w = net.W_x.detach()
    for s in range(n):
        torch.testing.assert_close(got[:, s], w, rtol=1e-10, atol=1e-12)
        w = net.W_h.detach() @ w
    ref = geometry.feature_directions(net.W_x.detach().numpy(), net.W_h.detach().numpy(), n, False)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_rnn_directions_are_the_relu_impulse_response() -> None:
    net = make("rnn", [0, 2, 4], hidden=4, inputs=2)
    with torch.no_grad():
        got = net.directions(7)
    W_x, W_h = net.W_x.detach(), net.W_h.detach()
    w = W_x
    for s in range(7):
        torch.testing.assert_close(got[:, s], w)
        w = W_h @ torch.relu(w)
    ref = geometry.feature_directions(W_x.numpy(), W_h.numpy(), 7, True)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_tied_readout_is_w_k_per_model(model: str) -> None:
    ks = [0, 1, 3, 6]
    net = make(model, ks, hidden=3, inputs=2, tied=True)
    with torch.no_grad():
        readout = net.readout()
        W_x, W_h = net.W_x, net.W_h
    act = torch.relu if model == "rnn" else (lambda v: v)
    for m, k in enumerate(ks):
        w = W_x[m]
        for _ in range(k):
            w = W_h[m] @ act(w)
        torch.testing.assert_close(readout[m], w)
    assert net.W_y is None  # not a free parameter
    assert {"W_x", "W_h"} == {n for n, _ in net.named_parameters()}


def test_rnn_lone_input_sits_on_u_times_w_s() -> None:
    """Positive homogeneity: a single input u >= 0 at t = 0 gives h_s = u w_s exactly."""
    net = make("rnn", [2], hidden=3, inputs=1, tied=False)
    u, T = 1.7, 8
    x = torch.zeros(1, T, 1, 1, dtype=torch.float64)
    x[0, 0, 0, 0] = u
    with torch.no_grad():
        z = net._recur(x)[0, :, 0, 0]
        a = (net.W_y[0].T @ net.directions(T)[0]).squeeze()  # (T,) = w_yᵀ w_s
    torch.testing.assert_close(z, u * a)


# ---- a plain simulation of science.md §1 -------------------------------------------------


def simulate(W_x, W_h, W_y, b, x, relu_hidden: bool, relu_readout: bool) -> np.ndarray:
    """h_t = W_x x_t + W_h σ_h(h_{t-1}), h_0 = 0; ŷ_t = σ_y(W_yᵀ h_t + b). x: (T, N_x, B)."""
    sig_h = (lambda v: np.maximum(v, 0)) if relu_hidden else (lambda v: v)
    h = np.zeros((W_h.shape[0], x.shape[-1]))
    out = []
    for t in range(x.shape[0]):
        h = W_x @ x[t] + W_h @ sig_h(h)
        z = W_y.T @ h + b[:, None]
        out.append(np.maximum(z, 0) if relu_readout else z)
    return np.stack(out)  # (T, N_x, B)


def hand_readout(W_x, W_h, k: int, relu_hidden: bool) -> np.ndarray:
    w = W_x
    for _ in range(k):
        w = W_h @ (np.maximum(w, 0) if relu_hidden else w)
    return w


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
@pytest.mark.parametrize(
    ("inputs", "tied", "bias"), [(1, True, False), (3, False, True), (2, True, True)]
)
def test_forward_matches_plain_simulation(model: str, inputs: int, tied: bool, bias: bool) -> None:
    k, T, B = 2, 10, 6
    net = make(model, [k], hidden=3, inputs=inputs, tied=tied, bias=bias, seed=3)
    x = rand_x((1, T, inputs, B), seed=4, nonneg=True)
    x = x * (rand_x(x.shape, seed=5) > 0)  # sparse, non-negative
    with torch.no_grad():
        got = net(x)[0].numpy()
    W_x, W_h = net.W_x[0].detach().numpy(), net.W_h[0].detach().numpy()
    relu_h = model == "rnn"
    W_y = hand_readout(W_x, W_h, k, relu_h) if tied else net.W_y[0].detach().numpy()
    b = net.bias()[0].detach().numpy()
    want = simulate(W_x, W_h, W_y, b, x[0].numpy(), relu_h, model != "linear")
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_initialisation_follows_the_documented_recipe() -> None:
    """W_x ~ N(0, 1), W_h ~ N(0, 0.25/N_h), free W_y ~ N(0, 1/N_h), b_y = 0; seeds differ."""
    net = BatchedRNN(
        "linear", 200, 8, 4, torch.zeros(200, dtype=torch.long), False, True, list(range(200))
    )
    assert net.W_x.std().item() == pytest.approx(1.0, rel=0.05)
    assert net.W_h.std().item() == pytest.approx(0.5 / math.sqrt(8), rel=0.05)
    assert net.W_y.std().item() == pytest.approx(1 / math.sqrt(8), rel=0.05)
    assert bool((net.b_y == 0).all())
    assert not torch.equal(net.W_x[0], net.W_x[1])
    again = BatchedRNN("linear", 2, 8, 4, torch.zeros(2, dtype=torch.long), False, True, [0, 1])
    assert torch.equal(again.W_h, net.W_h[:2])  # init depends on the model's own seed only


# ---- the training loss ---------------------------------------------------------------------


def plain_loss(z, y, weights, relu: bool) -> torch.Tensor:
    y_hat = torch.relu(z) if relu else z
    sq = (y - y_hat) ** 2
    if weights is not None:
        sq = sq * weights
    return sq.sum(dim=(1, 2, 3)) / z.shape[-1]


def loss_inputs(relu: bool, n_x: int = 2, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(2, 3, n_x, 4, generator=g, dtype=torch.float64)
    if relu:  # keep away from the kink, where finite differences are meaningless
        z = z + 0.2 * z.sign()
    y = torch.rand(1, 3, n_x, 4, generator=g, dtype=torch.float64)
    return z.requires_grad_(True), y


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_squared_error_gradcheck(relu: bool, weighted: bool) -> None:
    z, y = loss_inputs(relu)
    w = torch.tensor([1.0, 0.7], dtype=torch.float64).view(1, 1, -1, 1) if weighted else None
    assert torch.autograd.gradcheck(lambda zz: SquaredError.apply(zz, y, w, relu), (z,))


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_squared_error_equals_the_plain_formula(relu: bool, weighted: bool) -> None:
    z, y = loss_inputs(relu, seed=1)
    w = torch.tensor([1.0, 0.7], dtype=torch.float64).view(1, 1, -1, 1) if weighted else None
    fused = SquaredError.apply(z, y, w, relu)
    plain = plain_loss(z, y, w, relu)
    assert fused.shape == (2,)
    torch.testing.assert_close(fused, plain)
    (g_fused,) = torch.autograd.grad(fused.sum() * 3.0, z)
    (g_plain,) = torch.autograd.grad(plain.sum() * 3.0, z)
    torch.testing.assert_close(g_fused, g_plain)
    # per model: the gradient of model m's loss touches only model m
    (g0,) = torch.autograd.grad(SquaredError.apply(z, y, w, relu)[0], z)
    assert bool((g0[1] == 0).all())


def test_squared_error_by_hand() -> None:
    # one model, T = 2, N_x = 1, B = 2: errors (1, -2) and (0.5, 0): mean over batch of Σ_t
    z = torch.tensor([[[[1.0, -2.0]], [[0.5, 0.0]]]], dtype=torch.float64)
    y = torch.zeros_like(z)
    assert SquaredError.apply(z, y, None, False).item() == pytest.approx((1 + 4 + 0.25) / 2)
    assert SquaredError.apply(z, y, None, True).item() == pytest.approx((1 + 0.25) / 2)


# ---- measured loss vs the exact expected loss (linear model) ----------------------------------


def monte_carlo(config: RunConfig, net: BatchedRNN, batches: int, seed: int = 0):
    """Per-model mean and standard error of the training loss over fresh batches,
    drawn and scored exactly as train() does."""
    gen = torch.Generator().manual_seed(seed)
    k = net.k
    p = torch.full((net.n_models,), config.p)
    w = torch.tensor(importance_weights(config)).view(1, 1, -1, 1) if config.inputs > 1 else None
    losses = []
    with torch.no_grad():
        for _ in range(batches):
            x = sample_inputs(
                gen, p, config.batch, config.seq_len, config.inputs, config.input_dist
            )
            y = delayed_targets(x, k, net.n_models)
            losses.append(SquaredError.apply(net.preactivation(x), y, w, net.relu_readout))
    losses = torch.stack(losses).double()  # (batches, M)
    return losses.mean(0).numpy(), (losses.std(0) / math.sqrt(batches)).numpy()


def expected(config: RunConfig, net: BatchedRNN) -> np.ndarray:
    s = {n: v.double().numpy() for n, v in net.state().items()}
    d = derived(config, config.steps, s["W_x"], s["W_h"], s["W_y"], s["b_y"])
    assert d["terms"].shape == (net.n_models, 4)
    np.testing.assert_allclose(d["terms"].sum(-1), d["expected_loss"], rtol=1e-9)  # exact
    return d["expected_loss"]


def model_of(config: RunConfig) -> BatchedRNN:
    """The config's models at their initial weights, as `tempsup.training.trainer` builds them."""
    k = torch.full((config.seeds,), config.k)
    return BatchedRNN(
        config.model, config.seeds, config.hidden, config.inputs, k, config.tied, config.bias,
        model_seeds(config),
    )  # fmt: skip


LINEAR_CASES = [
    dict(sparsity=0.7),
    dict(sparsity=0.2, bias=True, tied=False, input_dist="exponential"),
    dict(sparsity=0.9, inputs=3, hidden=3, input_dist="constant", k=2),
    dict(sparsity=0.5, inputs=2, tied=False, bias=True, k=0),
]


@pytest.mark.parametrize(
    "changes", LINEAR_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items())
)
def test_measured_loss_matches_exact_expected_loss_random_weights(changes: dict) -> None:
    config = RunConfig(model="linear", batch=4096, seeds=4, **changes)
    net = model_of(config)
    if config.bias:
        with torch.no_grad():
            net.b_y.copy_(
                torch.linspace(-0.3, 0.2, config.seeds * config.inputs).view(net.b_y.shape)
            )
    mean, se = monte_carlo(config, net, batches=40)
    want = expected(config, net)
    z = (mean - want) / se
    assert np.all(np.abs(z) < 5), (mean, want, se)


def test_measured_loss_matches_exact_expected_loss_trained_weights() -> None:
    config = RunConfig(
        model="linear",
        sparsity=0.7,
        steps=150,
        snapshot_every=150,
        seeds=3,
        batch=256,
        tied=False,
        bias=True,
    )
    *_, last = train(config)
    assert last.step == 150
    net = model_of(config)
    with torch.no_grad():
        for name in ("W_x", "W_h", "W_y", "b_y"):
            getattr(net, name).copy_(torch.as_tensor(getattr(last, name)))
    mc = config.replace(batch=4096)
    mean, se = monte_carlo(mc, net, batches=40, seed=11)
    want = expected(config, net)
    assert np.all(np.abs((mean - want) / se) < 5), (mean, want, se)
    # and training lowered the exact loss below that of the initial weights
    first = next(iter(train(config)))
    init_terms = derived(config, 0, first.W_x, first.W_h, first.W_y, first.b_y)["expected_loss"]
    assert np.all(want < init_terms)


@pytest.mark.parametrize("tied", [True, False])
def test_init_depends_on_the_seeds_only_not_on_torchs_global_generator(tied: bool) -> None:
    states = []
    for global_seed in (1, 2):
        with torch.random.fork_rng():  # the global generator is put back afterwards
            torch.manual_seed(global_seed)  # whatever ran before must not change an init
            states.append(make("rnn", [1, 2], tied=tied, double=False).state())
    for name in ("W_x", "W_h", "W_y"):
        torch.testing.assert_close(states[0][name], states[1][name], rtol=0, atol=0)


@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("ks", [[3, 3], [1, 4], [5, 5]])
@pytest.mark.parametrize("n_x", [1, 3])
def test_kernel_backward_gradcheck(tied: bool, ks: list[int], n_x: int) -> None:
    """The kernel's hand-written backward (doubling suffix sum) against finite differences:
    tied and free readouts, one delay and mixed delays, kernels shorter than k + 1."""
    from tempsup.model.recurrences import _Kernel

    gen = torch.Generator().manual_seed(sum(ks) + n_x)
    m, n_h = 2, 3
    w_x = torch.randn(m, n_h, n_x, generator=gen, dtype=torch.float64).requires_grad_()
    w_h = (0.4 * torch.randn(m, n_h, n_h, generator=gen, dtype=torch.float64)).requires_grad_()
    w_y = torch.randn(m, n_h, n_x, generator=gen, dtype=torch.float64).requires_grad_()
    k = torch.tensor(ks)
    for n in (4, 7):
        if tied:
            assert torch.autograd.gradcheck(
                lambda a, b, n=n: _Kernel.apply(a, b, None, k, n), (w_x, w_h)
            )
        else:
            assert torch.autograd.gradcheck(
                lambda a, b, c, n=n: _Kernel.apply(a, b, c, k, n), (w_x, w_h, w_y)
            )
