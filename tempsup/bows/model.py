"""Tied-weight autoencoders x̂ = σ(WᵀWx + b), many of them as one batch (science.md §2).

W ∈ R^{m×d} encodes d features into an m-dimensional bottleneck h = Wx and
the same W decodes it: x̂ = σ(Wᵀh + b), σ the identity (`linear`) or ReLU
(`relu`). Feature i's reconstruction is σ(‖W_i‖² x_i + Σ_{j≠i} ⟨W_i, W_j⟩ x_j
+ b_i): the second term is the interference, constructive when correlated
features share directions.

`BatchedTiedAE` holds M models side by side (a leading model axis, like
`tempsup.model.recurrences.BatchedRNN`): seeds and bottleneck sizes together. Models of
different m are batched by zero-padding: W is (M, m_max, d) and a fixed row
mask keeps rows m_i … m_max−1 of model i at exactly zero (they start at zero,
get no gradient and weight decay keeps zero at zero), so a model trained in a
batch equals the same model trained alone. The model knows nothing of data,
geometry or jobs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from tempsup.errors import TempsupError


def init_weights(d: int, m: int, seed: int, init: str = "torch") -> np.ndarray:
    """W (m, d): "torch", nn.Linear(d, m)'s default U(±1/√d) (the authors' encoder), or
    "xavier", N(0, 2/(m + d)) (Toy Models of Superposition)."""
    gen = torch.Generator().manual_seed(int(seed))
    if init == "torch":
        return ((torch.rand(m, d, generator=gen) * 2 - 1) / d**0.5).numpy()
    std = (2.0 / (m + d)) ** 0.5
    return (torch.randn(m, d, generator=gen) * std).numpy()


class BatchedTiedAE(nn.Module):
    """M tied autoencoders, model i with bottleneck ms[i], init seed seeds[i] and a ReLU
    readout if relu (one flag for all, or one per model: a grid of both models)."""

    def __init__(
        self,
        d: int,
        ms: Sequence[int],
        seeds: Sequence[int],
        relu: bool | Sequence[bool],
        init: str = "torch",
    ) -> None:
        super().__init__()
        if len(ms) != len(seeds) or not ms:
            raise TempsupError(
                f"model: expected one bottleneck size per seed, got {len(ms)} and {len(seeds)}"
            )
        if min(ms) < 1 or max(ms) > d:
            raise TempsupError(f"m: expected bottlenecks in [1, {d}], got {list(ms)}")
        flags = [bool(relu)] * len(ms) if isinstance(relu, (bool, int)) else [bool(r) for r in relu]
        if len(flags) != len(ms):
            raise TempsupError(f"model: expected one ReLU flag per model, got {len(flags)}")
        self.d = d
        self.relu = all(flags)  # every model ReLU (a mixed batch uses the mask)
        self.mixed = any(flags) and not all(flags)
        self.register_buffer("relu_mask", torch.tensor(flags).view(-1, 1, 1))
        self.ms = [int(m) for m in ms]
        m_max = max(self.ms)
        W = np.zeros((len(ms), m_max, d), dtype=np.float32)
        for i, (m, s) in enumerate(zip(self.ms, seeds, strict=True)):
            W[i, :m] = init_weights(d, m, s, init)
        mask = torch.zeros(len(ms), m_max, 1)
        for i, m in enumerate(self.ms):
            mask[i, :m] = 1.0
        self.W = nn.Parameter(torch.from_numpy(W))  # (M, m_max, d)
        self.b = nn.Parameter(torch.zeros(len(ms), d))  # (M, d)
        self.register_buffer("mask", mask)  # (M, m_max, 1)

    @property
    def n_models(self) -> int:
        return int(self.W.shape[0])

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """h = Wx for a batch shared by all models: x (B, d) -> (M, B, m_max)."""
        return torch.einsum("mkd,bd->mbk", self.W * self.mask, x)

    def preactivation(self, x: torch.Tensor) -> torch.Tensor:
        """WᵀWx + b: (B, d) -> (M, B, d)."""
        W = self.W * self.mask
        h = torch.einsum("mkd,bd->mbk", W, x)  # (M, B, m_max)
        return torch.einsum("mbk,mkd->mbd", h, W) + self.b[:, None, :]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x̂ = σ(WᵀWx + b): (B, d) -> (M, B, d)."""
        z = self.preactivation(x)
        if self.mixed:
            return torch.where(self.relu_mask, torch.relu(z), z)
        return torch.relu(z) if self.relu else z

    def loss(self, x: torch.Tensor, reduction: str = "sum") -> torch.Tensor:
        """Per-model ‖x − x̂‖² summed over features ("sum") or averaged over them ("mean",
        torch's MSELoss), mean over the batch: (M,)."""
        sq = (self(x) - x[None]) ** 2
        return (sq.mean(-1) if reduction == "mean" else sq.sum(-1)).mean(-1)

    def load_weights(self, W: np.ndarray, b: np.ndarray) -> None:
        """Set every model's W (M, m_i ≤ m_max, d) and b (M, d), e.g. a warm start."""
        W = torch.as_tensor(np.asarray(W), dtype=torch.float32)
        b = torch.as_tensor(np.asarray(b), dtype=torch.float32)
        M, m_max, d = self.W.shape
        if W.ndim != 3 or W.shape[0] != M or W.shape[2] != d or W.shape[1] > m_max:
            raise TempsupError(f"init: W has shape {tuple(W.shape)}, expected ({M}, ≤{m_max}, {d})")
        if tuple(b.shape) != (M, d):
            raise TempsupError(f"init: b has shape {tuple(b.shape)}, expected ({M}, {d})")
        with torch.no_grad():
            self.W.zero_()
            self.W[:, : W.shape[1]] = W
            self.W.mul_(self.mask)
            self.b.copy_(b)

    def state(self) -> dict[str, np.ndarray]:
        """W (M, m_max, d) with padded rows at zero, and b (M, d), as numpy copies."""
        with torch.no_grad():
            return {
                "W": (self.W * self.mask).detach().numpy().copy(),
                "b": self.b.detach().numpy().copy(),
            }
