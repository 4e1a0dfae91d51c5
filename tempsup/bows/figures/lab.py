"""The correlations lab's four panels, in display order, behind the panel protocol
(`tempsup.figures.panel`, the same front-end as the RNN explorer's): the lab's one
registry of them (`PANEL_SET`: each panel's name, module, place in the animation and
caption), and the line of numbers under the lab's player. The lab's page, its HTML
export and anything else that shows a panel read it from here."""

from __future__ import annotations

from typing import Any

from tempsup.bows.config import BowsConfig
from tempsup.bows.figures import columns, loss, matrices, r2
from tempsup.bows.figures._common import select
from tempsup.bows.run import BowsRun
from tempsup.figures.panel import Caption, PanelEntry, PanelSet, frame_index

# the summary's measures the line shows, with their words
MEASURES = (("pca_overlap", "PCA overlap"), ("paired_fraction", "antipodal pairs"))


def status_lines(
    run: BowsRun, seed: int | None = None, feature: int = 0, start: int = 0
) -> list[str]:
    """The line under the player for frames start … F-1: seed, loss and the claims'
    measures of that frame."""
    sel = select(run, seed, feature)
    return [_line(run, sel.seed, f) for f in range(frame_index(run, start), run.n_frames)]


def _line(run: BowsRun, seed: int, frame: int) -> str:
    s = run.summary(seed, frame)
    parts = [f"seed {seed}", f"loss {float(s.get('loss', float('nan'))):.4g}"]
    for name, label in MEASURES:
        if isinstance(s.get(name), (int, float)):
            parts.append(f"{label} {float(s[name]):.2f}")
    return " · ".join(parts)


def _same_for_every_config(words: str) -> Caption:
    """A caption whose words read alike for both of the lab's models and every config."""

    def caption(config: BowsConfig, computed: Any = None) -> str:
        return words

    return caption


def _by_model(relu: str, linear: str) -> Caption:
    """A caption whose words depend on the model: what only the ReLU can do is not said
    of the linear autoencoder, whose every readout is linear."""

    def caption(config: BowsConfig, computed: Any = None) -> str:
        return relu if config.relu else linear

    return caption


# The registry of the lab's panels: each one's module, its box (x0, x1, y0, y1) in paper
# coordinates of the lab's animation (`tempsup.bows.figures.animation`, laid out by hand)
# and what to look for in it (the words under it on the page and in the export).
PANEL_SET = PanelSet(
    (
        PanelEntry(
            "matrices",
            matrices,
            cell=(0.0, 0.9, 0.69, 1.0),
            caption=_same_for_every_config(
                "The data's covariance beside WᵀW, on one colour scale: with correlated "
                "features the model copies the covariance's structure (constructive "
                "interference)."
            ),
        ),
        PanelEntry(
            "columns",
            columns,
            cell=(0.0, 0.4, 0.3, 0.6),
            caption=_by_model(
                relu="Each feature's column of W in the bottleneck (PCA when m > 2), coloured "
                "by its angle on the circle: a small m reproduces the covariance's PCA "
                "circle; the paper reads a larger m as pairing features antipodally, which "
                "the corner measures (isolated antipodal pairs).",
                linear="Each feature's column of W in the bottleneck (PCA when m > 2), "
                "coloured by its angle on the circle: the linear autoencoder can only keep "
                "the covariance's leading principal directions, so its columns follow the "
                "PCA circle (pairing features antipodally would take the ReLU).",
            ),
        ),
        PanelEntry(
            "r2",
            r2,
            cell=(0.52, 1.0, 0.3, 0.6),
            caption=_by_model(
                relu="Per feature, how well a linear decoder recovers it from h = Wx (bars) "
                "and how well the model does (diamonds): above the threshold the feature is "
                "in linear superposition, below it only the ReLU can read it out.",
                linear="Per feature, how well a linear decoder recovers it from h = Wx (bars) "
                "and how well the model does (diamonds): above the threshold the feature is "
                "in linear superposition; the linear model's own readout is linear too, so "
                "a feature below it is lost.",
            ),
        ),
        PanelEntry(
            "loss",
            loss,
            cell=(0.0, 1.0, 0.0, 0.2),
            caption=_same_for_every_config(
                "Reconstruction loss over training for every seed (the best is bold)."
            ),
        ),
    ),
    select=select,
    status_lines=status_lines,
)
PANELS = PANEL_SET.names


def panel_captions(config: BowsConfig) -> dict[str, str]:
    """The caption under each panel, by name in display order, for `config`: read by the
    lab's page and its HTML export."""
    return PANEL_SET.captions(config)
