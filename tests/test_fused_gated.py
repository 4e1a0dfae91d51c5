"""The compiled GRU/LSTM loss computes PyTorch's: the loss and every gradient."""

from __future__ import annotations

import pytest
import torch

from tempsup.model import gated
from tempsup.model.gated import GatedRNN, gated_loss
from tempsup.training.fused import LIBRARY
from tempsup.training.fused import gated as fused_gated

pytestmark = pytest.mark.skipif(LIBRARY is None, reason="no C compiler: PyTorch's loop only")


def _losses_and_grads(
    model: str, fused: bool, x: torch.Tensor, target: torch.Tensor | None, **shape: object
) -> list[torch.Tensor]:
    m, hidden, inputs = shape["m"], shape["hidden"], shape["inputs"]
    net = GatedRNN(
        model, m, hidden, inputs, torch.full((m,), 3), shape["tied"], shape["bias"],
        list(range(m)), seq_len=x.shape[1], outputs=shape.get("outputs"),
        fused_loss=fused_gated.loss if fused else None,
    )  # fmt: skip
    with torch.no_grad():  # biases away from torch's small init: every gate does work
        for p in net.parameters():
            p.mul_(2.0)
    n_out = shape.get("outputs") or inputs
    weights = torch.linspace(1.0, 0.5, n_out)
    loss = gated_loss(net, x, weights, target)
    (loss * torch.arange(1.0, m + 1)).sum().backward()  # a different upstream per model
    return [loss.detach(), *(p.grad for p in net.parameters())]


@pytest.mark.parametrize("model", ["gru", "lstm"])
@pytest.mark.parametrize(
    ("hidden", "inputs", "batch", "tied", "bias"),
    [(2, 1, 1024, False, False), (3, 2, 37, False, True), (1, 1, 5, True, True),
     (2, 1, 70, True, False)],
)  # fmt: skip
def test_loss_and_gradients_equal_pytorchs_loop(
    model: str, hidden: int, inputs: int, batch: int, tied: bool, bias: bool
) -> None:
    g = torch.Generator().manual_seed(hidden * 100 + batch)
    x = (torch.rand(1, 9, inputs, batch, generator=g) < 0.3) * torch.rand(1, 9, inputs, batch)
    shape = dict(m=3, hidden=hidden, inputs=inputs, tied=tied, bias=bias)
    fused, plain = (_losses_and_grads(model, f, x, None, **shape) for f in (True, False))
    for got, want in zip(fused, plain, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("model", ["gru", "lstm"])
def test_a_tasks_own_target_and_one_input_per_model(model: str) -> None:
    """Inputs and targets per model (M, …), two outputs per input: as the tasks give them."""
    g = torch.Generator().manual_seed(7)
    x = (torch.rand(2, 6, 1, 40, generator=g) < 0.4).float()
    target = torch.rand(2, 6, 2, 40, generator=g)
    shape = dict(m=2, hidden=2, inputs=1, tied=False, bias=True, outputs=2)
    fused, plain = (_losses_and_grads(model, f, x, target, **shape) for f in (True, False))
    for got, want in zip(fused, plain, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_what_the_loop_does_not_take_falls_back() -> None:
    net = GatedRNN("lru", 1, 2, 1, torch.tensor([3]), False, False, [0])
    x = torch.zeros(1, 5, 1, 4)
    assert fused_gated.loss(net, x, x, torch.ones(1)) is None
    gru = GatedRNN("gru", 1, 2, 1, torch.tensor([3]), False, False, [0]).double()
    assert fused_gated.loss(gru, x.double(), x.double(), torch.ones(1)) is None


def test_the_lrus_real_form_is_its_step() -> None:
    params = gated.init_params("lru", 4, 2, [0, 1])
    w_x, w_h = gated.lru_real_weights(params)
    g = torch.Generator().manual_seed(3)
    h, x = torch.randn(2, 4, 5, generator=g), torch.randn(2, 2, 5, generator=g)
    torch.testing.assert_close(w_h @ h + w_x @ x, gated.step("lru", params, h, x))


@pytest.mark.parametrize(("tied", "bias"), [(True, False), (False, True)])
def test_the_lru_trains_by_the_ssms_loop_with_pytorchs_numbers(tied: bool, bias: bool) -> None:
    g = torch.Generator().manual_seed(5)
    x = (torch.rand(1, 12, 1, 300, generator=g) < 0.2) * torch.rand(1, 12, 1, 300, generator=g)
    shape = dict(m=3, hidden=2, inputs=1, tied=tied, bias=bias)
    fused, plain = (_losses_and_grads("lru", f, x, None, **shape) for f in (True, False))
    for got, want in zip(fused, plain, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    net = GatedRNN("lru", 1, 2, 1, torch.tensor([3]), False, False, [0])
    assert fused_gated.loss(net, x, None, torch.ones(1)) is not None
    assert fused_gated.loss(net, x, x, torch.ones(1)) is None  # a task's target: PyTorch's
