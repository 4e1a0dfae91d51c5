"""A claim judged on the best seed when other seeds cannot be told apart from it.

`Run.best_seed` reports the seeds whose expected loss is within its accuracy (or its
Monte Carlo standard error, after refinement) of the best. A claim "held on the best
seed" is then held only if it holds whichever of those tied seeds is taken as best; when
they disagree the verdict is "not held" and its note says which seeds disagree and how
close they are, so a card reads "seeds 3 and 5 within 0.12 %: held on 3, not on 5"
rather than letting sampling noise decide.

A claim over several runs (N_h = 2, 5, 10; k = 0..4) judges its per-seed test on the best
seed of every run at once (`judge_every`) and may keep its numbers run by run (`per_run`
says them). A claim's numbers carry the note under `TIES` (`noted`), and its statement
closes with it (`said_ties`, added by `tempsup.paper.preset.result`), so every preset
says a tie the same way.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tempsup.io.run import Run

MAX_CHOICES = 256  # combinations of tied seeds tried (beyond: one run's ties at a time)
TIES = "best_seed_ties"  # measured key of a claim: the seeds tied with a best seed, their verdicts


@dataclass(frozen=True)
class Verdict:
    """`held` on every choice of tied best seeds; `note` says the ties and, when the tied
    seeds disagree, on which seed it holds and on which not ("" without ties)."""

    held: bool
    note: str = ""


def judge(
    runs: Mapping[str, Run],
    held_of: Callable[[dict[str, int]], bool],
    labels: Sequence[str] | None = None,
    name: Callable[[str, int], str] | None = None,
) -> Verdict:
    """`held_of({label: seed})` for the best seeds of `runs` (restricted to `labels`),
    and for every choice among the seeds tied with each best (`Run.best_seed.tied`).
    `name(label, seed)` may describe a seed ("pentagon") in the note."""
    labels = list(runs) if labels is None else list(labels)
    best = {lab: runs[lab].best for lab in labels}
    base = bool(held_of(dict(best)))
    tied = [lab for lab in labels if runs[lab].best_seed.tied]
    if not tied:
        return Verdict(base)
    options = [runs[lab].best_seed.seeds for lab in tied]
    n = 1
    for o in options:
        n *= len(o)
    if n <= MAX_CHOICES:
        picks = [dict(zip(tied, c, strict=True)) for c in itertools.product(*options)]
    else:
        picks = [{lab: s} for lab, o in zip(tied, options, strict=True) for s in o]
    outcome: dict[tuple[str, int], set[bool]] = {}
    for pick in picks:
        held = bool(held_of({**best, **pick}))
        for lab, s in pick.items():
            outcome.setdefault((lab, s), set()).add(held)
    verdicts = set().union(*outcome.values())
    parts = []
    for lab in tied:
        choice = runs[lab].best_seed
        where = f"{lab}: " if len(labels) > 1 else ""
        tie = where + choice.tie_text
        if len(verdicts) > 1:
            on = [s for s in choice.seeds if outcome[(lab, s)] == {True}]
            off = [s for s in choice.seeds if outcome[(lab, s)] == {False}]
            said = []
            if on:
                said.append("held on " + ", ".join(_seed(lab, s, name) for s in on))
            if off:
                said.append("not on " + ", ".join(_seed(lab, s, name) for s in off))
            tie += f" ({'; '.join(said)})" if said else ""
        parts.append(tie)
    if len(verdicts) > 1:
        return Verdict(False, "; ".join(parts) + ": the tied best seeds disagree, so not held")
    return Verdict(base, "; ".join(parts) + ": tied best seeds, the same verdict on each")


def judge_every(
    runs: Mapping[str, Run],
    ok_of: Callable[[str], np.ndarray],
    labels: Sequence[str],
    name: Callable[[str, int], str] | None = None,
) -> tuple[np.ndarray, Verdict]:
    """A per-seed test `ok_of(label)` ((M,) bools) over several runs: every (run, seed)'s
    verdict, run after run (the claim's success count), and the verdict when it holds on
    the best seed of every run at once, tied seeds included (`judge`)."""
    ok = {lab: np.asarray(ok_of(lab)) for lab in labels}
    verdict = judge(runs, lambda best: all(ok[lab][best[lab]] for lab in labels), labels, name)
    return np.concatenate([ok[lab] for lab in labels]), verdict


def noted(measured: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
    """A claim's numbers with the verdict's tie note under `TIES` (as they are without ties)."""
    return {**measured, TIES: verdict.note} if verdict.note else measured


def said_ties(measured: dict[str, Any]) -> str:
    """The tie note of a claim's numbers as a closing sentence ("" without ties)."""
    note = measured.get(TIES)
    return f" Ties: {note}." if note else ""


def per_run(measured: dict[str, Any], phrase: Callable[[Any], str], lead: str = "") -> str:
    """A claim's numbers kept run by run under their labels ("N_h=5", "k=2") as one sentence:
    `lead`, then "N_h = 5: <phrase of its numbers>" for each run, ";"-joined (the tie note
    left to `said_ties`)."""
    runs = [f"{lab.replace('=', ' = ')}: {phrase(v)}" for lab, v in measured.items() if lab != TIES]
    return lead + "; ".join(runs) + "."


def _seed(label: str, seed: int, name: Callable[[str, int], str] | None) -> str:
    return f"seed {seed}" + (f" ({name(label, seed)})" if name is not None else "")
