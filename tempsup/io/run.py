"""A training run as data: frames of weights, losses and loss terms, and its file.

A *frame* is one snapshot of one config's models, with the four loss terms
and the expected loss attached, at the sparsity in force at that step: for
`linear` the exact closed form (`tempsup.theory.closed_form`); for ReLU readouts the terms
are exact to second order in p (`tempsup.theory.relu_terms`) and the expected loss is
computed to all orders (`tempsup.theory.expected_loss`: a convolution for `ssm`, a
Monte Carlo estimate with its standard error for `rnn`). A `Run` stacks
frames: axis 0 is the frame, axis 1 the seed. The `.npz` run file is the public
format other tools read (README, "Run file format"):

    step     (F,)               optimizer steps at each frame
    W_x      (F, M, N_h, N_x)
    W_h      (F, M, N_h, N_h)
    W_y      (F, M, N_h, N_x)   effective readout, also when tied (W_{s=k})
    b_y      (F, M, N_x)        zeros without a bias
    loss     (F, M)             measured training loss
    terms    (F, M, 4)          task, mean correction, projection, composition
    temporal_term    (F, M)     only for another task than recall or persistence q > 0:
                                the closed form's fifth term (`tempsup.io.tasks_frame`)
    expected_loss    (F, M)     E[L] of each frame's weights (all orders in p)
    expected_loss_se (F, M)     its Monte Carlo standard error (0 when exact)
    success  (M,)               seed reached (close to) the best seed's loss
    best     ()                 index of the best seed (`Run.best_seed`: lowest expected loss)
    best_seed ()                JSON: the choice, why, and the seeds tied with it
    config   ()                 the RunConfig as JSON

The seed axis is always present (size 1 for a single seed), so readers never
special-case it.

The best seed (`Run.best_seed`, `choose_best`) is chosen on the final frame's expected
loss, not on the noisy measured batch loss: exactly where it is exact (linear, SSM);
where it is a Monte Carlo estimate (ReLU RNN) the seeds within TIE_Z standard errors of
the lowest get more samples first, and seeds that still cannot be told apart are
reported as tied, so every surface can say so instead of letting a coin decide; where it
was not computed (large models) or is not the model's own (a gated model's is its
linearisation's), on the measured loss, saying so.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from tempsup.core import files as _files
from tempsup.core.views import RunViews
from tempsup.errors import TempsupError
from tempsup.io import tasks_frame
from tempsup.model.config import RunConfig, importance_weights, shape_key
from tempsup.model.lens_names import LENS_ARRAYS, NET_PREFIX
from tempsup.model.snapshot import Snapshot
from tempsup.theory import budget, geometry, relu_terms
from tempsup.theory import closed_form as theory
from tempsup.theory import expected_loss as expected_loss_

ARRAYS = ("step", "W_x", "W_h", "W_y", "b_y", "loss", "terms", "expected_loss", "expected_loss_se")
# Computed from a frame's weights and config alone: a run file without them
# (written before they existed) gets them recomputed on load.
DERIVED = ("terms", "expected_loss", "expected_loss_se")
# Version of the derived arrays a file holds. 2: the ReLU RNN's expected loss with a
# positive readout bias no longer double-counts the silent steps in its sampled strata
# (files without a version are 1; their derived arrays are recomputed where they differ).
DERIVED_VERSION = 2
# Every frame's weights in the canonical gauge (`tempsup.theory.gauge.canonical`: "W_x", "W_h",
# "W_y"; b_y is unchanged), stored with a finished job's run (`Run.with_gauge`) when its
# hidden state is at most GAUGE_MAX_HIDDEN wide: the panels draw in that gauge, and each
# web process solved it again for every seed it showed (a class's students' runs, a tenth
# of the web's time). One batched solve of every frame and seed costs about as much as one
# seed's (the solve is dominated by numpy's calls, not by the matrices); wider hidden
# states cost far more (N_h = 40: seconds a frame) and are solved where they are drawn.
GAUGE = ("gauge_W_x", "gauge_W_h", "gauge_W_y")
GAUGE_MAX_HIDDEN = 3
TERM_NAMES = ("task", "mean correction", "projection interference", "composition interference")
# A seed "succeeded" when it closed at least this fraction of the gap between
# the silent network (zero output) and the best seed: dead ReLU networks and
# the mirror/real-eigenvalue local minima of science.md §1b fall below it.
SUCCESS_FRACTION = 0.9
# Two seeds' expected losses are told apart when they differ by more than TIE_Z standard
# errors of the difference (Monte Carlo), or by more than the method's relative accuracy
# (exact: float32 storage for the linear closed form, the convolution's grid for the SSM).
TIE_Z = 2.0
EXACT_REL = {"linear": 1e-6, "ssm": expected_loss_.SSM_REL_ERROR}
REFINE_SECONDS = 10.0  # what refining the best seed's Monte Carlo estimate may cost, at most
REFINE_ROUND = 8  # chunks of sequences per round of refinement, between eliminations
# Version of the best-seed rule a file's `best_seed` was made by: a file of another (or
# none) has its choice made again on load (2: refinement bounded by 10 s, not 4).
BEST_VERSION = 2
REFINE_COST = 4.0  # measured seconds of a refinement chunk over `tempsup.theory.budget`'s estimate


def _stale(config: RunConfig, version: int) -> bool:
    """Whether a file's derived arrays (of `version`) differ from what this code computes."""
    return version < 2 and config.model == "rnn" and config.bias


