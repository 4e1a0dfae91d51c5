"""The training loss (tempsup.training.losses) against independent computations, piece by piece.

tests/test_fast_paths.py checks every fast path against the model's own time loop;
these check the pieces against numbers worked out by hand, closed forms, brute-force
sums and float64 gradient checks, so that a change to any one of them shows
(mutation testing: scripts/mutation losses).
"""

from __future__ import annotations

import pytest
import torch

from tempsup.errors import TempsupError
from tempsup.model.data import delayed_targets, sample_inputs
from tempsup.model.recurrences import CONV_MAX_SIDE, BatchedRNN
from tempsup.training import fused, losses
from tempsup.training.fused.build import BuildError, load
from tempsup.training.losses import expected_lagged_gram, expected_loss, sampled_loss

TILED = fused.LIBRARY is not None  # the compiled loop is built: its register-tiled case runs


def test_expected_lagged_gram_by_hand() -> None:
    """T = 2, N_x = 1: lags 0 and 1 both exist at one step, lag 0 alone at two."""
    p, mu, nu = 0.3, 0.5, 0.4
    got = expected_lagged_gram(p, mu, nu, 2, 1, bias=True)
    one, two = p * nu, p * p * mu * mu  # E[x²], E[x x'] of two independent inputs
    want = torch.tensor(
        [[2 * one, two, 2 * p * mu], [two, one, p * mu], [2 * p * mu, p * mu, 2.0]],
        dtype=torch.float64,
    )
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(
        expected_lagged_gram(p, mu, nu, 2, 1, bias=False), want[:2, :2], rtol=1e-12, atol=0
    )


