"""The guided lesson: the paper's story in six predict-then-reveal steps.

Each step names one preset run (so it needs no training of its own: the
gallery's runs are reused) and the claims measured on it. A student first
answers a question with choices, then the step reveals the answer, animates
the run and explains it with the numbers measured on *this* server's runs —
`explanation(step, claims)` fills the step's text from the claims'
`measured` dicts, so the words can never drift from the figures (a sentence whose claim
is not measured on this server is left out).

Plain data and string formatting only (no web imports): the Dash page
(`app/pages/lesson.py`) and the static site both render it.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

MISSING = "—"  # shown for a number the run does not have (e.g. a claim not measured yet)


def _fields(text: str) -> set[str]:
    """The format fields of a step's text (`c0[k_theta_deg]`, `x0.statement`, …)."""
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def _claim_of(field: str) -> str:
    """The claim a field reads: `c0[k_theta_deg]` → `c0`."""
    return field.split("[")[0].split(".")[0]


# where a step's text ends a sentence (a field's words may hold several: they stay in it)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass(frozen=True)
class Step:
    """One step: a question about a preset run, its answer and the explanation.

    `claims` are indices into the preset's claim results (in the order its
    checker returns them); `why` is a format string whose fields name them,
    `{c0[k_theta_deg]}` being the measured value `k_theta_deg` of the first
    listed claim and `{c0.rate}` its "x of n seeds". `compare` lists the preset's run
    labels a question compares (dense with sparse, k = 0 with larger k): the step animates
    each of them side by side; empty means `run` alone. `cites` names claims of other
    presets the text reads, as (preset, claim index), fields `{x0}`, `{x1}`, …: a claim is
    measured once, by its own preset, and every text that tells it reads that result.
    A claim field also gives `.statement` (the claim's own sentence), `.count` (its count
    with what it counts) and `.verdict` ("held" or "did not hold").
    """

    slug: str
    title: str
    preset: str
    run: str  # the preset's run label the step animates and opens in the explorer
    claims: tuple[int, ...]
    question: str
    choices: tuple[str, ...]
    answer: int
    why: str
    compare: tuple[str, ...] = ()
    cites: tuple[tuple[str, int], ...] = ()

    @property
    def shown(self) -> tuple[str, ...]:
        """The run labels the step animates: the compared runs, else its one run."""
        return self.compare or (self.run,)

    def __post_init__(self) -> None:
        if self.compare and self.run not in self.compare:
            raise ValueError(f"step {self.slug}: run {self.run!r} is not among {self.compare}")
        if not 0 <= self.answer < len(self.choices):
            raise ValueError(f"step {self.slug}: answer {self.answer} is not one of the choices")
        for f in _fields(self.why):
            name = _claim_of(f)
            if not (name[:1] in ("c", "x") and name[1:].isdigit()):
                raise ValueError(f"step {self.slug}: field {{{f}}} does not name a claim c0, c1, "
                                 "… (or a cited claim x0, x1, …)")  # fmt: skip
            listed = self.claims if name[0] == "c" else self.cites
            if int(name[1:]) >= len(listed):
                raise ValueError(f"step {self.slug}: {{{f}}} but the step lists "
                                 f"{len(listed)} such claims")  # fmt: skip


# What two steps each read: the first two, the spiral-sink preset's linear RNN; the third
# and the fourth, the SSM's sparse run beside its dense one.
SPIRAL_SINK: dict[str, Any] = {"preset": "spiral-sink", "run": "linear"}
SSM_DENSE_SPARSE: dict[str, Any] = {
    "preset": "ssm-dense-vs-sparse",
    "run": "sparse",
    "compare": ("dense", "sparse"),
}

