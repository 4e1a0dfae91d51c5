"""The guided lesson: the paper's story in six predict-then-reveal steps.

Each step names one preset run (so it needs no training of its own: the
gallery's runs are reused) and the claims measured on it. A student first
answers a question with choices, then the step reveals the answer, animates
the run and explains it with the numbers measured on *this* server's runs —
`explanation(step, claims)` fills the step's text from the claims'
`measured` dicts, so the words can never drift from the figures.

Plain data and string formatting only (no web imports): the Dash page
(`app/pages/lesson.py`) and the static site both render it.
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

MISSING = "—"  # shown for a number the run does not have (e.g. a claim not measured yet)


@dataclass(frozen=True)
class Step:
    """One step: a question about a preset run, its answer and the explanation.

    `claims` are indices into the preset's claim results (in the order its
    checker returns them); `why` is a format string whose fields name them,
    `{c0[k_theta_deg]}` being the measured value `k_theta_deg` of the first
    listed claim and `{c0.rate}` its "x of n seeds". `compare` lists the preset's run
    labels a question compares (dense with sparse, k = 0 with larger k): the step animates
    each of them side by side; empty means `run` alone.
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

    @property
    def shown(self) -> tuple[str, ...]:
        """The run labels the step animates: the compared runs, else its one run."""
        return self.compare or (self.run,)

    def __post_init__(self) -> None:
        if self.compare and self.run not in self.compare:
            raise ValueError(f"step {self.slug}: run {self.run!r} is not among {self.compare}")
        if not 0 <= self.answer < len(self.choices):
            raise ValueError(f"step {self.slug}: answer {self.answer} is not one of the choices")
        fields = {f for _, f, _, _ in string.Formatter().parse(self.why) if f}
        for f in fields:
            name = f.split("[")[0].split(".")[0]
            if not (name.startswith("c") and name[1:].isdigit()):
                raise ValueError(f"step {self.slug}: field {{{f}}} does not name a claim c0, c1, …")
            if int(name[1:]) >= len(self.claims):
                raise ValueError(f"step {self.slug}: {{{f}}} but the step lists "
                                 f"{len(self.claims)} claims")  # fmt: skip


