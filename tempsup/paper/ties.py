"""A claim judged on the best seed when other seeds cannot be told apart from it.

`Run.best_seed` reports the seeds whose expected loss is within its accuracy (or its
Monte Carlo standard error, after refinement) of the best. A claim "held on the best
seed" is then held only if it holds whichever of those tied seeds is taken as best; when
they disagree the verdict is "not held" and its note says which seeds disagree and how
close they are, so a card reads "seeds 3 and 5 within 0.12 %: held on 3, not on 5"
rather than letting sampling noise decide.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tempsup.io.run import Run

MAX_CHOICES = 256  # combinations of tied seeds tried (beyond: one run's ties at a time)


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


def _seed(label: str, seed: int, name: Callable[[str, int], str] | None) -> str:
    return f"seed {seed}" + (f" ({name(label, seed)})" if name is not None else "")
