"""Train several configs as one batch and tabulate them: the phase diagram's data.

A sweep varies sparsity (and k) around a base config; every point × seed is one
model of a single batched training program (`tempsup.train`), then the batch is
cut back into one `Run` per point. The table holds what science.md §1 asks to
plot against sparsity: the swept angle kθ, the spectral radius ρ(W_h), ‖w_0‖,
the loss and how many seeds succeeded.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from tempsup.config import RunConfig
from tempsup.run import Run, frame, split_snapshot
from tempsup.train import train

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
    frames: list[list[dict[str, np.ndarray]]] = [[] for _ in configs]
    for snap in train(configs, init=init, on_step=on_step):
        for i, (cfg, part) in enumerate(zip(configs, split_snapshot(snap, configs), strict=True)):
            frames[i].append(frame(cfg, part))
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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=TABLE_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _fmt(row.get(c, "")) for c in TABLE_COLUMNS})
    return path


def _fmt(value: object) -> object:
    return f"{value:.6g}" if isinstance(value, float) else value