def derived(config: RunConfig, step: int, W_x, W_h, W_y, b_y) -> dict[str, np.ndarray]:
    """The arrays of a frame computed from its weights (`DERIVED`), at the step's sparsity.

    Weights may carry any leading axes. Linear: the exact closed form. SSM: the
    second-order terms and the convolved expected loss. ReLU RNN: the terms
    and a Monte Carlo estimate whose strata of at most two inputs the terms'
    tables give exactly. For large models some frames or pieces are skipped
    (NaN), as `tempsup.theory.budget.plan` decides.
    """
    if not config.plain_task:  # another task or persistent inputs: closed form or Monte Carlo
        todo = not config.relu_readout or budget.plan(config).covers(step)
        return tasks_frame.task_derived(config, step, W_x, W_h, W_y, b_y, todo)
    p = config.p_at(int(step))
    importance = np.asarray(importance_weights(config))
    # a gated model's b_y is its readout at rest (tempsup.model.lens): always in force
    bias = b_y if config.readout_bias else None
    T, k, dist = config.seq_len, config.k, config.input_dist
    lead = np.broadcast_shapes(np.shape(W_x)[:-2], np.shape(W_h)[:-2])
    terms, value, se = np.full(lead + (4,), np.nan), np.full(lead, np.nan), np.full(lead, np.nan)
    if not config.relu_readout:
        mu, nu = theory.input_moments(dist)
        a = geometry.projections(W_y, geometry.feature_directions(W_x, W_h, T, False))
        terms = theory.loss_terms(a, k, p, mu, nu, T, importance, bias)
        value, se = terms.sum(-1), np.zeros(terms.shape[:-1])
        return {"terms": terms, "expected_loss": value, "expected_loss_se": se}
    todo = budget.plan(config)
    if not todo.covers(step):
        return {"terms": terms, "expected_loss": value, "expected_loss_se": se}
    deltas = None
    if todo.terms:
        terms, deltas = relu_terms.analyse(
            W_x, W_h, W_y, bias, k, p, dist, T, config.relu_hidden, importance
        )
    if todo.expected and config.relu_hidden:
        value, se = expected_loss_.network_expected_loss(
            W_x, W_h, W_y, bias, k, p, dist, T, importance, low_orders=deltas
        )
    elif todo.expected:
        a = geometry.projections(W_y, geometry.feature_directions(W_x, W_h, T, False))
        value = expected_loss_.ssm_expected_loss(a, k, p, dist, T, importance, bias)
        se = np.zeros_like(value)
    return {"terms": terms, "expected_loss": value, "expected_loss_se": se}


