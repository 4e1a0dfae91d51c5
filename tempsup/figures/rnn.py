"""The explorer's four RNN panels, in display order, behind the panel protocol
(`tempsup.figures.panel`): one `PanelSet` that the app's view store, the animation and the
HTML export all draw through."""

from __future__ import annotations

from tempsup.figures import directions, eigen, loss, projections
from tempsup.figures._common import select
from tempsup.figures.panel import PanelSet
from tempsup.figures.status import status_lines

PANEL_SET = PanelSet(
    {"directions": directions, "loss": loss, "projections": projections, "eigen": eigen},
    select=select,
    status_lines=status_lines,
)
PANELS = PANEL_SET.names
