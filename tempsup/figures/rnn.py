"""The explorer's four RNN panels: the one registry of them, in display order.

Each `PanelEntry` holds all of a panel's identity: its name, the module that draws it
(the panel protocol, `tempsup.figures.panel`), its cell in the animation's grid
(`tempsup.figures.animation`), the heading of its card in the app (`app.panels`) and its
caption (`tempsup.analysis.captions`, written per model). The app's cards and view store, the
animation, the HTML export and the static site all read `PANEL_SET`, so adding a panel
touches this file (and the module that draws it) alone.

A caption's headline cites the run's numbers: `measured` reads them where each panel
computes what it draws (the directions panel's half-space count, the projections, the
eigen panel's ρ and kθ, the loss panel's curves and its label's share of E[L]) and, for
the verdicts the paper's claims are judged by, from `tempsup.analysis.measures` (the
spiral-sink test, the staircase): a headline and the panel beside it cannot disagree.
"""

from __future__ import annotations

import math

import numpy as np

from tempsup.analysis import captions, measures
from tempsup.figures import directions, eigen, loss, projections
from tempsup.figures._common import feature_name, select
from tempsup.figures.panel import PanelEntry, PanelSet, prepared
from tempsup.figures.status import status_lines
from tempsup.io.describe import SILENT_KERNEL
from tempsup.io.run import TERM_NAMES, Run
from tempsup.model.config import RunConfig
from tempsup.model.lens_names import carries_lens


def measured(run: Run, seed: int | None = None, feature: int = 0) -> captions.Measured:
    """The numbers the captions' headlines cite for one seed (None: the best) and feature,
    at the run's last frame: each panel's prepared data (computed once per selection,
    `tempsup.figures.panel.prepared`, the same the panel draws from) and the claims'
    measures."""
    sel = select(run, seed, feature)
    cfg, s, k = sel.config, sel.seed, sel.config.k
    d_dir, d_proj = prepared(directions, sel), prepared(projections, sel)
    d_eig, d_loss = prepared(eigen, sel), prepared(loss, sel)
    free = free_k = None
    if cfg.relu_readout:
        free, free_k = directions.free_counts(d_dir, k)[-1]
    A = d_proj["A"][-1]  # (n, N_x, N_x)
    spiral = measures.spiral(run)
    expected = d_loss["expected"]
    drops = 0
    if not cfg.relu_readout and np.isfinite(expected).all():
        drops = int(measures.staircase(expected, np.asarray(run["step"]))["drops"])
    return captions.Measured(
        step=int(run["step"][-1]),
        feature=feature_name(sel.feature) if cfg.inputs > 1 else "",
        free=free,
        others=int(d_dir["a"].shape[-1]) - 1,
        free_intermediate=free_k,
        norms=tuple(float(v) for v in d_dir["norm"][-1]),
        a=tuple(float(v) for v in A[:, sel.feature, sel.feature]),
        heatmap=projections.heatmap_summary(A[k]) if cfg.inputs > 1 else None,
        rho=float(d_eig["rho"][-1]),
        swept=float(d_eig["swept"][-1]),
        lam_abs=float(spiral["abs"][s]),
        lam_arg=float(spiral["arg"][s]),
        sink=bool(spiral["sink"][s]),
        loss=float(d_loss["loss"][-1, s]),
        expected=float(expected[-1]),
        expected_se=float(d_loss["se"][-1]),
        temporal=float(run.arrays["temporal_term"][-1, s])
        if "temporal_term" in run.arrays
        else math.nan,
        explained=loss.explained_share(d_loss, -1),
        terms={name: float(d_loss["values"][name][-1]) for name in TERM_NAMES},
        drops=drops,
        nonlinearity=float(run["nonlinearity"][-1, s]) if carries_lens(run.arrays) else math.nan,
        stores_nothing=not np.nanmax(np.abs(A), initial=0.0) > SILENT_KERNEL,
    )


def run_captions(
    run: Run, seed: int | None = None, feature: int = 0
) -> dict[str, captions.Caption]:
    """The caption under each panel for one seed (None: the best) and feature of a run:
    what it computed (`Computed.of_run`) and its numbers (`measured`). Read by the app's
    view store, the export's summary and the site."""
    sel = select(run, seed, feature)
    done = captions.Computed.of_run(run["terms"][:, sel.seed], run["expected_loss"][:, sel.seed])
    return PANEL_SET.captions(run.config, done, measured(run, sel.seed, sel.feature))


PANEL_SET = PanelSet(
    (
        PanelEntry(
            "directions",
            directions,
            cell=(1, 1),
            title="Feature directions w_s in the hidden state",
            caption=captions.directions_caption,
        ),
        PanelEntry(
            "loss",
            loss,
            cell=(1, 2),
            title="Loss and its four terms",
            caption=captions.loss_caption,
        ),
        PanelEntry(
            "projections",
            projections,
            cell=(2, 1),
            title="Projections onto the readout",
            caption=captions.projections_caption,
            legend=False,  # same roles and colours as the directions panel: one legend for both
        ),
        PanelEntry(
            "eigen",
            eigen,
            cell=(2, 2),
            title="Eigenvalues of W_h",
            caption=captions.eigen_caption,
        ),
    ),  # fmt: skip
    select=select,
    status_lines=status_lines,
    run_captions=run_captions,
)
PANELS = PANEL_SET.names


def panel_captions(
    config: RunConfig, computed: captions.Computed | None = None
) -> dict[str, captions.Caption]:
    """The caption under each panel, by name in display order, for `config` before a run
    exists (its headline says what training will show) and what its run will compute
    (None: what `tempsup.theory.budget` plans for it). Read by the app's cards until a
    run shows."""
    done = captions.Computed.plan(config) if computed is None else computed
    return PANEL_SET.captions(config, done)
