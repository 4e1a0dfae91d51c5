"""The correlated-features lab: tied autoencoders on correlated features (science.md §2).

After Prieto, Stevinson, Barsbey et al., "From Data Statistics to Feature
Geometry: How Correlations Shape Superposition" (arXiv 2603.09972). One module
per concept, like the RNN side of tempsup:

    config    BowsConfig: the run's settings, validated and hashed (kind "bows")
    data      generators: circle, figure-8, sphere, i.i.d. control, bag of words
    model     BatchedTiedAE: x̂ = σ(WᵀWx + b) for many seeds and bottlenecks at once
    trainer   the authors' recipe (AdamW, cosine per epoch, clipping), yielding snapshots
    analysis  covariance, WᵀW, PCA, R², and the measures of the paper's claims
    run       BowsRun and its .npz file; stream_frames, train_runs, sweeps
    sweeps    the sweep over m (and weight decay, and model) as one queued job
    grid      the authors' main figure as one job, its measured words, the shipped grid
    figures   pure Plotly panels, the animation, HTML export, the sweep and grid figures

    api       the Python verbs: train, sweep, load (loaded on first use, like tempsup's)

The job kinds "bows" and "bows-sweep" are in `tempsup.jobs.kinds`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "BowsConfig": "tempsup.bows.config",
    "BowsRun": "tempsup.bows.run",
    "train": "tempsup.bows.api",
    "sweep": "tempsup.bows.api",
    "load": "tempsup.bows.api",
}
__all__ = ["BowsConfig", "BowsRun", "load", "sweep", "train"]

if TYPE_CHECKING:
    from tempsup.bows.api import load as load
    from tempsup.bows.api import sweep as sweep
    from tempsup.bows.api import train as train
    from tempsup.bows.config import BowsConfig as BowsConfig
    from tempsup.bows.run import BowsRun as BowsRun


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tempsup.bows' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