def own_loss(net: BatchedRNN, x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Every model's loss on inputs x (1 or M, T, N_x, B), by its own time loop: (M,)."""
    y = delayed_targets(x, net.k, net.n_models)
    z = net._recur(x) + net.bias().view(net.n_models, 1, -1, 1)
    y_hat = torch.relu(z) if net.relu_readout else z
    return (((y_hat - y) ** 2) * weights.view(1, 1, -1, 1)).sum(dim=(1, 2, 3)) / x.shape[-1]


def loops_taken(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the calls of the time loop (`recurrent_loss`) from here on."""
    calls: list[int] = []
    time_loop = losses.recurrent_loss
    monkeypatch.setattr(losses, "recurrent_loss", lambda *a: calls.append(1) or time_loop(*a))
    return calls


@pytest.mark.parametrize("streams", [[0, 1, 0, 2, 1], [1, 0]])
@pytest.mark.parametrize(("model", "bias"), [("linear", True), ("ssm", False), ("rnn", True)])
def test_models_of_other_data_streams_each_get_their_own_streams_loss(
    model: str, bias: bool, streams: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of different base seeds trained as one batch share p and k but not their data:
    each model's loss and gradient are those of its own stream's inputs, in model order
    (streams interleaved; a stream of a single model; two models, two streams)."""
    stream = torch.tensor(streams)
    m, n_streams, seq_len, n_x, batch = len(streams), max(streams) + 1, 8, 2, 24
    net = BatchedRNN(model, m, 16, n_x, torch.full((m,), 2), False, bias, list(range(m)))
    net = net.double()
    if bias:
        with torch.no_grad():
            net.b_y.copy_(torch.linspace(-0.3, 0.4, m * n_x).view(m, n_x))
    p = torch.full((m,), 0.3, dtype=torch.float64)
    weights = torch.tensor([1.0, 0.6], dtype=torch.float64)
    draws = [  # one draw per stream, (1, T, N_x, B): every model of a stream sees it
        sample_inputs(
            torch.Generator().manual_seed(20 + s), p[:1], batch, seq_len, n_x, "uniform"
        ).double()
        for s in range(n_streams)
    ]
    x = torch.cat([draws[s] for s in streams])  # (M, T, N_x, B)
    loops = loops_taken(monkeypatch)
    got = sampled_loss(net, x, p, weights, stream)
    assert loops == ([1] if model == "rnn" else [])  # the SSM takes its Toeplitz path per group
    alone = [own_loss(net, draw, weights) for draw in draws]  # every model on each stream
    want = torch.stack([alone[s][i] for i, s in enumerate(streams)])
    others = torch.stack([alone[(s + 1) % n_streams][i] for i, s in enumerate(streams)])
    assert ((others - want).abs() > 1e-3 * want).all()  # another stream's loss is another
    torch.testing.assert_close(got, want, rtol=1e-10, atol=0)
    coef = torch.arange(1.0, m + 1, dtype=torch.float64)  # a model's loss reaches its weights only
    params = list(net.parameters())
    for a, b in zip(
        torch.autograd.grad((got * coef).sum(), params),
        torch.autograd.grad((want * coef).sum(), params),
        strict=True,
    ):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    ("model", "n_x", "seq_len", "per_group", "groups", "loop"),
    [
        # scalar input, N_h = 2: the compiled loop's register-tiled case, whatever the groups
        ("ssm", 1, 20, 8, 1, TILED),
        ("ssm", 1, 20, 16, 2, TILED),
        ("ssm", 2, 5, 10, 1, False),  # one group: its Toeplitz matrix is built once anyway
        ("ssm", 2, 5, 10, 2, True),  # N_x = 2: 10·2·6 <= 6·5·4
        ("ssm", 2, 5, 11, 2, False),
        ("linear", 1, CONV_MAX_SIDE, 2, 1, False),  # T·N_x = CONV_MAX_SIDE: still a Gram matrix
    ],
)
def test_each_model_takes_the_path_its_cost_rule_names(
    model: str,
    n_x: int,
    seq_len: int,
    per_group: int,
    groups: int,
    loop: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An SSM takes the time loop where the compiled loop has its register-tiled case
    (`fused.register_tiled`), or where its models see several inputs and the loop costs
    less: per model N_h (N_h + 2 N_x) against 6 T N_x² per group (`_recurrence_is_cheaper`)."""
    m = per_group * groups
    net = BatchedRNN(model, m, 2, n_x, torch.full((m,), 1), False, False, list(range(m)))
    net = net.double()
    p = torch.tensor([0.2 + 0.1 * (i // per_group) for i in range(m)], dtype=torch.float64)
    x = sample_inputs(torch.Generator().manual_seed(3), p, 4, seq_len, n_x, "uniform").double()
    weights = torch.tensor([1.0, 0.6][:n_x], dtype=torch.float64)
    calls = loops_taken(monkeypatch)
    got = sampled_loss(net, x, p, weights)
    assert calls == ([1] if loop else [])
    torch.testing.assert_close(got, own_loss(net, x, weights), rtol=1e-10, atol=1e-12)


def test_the_expected_loss_of_an_ssm_with_a_bias_is_refused() -> None:
    net = BatchedRNN("ssm", 2, 2, 1, torch.tensor([1, 1]), True, True, [0, 1])
    with pytest.raises(TempsupError) as refusal:
        expected_loss(net, torch.full((2,), 0.1), torch.ones(1), 6, "uniform")
    assert str(refusal.value) == "objective: 'expected' for the SSM needs no readout bias"


@pytest.mark.parametrize(("model", "bias"), [("rnn", True), ("ssm", False)])
def test_the_compiled_loop_gets_the_models_own_weights_and_flags(
    model: str, bias: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`recurrent_loss` hands a small model to the compiled loop
    (tempsup.training.fused) where it is
    built. Mutation runs switch the library off (TEMPSUP_FUSED=0) so that the PyTorch loop
    runs; this test loads it itself to check what the loss hands over."""
    try:
        library = load()
    except BuildError:
        pytest.skip("no compiled time loop here")
    monkeypatch.setattr(fused, "LIBRARY", library)
    calls: list[int] = []
    compiled = fused.recurrent_loss
    monkeypatch.setattr(fused, "recurrent_loss", lambda *a: calls.append(1) or compiled(*a))
    net = BatchedRNN(model, 3, 3, 2, torch.tensor([1, 2, 2]), False, bias, [0, 1, 2]).double()
    if bias:
        with torch.no_grad():
            net.b_y.copy_(torch.linspace(-0.3, 0.4, 6).view(3, 2))
    p = torch.full((3,), 0.3, dtype=torch.float64)
    x = sample_inputs(torch.Generator().manual_seed(4), p, 16, 6, 2, "uniform").double()
    weights = torch.tensor([1.0, 0.6], dtype=torch.float64)
    got = losses.recurrent_loss(net, x, weights)
    assert calls == [1]
    want = own_loss(net, x, weights)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=0)
    params = list(net.parameters())
    for a, b in zip(
        torch.autograd.grad(got.sum(), params), torch.autograd.grad(want.sum(), params), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)
