"""The issue 43 findings as presets: each check, on the quick runs, returns its claims with
finite measured numbers that are what the runs give, and a sentence; each card draws.

The quick runs of these four presets are the session's (`quick_preset_runs`), the same
configs `tempsup reproduce --quick` trains; verdicts are not asserted (they are
findings), except where the rule is deterministic (`first_sparse`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from tempsup.analysis.measures import TOL, kernel
from tempsup.io import tasks_frame
from tempsup.io.run import Run
from tempsup.paper.presets import (
    REGISTRY,
    card_picture,
    cued_capacity,
    persistence_transition,
    relu_rnn_persistence,
    sum_window,
)
from tempsup.paper.presets.ssm_jump import ranking_loss, story

NAMES = ("persistence-transition", "relu-rnn-persistence", "sum-window", "cued-capacity")


@pytest.fixture(scope="module")
def quick(quick_preset_runs: dict[str, Run]) -> dict[str, dict[str, Run]]:
    """The four presets' quick runs, by preset name and then label: the session's quick
    preset runs (conftest.py), trained once for every test that reads them."""
    presets = [REGISTRY.preset(n, quick=True) for n in NAMES]
    runs = quick_preset_runs
    return {p.name: {lab: runs[c.key] for lab, c in zip(p.labels, p.configs, strict=True)}
            for p in presets}  # fmt: skip


def numbers(value: Any) -> list[float]:
    """Every number in a claim's measured JSON (None, strings and booleans skipped)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in numbers(v)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    return []


@pytest.mark.parametrize("name", NAMES)
def test_each_check_returns_claims_with_finite_numbers_and_a_sentence(quick, name) -> None:
    p = REGISTRY.preset(name, quick=True)
    claims = p.check(quick[name])
    assert claims
    for c in claims:
        assert c.statement.endswith(".") and c.claim and c.criterion
        assert 0 <= c.successes <= c.seeds and c.seeds > 0
        values = numbers(c.measured)
        assert values and all(math.isfinite(v) for v in values), (name, c.measured)
    picture, _ = card_picture(p, quick[name])  # the gallery card draws
    assert picture.get("data")


def test_the_transition_is_where_the_runs_reach_the_sparse_basin(quick) -> None:
    runs = quick["persistence-transition"]
    (claim,) = persistence_transition.check(runs)
    per_q = claim.measured["per_q"]
    assert list(per_q) == ["0", "0.5"]
    for q, group in persistence_transition.by_persistence(runs).items():
        m = story(group)
        mine = per_q[f"{q:g}"]
        assert mine["regime_best"] == m["regime_best"]
        assert mine["first_sparse"] == persistence_transition.first_sparse(
            m["sparsity"], m["regime_best"]
        )
    q0, q5 = (per_q[q]["first_sparse"] for q in ("0", "0.5"))
    expected = q5 is None and q0 is not None or None not in (q0, q5) and q5 > q0
    assert claim.held == bool(expected)


def test_first_sparse_reads_the_last_run_of_the_sparse_basin() -> None:
    S = (0.3, 0.5, 0.7, 0.9)
    assert persistence_transition.first_sparse(S, "dd.s") == 0.9
    assert persistence_transition.first_sparse(S, "dsss") == 0.5
    assert persistence_transition.first_sparse(S, "dsds") == 0.9
    assert persistence_transition.first_sparse(S, "ddd.") is None


def test_the_parked_count_is_the_best_seeds_kernel(quick) -> None:
    runs = quick["relu-rnn-persistence"]
    (claim,) = relu_rnn_persistence.check(runs)
    for lab, run in runs.items():
        a = kernel(run)[run.best]
        mine = claim.measured["per_q"][f"{run.config.persistence:g}"]
        assert mine["intermediate_free_best"] == int((a[:3] <= TOL).sum()), lab
        np.testing.assert_allclose(mine["a_best"], a[:7], atol=1e-3)
    assert claim.seeds == 16  # the q = 0.5 run's seeds; q = 0 is the uncounted reference


def test_the_window_numbers_are_the_kernel_and_the_directions(quick) -> None:
    runs = quick["sum-window"]
    shape, one = sum_window.check(runs)
    for lab, run in runs.items():
        k, w = run.config.k, run.config.window
        a = kernel(run)[run.best, k : k + w]
        np.testing.assert_allclose(shape.measured["runs"][lab]["a_window_best"], a, atol=1e-3)
    assert set(one.measured["runs"]) == {"ssm w=3", "linear w=3"}  # w ≥ 2 only
    assert one.seeds == sum(runs[lab].config.seeds for lab in one.measured["runs"])


def test_the_cued_fractions_are_the_loss_over_the_silent_loss(quick) -> None:
    runs = quick["cued-capacity"]
    wider, beats = cued_capacity.check(runs)
    for lab, run in runs.items():
        silent = tasks_frame.silent_loss(run.config)
        frac = ranking_loss(run)[run.best] / silent
        assert wider.measured["loss_over_silent_best"][lab] == pytest.approx(frac, abs=6e-4)
    assert wider.measured == beats.measured
