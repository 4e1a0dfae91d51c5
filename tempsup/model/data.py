"""Sparse input sequences and k-delay targets (science.md §1, "Task and data").

x_t = B_t U_t with B_t ~ Bernoulli(p) per time step and feature, U_t i.i.d.
non-negative; the target is y_t = x_{t-k} for t > k and 0 before.

Many models train side by side (a leading model axis M). They share one draw
of U and of the uniforms V behind the Bernoulli gates ("common random
numbers"): model m sees x = U * (V < p_m). Seeds of one run therefore differ
only in their initial weights, and the points of a sparsity sweep see the same
underlying events, which makes their comparison less noisy and the draw cheap.
"""

from __future__ import annotations

import torch

from tempsup.errors import TempsupError


def sample_values(gen: torch.Generator, shape: tuple[int, ...], dist: str) -> torch.Tensor:
    """Magnitudes U >= 0 of active inputs, from the config's `input_dist`."""
    if dist == "uniform":
        return torch.rand(shape, generator=gen)
    if dist == "constant":
        return torch.ones(shape)
    if dist == "exponential":
        return torch.empty(shape).exponential_(1.0, generator=gen)
    raise TempsupError(f"input_dist: expected uniform, constant or exponential, got {dist!r}")


def sample_inputs(
    gen: torch.Generator, p: torch.Tensor, batch: int, seq_len: int, n_x: int, dist: str
) -> torch.Tensor:
    """Sparse inputs for every model: (M', T, N_x, B), M' = 1 when all p agree.

    Batch last: every per-step operation then runs over a contiguous B.

    `p` is (M,) — each model's activation probability. When all models share
    one p the result has a broadcastable model axis of size 1, so no model
    pays for a copy.
    """
    shape = (seq_len, n_x, batch)
    u = sample_values(gen, shape, dist)  # (T, N_x, B)
    v = torch.rand(shape, generator=gen)  # (T, N_x, B)
    if bool((p == p[0]).all()):
        return (u * (v < p[0])).unsqueeze(0)  # (1, T, N_x, B)
    gate = v.unsqueeze(0) < p.view(-1, 1, 1, 1)  # (M, T, N_x, B)
    return u.unsqueeze(0) * gate


def delayed_targets(x: torch.Tensor, k: torch.Tensor, n_models: int) -> torch.Tensor:
    """y_t = x_{t-k} (zero for t <= k), per model: (M, T, N_x, B).

    `k` is (M,) so a sweep over the delay trains in one batch; time index t
    here is 0-based, so y[t] = x[t - k] for t >= k.
    """
    seq_len = x.shape[1]
    k_list = k.tolist()
    if all(kk == k_list[0] for kk in k_list):
        # one shared delay: shift once, keep the broadcastable model axis
        pad = x.new_zeros(x.shape[0], k_list[0], *x.shape[2:])
        return torch.cat([pad, x[:, : seq_len - k_list[0]]], dim=1)
    x = x.expand(n_models, -1, -1, -1)
    src = torch.arange(seq_len).view(1, -1) - k.view(-1, 1)  # (M, T): source time of each target
    valid = (src >= 0).view(n_models, seq_len, 1, 1)
    idx = src.clamp(min=0).view(n_models, seq_len, 1, 1).expand_as(x)
    return torch.gather(x, 1, idx) * valid
