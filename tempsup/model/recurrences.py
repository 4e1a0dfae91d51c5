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
        outputs: int | None = None,
    ) -> None:
        """`inputs`: the input channels (N_x, or more for a task with cue channels);
        `outputs`: the readout's width (default `inputs`; a task's n_out otherwise)."""
        super().__init__()
        assert model in ("linear", "ssm", "rnn"), model
        n_out = inputs if outputs is None else outputs
        assert not (tied and n_out != inputs), "a tied readout has one output per input"
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
            w_y.append(torch.randn(hidden, n_out, generator=g) / math.sqrt(hidden))
        self.W_x = nn.Parameter(torch.stack(w_x))  # (M, N_h, N_x)
        self.W_h = nn.Parameter(torch.stack(w_h))  # (M, N_h, N_h)
        self.W_y = None if tied else nn.Parameter(torch.stack(w_y))  # (M, N_h, n_out)
        self.b_y = nn.Parameter(torch.zeros(n_models, n_out)) if bias else None  # (M, n_out)
        self.n_out = n_out

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
        return _powers(self.W_x, self.W_h, n).transpose(1, 2)

    def readout(self, directions: torch.Tensor | None = None) -> torch.Tensor:
        """Effective readout W_y (M, N_h, N_x); tied: W_y := W_{s=k} per model."""
        if not self.tied:
            return self.W_y
        if directions is None or directions.shape[1] <= int(self.k.max()):
            directions = self.directions(int(self.k.max()) + 1)
        idx = self.k.view(-1, 1, 1, 1).expand(-1, 1, *directions.shape[2:])
        return torch.gather(directions, 1, idx).squeeze(1)

    def kernel(self, n: int) -> torch.Tensor:
        """The linear recurrence's kernel A_s = W_yᵀ W_s, s = 0..n-1: (M, n, n_out(i), N_x(j)).

        The pre-readout of a linear recurrence is z_t = Σ_s A_s x_{t-s}: the
        kernel is all the training loss of `linear` and `ssm` needs. Its
        backward is written out (`_Kernel`): autograd through the doubling
        costs more per-op overhead than the rest of a step.
        """
        assert not self.relu_hidden, "a ReLU recurrence has no kernel"
        return _Kernel.apply(self.W_x, self.W_h, self.W_y, self.k, n)

    def bias(self) -> torch.Tensor:
        """Readout bias (M, n_out); zeros when the config has none."""
        if self.b_y is None:
            return self.W_x.new_zeros(self.n_models, self.n_out)
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
        a = self.kernel(seq_len)  # (M, T, n_out(i), N_x(j))
        n_out = a.shape[2]
        lag = torch.arange(seq_len).view(-1, 1) - torch.arange(seq_len).view(1, -1)  # t - t'
        toeplitz = a[:, lag.clamp(min=0)] * (lag >= 0).view(1, seq_len, seq_len, 1, 1)
        # (M, T, T', i, j) -> (M, T*i, T'*j): row = (time, output), col = (source time, input)
        side = seq_len * n_x
        toeplitz = toeplitz.permute(0, 1, 3, 2, 4).reshape(m, seq_len * n_out, side)
        if x.shape[0] == 1:  # inputs shared by all models: one GEMM (M*T*N_x, T*N_x) @ (T*N_x, B)
            z = toeplitz.reshape(m * seq_len * n_out, side) @ x.reshape(side, batch)
        else:
            z = toeplitz @ x.reshape(m, side, batch)  # (M, T*N_x, B)
        return z.view(m, seq_len, n_out, batch)

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


def _powers(w_x: torch.Tensor, w_h: torch.Tensor, n: int) -> torch.Tensor:
    """W_h^s W_x for s = 0..n-1 by doubling (log2 n batched products): (M, N_h, n, N_x).

    The (N_h, n·N_x) layout makes each doubling one (N_h × N_h)(N_h × L·N_x) product per
    model, and the new block a concatenation along the last axis (`bmm` directly: `@`
    adds half a dozen shape ops around every product, which at these sizes cost more
    than the product).
    """
    m, n_h, n_x = w_x.shape
    w = w_x  # (M, N_h, L·N_x): W_h^s W_x for s < L, ages along the last axis
    power = w_h  # W_h^L
    while w.shape[2] < n * n_x:
        w = torch.cat([w, torch.bmm(power, w)], dim=2)  # (M, N_h, 2L·N_x)
        power = torch.bmm(power, power)
    return w[:, :, : n * n_x].view(m, n_h, n, n_x)


