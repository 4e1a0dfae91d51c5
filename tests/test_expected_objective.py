"""The expected objective for the SSM: gradient flow on E[L] to second order in p.

`tempsup.training.losses.relu_readout_expected_loss` is checked against the numpy
expansion of `tempsup.theory.relu_terms` (its closed-form pair moments, an independent
computation) and against what training on it does to the exact expected loss
of the frames (`Run["expected_loss"]`, the SSM's convolved closed form).
"""

from __future__ import annotations

import numpy as np
import pytest

from tempsup.analysis.sweeps import train_runs
from tempsup.errors import TempsupError
from tempsup.model.config import RunConfig, importance_weights
from tempsup.theory import relu_terms
from tempsup.training.trainer import train


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"sparsity": 0.5, "k": 1},
        {"inputs": 2, "hidden": 3, "importance": 0.7},
        {"input_dist": "exponential", "tied": False},
    ],
)
def test_the_ssm_objective_is_the_second_order_expansion(changes: dict) -> None:
    cfg = RunConfig(model="ssm", objective="expected", steps=1, snapshot_every=1, seeds=4,
                    **changes)  # fmt: skip
    first = next(iter(train(cfg)))  # the objective at the initial weights, per seed
    terms, _ = relu_terms.analyse(
        first.W_x, first.W_h, first.W_y, None, cfg.k, cfg.p, cfg.input_dist, cfg.seq_len,
        False, np.array(importance_weights(cfg)),
    )  # fmt: skip
    np.testing.assert_allclose(first.loss, terms.sum(-1), rtol=2e-3, atol=1e-6)


def test_gradient_flow_on_it_lowers_the_exact_expected_loss_without_noise() -> None:
    cfg = RunConfig(model="ssm", objective="expected", steps=400, snapshot_every=20, seeds=4)
    (run,) = train_runs([cfg])
    exact = run["expected_loss"]  # (F, M): the closed form of E[L] at each frame's weights
    assert bool((exact[-1] < 0.8 * exact[0]).all()), exact[[0, -1]]
    assert (exact[-1] / exact[0]).min() < 0.5, exact[[0, -1]]
    # no batches: the objective falls frame after frame (up to Adam's momentum)
    objective = run["loss"][1:]
    assert (np.diff(objective, axis=0) / objective[:-1]).max() < 1e-2
    # on a sparse SSM the second-order objective is close to the exact loss it stands for
    np.testing.assert_allclose(objective[-1], exact[-1], rtol=0.1)


def test_the_expected_objective_is_refused_where_it_has_no_form() -> None:
    with pytest.raises(TempsupError, match=r"objective: 'expected' needs model 'linear'.*'ssm'"):
        RunConfig(model="rnn", objective="expected")
    with pytest.raises(TempsupError, match="needs no readout bias"):
        RunConfig(model="ssm", objective="expected", bias=True, tied=False)
