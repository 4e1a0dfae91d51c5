"""The paper's claims as presets, one module each, and the one registry of them.

Each module holds one preset whole: `build(quick)` (its runs and recipe),
`check(runs)` (its claims measured on the trained runs, one function per claim)
and, where one picture across its runs says more than the panels, `figure(runs)`. `REGISTRY` lists
them in gallery order; `presets`, `preset` and `preset_configs` read it. A module's
`THUMBNAIL` names its card's picture (`thumbnail_choice`).
The quick form (`quick=True`) is the test suite's: fewer steps and seeds, and
a N_h = 20, 15-feature stand-in for the large preset.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import cache
from typing import Any

import tempsup.paper.presets.cued_capacity as cued_capacity
import tempsup.paper.presets.four_terms as four_terms
import tempsup.paper.presets.gated_packing as gated_packing
import tempsup.paper.presets.large as large
import tempsup.paper.presets.linear_any_sparsity as linear_any_sparsity
import tempsup.paper.presets.loss_dynamics as loss_dynamics
import tempsup.paper.presets.lru_jump as lru_jump
import tempsup.paper.presets.persistence_transition as persistence_transition
import tempsup.paper.presets.relu_rnn_dense as relu_rnn_dense
import tempsup.paper.presets.relu_rnn_persistence as relu_rnn_persistence
import tempsup.paper.presets.relu_rnn_sharp_forgetting as relu_rnn_sharp_forgetting
import tempsup.paper.presets.selective_gating as selective_gating
import tempsup.paper.presets.spiral_sink as spiral_sink
import tempsup.paper.presets.ssm_dense_vs_sparse as ssm_dense_vs_sparse
import tempsup.paper.presets.ssm_jump as ssm_jump
import tempsup.paper.presets.sum_window as sum_window
import tempsup.paper.presets.vector_all_or_none as vector_all_or_none
import tempsup.paper.presets.vector_diagonal as vector_diagonal
from tempsup.figures.thumbnail import figure_thumbnail, thumbnail
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, Registry

REGISTRY = Registry(
    (
        spiral_sink.build,
        linear_any_sparsity.build,
        loss_dynamics.build,
        ssm_dense_vs_sparse.build,
        ssm_jump.build,
        relu_rnn_sharp_forgetting.build,
        relu_rnn_dense.build,
        four_terms.build,
        vector_all_or_none.build,
        vector_diagonal.build,
        large.build,
        gated_packing.build,
        lru_jump.build,
        selective_gating.build,
        persistence_transition.build,
        relu_rnn_persistence.build,
        sum_window.build,
        cued_capacity.build,
    )
)
presets = REGISTRY.presets
preset = REGISTRY.preset
preset_configs = REGISTRY.configs


@cache
def _thumbnails() -> dict[str, tuple[str, str]]:
    return {
        build(False).name: sys.modules[build.__module__].THUMBNAIL for build in REGISTRY.builders
    }


def thumbnail_choice(p: Preset) -> tuple[str, str]:
    """The run label and the picture of a preset's gallery card, from its module's
    `THUMBNAIL`: a panel name, or "summary" for the preset's own figure across its runs.
    Chosen per preset, so two cards resting on the same run show their own claims."""
    return _thumbnails()[p.name]


def card_picture(p: Preset, runs: Mapping[str, Run]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The card's picture and notes as `thumbnail_choice` says, from the runs at hand (by
    label or key): the gallery and the static site both draw it here, so a card shows the
    same picture on each. Empty while a run it needs is missing."""
    label, panel = thumbnail_choice(p)
    if panel == "summary":
        have = all(lab in runs or key in runs for lab, key in zip(p.labels, p.keys, strict=True))
        if p.figure is None or not have:
            return {}, ()
        return figure_thumbnail(p.summary_figure(runs))
    key = p.config(label).key
    run = runs.get(label, runs.get(key))
    return thumbnail(run, panel) if run is not None else ({}, ())


__all__ = [
    "REGISTRY",
    "ClaimResult",
    "card_picture",
    "Preset",
    "preset",
    "preset_configs",
    "presets",
    "thumbnail_choice",
]
