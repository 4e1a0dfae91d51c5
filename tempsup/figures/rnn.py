"""The explorer's four RNN panels: the one registry of them, in display order.

Each `PanelEntry` holds all of a panel's identity: its name, the module that draws it
(the panel protocol, `tempsup.figures.panel`), its cell in the animation's grid
(`tempsup.figures.animation`), the heading of its card in the app (`app.panels`) and its
caption (`tempsup.analysis.captions`, written per model). The app's cards and view store, the
animation, the HTML export and the static site all read `PANEL_SET`, so adding a panel
touches this file (and the module that draws it) alone.
"""

from __future__ import annotations

from tempsup.analysis import captions
from tempsup.figures import directions, eigen, loss, projections
from tempsup.figures._common import select
from tempsup.figures.panel import PanelEntry, PanelSet
from tempsup.figures.status import status_lines
from tempsup.model.config import RunConfig


def _eigen_caption(config: RunConfig, computed: captions.Computed) -> str:
    return captions.eigen_caption(config)  # the spectrum's words do not depend on the run


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
            caption=_eigen_caption,
        ),
    ),  # fmt: skip
    select=select,
    status_lines=status_lines,
)
PANELS = PANEL_SET.names


def panel_captions(config: RunConfig, computed: captions.Computed | None = None) -> dict[str, str]:
    """The caption under each panel, by name in display order, for `config` and what its
    run computed (None: what `tempsup.theory.budget` plans for it). Read by the app's cards, the
    export's summary and the site."""
    done = captions.Computed.plan(config) if computed is None else computed
    return PANEL_SET.captions(config, done)
