"""Figures of a run as methods: `run.figure(panel)`, `run.animation()`, `run.export_html(path)`.

One implementation for the RNN explorer's runs and the correlations lab's: a run
class names its figures package (the same pure functions the app and the export
draw with) and gets the three methods. Frames are numbered from 1 as on every
surface (`tempsup.core.frames`; -1 is the last). Plotly figures display inline in
Jupyter.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tempsup.core.frames import frame_index
from tempsup.errors import TempsupError

if TYPE_CHECKING:
    import plotly.graph_objects as go


class RunViews:
    """Mixin: needs `n_frames` and `FIGURES`, the module path of the run's figures
    package (its `PANEL_SET`, `animation_figure` and `export_html`)."""

    FIGURES: ClassVar[str]
    n_frames: int

    def _figures(self) -> Any:
        return importlib.import_module(self.FIGURES)

    @property
    def panels(self) -> tuple[str, ...]:
        """The names `figure` takes."""
        return tuple(self._figures().PANEL_SET.names)

    def figure(
        self, panel: str, seed: int | None = None, frame: int = -1, **options: Any
    ) -> go.Figure:
        """One panel (`panels`) of one seed (None: the best) at frame `frame` (1 … F, -1 the
        last), as the app draws it; `options` such as `feature=` go to the panel."""
        if panel not in self.panels:
            raise TempsupError(f"panel: expected one of {', '.join(self.panels)}, got {panel!r}")
        index = frame_index(frame, self.n_frames)
        return self._figures().PANEL_SET.panel_figure(panel, self, seed, index, **options)

    def animation(self, seed: int | None = None, **options: Any) -> go.Figure:
        """Every panel of one seed (None: the best) over training, with play and a slider:
        the figure of the HTML export."""
        return self._figures().animation_figure(self, seed, **options)

    def export_html(self, path: str | Path, seed: int | None = None, **options: Any) -> Path:
        """`animation` as a standalone page (plotly.js inlined: opens offline), as
        `tempsup export` writes it. Returns the path written."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self._figures().export_html(self, seed, **options), encoding="utf-8")
        return path
