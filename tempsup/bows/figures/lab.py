"""The panel names of the correlated-features lab, in display order, and their modules."""

from __future__ import annotations

from types import ModuleType

from tempsup.bows.figures import columns, loss, matrices, r2
from tempsup.errors import TempsupError

PANELS = ("matrices", "columns", "r2", "loss")
MODULES: dict[str, ModuleType] = {"matrices": matrices, "columns": columns, "r2": r2, "loss": loss}


def module(panel: str) -> ModuleType:
    if panel not in MODULES:
        raise TempsupError(f"panel: expected one of {', '.join(PANELS)}, got {panel!r}")
    return MODULES[panel]
