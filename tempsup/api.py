"""The verbs of the Python API, named as the command line names them.

`tempsup train`, `tempsup sweep` and reading a run file are `train`, `sweep`
and `load` here; the correlations lab's are in `tempsup.bows` (`tempsup bows
train` → `tempsup.bows.train`). They are thin: the training loop, the run file,
the figures and the summary are the same code the app and the CLI run, so a
number read in a notebook is the number the explorer shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tempsup.core.progress import StepBar
from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.model.config import RunConfig

# `tempsup sweep`'s sparsities when none are given: dense to very sparse
SWEEP_SPARSITIES = (0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


def _config(config: RunConfig | None, fields: Mapping[str, Any]) -> RunConfig:
    if config is None:
        return RunConfig(**fields)
    if not isinstance(config, RunConfig):
        raise TempsupError(f"config: expected a RunConfig, got {type(config).__name__}")
    return config.replace(**fields) if fields else config


def _init(init: Run | Mapping[str, np.ndarray] | None) -> dict[str, np.ndarray] | None:
    """A warm start: a Run's best final weights, or W_x, W_h, W_y, b_y given as arrays."""
    if init is None:
        return None
    if isinstance(init, Run):
        return init.weights(-1)
    return {k: np.asarray(v) for k, v in init.items()}


def train(
    config: RunConfig | None = None,
    *,
    progress: bool = True,
    init: Run | Mapping[str, np.ndarray] | None = None,
    **fields: Any,
) -> Run:
    """Train every seed of `config` (or of `RunConfig(**fields)`; with both, the fields
    replace the config's) and return the run, as `tempsup train` does.

    `progress` draws a bar (a widget in a notebook); `init` starts every seed from a
    run's best final weights (the CLI's --warm-start)."""
    from tempsup.analysis.sweeps import train_runs

    cfg = _config(config, fields)
    label = f"{cfg.model} k={cfg.k} S={cfg.sparsity:g}"
    with StepBar(cfg.steps, label, progress) as bar:
        (run,) = train_runs([cfg], init=_init(init), on_step=bar)
    return run


def sweep(
    config: RunConfig | None = None,
    *,
    sparsity: Sequence[float] = SWEEP_SPARSITIES,
    k: Sequence[int] | None = None,
    progress: bool = True,
    init: Run | Mapping[str, np.ndarray] | None = None,
    **fields: Any,
) -> list[Run]:
    """Train one run per (k, sparsity) point around `config`, all in one batch, as
    `tempsup sweep` does; the runs come k-major, in the order given."""
    from tempsup.analysis.sweeps import sweep_configs, train_runs

    if isinstance(sparsity, (int, float)) or (k is not None and isinstance(k, int)):
        raise TempsupError("sweep: sparsity and k are lists of values (e.g. sparsity=[0.3, 0.9])")
    if not len(sparsity):
        raise TempsupError("sweep: expected at least one sparsity, got none")
    base = _config(config, fields)
    configs = sweep_configs(base, list(sparsity), list(k) if k else None)
    label = f"sweep of {len(configs)} points x {base.seeds} seeds"
    with StepBar(base.steps, label, progress) as bar:
        return train_runs(configs, init=_init(init), on_step=bar)


def load(path: str | Path) -> Run:
    """A run file written by `train`, `sweep`, the app or `Run.save` (correlations-lab
    run files: `tempsup.bows.load`)."""
    try:
        return Run.load(path)
    except TempsupError as exc:
        from tempsup.bows.run import BowsRun

        try:
            BowsRun.load(path)
        except TempsupError:
            raise exc from None
        raise TempsupError(
            f"{path}: a correlations-lab run file: read it with tempsup.bows.load"
        ) from None