def frame(config: RunConfig, snap: Snapshot) -> dict[str, np.ndarray]:
    """One frame of a run: the snapshot's arrays plus the loss terms and the expected loss."""
    return _frame(snap, derived(config, snap.step, snap.W_x, snap.W_h, snap.W_y, snap.b_y))


def batch_frames(configs: Sequence[RunConfig], snap: Snapshot) -> list[dict[str, np.ndarray]]:
    """`frame` of every config of a batched snapshot (config-major model axis).

    Configs equal but for their base seed (a classroom's runs) share one `derived`
    call over all their models: it costs about half as much per model as one call
    per config, and each model's numbers are its own either way.
    """
    parts = split_snapshot(snap, configs)
    groups: dict[str, list[int]] = {}
    for i, cfg in enumerate(configs):
        groups.setdefault(shape_key(cfg, ("seed",)), []).append(i)
    out: list[dict[str, np.ndarray]] = [{} for _ in configs]
    for members in groups.values():
        joined = {
            name: np.concatenate([getattr(parts[i], name) for i in members])
            for name in ("W_x", "W_h", "W_y", "b_y")
        }
        arrays = derived(configs[members[0]], snap.step, **joined)
        start = 0
        for i in members:
            stop = start + configs[i].seeds
            out[i] = _frame(parts[i], {name: a[start:stop] for name, a in arrays.items()})
            start = stop
    return out