class _Kernel(torch.autograd.Function):
    """A_s = W_yᵀ W_h^s W_x, s < n: (M, n, N_x, N_x); W_y None: tied, W_y := W_h^k W_x.

    Backward: with dW_s = W_y dA_s (plus, tied, Σ_s W_s dA_sᵀ at s = k), the
    adjoint G_s = dW_s + W_hᵀ G_{s+1} is a suffix sum, taken by doubling like
    the forward; then dW_x = G_0 and dW_h = Σ_{s≥1} G_s W_{s-1}ᵀ (one product).
    Every product is a `bmm` on the flat (M, N_h, s·N_x) layout of `_powers`.
    """

    @staticmethod
    def forward(ctx, w_x, w_h, w_y, k, n):  # noqa: ANN001 - autograd signature
        m, n_h, n_x = w_x.shape
        n_all = max(n, int(k.max()) + 1)
        w_s = _powers(w_x, w_h, n_all)  # (M, N_h, n', N_x)
        ctx.tied = w_y is None
        if ctx.tied:  # the direction of age k, per model
            ks = k.tolist()
            same = all(kk == ks[0] for kk in ks)
            w_y = w_s[:, :, ks[0]] if same else w_s[torch.arange(m), :, k]  # (M, N_h, N_x)
        flat = w_s[:, :, :n].reshape(m, n_h, n * n_x)
        # A[m, s, i, j] = Σ_h W_y[m, h, i] W_s[m, h, j]: (M, n_out, n·N_x) → (M, n, n_out, N_x)
        n_out = w_y.shape[2]
        a = torch.bmm(w_y.transpose(1, 2), flat).view(m, n_out, n, n_x).transpose(1, 2)
        ctx.save_for_backward(w_h, w_y, w_s, k)
        ctx.n = n
        return a

    @staticmethod
    def backward(ctx, grad_a):  # noqa: ANN001
        w_h, w_y, w_s, k = ctx.saved_tensors
        m, n_h, n_all, n_x = w_s.shape
        n = ctx.n
        g_a = grad_a.transpose(1, 2).reshape(m, w_y.shape[2], n * n_x)  # (M, n_out, n·N_x)
        # dW_s = W_y dA_s: (M, N_h, n'·N_x), zero for s >= n
        grad_s = torch.bmm(w_y, g_a)
        if n_all > n:
            grad_s = torch.cat([grad_s, grad_s.new_zeros(m, n_h, (n_all - n) * n_x)], dim=2)
        flat = w_s.view(m, n_h, n_all * n_x)
        grad_y = torch.bmm(flat[:, :, : n * n_x], g_a.transpose(1, 2))  # (M, N_h, N_x)
        tied = ctx.tied
        if tied:
            if bool((k == k[0]).all()):
                kk = int(k[0]) * n_x
                grad_s[:, :, kk : kk + n_x] += grad_y
            else:
                grad_s.view(m, n_h, n_all, n_x)[torch.arange(m), :, k] += grad_y
        # suffix sum G_s = Σ_{r ≥ s} (W_hᵀ)^{r-s} dW_r by doubling
        power, shift = w_h.transpose(1, 2), 1
        while shift < n_all:
            moved = torch.bmm(power, grad_s[:, :, shift * n_x :])
            grad_s = torch.cat(
                [
                    grad_s[:, :, : (n_all - shift) * n_x] + moved,
                    grad_s[:, :, (n_all - shift) * n_x :],
                ],
                dim=2,
            )
            power, shift = torch.bmm(power, power), 2 * shift
        grad_x = grad_s[:, :, :n_x]
        later = grad_s[:, :, n_x:]  # G_s, s ≥ 1: (M, N_h, (n'-1)·N_x)
        grad_h = torch.bmm(later, flat[:, :, : (n_all - 1) * n_x].transpose(1, 2))  # (M, N_h, N_h)
        return grad_x, grad_h, None if tied else grad_y, None, None
