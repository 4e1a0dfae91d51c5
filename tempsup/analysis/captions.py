"""Every caption, legend entry and convention note of the RNN panels, written per model.

Why one module: a caption is a claim about the numbers beside it, and those numbers
depend on the model (linear RNN, SSM, ReLU RNN), N_h, N_x, the readout tie, the bias and
what the run computed (`tempsup.theory.budget` skips the four terms or E[L] where they cost too
much). Written once here, as functions of exactly those, the explorer, the HTML export and
the static site say the same thing, and `tests/test_captions.py` walks every combination
the app offers and checks the words against the figures.

A caption is read at a glance (issue 41): a `Caption` is one sentence of at most
`HEADLINE_WORDS` words saying what *this* run shows, with the number the panel beside it
measured (`Measured`, read where each panel computes what it draws:
`tempsup.figures.rnn.measured`), and the explanation behind it, which every surface folds
under a native "Why?" disclosure (`<details>`: keyboard-reachable, no script). Before a run
exists the headline says what training will show, from the config alone.

    Computed          what a run holds: the four terms, E[L] (from `budget.plan` or the run)
    Measured          the numbers a run's headlines cite (one seed, one feature, last frame)
    Caption           headline + why, and the one HTML every static surface prints
    loss_curves       the loss panel's legend: name, colour, width, dash and default
                      visibility of every curve
    loss_title        the loss panel's title and subtitle
    *_caption         the caption under each panel (the panel registry,
                      `tempsup.figures.rnn`, says which panel reads which)
    phase_caption     the phase page's side text
    ktheta_note       the short gauge note the eigen panel prints beside kθ
    gauge_note        one line on the canonical gauge (export summary)

No dash here: the app (`app/panels.py`) only places these strings.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import numpy as np

from tempsup.analysis import measures
from tempsup.core.palette import (
    COLOR_NAMES,
    EXPECTED,
    LOSS,
    OTHER_SEEDS,
    REMAINDER,
    TERM_COLORS,
)
from tempsup.io.run import SUCCESS_FRACTION, TERM_NAMES
from tempsup.io.tasks_frame import CLOSED_FORM, MONTE_CARLO, expected_loss_method
from tempsup.io.tasks_frame import CUED_LINEAR_WARNING as CUED_WARNING
from tempsup.model.config import RunConfig
from tempsup.theory import budget

HEADLINE_WORDS = 25  # a headline is one sentence a reader takes in at a glance
WHY = "Why?"  # the disclosure's label on every surface


def words(text: str) -> int:
    """How many words `text` has, as a reader counts them: every run of non-blanks ("=",
    "0.053" and "(s" each count one)."""
    return len(text.split())


@dataclass(frozen=True)
class Caption:
    """The words under a panel: `headline`, one sentence of at most `HEADLINE_WORDS` words on
    what this run shows, always visible; `why`, the explanation, behind a "Why?" disclosure."""

    headline: str
    why: str

    def __post_init__(self) -> None:
        n = words(self.headline)
        assert n <= HEADLINE_WORDS, (
            f"headline: expected at most {HEADLINE_WORDS} words, got {n}: {self.headline!r}"
        )

    def html(self, css_class: str = "caption") -> str:
        """The caption as the export and the static site print it: the headline, then the
        explanation folded under a native `<details>` (keyboard-reachable without script)."""
        return (
            f'<div class="{css_class}"><p class="headline">{html.escape(self.headline)}</p>'
            f'<details class="why"><summary>{WHY}</summary><p>{html.escape(self.why)}</p>'
            "</details></div>"
        )

    def to_dict(self) -> dict[str, str]:
        return {"headline": self.headline, "why": self.why}


@dataclass(frozen=True)
class Computed:
    """Which of the derived loss curves a run holds (at some frame at least)."""

    terms: bool  # the four terms (and with them their sum and, for ReLU readouts, the remainder)
    expected: bool  # the expected loss E[L]

    @classmethod
    def plan(cls, config: RunConfig) -> Computed:
        """What `tempsup.io.run.derived` computes for this config (`tempsup.theory.budget`)."""
        p = budget.plan(config)
        # beyond recall at q = 0 the four terms exist only in the closed form (linear model)
        four = config.plain_task or expected_loss_method(config) == CLOSED_FORM
        return cls(p.terms and four, p.expected)

    @classmethod
    def of_run(cls, terms: np.ndarray, expected: np.ndarray) -> Computed:
        """What a run's arrays hold: a piece counts when one of its values is finite."""
        return cls(bool(np.isfinite(terms).any()), bool(np.isfinite(expected).any()))


def _computed(config: RunConfig, computed: Computed | None) -> Computed:
    return Computed.plan(config) if computed is None else computed