def _frame(snap: Snapshot, extra: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    arrays = {
        "step": np.asarray(snap.step),
        "W_x": snap.W_x,
        "W_h": snap.W_h,
        "W_y": snap.W_y,
        "b_y": snap.b_y,
        "loss": snap.loss,
        **snap.extra,
        **extra,
    }
    return {
        k: np.asarray(v, dtype=np.int64 if k == "step" else np.float32) for k, v in arrays.items()
    }


def split_snapshot(snap: Snapshot, configs: Sequence[RunConfig]) -> list[Snapshot]:
    """Cut a batched snapshot (config-major model axis) into one per config."""
    out, start = [], 0
    for cfg in configs:
        sl = slice(start, start + cfg.seeds)
        out.append(snap.select(sl))
        start += cfg.seeds
    return out


def success_mask(config: RunConfig, final_loss: np.ndarray) -> np.ndarray:
    """Which seeds reached a low loss: (..., M) bool of (..., M) losses, each row against
    its own best seed (see SUCCESS_FRACTION): the final losses (M,), or every frame's
    (F, M) at once (the status line counts the seeds near the best at each frame)."""
    _, nu = theory.input_moments(config.input_dist)
    if config.plain_task:
        silent = theory.zero_output_loss(
            config.k, config.p, nu, config.seq_len, np.asarray(importance_weights(config))
        )
    else:
        silent = tasks_frame.silent_loss(config)
    loss = np.asarray(final_loss, dtype=float)
    best = np.min(loss, axis=-1, keepdims=True)
    threshold = best + (1.0 - SUCCESS_FRACTION) * np.maximum(silent - best, 0.0)
    return (loss <= threshold) & (loss < SUCCESS_FRACTION * silent)


@dataclass(frozen=True)
class BestSeed:
    """Which seed is best, by what criterion, and which seeds cannot be told apart from it.

    `criterion`: "expected" (the exact expected loss), "estimated" (its Monte Carlo
    estimate, refined where seeds were close) or "measured" (the final batch loss: the
    expected loss was not computed). `value`/`error`: the best seed's number and its
    standard error (0 when exact or measured). `tied`: the other seeds whose number is
    within TIE_Z standard errors (or the exact method's accuracy) of the best, closest
    first; `gap`: the largest relative gap to one of them. `sequences`: how many Monte
    Carlo sequences stand behind the refined estimates (0: none refined); `seconds`: what
    the refinement took.
    """

    seed: int
    criterion: str
    value: float
    error: float = 0.0
    tied: tuple[int, ...] = ()
    gap: float = 0.0
    sequences: int = 0
    seconds: float = 0.0

    @property
    def seeds(self) -> tuple[int, ...]:
        """The best seed and the seeds tied with it."""
        return (self.seed, *self.tied)

    @property
    def reason(self) -> str:
        """Why this seed, in words: "lowest expected loss", ..."""
        if self.criterion == "expected":
            return "lowest expected loss"
        if self.criterion == "estimated":
            return f"lowest expected loss, Monte Carlo ± {self.error:.2g}"
        return "lowest final measured loss: expected loss not computed"

    @property
    def tie_text(self) -> str:
        """'seeds 3 and 5 within 0.12 %' when seeds are tied, else ''."""
        if not self.tied:
            return ""
        return f"{seed_list(self.seeds)} within {percent(self.gap)}"

    def verdict(self, ok: Sequence[bool] | np.ndarray) -> bool | None:
        """A per-seed verdict on the best seed and its ties: True or False when they all
        agree, None when tied seeds disagree (a claim then must say so)."""
        values = {bool(np.asarray(ok)[s]) for s in self.seeds}
        return values.pop() if len(values) == 1 else None

    def to_dict(self) -> dict[str, object]:
        """The fields as plain JSON, with `reason` and `tie_text`."""
        d = asdict(self)
        return {**d, "tied": list(self.tied), "reason": self.reason, "tie": self.tie_text}

    @classmethod
    def from_json(cls, text: str, n_seeds: int) -> BestSeed | None:
        """The choice a run file stored (`to_dict` + "version"), or None when it was made
        by another rule or does not fit the run (then it is made again)."""
        try:
            d = json.loads(text)
            if d.get("version") != BEST_VERSION:
                return None
            out = cls(
                int(d["seed"]), str(d["criterion"]), float(d["value"]), float(d["error"]),
                tuple(int(s) for s in d["tied"]), float(d["gap"]), int(d["sequences"]),
                float(d["seconds"]),
            )  # fmt: skip
        except (ValueError, TypeError, KeyError, AttributeError):
            return None
        ok = all(0 <= s < n_seeds for s in out.seeds) and len(set(out.seeds)) == len(out.seeds)
        return out if ok and out.criterion in ("expected", "estimated", "measured") else None


def seed_list(seeds: Sequence[int]) -> str:
    """'seed 3', 'seeds 3 and 5', 'seeds 3, 5 and 6'."""
    names = [str(s) for s in seeds]
    if len(names) == 1:
        return f"seed {names[0]}"
    return f"seeds {', '.join(names[:-1])} and {names[-1]}"


def percent(fraction: float) -> str:
    """A small relative gap as a percentage with two significant digits ('0.12 %')."""
    value = 100 * fraction
    return "0 %" if value == 0 else f"{value:.2g} %" if value >= 0.01 else "< 0.01 %"


# ---- while a job streams: the seed that leads now -------------------------------------

LEAD_WINDOW = 5  # frames whose mean loss ranks the seeds while training (smooths batch noise)
LEAD_MARGIN = 0.05  # a challenger takes over when its recent loss is this fraction lower


def recent_loss(loss: np.ndarray, window: int = LEAD_WINDOW) -> np.ndarray:
    """Each seed's mean measured loss over the last `window` frames: (F, M) -> (M,)."""
    loss = np.asarray(loss, dtype=float)
    with np.errstate(invalid="ignore"):
        tail = loss[-max(1, window) :]
        n = np.isfinite(tail).sum(axis=0)
        return np.where(n > 0, np.nansum(tail, axis=0) / np.maximum(n, 1), np.inf)


def leading_seed(
    loss: np.ndarray,
    current: int | None = None,
    window: int = LEAD_WINDOW,
    margin: float = LEAD_MARGIN,
) -> int:
    """The seed to show while a run streams: the lowest recent loss (`recent_loss`), but
    the seed already shown (`current`) stays until another is lower by `margin` of its
    loss, so the view does not flicker between seeds that are level. The finished run
    shows `Run.best` instead, chosen on the expected loss."""
    recent = recent_loss(loss, window)
    lead = int(np.argmin(recent))
    if current is None or not 0 <= current < recent.size or not np.isfinite(recent[current]):
        return lead
    return lead if recent[lead] < (1.0 - margin) * recent[current] else int(current)


_BEST: OrderedDict[str, BestSeed] = OrderedDict()  # by the final frame's content
_BEST_SIZE = 256


def choose_best(config: RunConfig, arrays: dict[str, np.ndarray], refine: bool = True) -> BestSeed:
    """The best seed of a run's frames (module docstring), memoised per final frame.

    Deterministic: the refinement's sequences have fixed seeds, so every process (web,
    worker, CLI) makes the same choice; memoised because refining costs up to
    REFINE_SECONDS and every surface asks. `refine=False`: on the frame's own estimates
    only (a run still training, summarised at every snapshot; ties are still reported).
    """
    h = hashlib.sha1(f"{config.key}{refine}".encode())
    for name in ("step", "W_x", "W_h", "W_y", "b_y", "loss", "expected_loss", "expected_loss_se"):
        h.update(np.ascontiguousarray(arrays[name][-1]).tobytes())
    digest = h.hexdigest()
    if digest not in _BEST:
        _BEST[digest] = _choose_best(config, arrays, refine)
        while len(_BEST) > _BEST_SIZE:
            _BEST.popitem(last=False)
    _BEST.move_to_end(digest)
    return _BEST[digest]


def _choose_best(config: RunConfig, arrays: dict[str, np.ndarray], refine: bool) -> BestSeed:
    value = np.asarray(arrays["expected_loss"][-1], dtype=float)
    se = np.asarray(arrays["expected_loss_se"][-1], dtype=float)
    # a gated model's expected_loss is its linearisation's (`tempsup.model.lens`), not its
    # own: its loss is only measured (the mean over the steps since the last snapshot)
    if config.gated or not (np.isfinite(value).all() and np.isfinite(se).all()):
        loss = np.asarray(arrays["loss"][-1], dtype=float)
        best = int(np.nanargmin(loss)) if np.isfinite(loss).any() else 0
        return BestSeed(best, "measured", float(loss[best]))
    if not (se > 0).any():  # exact: seeds equal within its accuracy are tied, and the
        # measured loss picks among them (the same solution, e.g. the linear optimum)
        low = value.min()
        rel = (value - low) / max(abs(low), 1e-12)
        close = rel <= EXACT_REL.get(config.model, 1e-6)
        loss = np.where(close, np.asarray(arrays["loss"][-1], dtype=float), np.inf)
        best = int(np.argmin(loss)) if np.isfinite(loss).any() else int(np.argmin(value))
        return _tied(best, "expected", value, rel, close)
    t0 = time.perf_counter()
    # refining draws recall's strata (tempsup.theory.expected_loss): today's task only
    refine = refine and config.plain_task
    value, se, sequences = _refined(config, arrays, value, se) if refine else (value, se, 0)
    best = int(np.argmin(value))
    rel = (value - value[best]) / max(abs(value[best]), 1e-12)
    close = value - value[best] <= TIE_Z * np.hypot(se, se[best])
    choice = _tied(best, "estimated", value, rel, close, float(se[best]))
    return replace(choice, sequences=sequences, seconds=time.perf_counter() - t0)


def _tied(
    best: int, criterion: str, value: np.ndarray, rel: np.ndarray, close: np.ndarray,
    error: float = 0.0,
) -> BestSeed:  # fmt: skip
    others = [int(s) for s in np.argsort(value, kind="stable") if close[s] and s != best]
    gap = max((abs(float(rel[s] - rel[best])) for s in others), default=0.0)
    return BestSeed(best, criterion, float(value[best]), error, tuple(others), gap)


def _refined(
    config: RunConfig, arrays: dict[str, np.ndarray], value: np.ndarray, se: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """The final frame's estimates with the seeds near the lowest refined: more sequences
    in rounds of REFINE_ROUND chunks, dropping a seed once it is TIE_Z standard errors
    above the lowest, as many rounds as `tempsup.theory.budget` estimates to fit in
    REFINE_SECONDS (an estimate, not a clock: the choice must not depend on the machine).
    Returns the estimates, their standard errors, and the sequences behind the refined
    ones (0: none refined)."""
    value, se = value.copy(), se.copy()
    alive = np.flatnonzero(value - value.min() <= TIE_Z * np.hypot(se, se[np.argmin(value)]))
    if len(alive) < 2:
        return value, se, 0
    t_terms, t_expected = (t / max(config.seeds, 1) for t in budget.frame_seconds(config))
    affordable = (REFINE_SECONDS / len(alive) - t_terms) / (REFINE_COST * t_expected)
    chunks = min(expected_loss_.REFINE_CHUNKS, int(affordable) // REFINE_ROUND * REFINE_ROUND)
    if chunks < REFINE_ROUND:
        return value, se, 0
    p = config.p_at(int(arrays["step"][-1]))
    importance = np.asarray(importance_weights(config))
    weights = [np.asarray(arrays[n][-1], dtype=float) for n in ("W_x", "W_h", "W_y", "b_y")]
    bias = weights[3] if config.readout_bias else None
    _, deltas = relu_terms.analyse(
        *(w[alive] for w in weights[:3]), None if bias is None else bias[alive],
        config.k, p, config.input_dist, config.seq_len, config.relu_hidden, importance,
    )  # fmt: skip
    rows = {int(s): i for i, s in enumerate(alive)}  # row of each candidate in `deltas`
    rounds: dict[int, list[tuple[float, float]]] = {s: [] for s in rows}
    done = 0
    while done < chunks and len(alive) > 1:
        idx = [rows[int(s)] for s in alive]
        m, e = expected_loss_.refine(
            *(w[alive] for w in weights[:3]), None if bias is None else bias[alive],
            config.k, p, config.input_dist, config.seq_len, importance,
            relu_terms.Deltas(*(d[idx] for d in deltas)), done, REFINE_ROUND,
        )  # fmt: skip
        done += REFINE_ROUND
        for i, s in enumerate(alive):
            rounds[int(s)].append((float(m[i]), float(e[i])))
            got = np.array(rounds[int(s)])  # (rounds, 2): estimate, standard error
            v, err = expected_loss_.pooled(got[:, 0], got[:, 1])
            value[s], se[s] = float(v), float(err)
        low = alive[np.argmin(value[alive])]
        alive = alive[value[alive] - value[low] <= TIE_Z * np.hypot(se[alive], se[low])]
    return value, se, done * expected_loss_.MC_SEQUENCES


@dataclass
class Run(_files.RunFile, RunViews):
    """A run's frames stacked: axis 0 frames, axis 1 seeds; `save` and `load` its file;
    its panels as figures (`RunViews`: `figure`, `animation`, `export_html`)."""

    FIGURES: ClassVar[str] = "tempsup.figures"

    config: RunConfig
    arrays: dict[str, np.ndarray]
    # what a Run made elsewhere says of itself (`tempsup.io.imported`): its source and, when
    # the Run's shape is not the module's (an augmented network), why; None for runs made here
    origin: dict[str, str] | None = None

    @classmethod
    def from_frames(cls, config: RunConfig, frames: Iterable[dict[str, np.ndarray]]) -> Run:
        frames = list(frames)
        if not frames:
            raise TempsupError("run: expected at least one frame, got none")
        names = [*ARRAYS, *(n for n in frames[0] if n not in ARRAYS and n != "step")]
        return cls(config, {k: np.stack([f[k] for f in frames]) for k in names})

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def with_gauge(self) -> Run:
        """This run with every frame and seed in the canonical gauge (`GAUGE`, float64, one
        batched solve), if its hidden state is at most GAUGE_MAX_HIDDEN wide (else this
        run); the same solve, bit for bit, as one seed's frames alone."""
        if self.config.state_size > GAUGE_MAX_HIDDEN or all(g in self.arrays for g in GAUGE):
            return self
        from tempsup.theory import gauge

        F, M = self.arrays["W_h"].shape[:2]
        # the weights the panels draw: a multi run's delay-k readout, a cued run's features
        view = tasks_frame.geometry_weights(self.config, self.arrays)
        flat = [np.ascontiguousarray(view[n]).reshape(F * M, *view[n].shape[2:])
                for n in ("W_x", "W_h", "W_y", "b_y")]  # fmt: skip
        cfg = self.config
        solved = gauge.canonical(*flat, cfg.k, cfg.relu_hidden, cfg.tied)
        gauged = {g: solved[g[6:]].reshape(F, M, *solved[g[6:]].shape[1:]) for g in GAUGE}
        return replace(self, arrays={**self.arrays, **gauged})

    def gauged(self, seed: int) -> dict[str, np.ndarray] | None:
        """One seed's frames in the canonical gauge as stored (`with_gauge`): "W_x", "W_h",
        "W_y", "b_y" (F, ...) float64; None when the run holds none."""
        if not all(g in self.arrays for g in GAUGE):
            return None
        out = {g.removeprefix("gauge_"): self.arrays[g][:, seed] for g in GAUGE}
        b_y = tasks_frame.geometry_weights(self.config, {"b_y": self.arrays["b_y"][:, seed]})
        return {**out, "b_y": b_y["b_y"].astype(float)}

    def first_frames(self, n: int) -> Run:
        """The run as it stood after its first `n` frames (views of these arrays, no copy)."""
        return replace(self, arrays={k: v[:n] for k, v in self.arrays.items()})

    @property
    def n_frames(self) -> int:
        return int(self.arrays["step"].shape[0])

    @property
    def final_loss(self) -> np.ndarray:
        return self.arrays["loss"][-1]

    @cached_property
    def best_seed(self) -> BestSeed:
        """The best seed, why, and the seeds tied with it (`choose_best`), computed once."""
        return choose_best(self.config, self.arrays)

    def provisional(self) -> Run:
        """This run with its best seed chosen without refining (`choose_best(refine=False)`):
        for the summary of a run still training, made at every snapshot, where refining
        each time would cost more than the training itself. Returns the run."""
        self.__dict__["best_seed"] = choose_best(self.config, self.arrays, refine=False)
        return self

    @property
    def best(self) -> int:
        """The best seed's index (`best_seed`: lowest expected loss, not batch noise)."""
        return self.best_seed.seed

    @property
    def success(self) -> np.ndarray:
        return success_mask(self.config, self.final_loss)

    def weights(self, frame_index: int = -1, seed: int | None = None) -> dict[str, np.ndarray]:
        """W_x, W_h, W_y, b_y of one seed (default: the best) at one frame."""
        s = self.best if seed is None else seed
        return {n: self.arrays[n][frame_index, s] for n in ("W_x", "W_h", "W_y", "b_y")}

    def summary(self, seed: int | str | None = None, frame: int = -1) -> dict[str, Any]:
        """One seed (default: the best) at one frame (1 … F, -1 the last), JSON-ready: what
        `tempsup inspect --json` prints (`tempsup.io.describe`), gauge-free numbers apart from
        those measured in the canonical gauge."""
        from tempsup.io.describe import describe

        return describe(self, seed, frame)

    # ---- the run file (the .npz container and save/load: `tempsup.core.files`) ------------

    def to_bytes(self) -> bytes:
        return _files.pack(
            **self.arrays,
            success=self.success,
            best=self.best,
            best_seed=json.dumps({**self.best_seed.to_dict(), "version": BEST_VERSION}),
            config=self.config.to_json(),
            derived_version=DERIVED_VERSION,
            **({} if self.origin is None else {"origin": json.dumps(self.origin)}),
        )

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "run file") -> Run:
        stored = [n for n in ARRAYS if n not in DERIVED]
        config, arrays = _files.read_run(
            data, source, stored, "tempsup run file", RunConfig.from_dict,
            optional=(*DERIVED, *GAUGE, *LENS_ARRAYS, "temporal_term", "derived_version",
                      "best_seed", "origin"),
            prefixes=(NET_PREFIX,),
        )  # fmt: skip
        version = int(arrays.pop("derived_version", 1))
        stored_best = arrays.pop("best_seed", None)
        origin = _origin(source, arrays.pop("origin", None))
        for name, arr in arrays.items():
            kind = "iu" if name == "step" else "fiu"
            if arr.dtype.kind not in kind:
                raise TempsupError(f"{source}: {name} has dtype {arr.dtype}, expected numbers")
        n_frames, n_seeds = arrays["loss"].shape[:2] if arrays["loss"].ndim == 2 else (0, 0)
        if n_seeds != config.seeds:
            raise TempsupError(f"{source}: holds {n_seeds} seeds, its config says {config.seeds}")
        n_s = config.state_size
        expect = {
            "step": (n_frames,),
            "W_x": (n_frames, n_seeds, n_s, config.n_in),
            "W_h": (n_frames, n_seeds, n_s, n_s),
            "W_y": (n_frames, n_seeds, n_s, config.n_out),
            "b_y": (n_frames, n_seeds, config.n_out),
        }
        _files.check_shapes(source, arrays, expect)
        if n_frames == 0:
            raise TempsupError(f"{source}: holds no frames")
        recompute = _stale(config, version) or not all(n in arrays for n in DERIVED)
        if recompute:
            w = [arrays[n].astype(float) for n in ("W_x", "W_h", "W_y", "b_y")]
            per_frame = [
                derived(config, step, *(x[f] for x in w)) for f, step in enumerate(arrays["step"])
            ]
            for name in per_frame[0]:  # DERIVED, and temporal_term for other tasks
                arrays[name] = np.stack([d[name] for d in per_frame]).astype(np.float32)
        _files.check_shapes(
            source,
            arrays,
            {
                "terms": (n_frames, n_seeds, 4),
                "expected_loss": (n_frames, n_seeds),
                "expected_loss_se": (n_frames, n_seeds),
            },
        )
        whole = all(n in arrays and arrays[n].shape == expect[n[6:]] for n in GAUGE)
        if not whole:
            for n in GAUGE:  # none, or not whole: solved where it is drawn
                arrays.pop(n, None)
        else:
            for n in GAUGE:
                arrays[n] = arrays[n].astype(float, copy=False)
        run = cls(config, arrays, origin)
        if stored_best is not None and not recompute:  # the choice made when it was saved
            best = BestSeed.from_json(str(stored_best), n_seeds)
            if best is not None:
                run.__dict__["best_seed"] = best  # primes the cached_property
        return run


def _origin(source: str, stored: Any) -> dict[str, str] | None:
    """A run file's `origin` (JSON of strings), checked."""
    if stored is None:
        return None
    try:
        origin = json.loads(str(stored))
    except ValueError:
        origin = None
    if not isinstance(origin, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in origin.items()
    ):
        raise TempsupError(f"{source}: its origin is not a JSON object of strings")
    return origin
