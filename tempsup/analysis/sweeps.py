"""Train several configs as one batch and tabulate them: the phase diagram's data.

A sweep varies sparsity (and k, and the inputs' persistence q) around a base config;
every point × seed is one model of a batched training program (`tempsup.training.trainer`;
one program per q, since q shapes the data every model of a program shares, stepped
side by side), then the batches are cut back into one `Run` per point. The table holds
what science.md §1 asks to plot against sparsity: the swept angle kθ, the spectral
radius ρ(W_h), ‖w_0‖, the loss and how many seeds succeeded.

A `SweepSpec` is the same sweep as a job of the queue (`tempsup.jobs.kinds`,
kind "sweep"): its frames are small per-snapshot summaries (`SWEEP_FRAME_ARRAYS`,
one value per point) so a phase diagram can grow while the batch trains, and
its result is a `SweepResult`, the table rows and the points' run keys. Torch
is imported only where training happens, so web processes can build specs
and read results without it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tempsup.core import files as _files
from tempsup.core.specs import SweepResultBase, SweepSpecBase, sorted_unique
from tempsup.errors import TempsupError
from tempsup.model.config import MAX_ACTIVATIONS, MAX_WORK, SCHEMA_VERSION, RunConfig

if TYPE_CHECKING:  # both import torch; loaded where training happens
    from tempsup.io.run import Run
    from tempsup.model.snapshot import Snapshot

TABLE_COLUMNS = (
    "model", "k", "sparsity", "persistence", "key", "loss", "expected_loss", "successes", "seeds",
    "swept_angle_deg", "spectral_radius", "w0_norm", "n_interference_free", "file",
)  # fmt: skip


def sweep_configs(
    base: RunConfig,
    sparsities: Sequence[float],
    ks: Sequence[int] | None = None,
    persistences: Sequence[float] | None = None,
) -> list[RunConfig]:
    """One config per (q, k, sparsity) point, q-major then k-major, each validated (a single
    q, the base's by default, gives the (k, sparsity) sweep of before, in its order)."""
    return [
        base.replace(persistence=q, k=k, sparsity=s)
        for q in (persistences or [base.persistence])
        for k in (ks or [base.k])
        for s in sparsities
    ]


def persistence_groups(configs: Sequence[RunConfig]) -> list[slice]:
    """The runs of consecutive configs sharing one persistence q: the trainer draws one
    input stream per batch, so each q trains as a batch of its own."""
    cuts = [
        i for i in range(1, len(configs)) if configs[i].persistence != configs[i - 1].persistence
    ]
    edges = [0, *cuts, len(configs)]
    return [slice(a, b) for a, b in zip(edges, edges[1:], strict=False)]


def train_groups(
    configs: Sequence[RunConfig],
    init: dict[str, np.ndarray] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> Iterator[list[tuple[slice, Snapshot]]]:
    """Train each persistence group as its own batch, stepped side by side: yields, per
    snapshot, every group's (slice of `configs`, snapshot). Progress (`on_step`) follows the
    last group, which is the furthest behind."""
    from tempsup.training.trainer import train

    groups = persistence_groups(configs)
    streams = [
        train(configs[g], init=init, on_step=on_step if i == len(groups) - 1 else None)
        for i, g in enumerate(groups)
    ]
    try:
        while True:
            snaps = [_advance(stream) for stream in streams]
            if all(snap is None for snap in snaps):
                return
            if any(snap is None for snap in snaps):
                raise TempsupError("sweep: its persistence groups yielded unequal frames")
            yield list(zip(groups, snaps, strict=True))
    finally:
        for stream in streams:
            stream.close()


def _advance(stream: Iterator[Snapshot]) -> Snapshot | None:
    """The stream's next snapshot (None at its end), stepped with gradients on: a stream
    suspended at its step-0 snapshot (taken under no_grad) leaves gradients off, and the
    next stream must not train without them."""
    import torch

    with torch.enable_grad():
        return next(stream, None)


def train_runs(
    configs: Sequence[RunConfig],
    init: dict[str, np.ndarray] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> list[Run]:
    """Train all configs together (one batch per persistence); return one Run per config."""
    from tempsup.io.run import Run, batch_frames

    frames: list[list[dict[str, np.ndarray]]] = [[] for _ in configs]
    for groups in train_groups(configs, init, on_step):
        for group, snap in groups:
            points = range(len(configs))[group]
            for i, f in zip(points, batch_frames(configs[group], snap), strict=True):
                frames[i].append(f)
    return [Run.from_frames(cfg, f) for cfg, f in zip(configs, frames, strict=True)]


def table_row(run: Run, file: str = "") -> dict[str, object]:
    """The sweep table's row for one run (its best seed)."""
    s = run.summary()
    return {
        "model": run.config.model,
        "k": run.config.k,
        "sparsity": run.config.sparsity,
        "file": file,
        **{c: s[c] for c in TABLE_COLUMNS if c in s},
    }


def write_table(rows: Sequence[dict[str, object]], path: str | Path) -> Path:
    return _files.write_csv(rows, path, TABLE_COLUMNS)


# ---- a sweep as a queued job (kind "sweep", tempsup.jobs.kinds) ------------------------

# More points make a slow, hard-to-read job: a phase diagram needs ~10 sparsities
# × a few k. The queue's `max_work` bounds the size further.
MAX_POINTS = 40
# Per-point numbers of a published sweep frame, each (P,) in `configs` order, plus "step" ().
SWEEP_FRAME_ARRAYS = (
    "step", "loss", "expected_loss", "successes", "best_seed",
    "swept_angle_deg", "spectral_radius", "w0_norm", "n_interference_free",
)  # fmt: skip


@dataclass(frozen=True)
class SweepSpec(SweepSpecBase):
    """A sweep job: every (q, k, sparsity) point of `base` × its seeds, trained as one batch
    per persistence q.

    `sparsities`, `ks` and `persistences` are sorted and must not repeat (the phase
    diagram's axes); empty `ks` means `(base.k,)`, empty `persistences` `(base.persistence,)`
    (so a sweep of one q is the sparsity sweep it always was: same JSON, same key). The
    base's own sparsity, k and q are ignored: `key` hashes the points' config keys, so
    two specs with the same points are the same job. Checks, JSON and key:
    `tempsup.core.specs.SweepSpecBase`.
    """

    kind: ClassVar[str] = "sweep"
    what: ClassVar[str] = "sweep"
    version: ClassVar[int] = SCHEMA_VERSION
    config_type: ClassVar[type] = RunConfig
    axes: ClassVar[tuple[tuple[str, type], tuple[str, type]]] = (("sparsities", float), ("ks", int))

    base: RunConfig
    sparsities: tuple[float, ...]
    ks: tuple[int, ...] = ()
    persistences: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        qs = self.persistences
        if isinstance(self.base, RunConfig):  # else `_check_points` names the base
            if isinstance(qs, (str, bytes)) or qs:
                qs = sorted_unique(self.what, "persistences", qs, float)
            object.__setattr__(self, "persistences", tuple(qs) or (self.base.persistence,))
        self._check_points(MAX_POINTS)
        n = len(self.configs)
        if n > MAX_POINTS:
            raise TempsupError(
                f"sweep: expected at most {MAX_POINTS} points (persistences × ks × "
                f"sparsities), got {len(self.persistences)} × {len(self.ks)} × "
                f"{len(self.sparsities)} = {n}; sweep fewer values"
            )
        b = self.base
        acts = b.seq_len * n * b.seeds * b.batch * max(b.hidden, b.inputs)
        formula = "seq_len*points*seeds*batch*max(hidden, inputs)"
        self._check_memory(acts, MAX_ACTIVATIONS, formula, "batch or seeds")
        self._check_work(MAX_WORK, "steps, batch, seeds or points")

    def _outer_default(self) -> tuple[int, ...]:
        return (self.base.k,)

    @cached_property
    def configs(self) -> list[RunConfig]:
        """One config per point, q-major, then k, then sparsity (`sweep_configs`)."""
        return sweep_configs(self.base, self.sparsities, self.ks, self.persistences)

    @property
    def two_d(self) -> bool:
        """Whether the sweep spans several persistences (a diagram over (S, q))."""
        return len(self.persistences) > 1

    def to_dict(self) -> dict[str, Any]:
        """The base's JSON, plus `persistences` only when they are not the base's one q."""
        out = super().to_dict()
        if self.persistences != (self.base.persistence,):
            out["persistences"] = list(self.persistences)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> SweepSpec:
        if not isinstance(data, dict) or "persistences" not in data:
            return super().from_dict(data)
        plain = super().from_dict({n: v for n, v in data.items() if n != "persistences"})
        return cls(plain.base, plain.sparsities, plain.ks, data["persistences"] or ())


@dataclass
class SweepResult(SweepResultBase):
    """A finished sweep: the table rows (TABLE_COLUMNS, `configs` order), the
    points' run keys, and the published frames stacked (axis 0 frames, 1 points).

    `runs` holds the points' Runs only on the worker that trained them (they are
    stored as run jobs of their own, `JobQueue.put_run`); it is not serialised.
    Storage and frames: `tempsup.core.specs.SweepResultBase`.
    """

    spec_type: ClassVar[type] = SweepSpec
    frame_arrays: ClassVar[tuple[str, ...]] = SWEEP_FRAME_ARRAYS
    expected: ClassVar[str] = "a tempsup sweep result"
    source: ClassVar[str] = "sweep result"


def stream_sweep(
    spec: SweepSpec,
    init: dict[str, np.ndarray] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> Iterator[dict[str, np.ndarray]]:
    """Train the sweep (one batch per persistence, `train_groups`); yield each snapshot's
    frames of all points, concatenated along the model axis (point-major, `spec.base.seeds`
    per point)."""
    from tempsup.io.run import frame, split_snapshot

    configs = spec.configs
    snapshots = train_groups(configs, init=init, on_step=on_step)
    try:
        for groups in snapshots:
            parts = [
                frame(c, p)
                for group, snap in groups
                for c, p in zip(configs[group], split_snapshot(snap, configs[group]), strict=True)
            ]
            yield {
                name: parts[0][name] if name == "step" else np.concatenate([p[name] for p in parts])
                for name in parts[0]
            }
    finally:
        snapshots.close()


def _point_frames(spec: SweepSpec, full: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """Cut a `stream_sweep` frame into one `tempsup.io.run.frame` per point."""
    m = spec.base.seeds
    return [
        {n: a if n == "step" else a[i * m : (i + 1) * m] for n, a in full.items()}
        for i in range(len(spec.configs))
    ]


def sweep_frame(spec: SweepSpec, full: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The published summary of one snapshot: per point, its best seed's numbers
    (`Run.summary` of the snapshot so far) and how many seeds succeeded."""
    from tempsup.io.run import Run

    rows = []
    for cfg, part in zip(spec.configs, _point_frames(spec, full), strict=True):
        one = Run(cfg, {n: np.asarray(a)[None] for n, a in part.items()})
        if int(full["step"]) < cfg.steps:  # still training: no Monte Carlo refinement
            one = one.provisional()
        rows.append(one.summary())
    out = {"step": np.asarray(int(full["step"]), dtype=np.int64)}
    counts = ("successes", "best_seed", "n_interference_free")
    for name in SWEEP_FRAME_ARRAYS[1:]:
        column = "seed" if name == "best_seed" else name
        dtype = np.int64 if name in counts else np.float32
        out[name] = np.asarray([r[column] for r in rows], dtype=dtype)
    return out


def sweep_result(
    spec: SweepSpec,
    kept: Sequence[dict[str, np.ndarray]],
    published: Sequence[dict[str, np.ndarray]] | None = None,
) -> SweepResult:
    """The finished sweep from every `stream_sweep` frame: a Run per point, its
    table row; `published` are the `sweep_frame`s already made (else recomputed)."""
    from tempsup.io.run import Run

    if not kept:
        raise TempsupError("sweep: expected at least one frame, got none")
    per_point = [_point_frames(spec, f) for f in kept]
    runs = [
        Run.from_frames(cfg, [frames[i] for frames in per_point])
        for i, cfg in enumerate(spec.configs)
    ]
    if published is None or len(published) != len(kept):
        published = [sweep_frame(spec, f) for f in kept]
    return SweepResult.assemble(spec, runs, published, table_row)