@dataclass(frozen=True)
class Measured:
    """The numbers a run's headlines cite: one seed and one feature at the run's last frame,
    each taken from the data its panel draws (`tempsup.figures.rnn.measured`), so that a
    headline and the panel beside it cannot disagree. NaN: the run does not have it."""

    step: int  # the last frame's optimizer step
    feature: str = ""  # the feature shown ("A", …) with vector input; "" for scalar input
    # directions panel: the count its corner prints (ReLU readout), ‖w_s‖ in its gauge
    free: int | None = None  # directions but w_k in the interference-free half-space
    others: int = 0  # directions drawn but w_k
    free_intermediate: int | None = None  # … of the k intermediate ones (s < k)
    norms: tuple[float, ...] = ()  # ‖w_s‖, s = 0 … n-1 (canonical gauge)
    # projections panel: a_s = w_yᵀw_s of the feature shown; the heatmap's summary
    a: tuple[float, ...] = ()
    heatmap: dict[str, float] | None = None  # `projections.heatmap_summary` (vector input)
    # eigen panel: its corner's numbers; the leading eigenvalue and the spiral-sink test
    rho: float = math.nan
    swept: float = math.nan  # kθ in degrees, canonical gauge
    lam_abs: float = math.nan
    lam_arg: float = math.nan  # degrees, in [0, 180]
    sink: bool = False  # `measures.spiral`: the claims' spiral-sink test
    # loss panel: the curves' last values, the label's share, the staircase's drops
    loss: float = math.nan
    expected: float = math.nan
    expected_se: float = math.nan  # a Monte Carlo E[L]'s standard error (tasks, persistence)
    temporal: float = math.nan  # the closed form's fifth term, persistence's (q > 0)
    explained: float = math.nan  # Σ terms / E[L] in %, as the panel's label prints it
    terms: dict[str, float] = field(default_factory=dict)  # by TERM_NAMES
    drops: int = 0  # `measures.staircase` of E[L] (linear model)
    # a run with a lens (gated, or read linearised): how far the active response is from the
    # silent one (`tempsup.model.lens`); NaN without one
    nonlinearity: float = math.nan
    stores_nothing: bool = False  # |a_s| ~ 0 at every age (`tempsup.io.describe.SILENT_KERNEL`)


# a gated model's active kernel this close (relative) to the silent one: a linear memory
# (the LRU's, exactly, up to the finite difference's rounding)
LINEAR_MEMORY = 1e-6


def _g(v: float, digits: int = 3) -> str:
    """A number as the panels print it (`tempsup.figures._common.fmt`): `digits`
    significant digits, "n/a" when the run has none."""
    return f"{v:.{digits}g}" if math.isfinite(v) else "n/a"