STEPS: tuple[Step, ...] = (
    Step(
        slug="spiral-sink",
        title="A linear RNN remembers with a spiral sink",
        question=(
            "A linear RNN with a 2-dimensional hidden state must output the input it saw "
            "k = 3 steps ago. What does its recurrence W_h learn?"
        ),
        choices=(
            "A rotation by about 90°/k per step that also shrinks: a spiral sink",
            "A pure decay, with no rotation",
            "The identity: it keeps every input forever",
            "An exact 3-step shift register",
        ),
        answer=0,
        **SPIRAL_SINK,
        claims=(0,),
        why=(
            "Each step rotates the hidden state by a roughly constant angle and shrinks it, so "
            "after k steps the input has turned by about 90° onto the readout while older inputs "
            "keep shrinking: smooth forgetting. Measured on the best seed (the ideal k·arg λ is "
            "90°, |λ| < 1 inside the unit circle): {c0.statement} {c0.count} agree."
        ),
    ),
    Step(
        slug="four-terms",
        title="The loss is four terms",
        question=(
            "The paper splits the expected loss into four terms: the task term, a mean "
            "correction, projection interference and composition interference. For the "
            "linear RNN, how close is their sum to the loss measured on samples?"
        ),
        choices=(
            "Equal, up to the sampling noise of a minibatch",
            "Within about 20 %",
            "Only the order of magnitude agrees",
        ),
        answer=0,
        **SPIRAL_SINK,
        claims=(2,),
        why=(
            "For a linear network the four terms are the exact expected loss, not an "
            "approximation. Measured at the end of training (best seed): {c0.statement} "
            "{c0.count} agree within 5 %. Watch the loss panel: the terms move with the measured "
            "curve all through training."
        ),
    ),
    Step(
        slug="interference-free",
        title="Sparsity opens an interference-free half-space",
        question=(
            "Now the readout has a ReLU and inputs are sparse (S = 0.9: an input is non-zero "
            "10 % of the time). Where do the intermediate directions w_s (s < k), which the "
            "network still needs to remember, go?"
        ),
        choices=(
            "Into the half-space the readout maps to a negative value, which the ReLU clips",
            "They shrink to zero",
            "They line up with the readout",
            "They spread evenly around the circle, as with dense inputs",
        ),
        answer=0,
        **SSM_DENSE_SPARSE,  # its numbers quote the dense run beside the sparse
        claims=(3,),
        why=(
            "With sparse inputs an input usually arrives alone, and then a direction with "
            "w_yᵀw_s ≤ 0 costs nothing: the ReLU outputs 0. So the network parks the "
            "intermediate directions there (the shaded interference-free half-space) and only "
            "w_k projects positively. Measured projections a_s = w_yᵀw_s of the best seeds: "
            "{c0.statement} {c0.count} of the sparse run agree."
        ),
    ),
    Step(
        slug="phase-transition",
        title="The SSM's phase transition",
        question=(
            "Compare the SSM trained on dense inputs (S = 0.3) with the one trained on sparse "
            "inputs (S = 0.9). What happens to the best seed's angle kθ swept from w_0 to w_k?"
        ),
        choices=(
            "It is about 100° dense and about 270° sparse: another basin of solutions wins",
            "It stays near 90°",
            "It shrinks to 0°",
            "It grows gradually with every bit of sparsity",
        ),
        answer=0,
        **SSM_DENSE_SPARSE,
        claims=(0, 1, 2),
        cites=(("ssm-jump", 0),),
        why=(
            "Dense inputs interfere everywhere, so the directions stay within about a quarter "
            "turn; sparse inputs make it pay to swing the intermediate directions round into the "
            "interference-free half-space. Measured on the best seeds: kθ = {c0[k_theta_deg]}° "
            "dense ({c0.count} near 100°), {c1[k_theta_deg]}° sparse ({c1.count} near 270°); "
            "the spectral radius falls from {c2[rho_dense]} to {c2[rho_sparse]}. In between, "
            "the ssm-jump preset trains the same seeds at ten sparsities, which tells a seed "
            "moving apart from the winning basin changing: {x0.statement}"
        ),
    ),
    Step(
        slug="sharp-forgetting",
        title="The ReLU RNN forgets sharply",
        question=(
            "A linear RNN forgets smoothly: old inputs fade. With a ReLU in the recurrence and "
            "very sparse inputs (S = 0.97), what does the readout see of an input older than k?"
        ),
        choices=(
            "Exactly nothing: its response is zero after s = k",
            "A decaying oscillation, as in the linear RNN",
            "A constant offset",
        ),
        answer=0,
        preset="relu-rnn-sharp-forgetting",
        run="tied",
        compare=("linear", "tied"),
        claims=(0, 1),
        why=(
            "The ReLU can switch a direction off completely: the network places w_k where no "
            "hidden unit is positive. The readout still sees it (it reads h before any ReLU), but "
            "the recurrence's ReLU erases it, so nothing of the input reaches step k + 1. "
            "Measured on the best seed: {c0.statement} {c1.statement} ({c1.count} are sharp.)"
        ),
    ),
    Step(
        slug="all-or-none",
        title="Many features: all or none",
        question=(
            "Five features A–E of decreasing importance share a 2-dimensional hidden state; at "
            "k = 0 the paper finds them on a pentagon. As the delay k grows, what does the "
            "paper say the network does?"
        ),
        choices=(
            "It keeps the most important features whole and drops the others entirely",
            "It keeps every feature, each a little less accurately",
            "It drops features at random",
        ),
        answer=0,
        preset="vector-all-or-none",
        run="k=0",
        compare=("k=0", "k=2", "k=4"),
        claims=(0, 1, 2, 3),
        why=(
            "Remembering a feature for k steps takes k + 1 directions, so the plane fills up: "
            "rather than keep everything badly, the paper's network keeps a few features fully "
            "and drops the rest (all or none), most important first. What these runs measured "
            "(the best seed of each k): the pentagon at k = 0 {c0.verdict} ({c0.count}): "
            "{c0.statement} All or none {c1.verdict} ({c1.count}): {c1.statement} Most "
            "important first {c2.verdict} ({c2.count}): {c2.statement} Fewer features as k "
            "grows {c3.verdict} ({c3.count}): {c3.statement}"
        ),
    ),
)


