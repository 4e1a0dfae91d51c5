"""A gated or selective model seen as the paper's objects: its linearisation at rest.

The lens of science.md §1 needs W_x, W_h and W_y: for a gated model they are
J_x and J_h at the silent state s* (the state after T silent inputs from 0,
`tempsup.model.linearize`) and the readout lifted to the whole state (the LSTM's
readout reads h, not c). The readout at rest, W_yᵀ s* + b_y, is the linearised
model's bias. So every panel, the four loss terms and E[L] are those of the
linearised model, computed by the code that serves the paper's models, and what
the linear picture misses is the measured loss minus that E[L].

Beside the silent response the lens keeps the *active* one (one input of the law's
mean value, a finite difference) and how far apart the two are: how nonlinear the
memory is. The model's own parameters travel with them as `net_*` arrays.
"""

from __future__ import annotations

import numpy as np
import torch

from tempsup.errors import TempsupError
from tempsup.model import gated, linearize
from tempsup.model.lens_names import NET_PREFIX


def lens_arrays(
    model: str,
    params: dict[str, torch.Tensor],
    readout: torch.Tensor,
    bias: torch.Tensor,
    hidden: int,
    seq_len: int,
    active_value: float,
) -> dict[str, np.ndarray]:
    """The lens of M models of `model` (parameters with a leading M axis, readout
    (M, N_h, N_x), bias (M, N_x)): W_x = J_x, W_h = J_h (M, S, ·), W_y lifted to the
    state, b_y = the readout at rest, the silent state, the active response of ages
    0 … T−1 and its distance from the silent one, and the `net_*` parameters."""
    with torch.no_grad():
        p64 = {n: v.detach().double() for n, v in params.items()}
        w_y = readout.detach().double()
        n_models = w_y.shape[0]
        n_x = _input_width(p64)  # the input channels (a task's cue channels included)
        n_state = gated.state_size(model, hidden)

        def step(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            return gated.step(model, p64, s, x)

        lin = linearize.linearize(step, n_models, n_state, n_x, seq_len, seq_len)
        # the readout reads observe(s) = P s: lift W_y to the state, W_state = Pᵀ W_y
        eye = torch.eye(n_state, dtype=torch.float64).expand(n_models, -1, -1)
        lift = gated.observe(model, eye, hidden)  # (M, N_h, S): P
        w_state = (lift.transpose(1, 2) @ w_y).numpy()  # (M, S, N_x)
        rest = np.einsum("msi,ms->mi", w_state, lin.silent) + bias.detach().double().numpy()
        active = linearize.active_response(step, lin.silent, n_x, seq_len, active_value)
    out = {
        "W_x": lin.J_x,
        "W_h": lin.J_h,
        "W_y": w_state,
        "b_y": rest,
        "silent": lin.silent,
        "active": active,
        "nonlinearity": linearize.nonlinearity(lin.directions, active, w_state),
        "settled": lin.settled.astype(np.float32),
        NET_PREFIX + "W_y": w_y.numpy(),
        NET_PREFIX + "b_y": bias.detach().double().numpy(),
    }
    out.update({NET_PREFIX + n: v.numpy() for n, v in p64.items()})
    return out


def _input_width(params: dict[str, torch.Tensor]) -> int:
    """The input channels of a gated model's parameters (their input weights' last axis),
    which a task's readout width (n_out) need not equal."""
    for name in ("weight_ih", "B_re", "B"):
        if name in params:
            return int(params[name].shape[-1])
    raise TempsupError(f"params: no input weights among {', '.join(params)}")
