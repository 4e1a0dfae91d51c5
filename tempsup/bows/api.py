"""The correlations lab's verbs in Python, named as `tempsup bows …` names them.

`tempsup bows train` → `tempsup.bows.train`, `tempsup bows sweep` →
`tempsup.bows.sweep`, a lab run file → `tempsup.bows.load`. Same training, run
file, figures (`BowsRun.figure`, `.animation`, `.export_html`) and summary as the
app's lab page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tempsup.bows.config import BowsConfig
from tempsup.bows.run import BowsRun, sweep_configs, train_runs
from tempsup.core.progress import StepBar
from tempsup.errors import TempsupError

# `tempsup bows sweep`'s bottlenecks when none are given (those ≤ the data's d are kept)
SWEEP_MS = (2, 3, 4, 6, 8, 12)


def _config(config: BowsConfig | None, fields: Mapping[str, Any]) -> BowsConfig:
    if config is None:
        return BowsConfig(**fields)
    if not isinstance(config, BowsConfig):
        raise TempsupError(f"config: expected a BowsConfig, got {type(config).__name__}")
    return config.replace(**fields) if fields else config


def train(
    config: BowsConfig | None = None,
    *,
    text: str | None = None,
    progress: bool = True,
    **fields: Any,
) -> BowsRun:
    """Train every seed of `config` (or `BowsConfig(**fields)`) and return the run;
    `text` is the corpus a bag-of-words config reads."""
    cfg = _config(config, fields)
    with StepBar(cfg.steps, f"bows {cfg.structure} m={cfg.m}", progress) as bar:
        (run,) = train_runs([cfg], on_step=bar, text=text)
    return run


def sweep(
    config: BowsConfig | None = None,
    *,
    m: Sequence[int] | None = None,
    weight_decay: Sequence[float] | None = None,
    text: str | None = None,
    progress: bool = True,
    **fields: Any,
) -> list[BowsRun]:
    """One run per (weight decay, m) point around `config`, trained in one batch."""
    base = _config(config, fields)
    ms = list(m) if m is not None else [v for v in SWEEP_MS if v <= base.d]
    if not ms:
        raise TempsupError("sweep: expected at least one bottleneck m, got none")
    configs = sweep_configs(base, ms, list(weight_decay) if weight_decay else None)
    label = f"bows sweep of {len(configs)} points x {base.seeds} seeds"
    with StepBar(base.steps, label, progress) as bar:
        return train_runs(configs, on_step=bar, text=text)


def load(path: str | Path) -> BowsRun:
    """A lab run file written by `tempsup bows train`, the app's lab or `BowsRun.save`."""
    return BowsRun.load(path)
