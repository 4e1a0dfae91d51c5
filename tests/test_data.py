"""Sparse inputs and k-delay targets (tempsup.model.data; science.md §1 "Task and data")."""

from __future__ import annotations

import math

import pytest
import torch

from tempsup.errors import TempsupError
from tempsup.model.data import delayed_targets, sample_inputs, sample_values
from tempsup.theory.closed_form import input_moments


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---- sample_inputs ------------------------------------------------------------------


def test_shapes_shared_and_per_model_p() -> None:
    x = sample_inputs(gen(), torch.tensor([0.3, 0.3, 0.3]), 16, 7, 2, "uniform")
    assert x.shape == (1, 7, 2, 16)  # one broadcastable model axis when p agrees
    x = sample_inputs(gen(), torch.tensor([0.3, 0.5]), 16, 7, 2, "uniform")
    assert x.shape == (2, 7, 2, 16)
    assert x.dtype == torch.float32


@pytest.mark.parametrize("p", [0.02, 0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("dist", ["uniform", "constant", "exponential"])
def test_activation_rate_is_p(p: float, dist: str) -> None:
    x = sample_inputs(gen(1), torch.tensor([p]), 2000, 50, 2, dist)  # 2e5 gates
    active = (x != 0).double()
    n = active.numel()
    rate = active.mean().item()
    se = math.sqrt(max(p * (1 - p), 1e-12) / n)
    assert abs(rate - p) < 5 * se + 1e-6, (rate, p, se)


def test_activation_rate_per_model_row() -> None:
    ps = torch.tensor([0.05, 0.3, 0.7])
    x = sample_inputs(gen(2), ps, 4000, 50, 1, "constant")
    n = x[0].numel()
    for m, p in enumerate(ps.tolist()):
        rate = (x[m] != 0).double().mean().item()
        assert abs(rate - p) < 5 * math.sqrt(p * (1 - p) / n), (m, rate, p)


@pytest.mark.parametrize("dist", ["uniform", "constant", "exponential"])
def test_active_values_have_the_documented_moments(dist: str) -> None:
    mu, nu = input_moments(dist)
    x = sample_inputs(gen(3), torch.tensor([0.5]), 4000, 50, 1, dist).double()
    u = x[x != 0]
    assert bool((u > 0).all())
    n = u.numel()
    for power, target in ((1, mu), (2, nu)):
        v = u**power
        se = v.std().item() / math.sqrt(n)
        assert abs(v.mean().item() - target) < 5 * se + 1e-12, (dist, power, v.mean().item())
    if dist == "uniform":
        assert float(u.max()) <= 1.0
    # and the unconditional moments are E[x] = pμ, E[x²] = pν (what theory uses)
    assert x.mean().item() == pytest.approx(0.5 * mu, rel=0.02)
    assert (x**2).mean().item() == pytest.approx(0.5 * nu, rel=0.05)


def test_gates_are_independent_across_time_and_features() -> None:
    x = sample_inputs(gen(4), torch.tensor([0.3]), 5000, 20, 2, "constant")[0].double()
    g = x - 0.3  # centred gates (T, N_x, B)
    n = g[1:].numel()
    across_time = (g[1:] * g[:-1]).mean().item() / 0.21
    across_features = (g[:, 0] * g[:, 1]).mean().item() / 0.21
    assert abs(across_time) < 5 / math.sqrt(n)
    assert abs(across_features) < 5 / math.sqrt(n / 2)


def test_common_random_numbers_nest_the_active_sets() -> None:
    """A model with a larger p is active wherever a smaller-p model is, with the same value."""
    ps = torch.tensor([0.1, 0.4, 0.4, 0.8, 1.0])
    x = sample_inputs(gen(5), ps, 512, 20, 3, "uniform")
    for lo, hi in zip(range(len(ps) - 1), range(1, len(ps)), strict=True):
        on = x[lo] != 0
        assert bool((x[hi][on] == x[lo][on]).all())  # active there too, same value
        assert bool(((x[hi] == 0) | (x[lo] == 0) | (x[hi] == x[lo])).all())
    assert bool((x[1] == x[2]).all())  # equal p: equal inputs
    assert bool((x[-1] != 0).all())  # p = 1: every gate open (uniform U > 0)


def test_one_p_equals_its_row_of_a_mixed_draw() -> None:
    """A model trained alone sees exactly what it sees inside a sweep batch."""
    mixed = sample_inputs(gen(6), torch.tensor([0.2, 0.6]), 64, 10, 2, "exponential")
    alone = sample_inputs(gen(6), torch.tensor([0.6]), 64, 10, 2, "exponential")
    assert torch.equal(alone[0], mixed[1])


def test_same_generator_state_same_draw() -> None:
    a = sample_inputs(gen(7), torch.tensor([0.5]), 8, 5, 1, "uniform")
    b = sample_inputs(gen(7), torch.tensor([0.5]), 8, 5, 1, "uniform")
    c = sample_inputs(gen(8), torch.tensor([0.5]), 8, 5, 1, "uniform")
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_sample_values_refuses_unknown_law() -> None:
    with pytest.raises(TempsupError, match="input_dist"):
        sample_values(gen(), (3,), "normal")


# ---- delayed_targets -----------------------------------------------------------------


def seq(values: list[float], batch: int = 1) -> torch.Tensor:
    """(1, T, 1, B) tensor: column b is values + 10*b."""
    t = torch.tensor(values).view(1, -1, 1, 1)
    return t + 10.0 * torch.arange(batch).view(1, 1, 1, -1)


def test_shared_delay_hand_checked() -> None:
    x = seq([1, 2, 3, 4, 5], batch=2)
    y = delayed_targets(x, torch.tensor([2, 2]), 2)
    assert y.shape == (1, 5, 1, 2)  # shared k keeps the broadcastable model axis
    assert y[0, :, 0, 0].tolist() == [0, 0, 1, 2, 3]
    assert y[0, :, 0, 1].tolist() == [0, 0, 11, 12, 13]


def test_zero_delay_is_identity() -> None:
    x = seq([1, 2, 3])
    assert torch.equal(delayed_targets(x, torch.tensor([0]), 1), x)


def test_delay_of_t_minus_one_keeps_only_the_first_input() -> None:
    x = seq([7, 2, 3, 4])
    assert delayed_targets(x, torch.tensor([3]), 1)[0, :, 0, 0].tolist() == [0, 0, 0, 7]


def test_per_model_delay_hand_checked() -> None:
    x = seq([1, 2, 3, 4, 5])
    y = delayed_targets(x, torch.tensor([0, 1, 3]), 3)
    assert y.shape == (3, 5, 1, 1)
    assert y[:, :, 0, 0].tolist() == [
        [1, 2, 3, 4, 5],
        [0, 1, 2, 3, 4],
        [0, 0, 0, 1, 2],
    ]


def test_per_model_delay_with_per_model_inputs_and_features() -> None:
    # model m's inputs are (m+1) * base; feature 1 is feature 0 + 100
    base = torch.tensor([1.0, 2, 3, 4])
    x = torch.stack([(m + 1) * base for m in range(2)]).view(2, 4, 1, 1)
    x = torch.cat([x, x + 100], dim=2)  # (2, T=4, N_x=2, B=1)
    y = delayed_targets(x, torch.tensor([1, 2]), 2)
    assert y[0, :, 0, 0].tolist() == [0, 1, 2, 3]
    assert y[0, :, 1, 0].tolist() == [0, 101, 102, 103]
    assert y[1, :, 0, 0].tolist() == [0, 0, 2, 4]
    assert y[1, :, 1, 0].tolist() == [0, 0, 102, 104]


def test_shared_and_per_model_paths_agree() -> None:
    x = sample_inputs(gen(9), torch.tensor([0.5]), 6, 9, 2, "uniform")
    shared = delayed_targets(x, torch.tensor([4, 4, 4]), 3)
    # a per-model k whose first entries coincide takes the gather path
    per_model = delayed_targets(x, torch.tensor([4, 4, 2]), 3)
    assert torch.equal(per_model[0], shared[0])
    assert torch.equal(per_model[1], shared[0])
    assert torch.equal(per_model[2], delayed_targets(x, torch.tensor([2]), 1)[0])