# ---- the loss panel's curves ----------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    """One legend entry of the loss panel. `key` names the data it draws: "others",
    "expected", "loss", "total", "remainder" or a TERM_NAMES entry. `shown`: drawn when the
    panel opens; the others are in the legend, one click away (Plotly's "legendonly")."""

    key: str
    name: str
    color: str
    width: float
    dash: str = "solid"
    shown: bool = True

    @property
    def color_name(self) -> str:
        return COLOR_NAMES[self.color]

    def words(self) -> str:
        """How a caption names the curve: 'E[L] (vermillion, thick)'."""
        style = {"dot": ", dotted", "dashdot": ", dash-dotted", "dash": ", dashed"}
        extra = style.get(self.dash, "") + (", thick" if self.width >= 3 else "")
        return f"{_generic(self.name)} ({self.color_name}{extra})"


def _generic(name: str) -> str:
    """A legend name without the shown seed's number ("measured loss (seed 3)")."""
    return name.split(" (seed ")[0]


SHOWN_CURVES = 5  # at most this many curves drawn when the loss panel opens


def loss_curves(
    config: RunConfig, computed: Computed | None = None, seed: int | None = None, seeds: int = 1
) -> list[Curve]:
    """The loss panel's legend in drawing order: only curves the run computed.

    Drawn when the panel opens (`Curve.shown`, at most `SHOWN_CURVES`): the measured loss
    and, where the run has them, the four terms, each in its own colour: the
    decomposition is what the panel is for, and the label in its corner gives their share
    of E[L]. E[L] itself (for the linear model the terms' very sum), the dotted sum, the
    remainder and the other seeds are in the legend, one click away. Without the terms,
    every curve there is (measured loss, E[L], other seeds) is drawn."""
    c = _computed(config, computed)
    out = []
    if seeds > 1:
        out.append(Curve("others", "other seeds (measured)", OTHER_SEEDS, 1.0, shown=not c.terms))
    if c.expected:
        name = "E[L] of the linearised model" if config.gated else "expected loss E[L]"
        out.append(Curve("expected", name, EXPECTED, 3.0, shown=not c.terms))
    shown = "measured loss" if seed is None else f"measured loss (seed {seed})"
    out.append(Curve("loss", shown, LOSS, 2.0))
    if config.gated and c.expected:  # the gated model's measured loss is not the lens's
        out.append(
            Curve("missed", "measured − linearised: what the linear picture misses",
                  REMAINDER, 1.2, "dash", shown=False)
        )  # fmt: skip
    if c.terms:
        out.append(Curve("total", "sum of the four terms", LOSS, 1.5, "dot", shown=False))
        if config.relu_readout and c.expected:  # linear: the terms are exact, nothing remains
            out.append(
                Curve("remainder", "remainder (3+ inputs)", REMAINDER, 1.2, "dashdot", shown=False)
            )
        out += [Curve(name, name, TERM_COLORS[name], 1.8) for name in TERM_NAMES]
    assert sum(v.shown for v in out) <= SHOWN_CURVES, [v.name for v in out if v.shown]
    return out


def loss_title(config: RunConfig, computed: Computed | None = None) -> str:
    """Title and subtitle (plotly rich text) of the loss panel, in lines short enough for a
    phone's panel."""
    c = _computed(config, computed)
    if not c.terms:
        title, exact = "Measured loss" + (" and E[L]" if c.expected else ""), ""
    else:
        title = "Loss and its four terms"
        exact = "exact to second order in p · " if config.relu_readout else "exact: linear model · "
        if config.gated:
            exact = "terms of the model linearised at rest · "
    if not config.plain_task and expected_loss_method(config) == MONTE_CARLO:
        exact = "E[L] by Monte Carlo ± se · "
    lines = [exact + "symmetric log scale"]
    lines.append(("more curves in the legend · " if c.terms else "") + "dashed: current step")
    note = budget.plan(config).note
    if note:
        lines.append(note)
    return f"{title}<br><sup>{'<br>'.join(lines)}</sup>"


# ---- captions --------------------------------------------------------------------------


def _composition_pointer(c: Computed) -> str:
    """Where the reader finds composition interference: the loss panel, when it draws it."""
    if c.terms:
        colour = COLOR_NAMES[TERM_COLORS["composition interference"]]
        return f"composition interference, the {colour} curve in the loss panel"
    return "composition interference; its term is not computed at this size"


def _feature(m: Measured) -> str:
    return f"Feature {m.feature}: " if m.feature else ""


def directions_caption(
    config: RunConfig, computed: Computed | None = None, measured: Measured | None = None
) -> Caption:
    """Headline: under a ReLU readout, how many directions park in the interference-free
    half-space (the panel's count); under a linear one, how far the arrows turn and
    shrink. Why: what w_s is, what the shaded half-space means, (N_h > 3) what the
    projection's axes are, and which changes of hidden basis leave the function alone."""
    why = _with_task(_directions_why(config, computed), config)
    return Caption(_directions_headline(config, measured), why)


def _directions_headline(config: RunConfig, m: Measured | None) -> str:
    if m is None:
        if config.relu_readout:
            return (
                "Train to see how many directions w_s park in the shaded interference-free "
                "half-space, where a lone input is invisible to the readout."
            )
        return (
            "Train to see the directions w_s turn from w_0 to w_k: a linear readout sees "
            "every one of them."
        )
    k = config.k
    if m.stores_nothing:
        return (
            "This network stores nothing: its readout sees no input of any age (a_s ≈ 0), so "
            "these arrows describe no memory."
        )
    if config.relu_readout and m.free is not None:
        inter = f" ({m.free_intermediate} of {k} intermediate)" if k > 0 else ""
        return (
            f"{_feature(m)}{m.free} of {m.others} directions{inter} park in the shaded "
            "interference-free half-space, invisible to the readout when alone."
        )
    who = f"Feature {m.feature}'s arrows" if m.feature else "The arrows"
    return (
        f"{who} turn kθ = {_g(m.swept, 4)}° from w_0 to w_k while their length goes from "
        f"‖w_0‖ = {_g(m.norms[0])} to ‖w_k‖ = {_g(m.norms[k])}."
    )


def _directions_why(config: RunConfig, computed: Computed | None) -> str:
    c = _computed(config, computed)
    if config.gated:
        state = "(h, c) state" if config.model == "lstm" else "hidden state"
        what = (
            f"Each arrow is where an input s steps old sits in the {state}, seen through the "
            "model linearised at rest: the silent state h* reached after T silent inputs, "
            "J_h = ∂F/∂h and J_x = ∂F/∂x there, w_s = J_h^s J_x (the impulse response to a "
            "small input). A real input is not small: the active response (one input of the "
            "law's mean value) is printed beside it, and its distance from w_s says how "
            "nonlinear the memory is. "
        )
    elif config.relu_hidden:
        what = (
            "Each arrow is where an input s steps old sits in the hidden state when it arrives "
            "alone: the rectified impulse response w_0 = W_x, w_s = W_h ReLU(w_{s−1}), not "
            "W_h^s W_x (the ReLU acts at every step). A lone input u ≥ 0 sits at u·w_s; with "
            "other inputs in the window the ReLU mixes them, and the hidden state is not the "
            "sum of their arrows. "
        )
    else:
        what = (
            "Each arrow is where an input s steps old sits in the hidden state: w_s = W_h^s W_x. "
            "The recurrence is linear, so inputs add up: the hidden state is the sum of every "
            "input in the window times its arrow. "
        )
    task = (
        "The network must keep the intermediate ones (s < k), read out the output one (s = k) "
        "and forget the old ones. "
    )
    bias = " + b" if config.readout_bias else ""
    if config.relu_readout:
        readout = (
            f"With a ReLU readout, an input whose arrow lies in the shaded half-space "
            f"(w_yᵀh{bias} ≤ 0) is invisible to the readout if it arrives alone: watch the "
            "sparse models park intermediate directions there. It is not invisible when it "
            "arrives with the input k steps back: its negative projection then subtracts from "
            f"the output ({_composition_pointer(c)}), which is why this works only when inputs "
            "are sparse. "
        )
    else:
        readout = (
            "The readout is linear: any a_s = w_yᵀw_s ≠ 0 with s ≠ k leaks into the output, "
            "whatever its sign, so there is no free half-space. "
        )
    axes = ""
    if config.hidden > 3:
        second = (
            "since the tied readout makes w_y = w_k, the plane span(w_y, w_k) would be a line, "
            "so y is the direction orthogonal to w_y in which the other directions spread most "
            "at the last frame"
            if config.tied
            else "y is along the last frame's w_k (its part orthogonal to w_y): the plane "
            "span(w_y, w_k)"
        )
        axes = (
            f"N_h = {config.hidden} is drawn as a projection: x is along w_y (so w_yᵀh and the "
            f"shaded half-plane are exact), and {second}; the axes stay the same in every frame. "
        )
    elif config.hidden == 3:
        axes = "N_h = 3 is drawn in 3-D: drag to rotate. "
    return what + task + readout + axes + gauge_caption(config)


def gauge_caption(config: RunConfig) -> str:
    """Which changes of hidden basis keep the function (per model and tie), and the one
    the panels draw in."""
    if config.relu_hidden:
        freedom = (
            "Only a permutation of the hidden units or a positive rescaling of one commutes "
            "with the ReLU, so only those leave the function unchanged"
            + (
                " (with the tied readout, only units the output direction w_k does not use "
                "may be rescaled)"
                if config.tied
                else ""
            )
        )
        pick = (
            "the smallest weights among those rescalings, units sorted by readout weight "
            "(largest first)"
        )
    else:
        if not config.tied:
            freedom = (
                "Any invertible change of hidden basis G (W_x → G W_x, W_h → G W_h G⁻¹, "
                "W_y → G⁻ᵀ W_y) leaves the function unchanged"
            )
        elif config.inputs >= config.hidden:
            freedom = (
                "The tied readout leaves only rotations and reflections of the hidden basis "
                "free (w_k of the features span the hidden space)"
            )
        else:
            freedom = (
                "The hidden basis is not fixed by the function: a stretch orthogonal to w_k "
                "(and any rotation or reflection) changes nothing the network computes"
            )
        pick = "the smallest weights computing the same function, w_y along +h_1" + (
            ", reflected so that kθ ≥ 0" if config.hidden == 2 else ""
        )
    return (
        f"{freedom}; the arrows are drawn in the canonical minimum-norm gauge: {pick}. "
        "Lengths and angles are that gauge's; the projections w_yᵀw_s in the hover text and "
        "the half-space count are gauge-free."
    )


def loss_caption(
    config: RunConfig, computed: Computed | None = None, measured: Measured | None = None
) -> Caption:
    """Headline: the last frame's measured loss and how much of E[L] the four terms explain
    (the panel's label), with the two terms of opposite signs for a ReLU readout or the
    staircase's drops for the linear RNN. Why: what the panel draws, in which colours, what
    is one click away in the legend, and why two terms can be large with opposite signs."""
    c = _computed(config, computed)
    return Caption(_loss_headline(config, c, measured), _loss_why(config, c))


HERE = "at this size"  # why a piece is missing: `tempsup.theory.budget` skipped it


def _loss_headline(config: RunConfig, c: Computed, m: Measured | None) -> str:
    if not config.plain_task:
        return _task_loss_headline(config, m)
    if m is None:
        if c.terms:
            return (
                "Train to see the measured loss beside the paper's four terms of the "
                "expected loss E[L]."
            )
        also = " beside the expected loss E[L]" if c.expected else ""
        return f"Train to see the measured loss{also}; the four terms are not computed {HERE}."
    at = f"At step {m.step} " + (
        f"the measured loss is {_g(m.loss, 4)}" if math.isfinite(m.loss) else "no loss was measured"
    )
    if config.gated and math.isfinite(m.loss) and math.isfinite(m.expected):
        return (
            f"{at} against E[L] = {_g(m.expected, 4)} of the linearised model: the linear "
            f"picture misses {m.loss - m.expected:+.3g}."
        )
    if c.terms and math.isfinite(m.explained):
        share = f"{m.explained:.1f} % of E[L]"
        if not config.relu_readout:
            if m.drops >= 2:
                return (
                    f"The loss came down in {m.drops} separate drops to {_g(m.loss, 4)}; the four "
                    f"terms are exact: {share}."
                )
            return f"{at}; the four terms are exact: {share} = {_g(m.expected, 4)}."
        mean, comp = (m.terms.get(n, math.nan) for n in TERM_NAMES[1::2])
        return (
            f"{at}; the four terms explain {share}, mean correction {mean:+.3g} against "
            f"composition {comp:+.3g}."
        )
    if c.terms:  # the terms without E[L]
        total = sum(m.terms.values()) if m.terms else math.nan
        return f"{at}; the four terms sum to {_g(total, 4)}, and E[L] is not computed {HERE}."
    if c.expected:
        return f"{at} against E[L] = {_g(m.expected, 4)}; the four terms are not computed {HERE}."
    return f"{at}; neither E[L] nor the four terms are computed {HERE}."


def _delays(config: RunConfig) -> str:
    """The task's delays as one word of a headline: "2,5"."""
    return ",".join(str(d) for d in config.delays)


def _task_tail(config: RunConfig) -> str:
    """What a loss headline adds for a task beyond recall: its delays, its window, or the
    cued linear model's limit (`tasks_frame.CUED_LINEAR_WARNING`), in a few words."""
    if config.task == "cued":
        if config.model == "linear":
            return ": a linear readout cannot select by cue."
        return f"; cued delays {_delays(config)}."
    if config.task == "multi":
        return f"; delays {_delays(config)} at once."
    if config.task == "sum":
        return f"; target: a window of {config.window} inputs."
    if config.persistence > 0:
        return f"; inputs persist with q = {config.persistence:g}."
    return "."


def _task_loss_headline(config: RunConfig, m: Measured | None) -> str:
    """The loss headline beyond recall at q = 0: which expected loss it is (the closed form,
    with its temporal term when inputs persist, or Monte Carlo ± se) and the task's own."""
    closed = expected_loss_method(config) == CLOSED_FORM
    temporal = closed and config.persistence > 0
    tail = _task_tail(config)
    if m is None:
        how = "closed-form" if closed else "Monte Carlo (± se)"
        term = " and its temporal-covariance term" if temporal else ""
        return f"Train to see the measured loss beside the {how} expected loss E[L]{term}" + tail
    at = f"At step {m.step} " + (
        f"the measured loss is {_g(m.loss, 4)}" if math.isfinite(m.loss) else "no loss was measured"
    )
    if not math.isfinite(m.expected):
        return f"{at}; its expected loss is not computed {HERE}" + tail
    if closed:
        est = f"closed-form E[L] = {_g(m.expected, 4)}"
        est += f", temporal term {m.temporal:+.3g}" if temporal else ""
    else:
        est = f"Monte Carlo E[L] = {_g(m.expected, 4)} ± {_g(m.expected_se, 2)}"
    return f"{at} against {est}" + tail


def _with_task(why: str, config: RunConfig) -> str:
    """A panel's explanation followed by what it must say of the task (`task_note`)."""
    return f"{why} {task_note(config)}".strip()


def task_note(config: RunConfig) -> str:
    """What every panel's explanation says of a task beyond recall at q = 0: the target, which
    readout the geometry draws (a multi run's delay k = max(ks)), the cue channels left out
    and persistence. Empty for recall at q = 0."""
    delays = ", ".join(str(d) for d in config.delays)
    parts = []
    if config.task == "multi":
        parts.append(
            f"This run recalls delays {delays} at once, one output per delay and feature. The "
            "directions w_s do not depend on the task; w_y, a_s and the half-space are those "
            f"of the delay-{config.k} output (the oldest, k = max(ks)); the other delays' "
            "readouts are not drawn."
        )
    elif config.task == "cued":
        parts.append(
            f"A cue channel names which delay of {delays} to recall at each step. The cue "
            "channels' input directions are not features and are left out: w_s are the "
            f"feature channels' directions, and k = {config.k} is the oldest delay."
        )
        if config.model == "linear":
            parts.append(f"Note: {CUED_WARNING}.")
    elif config.task == "sum":
        parts.append(
            f"The target is the sum of a window of {config.window} inputs, ages {config.k} to "
            f"{config.k + config.window - 1}: ideally a_s = 1 on that window and 0 elsewhere."
        )
    if config.persistence > 0:
        parts.append(
            f"Inputs persist: each repeats its previous value with probability q = "
            f"{config.persistence:g}, so inputs of neighbouring ages are correlated."
        )
    return " ".join(parts)


def _task_loss_why(config: RunConfig) -> str:
    """How this task's expected loss was computed, and what its fifth term is."""
    if config.plain_task:
        return ""
    method = expected_loss_method(config)
    if method == CLOSED_FORM:
        text = (
            "E[L] is the exact closed form of this task for the linear model: the four terms "
            "and, as a fifth, the temporal covariance of persistent inputs"
            + (f" (q = {config.persistence:g}; zero at q = 0)." if config.persistence else
               ", zero here (q = 0).")
        )  # fmt: skip
    else:
        text = (
            "E[L] is a Monte Carlo estimate with its standard error (a fixed set of sequences, "
            "the same at every frame): the second-order terms assume recall of one delay from "
            "inputs independent in time, so they are not computed here."
        )
    return f"{text} {task_note(config)}".strip()


def _loss_why(config: RunConfig, c: Computed) -> str:
    parts = [_task_loss_why(config)] if not config.plain_task else []
    if c.terms:
        parts.append(
            "The measured loss against the paper's decomposition of the expected loss: task "
            "(recall the input k steps back), mean correction, projection interference (an "
            "other input reaching the readout alone) and composition interference (pairs of "
            "co-active inputs)."
        )
        if config.relu_readout:
            parts.append(
                "For ReLU readouts the terms are exact to second order in p (at most two "
                "co-active inputs)"
                + (
                    "; the remainder, E[L] minus their sum, is what takes three or more."
                    if c.expected
                    else "."
                )
            )
        else:
            fifth = " with the temporal term" if config.persistence > 0 else ""
            parts.append(f"For the linear RNN the terms are exact: their sum{fifth} is E[L].")
        parts.append(
            "The label in the top-left corner says what share of E[L] the four terms explain "
            "at the frame shown."
        )
    elif not config.plain_task:  # the Monte Carlo tasks: `_task_loss_why` said why
        parts.append("The measured loss" + (" and E[L]." if c.expected else "."))
    else:
        parts.append(
            "The measured loss"
            + (" and the expected loss E[L]" if c.expected else "")
            + ". The four terms are not computed at this size (too many pairs of input "
            "slots): the panel's note says so."
        )
    curves = loss_curves(config, c, seeds=config.seeds)
    drawn = [v.words() for v in curves if v.shown]
    hidden = [v.words() for v in curves if not v.shown]
    parts.append(
        "Curves: "
        + "; ".join(drawn)
        + (f"; one click away in the legend: {'; '.join(hidden)}" if hidden else "")
        + " (black is drawn white in dark mode)."
    )
    parts.append(
        "The y axis is symmetric-logarithmic: decades above and below zero and linear near "
        "it, so a negative term is drawn below the zero line and every curve stays in view."
    )
    if c.terms:
        parts.append(_opposite_signs(config))
        if config.readout_bias:
            parts.append("With a readout bias, all the bias changes is booked under the mean "
                         "correction.")  # fmt: skip
    if not config.relu_readout:
        parts.append(
            "For the linear RNN the loss comes down in steps as the directions separate in "
            "temporal order (the gallery's loss-dynamics card measures it, with a smaller "
            "learning rate than the default, which descends too quickly to show the steps)."
        )
    parts.append("All of these are gauge-free.")
    return " ".join(parts)


def _opposite_signs(config: RunConfig) -> str:
    """Why the mean correction and composition interference can be large with opposite
    signs (science.md §1c): both are pairs of co-active inputs, split by ℓ = y² − 2yŷ + ŷ²."""
    common = (
        "Mean correction and composition interference can both be large with opposite "
        "signs: they are two halves of the same pairs of co-active inputs, the mean "
        "correction the cross term −2yŷ and composition the ŷ² term, and only their sum is "
        "what the pairs cost."
    )
    if not config.relu_readout:
        return common + (
            " For the linear RNN, once a_k = 1 a pair of an input s with the target adds "
            "nothing to what s costs alone: its −2p²μ²a_s in the mean correction and "
            "+2p²μ²a_s·a_k in composition cancel."
        )
    how = (
        "an input parked far on the negative side of the readout (a_s ≪ 0, invisible when "
        "alone) that arrives with the target erases it: ReLU(a_k·u_k + a_s·u_s) = 0"
        if not config.relu_hidden
        else "an input parked where the readout cannot see it that arrives with the target "
        "lowers or erases the output through the hidden ReLU"
    )
    return common + (
        f" Here {how}. The lost output costs up to +2u_k² in the mean correction (the cross "
        "term no longer cancels y²) and gives back up to −u_k² in composition (its ŷ² is "
        "gone). So where inputs are parked this way (the sparse solutions) the mean "
        "correction is positive and composition negative, and an erased target costs u_k² net."
    )


def projections_caption(
    config: RunConfig, computed: Computed | None = None, measured: Measured | None = None
) -> Caption:
    """Headline: the target gain a_k and, per model, what the other projections do (how
    many are ≤ 0 under the SSM's ReLU readout, how many are exactly 0 past k for the ReLU
    RNN, the largest leak for the linear RNN), or the heatmap's counts for vector input.
    Why: what a_s (or the heatmap of W_yᵀW_k) means for this model."""
    why = _with_task(_projections_why(config, computed), config)
    return Caption(_projections_headline(config, measured), why)


def _projections_headline(config: RunConfig, m: Measured | None) -> str:
    if m is None:
        if config.inputs > 1:
            return (
                "Train to see W_yᵀW_k: how strongly feature j of the input k steps back "
                "reaches output i (ideal: the identity)."
            )
        return (
            "Train to see a_s = w_yᵀw_s, how strongly an input of age s reaches the output: "
            "ideally a_k = 1, and 0 elsewhere."
        )
    if config.inputs > 1 and m.heatmap is not None:
        h = m.heatmap
        text = (
            f"W_yᵀW_k: {h['diagonal_positive']} of {h['n']} diagonal entries positive, "
            f"{h['off_positive']} of {h['off_total']} off-diagonal ones > 0"
        )
        return text + (f" (largest {h['largest_off']:.2f})." if h["off_positive"] else ".")
    k, a = config.k, np.asarray(m.a, dtype=float)
    gain = f"a_k = {_g(a[k])} against the target 1"
    # a finite nonlinearity: the run carries a lens (gated, or read through its linearisation)
    if math.isfinite(m.nonlinearity) and m.nonlinearity <= LINEAR_MEMORY:
        return f"{gain} at rest, and the same for a real input: this memory is linear."
    if math.isfinite(m.nonlinearity):
        return (
            f"{gain} at rest; one real input's kernel is {_g(100 * m.nonlinearity, 2)} % away "
            "from it: how nonlinear the memory is."
        )
    if config.relu_hidden:
        old = a[k + 1 :]
        zero = int((np.abs(old) <= measures.EXACT_ZERO * max(abs(a[k]), 1e-12)).sum())
        sharp = ": sharp forgetting." if zero == len(old) else "."
        return f"{gain}; a_s is exactly 0 at {zero} of the {len(old)} ages past k{sharp}"
    if config.relu_readout and m.free is not None:
        bias = " + b" if config.readout_bias else ""
        return (
            f"{gain}; {m.free} of {m.others} other ages have a_s{bias} ≤ 0: alone, their "
            "inputs cost nothing."
        )
    others = np.delete(np.arange(len(a)), k)
    s = int(others[np.argmax(np.abs(a[others]))])
    return f"{gain}; the largest leak is a_{s} = {_g(a[s])}, paid by every input of that age."


def _projections_why(config: RunConfig, computed: Computed | None) -> str:
    c = _computed(config, computed)
    text = (
        "a_s = w_yᵀw_s is how strongly an input of age s reaches the output when it arrives "
        "alone. Ideal recall is a_k = 1 and a_s = 0 elsewhere"
    )
    if config.relu_readout:
        text += (
            "; under a ReLU readout a_s ≤ 0 is enough for an input that arrives alone (its "
            "negative part is cut off), but not for one that arrives with the input k steps "
            f"back: then it subtracts from the output ({_composition_pointer(c)}). "
        )
    else:
        text += ": the readout is linear, so any a_s ≠ 0 with s ≠ k leaks into the output. "
    if config.relu_hidden:
        text += (
            "The ReLU RNN can cut old inputs off sharply: a_s exactly 0 after s = k once an "
            "old input's hidden state is rectified away. "
        )
    else:
        text += (
            "A linear recurrence can only make a_s a sum of damped oscillations (powers of "
            "the eigenvalues of W_h), so old inputs fade rather than stop. "
        )
    if config.inputs > 1:
        text += (
            "With vector input (N_x > 1) the panel is a heatmap of W_yᵀW_k instead: row i, "
            "column j is how strongly feature j of the input k steps back reaches output i "
            "(ideal: the identity)."
        )
    return text.strip()


def eigen_caption(
    config: RunConfig, computed: Computed | None = None, measured: Measured | None = None
) -> Caption:
    """Headline: for the linear RNN whether W_h is a spiral sink (the claims' test), for
    the SSM kθ beside the two basins of the phase transition, for the ReLU RNN ρ and kθ
    with what they do not say. Why: what the eigenvalues say for this recurrence, and the
    convention kθ is printed in."""
    return Caption(_eigen_headline(config, measured), _with_task(_eigen_why(config), config))


def _eigen_headline(config: RunConfig, m: Measured | None) -> str:
    if config.gated:
        return _gated_eigen_headline(config, m)
    if m is None:
        if config.model == "ssm":
            return (
                "Train to see which basin the swept angle kθ falls in: ≈ 90° (dense) or "
                "≈ 270° (sparse)."
            )
        if config.relu_hidden:
            return (
                "Train to see the eigenvalues of W_h; for the ReLU RNN they describe W_h "
                "alone, not the hidden state's decay."
            )
        return (
            "Train to see whether W_h becomes a spiral sink: complex eigenvalues inside the "
            "unit circle."
        )
    swept = f"kθ = {_g(m.swept, 4)}°"
    if config.model == "ssm":  # the basin as the ssm-jump claim reads it (measures.basin)
        where = {
            "d": "in the dense basin (≈ 90°)",
            "s": "in the sparse basin (≈ 270°)",
            ".": "between the paper's two basins (≈ 90° dense, ≈ 270° sparse)",
        }[str(measures.basin(m.swept))]
        return f"{swept}: {where}; ρ(W_h) = {_g(m.rho)}."
    if config.relu_hidden:
        return (
            f"ρ(W_h) = {_g(m.rho)} and {swept}: for the ReLU RNN they describe W_h alone, "
            "not how fast the hidden state decays."
        )
    if m.sink:
        return (
            f"A spiral sink: each step turns by arg λ = {_g(m.lam_arg)}° and shrinks by "
            f"|λ| = {_g(m.lam_abs)}; swept {swept}."
        )
    return (
        f"No spiral sink by the paper's test: leading |λ| = {_g(m.lam_abs)}, arg λ = "
        f"{_g(m.lam_arg)}°; swept {swept}."
    )


def _gated_eigen_headline(config: RunConfig, m: Measured | None) -> str:
    """The eigenvalues of J_h at rest: the forgetting rates of small inputs."""
    if m is None:
        return (
            "Train to see the eigenvalues of J_h at the silent state: how fast a small input "
            "is forgotten, per step."
        )
    where = ""
    if config.model in ("lru", "selective"):  # linear-in-h recurrences: the SSM's basins
        where = {
            "d": " (the dense basin, ≈ 90°)",
            "s": " (the sparse basin, ≈ 270°)",
            ".": " (neither SSM basin)",
        }[str(measures.basin(m.swept))]
    return (
        f"At rest J_h has ρ = {_g(m.rho)}: a small input fades by {_g(m.rho)} per step; "
        f"kθ = {_g(m.swept, 4)}°{where}."
    )


def _eigen_why(config: RunConfig) -> str:
    if config.gated:
        text = (
            "These are the eigenvalues of J_h = ∂F/∂h at the silent state, the forgetting "
            "rates of a small input: |λ| < 1 fades, arg λ rotates. They describe the model at "
            "rest; gates opened by active inputs change them while the inputs last. "
        )
        return text + _ktheta_convention(config)
    if config.relu_hidden:
        text = (
            "The ReLU RNN's recurrence is not linear: its eigenvalues describe W_h alone, and "
            "ρ(W_h) > 1 need not mean divergence. "
        )
    else:
        text = (
            "For a linear recurrence, complex eigenvalues inside the unit circle mean a spiral "
            "sink: each step rotates by θ = arg λ and shrinks by |λ|. "
        )
    if config.model == "ssm":
        text += (
            "The paper's phase transition shows up here: as sparsity grows, the best seed's "
            "swept angle kθ moves from the ≈ 90° basin (dense) to the ≈ 270° one (sparse) and "
            "the spectral radius drops; each seed keeps its own basin (the gallery's ssm-jump "
            "card). "
        )
    text += (
        "kθ is the swept angle, the summed angle turned from w_0 to w_k one step at a time "
        "(not k·arg λ); it exceeds 360° when the directions wind round more than once. "
        "The eigenvalues and ρ(W_h) are gauge-free; kθ and ‖w_0‖ depend on the hidden basis "
        "and are measured in the canonical minimum-norm gauge. "
    )
    return text + _ktheta_convention(config)


def _ktheta_convention(config: RunConfig) -> str:
    if config.hidden != 2:
        return (
            f"With N_h = {config.hidden} the angles between successive directions are unsigned, "
            "so kθ ≥ 0."
        )
    if config.relu_hidden:
        return (
            "With N_h = 2 kθ is signed (counter-clockwise positive). The ReLU RNN's gauge has "
            "no reflection to choose: its units are ordered by readout weight, and that order "
            "sets the sign, so kθ may be negative (clockwise); the same network with its two "
            "units swapped would show −kθ."
        )
    return (
        "With N_h = 2 kθ is signed (counter-clockwise positive) and the gauge's reflection is "
        "chosen so that kθ ≥ 0."
    )


def ktheta_note(config: RunConfig) -> str:
    """The eigen panel's note under kθ: the gauge and the sign convention, in a few words."""
    if config.hidden != 2:
        return "(minimum-norm gauge;<br>unsigned angles)"
    if config.relu_hidden:
        return "(minimum-norm gauge;<br>sign set by the unit order)"
    return "(minimum-norm gauge;<br>kθ ≥ 0 by convention)"


def gauge_note(config: RunConfig) -> str:
    """One line on the gauge for a run's summary (HTML export)."""
    return f"minimum-norm (kθ and ‖w_0‖; the rest is gauge-free); {_ktheta_convention(config)}"


def phase_caption() -> Caption:
    """The phase page's side text: how to read the diagram and its labels."""
    return Caption(
        "Each point is one sparsity's best seed at its swept angle kθ; click a point to open "
        "its run in the explorer.",
        "Every point × seed trains in one batch. Its label x/n says how many of the n seeds "
        f"are near that best loss (closing {SUCCESS_FRACTION:.0%} of the gap from a silent "
        "network's loss), and the marker grows with x. Under the diagram one sentence says "
        "where the best seed switches from the ≈ 90° to the ≈ 270° basin and whether seeds "
        "move themselves: the gallery's sweep until yours finishes, then yours (it moves with "
        "k, the seeds and the training length). A short run (a few hundred steps) has not "
        "settled: angles far above 360° or labels like 1/4 say train longer before judging.",
    )


__all__ = [
    "HEADLINE_WORDS",
    "WHY",
    "Caption",
    "Computed",
    "Curve",
    "Measured",
    "directions_caption",
    "eigen_caption",
    "gauge_caption",
    "gauge_note",
    "ktheta_note",
    "loss_caption",
    "loss_curves",
    "loss_title",
    "phase_caption",
    "projections_caption",
    "task_note",
    "words",
]
