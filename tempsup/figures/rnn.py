"""The panel names, in display order, and the module that draws each."""

from __future__ import annotations

from types import ModuleType

from tempsup.errors import TempsupError
from tempsup.figures import directions, eigen, loss, projections

PANELS = ("directions", "loss", "projections", "eigen")
MODULES: dict[str, ModuleType] = {
    "directions": directions,
    "loss": loss,
    "projections": projections,
    "eigen": eigen,
}


def module(panel: str) -> ModuleType:
    if panel not in MODULES:
        raise TempsupError(f"panel: expected one of {', '.join(PANELS)}, got {panel!r}")
    return MODULES[panel]