STEPS: tuple[Step, ...] = (
    Step(
        slug="spiral-sink",
        title="A linear RNN remembers with a spiral sink",
        preset="spiral-sink",
        run="linear",
        claims=(0,),
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
        why=(
            "Each step rotates the hidden state by a roughly constant angle and shrinks it, so "
            "after k steps the input has turned by about 90° onto the readout while older inputs "
            "keep shrinking: smooth forgetting. Measured on the best seed: the leading eigenvalue "
            "has |λ| = {c0[abs_lambda]} (inside the unit circle) and k·arg λ = "
            "{c0[k_arg_lambda_deg]}° (ideal 90°); {c0.rate} seeds agree."
        ),
    ),
    Step(
        slug="four-terms",
        title="The loss is four terms",
        preset="spiral-sink",
        run="linear",
        claims=(2,),
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
        why=(
            "For a linear network the four terms are the exact expected loss, not an "
            "approximation. Measured at the end of training (best seed): task {c0[terms][task]}, "
            "mean correction {c0[terms][mean_correction]}, projection {c0[terms][projection]}, "
            "composition {c0[terms][composition]}; their sum {c0[expected_loss]} against a "
            "measured {c0[measured_loss]} (relative gap {c0[relative_error]}). Watch the loss "
            "panel: the terms move with the measured curve all through training."
        ),
    ),
    Step(
        slug="interference-free",
        title="Sparsity opens an interference-free half-space",
        preset="ssm-dense-vs-sparse",
        run="sparse",
        claims=(3,),
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
        why=(
            "With sparse inputs an input usually arrives alone, and then a direction with "
            "w_yᵀw_s ≤ 0 costs nothing: the ReLU outputs 0. So the network parks the "
            "intermediate directions there (the shaded interference-free half-space) and only "
            "w_k projects positively. Measured projections a_s = w_yᵀw_s, s = 0…k+3: sparse "
            "{c0[a_sparse]}, dense {c0[a_dense]}; {c0.rate} sparse seeds agree."
        ),
    ),
    Step(
        slug="phase-transition",
        title="The SSM's phase transition",
        preset="ssm-dense-vs-sparse",
        run="sparse",
        compare=("dense", "sparse"),
        claims=(0, 1, 2),
        question=(
            "Compare the SSM trained on dense inputs (S = 0.3) with the one trained on sparse "
            "inputs (S = 0.9). What happens to the angle kθ swept from w_0 to w_k?"
        ),
        choices=(
            "It jumps from about 100° to about 270°",
            "It stays near 90°",
            "It shrinks to 0°",
            "It grows gradually with every bit of sparsity",
        ),
        answer=0,
        why=(
            "Dense inputs interfere everywhere, so the directions stay within a quarter turn; "
            "sparse inputs let the network swing the intermediate directions round into the "
            "interference-free half-space, a jump rather than a drift (see the phase diagram "
            "page). Measured: kθ = {c0[k_theta_deg]}° dense, {c1[k_theta_deg]}° sparse; the "
            "spectral radius falls from {c2[rho_dense]} to {c2[rho_sparse]}."
        ),
    ),
    Step(
        slug="sharp-forgetting",
        title="The ReLU RNN forgets sharply",
        preset="relu-rnn-sharp-forgetting",
        run="tied",
        compare=("linear", "tied"),
        claims=(0, 1),
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
        why=(
            "The ReLU can switch a direction off completely: the network places w_k where no "
            "hidden unit is positive. The readout still sees it (it reads h before any ReLU), but "
            "the recurrence's ReLU erases it, so nothing of the input reaches step k + 1. "
            "Measured on the "
            "best seed: a_s = {c0[a]}, {c0[intermediate_free]} of k = {c0[k]} intermediate "
            "directions interference-free; max_(s>k) |a_s|/a_k = "
            "{c1[relu_max_after_k_over_a_k]} against {c1[linear_max_after_k_over_a_k]} for the "
            "linear RNN."
        ),
    ),
    Step(
        slug="all-or-none",
        title="Many features: all or none",
        preset="vector-all-or-none",
        run="k=0",
        compare=("k=0", "k=2", "k=4"),
        claims=(0, 3),
        question=(
            "Five features A–E of decreasing importance share a 2-dimensional hidden state. At "
            "k = 0 they sit on a pentagon. As the delay k grows, how does the network cope?"
        ),
        choices=(
            "It keeps the most important features whole and drops the others entirely",
            "It keeps every feature, each a little less accurately",
            "It drops features at random",
        ),
        answer=0,
        why=(
            "Remembering a feature for k steps takes k + 1 directions, so the plane fills up: "
            "rather than keep everything badly, the network keeps a few features fully and drops "
            "the rest (all or none), most important first. Measured: at k = 0, {c0.rate} seeds "
            "show the pentagon; features represented for k = {c1[k]}: {c1[represented_best]}."
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
    """A claim's fields for the format string: `[key]` its measured values, `.rate` its seeds."""

    def __init__(self, claim: Mapping[str, Any] | None) -> None:
        self._measured = _Values((claim or {}).get("measured", {}))
        self.rate = (
            f"{claim['successes']} of {claim['seeds']}" if claim and "seeds" in claim else MISSING
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


def explanation(item: Step, claims: Sequence[Mapping[str, Any]] | None) -> str:
    """The step's explanation with the measured numbers of its preset's claims
    (`ClaimResult.to_dict()` of every claim, in checker order; None: not measured yet)."""
    picked = {
        f"c{i}": _Claim(claims[idx] if claims is not None and idx < len(claims) else None)
        for i, idx in enumerate(item.claims)
    }
    return item.why.format(**picked)