def shown_choices(item: Step) -> tuple[list[str], int]:
    """The choices in the order a student sees them, and the answer's place there.

    A fixed shuffle per step (seeded by its slug, the same in every process), so
    the right answer is not always the first one and a teacher's screen matches
    the students'.
    """
    order = list(range(len(item.choices)))
    random.Random(item.slug).shuffle(order)
    return [item.choices[i] for i in order], order.index(item.answer)


def step(index: int) -> Step:
    """Step `index` (1-based, as in the URL `?step=3`), clamped to the lesson."""
    return STEPS[min(max(index, 1), len(STEPS)) - 1]


def step_number(query: str | None) -> int:
    """The step a URL query asks for (`step=3`; anything else: the first)."""
    raw = parse_qs((query or "").lstrip("?")).get("step", ["1"])[0]
    try:
        n = int(raw)
    except ValueError:
        return 1
    return min(max(n, 1), len(STEPS))


class _Claim:
    """A claim's fields for the format string: `[key]` its measured values, `.rate` its seeds,
    `.count` the count with what it counts, `.statement` its sentence, `.verdict` held or not."""

    def __init__(self, claim: Mapping[str, Any] | None) -> None:
        self._measured = _Values((claim or {}).get("measured", {}))
        measured = bool(claim and "seeds" in claim)
        self.rate = f"{claim['successes']} of {claim['seeds']}" if measured else MISSING
        self.count = (
            f"{self.rate} {claim.get('counted') or 'seeds'}" if claim and measured else MISSING
        )
        self.statement = (claim or {}).get("statement") or MISSING
        self.verdict = (
            ("held" if claim["held"] else "did not hold") if claim and "held" in claim else MISSING
        )

    def __getitem__(self, key: str) -> Any:
        return self._measured[key]


class _Values:
    """Nested measured values; a missing key reads as MISSING instead of raising."""

    def __init__(self, data: Any) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        value = self._data.get(key, MISSING) if isinstance(self._data, Mapping) else MISSING
        return _Values(value) if isinstance(value, Mapping) else _Shown(value)


class _Shown:
    """A leaf value, formatted for prose; indexing further (a missing branch) stays missing."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __getitem__(self, key: str) -> _Shown:
        return _Shown(MISSING)

    def __format__(self, spec: str) -> str:
        return _show(self.value)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)


def explanation(
    item: Step,
    claims: Sequence[Mapping[str, Any]] | None,
    cited: Mapping[str, Sequence[Mapping[str, Any]] | None] | None = None,
) -> str:
    """The step's explanation with the measured numbers of its preset's claims
    (`ClaimResult.to_dict()` of every claim, in checker order; None: not measured yet) and
    of the claims it cites (`cited`: every claim of each preset in `cited_presets(item)`, by
    preset name; a preset missing or None: not measured yet). A sentence that reads a
    claim not measured is left out: what is said holds without numbers, and no number
    stands in for one this server does not have."""
    picked: dict[str, Mapping[str, Any] | None] = {
        f"c{i}": claims[idx] if claims is not None and idx < len(claims) else None
        for i, idx in enumerate(item.claims)
    }
    for i, (name, idx) in enumerate(item.cites):
        theirs = (cited or {}).get(name)
        picked[f"x{i}"] = theirs[idx] if theirs is not None and idx < len(theirs) else None
    said = []
    for sentence in _SENTENCE_END.split(item.why):
        named = {_claim_of(f) for f in _fields(sentence)}
        if all(picked[n] is not None for n in named):
            said.append(sentence.format(**{n: _Claim(picked[n]) for n in named}))
    return " ".join(said)


def cited_presets(item: Step) -> tuple[str, ...]:
    """The other presets whose claims the step's text reads (each once, in order)."""
    return tuple(dict.fromkeys(name for name, _ in item.cites))
