"""The best seed is chosen on the expected loss, not on a noisy batch loss
(tempsup.io.run.choose_best), and while a job streams the view follows the seed that leads
now without flickering (tempsup.io.run.leading_seed).

Exact expected loss (linear, SSM): its argmin, ties within the method's accuracy
reported. Monte Carlo (ReLU RNN): seeds within two standard errors of the lowest are
refined with more sequences before choosing; seeds that stay level are reported tied,
and a claim judged on a tied best seed says when the tied seeds disagree.
"""

from __future__ import annotations

import numpy as np
import pytest

import tempsup.io.run as run_module
from tempsup.io.describe import describe, lines
from tempsup.io.run import Run, choose_best, leading_seed, recent_loss
from tempsup.model.config import RunConfig
from tempsup.paper import shipped
from tempsup.paper.presets import preset
from tempsup.paper.ties import judge


def hand_made(config: RunConfig, loss, expected, se=None, weights=None) -> Run:
    """A one-frame run with the given per-seed numbers (weights zero unless given)."""
    m = len(loss)
    n_h, n_x = config.hidden, config.inputs
    w = weights or {
        "W_x": np.zeros((m, n_h, n_x)), "W_h": np.zeros((m, n_h, n_h)),
        "W_y": np.zeros((m, n_h, n_x)), "b_y": np.zeros((m, n_x)),
    }  # fmt: skip
    arrays = {
        "step": np.array([config.steps]),
        **{name: np.asarray(a, dtype=np.float32)[None] for name, a in w.items()},
        "loss": np.asarray([loss], dtype=np.float32),
        "terms": np.zeros((1, m, 4), dtype=np.float32),
        "expected_loss": np.asarray([expected], dtype=np.float32),
        "expected_loss_se": np.asarray([se if se is not None else [0.0] * m], dtype=np.float32),
    }
    return Run(config.replace(seeds=m), arrays)


LINEAR = RunConfig("linear", steps=10, snapshot_every=10)


def test_exact_expected_loss_decides_where_the_measured_loss_ranks_otherwise() -> None:
    run = hand_made(LINEAR, loss=[0.10, 0.30, 0.20], expected=[0.31, 0.12, 0.20])
    assert int(np.argmin(run.final_loss)) == 0  # what the batch loss would have picked
    assert run.best == 1
    choice = run.best_seed
    assert (choice.criterion, choice.tied) == ("expected", ())
    assert choice.reason == "lowest expected loss"
    assert choice.value == pytest.approx(0.12)


def test_exact_ties_are_reported_and_broken_by_the_measured_loss() -> None:
    run = hand_made(LINEAR, loss=[0.30, 0.20, 0.10], expected=[0.125, 0.125, 0.2])
    choice = run.best_seed
    assert choice.seed == 1 and choice.tied == (0,)  # tied; the lower measured loss shows
    assert choice.tie_text == "seeds 1 and 0 within 0 %"
    assert choice.verdict([True, True, False]) is True
    assert choice.verdict([False, True, False]) is None  # tied seeds disagree


def test_without_an_expected_loss_the_measured_loss_decides_and_says_so() -> None:
    run = hand_made(LINEAR, loss=[0.3, 0.1, 0.2], expected=[np.nan] * 3, se=[np.nan] * 3)
    assert run.best == 1
    assert run.best_seed.criterion == "measured"
    assert "measured" in run.best_seed.reason and "not computed" in run.best_seed.reason


# ---- the ReLU RNN: Monte Carlo estimates refined before choosing ---------------------


@pytest.fixture(scope="module")
def vector_k0() -> Run:
    """The shipped N_x = 5, k = 0 vector-input ReLU RNN (8 seeds, its final frame)."""
    p = preset("vector-all-or-none", quick=False)
    run = shipped.load(p.configs[p.labels.index("k=0")])
    assert run is not None
    return run


def two_seeds(run: Run, seeds: list[int], expected: list[float], se: list[float]) -> Run:
    """A run of these seeds' final weights, with the frame estimates given."""
    weights = {n: run[n][-1, seeds] for n in ("W_x", "W_h", "W_y", "b_y")}
    loss = [float(run.final_loss[s]) for s in seeds]
    return hand_made(run.config, loss, expected, se, weights)


def test_refinement_separates_seeds_the_frame_estimate_could_not(vector_k0: Run) -> None:
    """Seeds 3 and 5 of the k = 0 run: 0.1389 ± 0.0014 and 0.1404 ± 0.0015 at the last
    frame, within two standard errors. Stored the other way round (5 looks lower), the
    choice still falls on 3: it is made on the refined estimates, not the frame's."""
    run = two_seeds(vector_k0, [3, 5], expected=[0.1404, 0.1389], se=[0.0014, 0.0015])
    choice = choose_best(run.config, run.arrays)
    assert choice.criterion == "estimated"
    assert choice.seed == 0 and choice.tied == ()  # seed 3 of the original run
    assert choice.sequences > 0 and choice.error < 0.001
    assert "Monte Carlo" in choice.reason


