"""The recurrent training loss by a compiled time loop, where this machine can build one.

`tempsup.training.losses.recurrent_loss` (the ReLU RNN's loss, and any model too wide for
a Toeplitz matrix) is a Python loop over time whose every step is a dozen
PyTorch ops on (M, N_h, B) tensors: for the paper's small models each op costs
more in dispatch and memory passes than in arithmetic. `rnn_loop.c` runs the
same forward and backward pass through time in one call, a tile of batch
columns at a time with its state in cache, and returns the loss and the
gradients (the same numbers up to float rounding: tests/test_fused.py).

The library is built on first import (`build.py`, or ahead of time by
`scripts/setup`). Where it cannot be built (no C compiler) or is switched off
(`TEMPSUP_FUSED=0`), `LIBRARY` is None, one log line says so, and the loss
keeps PyTorch's loop. The kernel runs on the calling thread and starts none
of its own.
"""

from __future__ import annotations

import ctypes
import logging
import os

import torch
from torch import Tensor

from tempsup.training.fused.build import BuildError, load

log = logging.getLogger("tempsup.training.fused")

# The loop's cost per model, sample and time step is about N_h (N_h + 2 N_x)
# multiply-adds either way; above this many PyTorch's batched products (BLAS, at
# its best on large matrices) are faster than the tile loop. Measured (loss and
# gradients, one thread): N_h = 2 several times faster; N_h = 10 or 16 and
# N_h = 20 with N_x = 15 (width 1000) about even; N_h = 100, N_x = 75 3x slower.
MAX_WIDTH = 1024
# rnn_loop.h specialises scalar input (N_x = 1) with N_h up to this: the loops over N_h
# unroll and the state stays in registers, several times faster than its general loop.
REGISTER_TILED_HIDDEN = 4


def _open() -> ctypes.CDLL | None:
    """The loaded library, or None (with one log line saying why) for PyTorch's loop."""
    if os.environ.get("TEMPSUP_FUSED", "").strip() in ("0", "off", "false", "no"):
        log.info("TEMPSUP_FUSED=0: the recurrent loss runs PyTorch's time loop")
        return None
    try:
        return load()
    except BuildError as exc:
        log.warning(
            "the compiled time loop is not available (%s); the ReLU RNN trains by "
            "PyTorch's time loop, several times slower",
            exc,
        )
        return None


LIBRARY = _open()
_DTYPES = {torch.float32: "f32", torch.float64: "f64"}


def applies(w_x: Tensor, x: Tensor) -> bool:
    """Whether the compiled loop takes this loss: built, float32 or float64, a small model.

    `w_x` (M, N_h, N_x) is the model's input weight, `x` its inputs (1 or M, T, N_x, B).
    """
    n_h, n_x = w_x.shape[1], w_x.shape[2]
    return (
        LIBRARY is not None
        and x.dtype in _DTYPES
        and w_x.dtype == x.dtype
        and n_h * (n_h + 2 * n_x) <= MAX_WIDTH
    )


def register_tiled(w_x: Tensor, x: Tensor) -> bool:
    """Whether the loop `applies` and runs its specialised case (scalar input, small N_h):
    the SSM's training then takes it over its Toeplitz product (`tempsup.training.losses`)."""
    n_h, n_x = w_x.shape[1], w_x.shape[2]
    return n_x == 1 and n_h <= REGISTER_TILED_HIDDEN and applies(w_x, x)


def recurrent_loss(
    w_x: Tensor,
    w_h: Tensor,
    w_y: Tensor,
    b: Tensor | None,
    x: Tensor,
    k: Tensor,
    weights: Tensor,
    relu_hidden: bool,
    relu_readout: bool,
) -> Tensor:
    """Per-model loss (M,) of the recurrence on x (1 or M, T, N_x, B), targets x delayed by k (M,).

    Differentiable in w_x, w_h, w_y (M, N_h, N_x or N_h) and b (M, N_x) or None;
    `weights` (N_x,) are the importance weights. `w_y` None ties the readout to the
    impulse response, W_y = w_k (`BatchedRNN.readout`), computed and differentiated
    in the same call. `applies` must hold.
    """
    return _FusedLoss.apply(w_x, w_h, w_y, b, x, k, weights, relu_hidden, relu_readout)


class _FusedLoss(torch.autograd.Function):
    """The loss by one call of the compiled loop, its gradients computed in the same call."""

    @staticmethod
    def forward(ctx, w_x, w_h, w_y, b, x, k, weights, relu_hidden, relu_readout):  # noqa: ANN001, PLR0913
        m, n_h, n_x = w_x.shape
        _, seq_len, _, batch = x.shape
        grad = any(ctx.needs_input_grad[:4])
        tied = w_y is None
        x = x.contiguous()
        w_x, w_h = w_x.contiguous(), w_h.contiguous()
        w_y, b = (None if t is None else t.contiguous() for t in (w_y, b))
        k = k.to(torch.int64).contiguous()
        imp = weights.to(x.dtype).contiguous()
        flags = int(relu_hidden) | 2 * int(relu_readout) | 4 * int(grad) | 8 * int(tied)
        x_stride = 0 if x.shape[0] == 1 else seq_len * n_x * batch
        dims = (ctypes.c_int64 * 7)(seq_len, m, n_h, n_x, batch, x_stride, flags)
        loss = x.new_empty(m)
        grads = tuple(None if t is None else torch.empty_like(t) for t in (w_x, w_h, w_y, b))
        fn = getattr(LIBRARY, "tempsup_rnn_loss_" + _DTYPES[x.dtype])
        status = fn(
            dims,
            k.data_ptr(),
            *(_pointer(t) for t in (w_x, w_h, w_y, b)),
            x.data_ptr(),
            imp.data_ptr(),
            loss.data_ptr(),
            *(_pointer(t) for t in grads),
        )
        if status != 0:
            raise MemoryError("the compiled time loop could not allocate its scratch memory")
        if grad:
            ctx.save_for_backward(*grads)
        return loss

    @staticmethod
    def backward(ctx, grad_loss):  # noqa: ANN001
        return per_model_gradients(ctx.saved_tensors, grad_loss)


def _pointer(t: Tensor | None) -> int | None:
    return None if t is None else t.data_ptr()


def per_model_gradients(saved: tuple[Tensor, ...], grad_loss: Tensor) -> tuple[Tensor | None, ...]:
    """Backward of a per-model loss whose forward pass saved each model's gradients of
    (W_x, W_h, W_y, b), None for an input it did not take (a tied W_y, no bias): each
    scaled by its model's upstream gradient, None for the five inputs that take none.
    Shared by this loop and PyTorch's (`tempsup.training.losses`)."""
    grads = (g if g is None else g * grad_loss.view(-1, *[1] * (g.dim() - 1)) for g in saved)
    return *grads, *([None] * 5)
