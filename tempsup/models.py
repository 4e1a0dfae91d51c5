"""The paper's three recurrent models as one batched PyTorch module.

    h_t = W_x x_t + W_h σ_h(h_{t-1}),   ŷ_t = σ_y(W_yᵀ h_t + b_y)      (science.md §1)

| model  | σ_h      | σ_y      |
|--------|----------|----------|
| linear | identity | identity |
| ssm    | identity | ReLU     |
| rnn    | ReLU     | ReLU     |

Every parameter carries a leading *model axis* M, so many runs (seeds, points
of a sweep) are one tensor program; a single run is M = 1. Since the loss is a
sum over models and Adam is elementwise, training M models together is
exactly training each alone.

Two forward paths compute the same function:
- `linear`/`ssm` with a small T*N_x: the recurrence is linear, so the
  pre-readout is a causal convolution of the inputs with the kernel
  A_s = W_yᵀ W_h^s W_x; one batched matmul with its Toeplitz matrix replaces
  the T sequential steps (the kernel itself takes log2(T) matmuls).
- `rnn`, or wide inputs: the plain time loop in a (T, M, N_h, B) layout.

The module exposes what can be observed (directions, readout); theory and
geometry live elsewhere and consume plain arrays.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from tempsup.errors import TempsupError

# Largest Toeplitz side T*N_x for which the convolution path beats the loop.
CONV_MAX_SIDE = 256


class BatchedRNN(nn.Module):
    """M independent RNNs of one architecture, trained as one module."""

    def __init__(
        self,
        model: str,
        n_models: int,
        hidden: int,
        inputs: int,
        k: torch.Tensor,
        tied: bool,
        bias: bool,
        seeds: list[int],
    ) -> None:
        super().__init__()
        assert model in ("linear", "ssm", "rnn"), model
        assert len(seeds) == n_models and k.shape == (n_models,), (len(seeds), k.shape)
        self.model, self.tied = model, tied
        self.relu_hidden = model == "rnn"
        self.relu_readout = model in ("ssm", "rnn")
        self.register_buffer("k", k.long(), persistent=False)  # (M,)
        w_x, w_h, w_y = [], [], []
        for s in seeds:
            g = torch.Generator().manual_seed(int(s))
            w_x.append(torch.randn(hidden, inputs, generator=g))  # W_x ~ N(0, 1)
            # W_h ~ N(0, 0.25/N_h): spectral radius ≈ 0.5, stable from the start
            w_h.append(torch.randn(hidden, hidden, generator=g) * (0.5 / math.sqrt(hidden)))
            w_y.append(torch.randn(hidden, inputs, generator=g) / math.sqrt(hidden))
        self.W_x = nn.Parameter(torch.stack(w_x))  # (M, N_h, N_x)
        self.W_h = nn.Parameter(torch.stack(w_h))  # (M, N_h, N_h)
        self.W_y = None if tied else nn.Parameter(torch.stack(w_y))  # (M, N_h, N_x)
        self.b_y = nn.Parameter(torch.zeros(n_models, inputs)) if bias else None  # (M, N_x)

    @property
    def n_models(self) -> int:
        return self.W_x.shape[0]

    # ---- observables ------------------------------------------------------------

    def directions(self, n: int) -> torch.Tensor:
        """Feature directions W_s, s = 0..n-1: (M, n, N_h, N_x).

        Linear recurrence: W_h^s W_x by doubling (log2 n batched matmuls).
        ReLU recurrence: the impulse response w_s = W_h ReLU(w_{s-1}), exact for
        non-negative inputs (ReLU is positively homogeneous).
        """
        if self.relu_hidden:
            ws = [self.W_x]
            for _ in range(n - 1):
                ws.append(self.W_h @ torch.relu(ws[-1]))
            return torch.stack(ws, dim=1)
        m, n_h, n_x = self.W_x.shape
        w = self.W_x.unsqueeze(2)  # (M, N_h, 1, N_x): one (N_h × L·N_x) matrix per model
        power = self.W_h  # W_h^L
        while w.shape[2] < n:
            length = w.shape[2]
            moved = (power @ w.reshape(m, n_h, length * n_x)).view(m, n_h, length, n_x)
            w = torch.cat([w, moved], dim=2)  # (M, N_h, 2L, N_x)
            power = power @ power
        return w[:, :, :n].transpose(1, 2)  # (M, n, N_h, N_x)

    def readout(self, directions: torch.Tensor | None = None) -> torch.Tensor:
        """Effective readout W_y (M, N_h, N_x); tied: W_y := W_{s=k} per model."""
        if not self.tied:
            return self.W_y
        if directions is None or directions.shape[1] <= int(self.k.max()):
            directions = self.directions(int(self.k.max()) + 1)
        idx = self.k.view(-1, 1, 1, 1).expand(-1, 1, *directions.shape[2:])
        return torch.gather(directions, 1, idx).squeeze(1)

    def kernel(self, n: int) -> torch.Tensor:
        """The linear recurrence's kernel A_s = W_yᵀ W_s, s = 0..n-1: (M, n, N_x(i), N_x(j)).

        The pre-readout of a linear recurrence is z_t = Σ_s A_s x_{t-s}: the
        kernel is all the training loss of `linear` and `ssm` needs.
        """
        w_s = self.directions(n)  # (M, n, N_h, N_x)
        return torch.einsum("mhi,mshj->msij", self.readout(w_s), w_s)

    def bias(self) -> torch.Tensor:
        """Readout bias (M, N_x); zeros when the config has none."""
        if self.b_y is None:
            return self.W_x.new_zeros(self.n_models, self.W_x.shape[2])
        return self.b_y

    # ---- forward ---------------------------------------------------------------------

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Predictions ŷ (M, T, N_x, B) for inputs x (M or 1, T, N_x, B)."""
        z = self.preactivation(x)
        return torch.relu(z) if self.relu_readout else z

    def preactivation(self, x: torch.Tensor) -> torch.Tensor:
        """Readout pre-activation W_yᵀ h_t + b_y: (M, T, N_x, B)."""
        _, seq_len, n_x, _ = x.shape
        if not self.relu_hidden and seq_len * n_x <= CONV_MAX_SIDE:
            z = self._convolve(x)
        else:
            z = self._recur(x)
        if self.b_y is not None:
            z = z + self.b_y.view(self.n_models, 1, -1, 1)
        return z

    def _convolve(self, x: torch.Tensor) -> torch.Tensor:
        """Linear recurrence as one Toeplitz matmul: z_t = Σ_s A_s x_{t-s}."""
        m, (_, seq_len, n_x, batch) = self.n_models, x.shape
        a = self.kernel(seq_len)  # (M, T, N_x(i), N_x(j))
        lag = torch.arange(seq_len).view(-1, 1) - torch.arange(seq_len).view(1, -1)  # t - t'
        toeplitz = a[:, lag.clamp(min=0)] * (lag >= 0).view(1, seq_len, seq_len, 1, 1)
        # (M, T, T', i, j) -> (M, T*i, T'*j): row = (time, output), col = (source time, input)
        toeplitz = toeplitz.permute(0, 1, 3, 2, 4).reshape(m, seq_len * n_x, seq_len * n_x)
        side = seq_len * n_x
        if x.shape[0] == 1:  # inputs shared by all models: one GEMM (M*T*N_x, T*N_x) @ (T*N_x, B)
            z = toeplitz.reshape(m * side, side) @ x.reshape(side, batch)
        else:
            z = toeplitz @ x.reshape(m, side, batch)  # (M, T*N_x, B)
        return z.view(m, seq_len, n_x, batch)

    def _recur(self, x: torch.Tensor) -> torch.Tensor:
        """The plain recurrence: h (M, N_h, B) per step, readout per step."""
        drive = self.W_x.unsqueeze(1) @ x  # (M, T, N_h, B)
        w_y_t = self.readout().transpose(1, 2)  # (M, N_x, N_h)
        act = torch.relu if self.relu_hidden else (lambda v: v)
        # unbind, not drive[:, t]: each indexing op's backward would allocate a
        # full-size zero gradient (quadratic in T); unbind's backward stacks once.
        steps = drive.unbind(1)
        h = steps[0]
        outs = [w_y_t @ h]
        for d in steps[1:]:
            h = torch.baddbmm(d, self.W_h, act(h))
            outs.append(w_y_t @ h)  # (M, N_x, B)
        return torch.stack(outs, dim=1)  # (M, T, N_x, B)

    # ---- weights in and out ---------------------------------------------------------

    @torch.no_grad()
    def state(self) -> dict[str, torch.Tensor]:
        """The observable weights of every model, effective readout included."""
        return {
            "W_x": self.W_x.detach().clone(),
            "W_h": self.W_h.detach().clone(),
            "W_y": self.readout().detach().clone(),
            "b_y": self.bias().detach().clone(),
        }

    @torch.no_grad()
    def load_weights(
        self, weights: dict[str, torch.Tensor], noise: float, seeds: list[int], exact: list[bool]
    ) -> None:
        """Warm start: copy weights into every model. Models not marked `exact`
        get Gaussian noise of relative size `noise`, drawn from their own seed,
        so seeds still explore and a model's start does not depend on its batch."""
        for name in ("W_x", "W_h", "W_y", "b_y"):
            param = getattr(self, name)
            if param is None or name not in weights:
                continue
            src = torch.as_tensor(weights[name], dtype=param.dtype)
            if src.shape[-2:] != param.shape[-2:] and src.shape[-1:] != param.shape[-1:]:
                raise TempsupError(
                    f"warm_start: {name} has shape {tuple(src.shape)}, this config needs "
                    f"{tuple(param.shape[1:])} (hidden and inputs must match)"
                )
            scale = noise * src.abs().mean()  # of the given weights: same in any batch
            try:
                src = src.expand_as(param).clone()
            except RuntimeError:
                raise TempsupError(
                    f"warm_start: {name} has shape {tuple(src.shape)}, this config needs "
                    f"{tuple(param.shape[1:])} (hidden and inputs must match)"
                ) from None
            for m, (seed, keep) in enumerate(zip(seeds, exact, strict=True)):
                if not keep:
                    g = torch.Generator().manual_seed(int(seed) + 99_991)
                    src[m] += torch.randn(param.shape[1:], generator=g) * scale
            param.copy_(src)
