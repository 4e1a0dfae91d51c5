"""The pieces several presets' claims share (`tempsup.paper.ties`, `presets._loss_terms`),
on stand-in runs with known answers (fast: no training)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tempsup.paper.preset import fixed, result
from tempsup.paper.presets._loss_terms import late, terms_sentence
from tempsup.paper.ties import TIES, Verdict, judge_every, noted, per_run


def untied(best: int) -> SimpleNamespace:
    """What `judge` reads of a run whose best seed has no tie."""
    return SimpleNamespace(best=best, best_seed=SimpleNamespace(tied=False, seeds=[best]))


def test_judge_every_counts_every_seed_and_holds_only_on_every_best_seed() -> None:
    runs = {"N_h=2": untied(0), "N_h=5": untied(1)}
    ok = {"N_h=2": np.array([True, False]), "N_h=5": np.array([False, True])}
    every, verdict = judge_every(runs, ok.__getitem__, list(runs))
    assert every.tolist() == [True, False, False, True]
    assert verdict == Verdict(True)
    _, verdict = judge_every({**runs, "N_h=5": untied(0)}, ok.__getitem__, list(runs))
    assert not verdict.held


def test_the_tie_note_is_kept_with_the_numbers_and_closes_the_statement() -> None:
    assert noted({"k=0": 0.5}, Verdict(True)) == {"k=0": 0.5}
    measured = noted({"k=0": 0.5, "k=1": 0.25}, Verdict(True, "k=1: seeds 2 and 3 tied"))
    assert measured[TIES] == "k=1: seeds 2 and 3 tied"
    said = per_run(measured, lambda a: fixed(a, 2), "A's recall ")
    assert said == "A's recall k = 0: 0.50; k = 1: 0.25."
    claim = result("A survives", np.array([True]), True, measured, "", lambda m: said)
    assert claim.statement == said + " Ties: k=1: seeds 2 and 3 tied."


def test_late_frames_and_the_four_terms_sentence() -> None:
    assert late(SimpleNamespace(n_frames=10)) == slice(8, None)
    assert late(SimpleNamespace(n_frames=3)) == slice(2, None)  # at least the last frame
    terms = {"task": 0.5, "mean_correction": 0.25, "projection": 0.125, "composition": 0.0}
    assert terms_sentence(terms, 0.875, 0.9) == (
        "task 0.5000 + mean correction 0.2500 + projection 0.1250 + composition 0.0000 = "
        "0.8750 against a measured 0.9000"
    )
