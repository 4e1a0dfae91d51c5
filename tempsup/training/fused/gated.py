"""The gated models' training loss by compiled time loops, where one applies.

`tempsup.model.gated.gated_loss` runs the recurrence as a Python loop whose every step
is a dozen PyTorch ops (and their backward) on (M, G·N_h, B) tensors, the gates of every
step kept for the backward pass. Here one call computes the loss and its gradients, a
tile of batch columns at a time through every step and back, for the same numbers up
to float rounding (tests/test_fused_gated.py). A tied readout is an input like any
other: its gradient flows on through `tempsup.model.gated.tied_readout` by autograd.
It takes float32 on the CPU where the library is built (`tempsup.training.fused.LIBRARY`);
anything else keeps PyTorch's loop.
"""

from __future__ import annotations

import ctypes

import torch
from torch import Tensor

from tempsup.model import gated
from tempsup.model.gated import GatedRNN
from tempsup.training import fused
from tempsup.training.fused import LIBRARY, per_model_gradients

KINDS = {"gru": 0, "lstm": 1}


def loss(model: GatedRNN, x: Tensor, target: Tensor | None, weights: Tensor) -> Tensor | None:
    """`tempsup.model.gated.gated_loss` by one call of a compiled loop (its backward in the
    same call), or None where none applies: a `tempsup.model.gated.FusedLoss`. x (1 or M,
    T, N_x, B), target (1 or M, T, n_out, B) or None for recall's, weights (n_out,).

    The GRU and the LSTM take `gated_loop.h` (float32 on the CPU); the LRU on recall takes
    the SSM's loop (`rnn_loop.h`, a linear recurrence with a ReLU readout) in its real
    form (`tempsup.model.gated.lru_real_weights`); anything else keeps PyTorch's loop.
    """
    if LIBRARY is None:
        return None
    params = model.params()
    if model.model == "lru":
        if target is not None:  # a task's target: the SSM's loop knows recall's only
            return None
        w_x, w_h = gated.lru_real_weights(params)
        if not fused.register_tiled(w_x, x):
            return None
        args = (w_x, w_h, model.readout(), model.b_y, x, model.k, weights.to(x.dtype))
        return fused.recurrent_loss(*args, relu_hidden=False, relu_readout=True)
    if model.model not in KINDS:
        return None
    if target is None:
        target = gated.recall_target(model.k, x)
    if any(
        t.dtype != torch.float32 or t.device.type != "cpu" for t in (*params.values(), x, target)
    ):
        return None
    w_y, b_y = model.readout(), model.b_y
    return _GatedLoss.apply(
        params["weight_ih"], params["bias_ih"], params["weight_hh"], params["bias_hh"],
        w_y, b_y, x, target, weights.to(torch.float32), KINDS[model.model],
    )  # fmt: skip


class _GatedLoss(torch.autograd.Function):
    """The loss by one call of the compiled loop, its gradients computed in the same call."""

    @staticmethod
    def forward(ctx, w_ih, b_ih, w_hh, b_hh, w_y, b_y, x, target, weights, kind):  # noqa: ANN001, PLR0913
        grad = any(ctx.needs_input_grad[:6])
        w_ih, b_ih, w_hh, b_hh, w_y, x, target, weights = (
            t.contiguous() for t in (w_ih, b_ih, w_hh, b_hh, w_y, x, target, weights)
        )
        b_y = None if b_y is None else b_y.contiguous()
        m, n_h, n_out = w_y.shape
        _, seq_len, n_x, batch = x.shape
        flags = (
            int(b_y is not None) | 2 * int(grad) | 4 * int(x.shape[0] == 1)
            | 8 * int(target.shape[0] == 1)
        )  # fmt: skip
        dims = (ctypes.c_int64 * 8)(seq_len, m, n_h, n_x, n_out, batch, kind, flags)
        out = x.new_empty(m)
        grads = tuple(
            None if t is None or not grad else torch.empty_like(t)
            for t in (w_ih, b_ih, w_hh, b_hh, w_y, b_y)
        )
        status = LIBRARY.tempsup_gated_loss_f32(
            dims,
            *(_pointer(t) for t in (w_ih, b_ih, w_hh, b_hh, w_y, b_y, x, target, weights)),
            out.data_ptr(),
            *(_pointer(g) for g in grads),
        )
        if status != 0:
            raise MemoryError("the compiled gated loop could not allocate its scratch memory")
        if grad:
            ctx.save_for_backward(*(g for g in grads if g is not None))
            ctx.has_bias = b_y is not None
        return out

    @staticmethod
    def backward(ctx, grad_loss):  # noqa: ANN001
        saved = list(ctx.saved_tensors)
        if not ctx.has_bias:
            saved.append(None)
        return (*per_model_gradients(tuple(saved), grad_loss)[:6], None, None, None, None)


def _pointer(t: Tensor | None) -> int | None:
    return None if t is None else t.data_ptr()
