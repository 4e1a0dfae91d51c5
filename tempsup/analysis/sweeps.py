"""Train several configs as one batch and tabulate them: the phase diagram's data.

A sweep varies sparsity (and k) around a base config; every point × seed is one
model of a single batched training program (`tempsup.training.trainer`), then the batch is
cut back into one `Run` per point. The table holds what science.md §1 asks to
plot against sparsity: the swept angle kθ, the spectral radius ρ(W_h), ‖w_0‖,
the loss and how many seeds succeeded.

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
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from tempsup.core import files as _files
from tempsup.core.specs import SweepResultBase, SweepSpecBase
from tempsup.errors import TempsupError
from tempsup.model.config import MAX_ACTIVATIONS, MAX_WORK, SCHEMA_VERSION, RunConfig

if TYPE_CHECKING:  # both import torch; loaded where training happens
    from tempsup.io.run import Run

TABLE_COLUMNS = (
    "model", "k", "sparsity", "key", "loss", "expected_loss", "successes", "seeds",
    "swept_angle_deg", "spectral_radius", "w0_norm", "n_interference_free", "file",
)  # fmt: skip


def sweep_configs(
    base: RunConfig, sparsities: Sequence[float], ks: Sequence[int] | None = None
) -> list[RunConfig]:
    """One config per (k, sparsity) point, k-major, each validated."""
    return [base.replace(k=k, sparsity=s) for k in (ks or [base.k]) for s in sparsities]


def train_runs(
    configs: Sequence[RunConfig],
    init: dict[str, np.ndarray] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> list[Run]:
    """Train all configs together; return one Run per config."""
    from tempsup.io.run import Run, batch_frames
    from tempsup.training.trainer import train

    frames: list[list[dict[str, np.ndarray]]] = [[] for _ in configs]
    for snap in train(configs, init=init, on_step=on_step):
        for i, f in enumerate(batch_frames(configs, snap)):
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
    """A sweep job: every (k, sparsity) point of `base` × its seeds, trained as one batch.

    `sparsities` and `ks` are sorted and must not repeat (the phase diagram's
    x axis); empty `ks` means `(base.k,)`. The base's own sparsity and k are
    ignored: `key` hashes the points' config keys, so two specs with the same
    points are the same job. Checks, JSON and key: `tempsup.core.specs.SweepSpecBase`.
    """

    kind: ClassVar[str] = "sweep"
    what: ClassVar[str] = "sweep"
    version: ClassVar[int] = SCHEMA_VERSION
    config_type: ClassVar[type] = RunConfig
    axes: ClassVar[tuple[tuple[str, type], tuple[str, type]]] = (("sparsities", float), ("ks", int))

    base: RunConfig
    sparsities: tuple[float, ...]
    ks: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        n = self._check_points(MAX_POINTS)
        b = self.base
        acts = b.seq_len * n * b.seeds * b.batch * max(b.hidden, b.inputs)
        formula = "seq_len*points*seeds*batch*max(hidden, inputs)"
        self._check_memory(acts, MAX_ACTIVATIONS, formula, "batch or seeds")
        self._check_work(MAX_WORK, "steps, batch, seeds or points")

    def _outer_default(self) -> tuple[int, ...]:
        return (self.base.k,)

    @cached_property
    def configs(self) -> list[RunConfig]:
        """One config per point, k-major then sparsity (`sweep_configs`)."""
        return sweep_configs(self.base, self.sparsities, self.ks)


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
    """Train the sweep as one batch; yield each snapshot's frames of all points,
    concatenated along the model axis (point-major, `spec.base.seeds` per point)."""
    from tempsup.io.run import frame, split_snapshot
    from tempsup.training.trainer import train

    configs = spec.configs
    snapshots = train(configs, init=init, on_step=on_step)
    try:
        for snap in snapshots:
            cut = split_snapshot(snap, configs)
            parts = [frame(c, p) for c, p in zip(configs, cut, strict=True)]
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