def test_a_run_still_training_is_summarised_without_refining(vector_k0: Run) -> None:
    """A sweep summarises every snapshot (`tempsup.analysis.sweeps.sweep_frame`): there the frame's
    own estimates decide, and the seeds within two standard errors are reported tied."""
    pair = two_seeds(vector_k0, [3, 5], expected=[0.1404, 0.1389], se=[0.0014, 0.0015])
    choice = pair.provisional().best_seed
    assert (choice.seed, choice.tied, choice.sequences) == (1, (0,), 0)


def test_seeds_that_stay_level_after_refinement_are_reported_tied(
    vector_k0: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two copies of one network (the second nudged by 1e-6) cannot be told apart, however
    far they are refined (here within a smaller time bound, to keep the test short)."""
    monkeypatch.setattr(run_module, "REFINE_SECONDS", 0.5)
    w = {n: vector_k0[n][-1, [3, 3]].copy() for n in ("W_x", "W_h", "W_y", "b_y")}
    w["W_x"][1] += 1e-6
    run = hand_made(vector_k0.config, [0.14, 0.13], [0.139, 0.139], [0.0014, 0.0014], w)
    choice = run.best_seed
    assert choice.criterion == "estimated" and set(choice.seeds) == {0, 1}
    assert choice.sequences >= 8 * 3072  # refined as far as allowed, still level
    assert choice.gap < 1e-3 and choice.tie_text.startswith("seeds ")
    verdict = judge({"k=0": run}, lambda b: b["k=0"] == 0, name=lambda lab, s: f"shape {s}")
    assert not verdict.held
    assert "disagree" in verdict.note and "held on seed 0 (shape 0)" in verdict.note
    agree = judge({"k=0": run}, lambda b: True)
    assert agree.held and "the same verdict" in agree.note


def test_the_choice_is_reproducible_and_kept_in_the_run_file(vector_k0: Run) -> None:
    pair = two_seeds(vector_k0, [3, 5], expected=[0.1404, 0.1389], se=[0.0014, 0.0015])
    first = choose_best(pair.config, pair.arrays)
    run_module._BEST.clear()
    again = choose_best(pair.config, pair.arrays)
    assert (again.seed, again.tied, again.value, again.error) == (
        first.seed, first.tied, first.value, first.error,
    )  # fmt: skip
    data = pair.to_bytes()
    run_module._BEST.clear()
    loaded = Run.from_bytes(data)
    assert loaded.best_seed == pair.best_seed == again
    assert not run_module._BEST  # read from the file, not chosen again


def test_inspect_says_how_the_best_seed_was_chosen() -> None:
    run = hand_made(LINEAR, loss=[0.30, 0.20, 0.10], expected=[0.125, 0.125, 0.2])
    text = "\n".join(lines(describe(run)))
    assert "best seed 1: lowest expected loss; seeds 1 and 0 within 0 %: not told apart" in text
    assert describe(run)["best_seed"]["tied"] == [0]


# ---- while a job streams ------------------------------------------------------------


def test_the_streamed_view_follows_the_seed_that_leads_now_with_hysteresis() -> None:
    # seed 0 leads the first frames, seed 1 overtakes it for good from frame 6
    loss = np.array([[0.5, 0.9]] * 6 + [[0.88, 0.45]] * 6)
    assert leading_seed(loss[:6]) == 0
    assert leading_seed(loss, current=0) == 1  # clearly ahead over the last frames
    np.testing.assert_allclose(recent_loss(loss[:8], window=5), [0.652, 0.72])
    # level seeds: the one shown stays (no flicker on batch noise)
    level = np.array([[0.50, 0.49], [0.49, 0.50], [0.50, 0.49]])
    assert leading_seed(level, current=1) == 1 and leading_seed(level, current=0) == 0
    assert leading_seed(level) == int(np.argmin(recent_loss(level)))
    assert leading_seed(loss, current=7) == 1  # a seed that does not exist is ignored


@pytest.mark.slow
def test_the_issue_case_vector_input_k0_base_seed_44_shows_a_pentagon() -> None:
    """N_x = 5, k = 0, N_h = 2, base seed 44 (the vector-all-or-none preset's config):
    the final batch loss favours seed 0, which keeps A–D on a square and drops E; on the
    refined expected loss the best seed, and every seed tied with it, is a regular
    pentagon. Trains 8 seeds × 1500 steps: 20 s measured on an idle 2-core machine, 31 min
    when the same machine was loaded by parallel work, hence `slow`."""
    from tempsup.analysis.measures import final_weights, is_regular_polygon
    from tempsup.paper.reproduce import train_configs

    p = preset("vector-all-or-none", quick=False)
    config = p.configs[p.labels.index("k=0")].replace(seed=44)
    run = train_configs([config])[config.key]
    pentagon = is_regular_polygon(final_weights(run)["W_x"])
    measured = int(np.argmin(run.final_loss))
    assert not pentagon[measured]  # what the batch loss would have shown: the square
    choice = run.best_seed
    assert choice.criterion == "estimated" and choice.sequences > 0
    assert all(pentagon[s] for s in choice.seeds), (choice, pentagon)
    assert choice.verdict(pentagon) is True
