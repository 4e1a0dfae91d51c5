"""The panel protocol: what one panel of a run provides, and the front-end every set of
panels shares (the explorer's four RNN panels, the correlations lab's four).

A panel is a module with three pure functions of a `Selection` (a run, one seed, one input
feature):

    prepare(sel) -> data                  everything computed once per run, seed and feature
    traces(sel, data, frame) -> list      the frame's traces, plain JSON (floats to 4 digits)
    parts(sel, data) -> Parts             everything fixed across frames

A `PanelSet` orders such modules and gives every panel the same front-end, with one
contract for every panel, seed, feature and frame f:

    panel_figure(panel, run, seed, f)
        == go.Figure({"data": at_corners(frame_traces(panel, run, seed, f), layout),
                      "layout": layout := panel_layout(panel, run, seed)})

`panel_layout` is fixed across frames (axis ranges come from all frames of the run, so
nothing jumps while scrubbing); `moving_traces` names the traces that change with the
frame; `status_lines` is the line of numbers under the player, one per frame. A panel
that draws each frame from the frames up to it alone says so (`causal`): its texts that
hang from a corner are placed on those frames' axes, and `at_corners` (the page's
atCorners in assets/tempsup.js) moves them to the axes a figure is drawn on. The app's
view store and the HTML export are built on a `PanelSet`, whichever lab it belongs to.

A `PanelSet` is also its lab's registry of panels: one `PanelEntry` per panel holds all
of its identity (name, module, place in the animation's grid, the app card's heading,
its caption), so the app, the export and the site read one record and adding a panel
touches one place (`tempsup.figures.rnn`, `tempsup.bows.figures.lab`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import plotly.graph_objects as go

from tempsup.core.palette import base_layout
from tempsup.errors import TempsupError


@dataclass(frozen=True)
class Selection:
    """One seed and one input feature of a run: what a panel draws (a lab whose runs have
    no input features uses feature 0)."""

    run: Any
    seed: int
    feature: int = 0

    @property
    def config(self):
        return self.run.config


@dataclass(frozen=True)
class Parts:
    """The frame-independent pieces of one panel.

    `axes` maps layout keys to axis settings: {"xaxis": …, "yaxis": …} for a 2-D panel (a
    "scaleanchor" names the other axis by "x"/"y"), {"scene": …} for a 3-D one; a panel
    with several axis pairs ("xaxis2", …) gives each a `domain` inside the panel. Shapes
    refer to "x"/"y" (or "x domain"/"y domain"). `moving` lists the indices of the traces
    that change with the frame; the others are identical in every frame (e.g. the loss
    history).
    """

    title: str
    axes: dict[str, dict[str, Any]]
    moving: tuple[int, ...]
    shapes: tuple[dict[str, Any], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # further layout keys (legend, …)


class Panel(Protocol):
    """A panel module (e.g. `tempsup.figures.directions`)."""

    def prepare(self, sel: Selection) -> Any: ...

    def traces(self, sel: Selection, data: Any, frame: int) -> list[dict[str, Any]]: ...

    def parts(self, sel: Selection, data: Any) -> Parts: ...


# (config, what the run computed[, what it measured]) -> the words under a panel: a
# `tempsup.analysis.captions.Caption` (headline and why: the RNN explorer's) or a string
# (the correlations lab's)
Caption = Callable[..., Any]


@dataclass(frozen=True)
class PanelEntry:
    """One panel's identity, read by every surface that shows it.

    `name` is its id everywhere (graph ids, the view store, export rows, the site);
    `module` draws it (`Panel`); `cell` is where its lab's animation places it (the
    lab's own geometry: a grid cell (row, col) for the RNN, a paper box for the
    correlations lab); `title` heads the app's card; `caption` writes the words under
    it (None: it has none); `legend` False when another panel's legend
    already names its traces (the animation shows one legend entry per role).
    """

    name: str
    module: Panel
    cell: Any
    title: str = ""
    caption: Caption | None = None
    legend: bool = True


def frame_index(run: Any, frame: int) -> int:
    """A frame index in [0, F), accepting Python's negative indexing."""
    n = run.n_frames
    if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or not -n <= frame < n:
        raise TempsupError(f"frame: expected an integer in [{-n}, {n - 1}], got {frame!r}")
    return int(frame) % n


# A panel's margins: the legend sits below the axes. They are what its contents need at
# the explorer's widths, with a few pixels to spare (fonts differ): where an axis's labels
# or the legend need more, Plotly's automargin widens the margin and then draws the whole
# figure a second time (tests/test_app_browser.py checks that none is widened).
MARGIN = {"l": 68, "r": 20, "t": 80, "b": 116}


def layout_from_parts(parts: Parts, revision: str = "") -> dict[str, Any]:
    """A whole single-panel layout: base layout, title, axes, fixed shapes, legend below."""
    layout = base_layout(parts.title, **parts.axes)
    layout["margin"] = dict(MARGIN)
    # at the bottom of the whole figure, not a fraction of the plot's height below it: on a
    # short panel (Compare) that fraction put the legend over the x-axis title
    layout["legend"] = {"orientation": "h", "x": 0, "xanchor": "left",
                        "yref": "container", "y": 0, "yanchor": "bottom"}  # fmt: skip
    if parts.shapes:
        layout["shapes"] = [dict(s) for s in parts.shapes]
    layout.update(parts.extra)
    if revision:
        layout["uirevision"] = revision  # keep zoom and the 3-D camera while scrubbing
    return layout


# The last few prepared panels, by panel and selection (the run object itself, not its
# value): one view asks each panel for its moving indices, layout, base traces and new
# frames, and a streaming page builds a new Run on every poll. Each entry also keeps the
# panel's `Parts` once asked for (the moving indices and the layout both read them). A
# web process serves several streams at once (a class and its students' own jobs): the
# cache holds a few selections of every panel, not two.
_PREPARED: list[tuple[Any, Any, int, int, Any, list[Parts]]] = []
_PREPARED_KEEP = 48
_PREPARED_LOCK = threading.Lock()


def _entry(mod: Panel, sel: Selection) -> tuple[Any, list[Parts]]:
    """(`mod.prepare(sel)`, the box its parts go in), once per panel and selection while
    it is among the recent ones."""
    with _PREPARED_LOCK:
        for m, run, seed, feature, data, box in _PREPARED:
            if m is mod and run is sel.run and seed == sel.seed and feature == sel.feature:
                return data, box
    data, box = mod.prepare(sel), []
    with _PREPARED_LOCK:
        _PREPARED.insert(0, (mod, sel.run, sel.seed, sel.feature, data, box))
        del _PREPARED[_PREPARED_KEEP:]
    return data, box


def prepared(mod: Panel, sel: Selection) -> Any:
    """`mod.prepare(sel)`, once per panel and selection while it is among the recent ones
    (what else reads a panel's data, e.g. the status line, asks here too)."""
    return _entry(mod, sel)[0]


def panel_parts(mod: Panel, sel: Selection) -> Parts:
    """`mod.parts(sel, prepared(mod, sel))`, built once per prepared selection: a view
    reads it for the moving indices and again for the layout. Shared, as the template
    every layout holds is: a caller that changes a layout copies it first (Compare)."""
    data, box = _entry(mod, sel)
    if not box:
        parts = mod.parts(sel, data)
        with _PREPARED_LOCK:
            if not box:
                box.append(parts)
    return box[0]


@dataclass(frozen=True, eq=False)  # hashed by identity: views are cached per panel set
class PanelSet:
    """The panels of one lab, in display order, behind one front-end: the lab's registry.

    `entries` are the panels (`PanelEntry`), in display order; `select(run, seed,
    feature)` validates a selection (seed None = the run's best); `status_lines(run, seed,
    feature, start)` gives the player's line for frames start … F-1, every number the
    frame's own; `captions(config, computed)` the words under the panels, which every
    surface (the app's cards, the export, the site) reads; `run_captions(run, seed,
    feature)`, where the lab has it, the same words with the numbers of one seed of a run
    (the app's view store carries their headlines: `app.view.shared_parts`).
    """

    entries: tuple[PanelEntry, ...]
    select: Callable[[Any, int | None, int], Selection]
    status_lines: Callable[[Any, int | None, int, int], list[str]]
    run_captions: Callable[[Any, int | None, int], dict[str, Any]] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries)

    @property
    def modules(self) -> Mapping[str, Panel]:
        return {e.name: e.module for e in self.entries}

    def entry(self, panel: str) -> PanelEntry:
        for e in self.entries:
            if e.name == panel:
                return e
        raise TempsupError(f"panel: expected one of {', '.join(self.names)}, got {panel!r}")

    def module(self, panel: str) -> Panel:
        return self.entry(panel).module

    def causal(self, config: Any) -> bool:
        """Whether every panel draws each frame of a run of `config` from the frames up to
        it alone (a module's `causal(config)`; one without it does not): then a frame
        drawn while the run streamed in is the finished run's frame, and a view of the
        streamed frames is the finished view (`app.streams`)."""
        return all(
            getattr(e.module, "causal", None) is not None and e.module.causal(config)  # type: ignore[attr-defined]
            for e in self.entries
        )

    def captions(self, config: Any, computed: Any = None, *measured: Any) -> dict[str, Any]:
        """The words under each panel that has a caption, by name in display order, for
        `config`, what its run computed (each lab's own kind; None: nothing yet) and, for
        a lab whose captions cite a run's numbers, what it measured."""
        return {e.name: e.caption(config, computed, *measured) for e in self.entries if e.caption}

    def frame_traces(
        self, panel: str, run: Any, seed: int | None = None, frame: int = -1, feature: int = 0
    ) -> list[dict[str, Any]]:
        """The traces of one panel at one frame: plain JSON-able dicts (no numpy)."""
        mod, sel = self.module(panel), self.select(run, seed, feature)
        return mod.traces(sel, prepared(mod, sel), frame_index(run, frame))

    def all_frame_traces(
        self, panel: str, run: Any, seed: int | None = None, feature: int = 0, start: int = 0
    ) -> list[list[dict[str, Any]]]:
        """`frame_traces` for frames start … F-1, preparing the panel once."""
        mod, sel = self.module(panel), self.select(run, seed, feature)
        data = prepared(mod, sel)
        return [mod.traces(sel, data, f) for f in range(frame_index(run, start), run.n_frames)]

    def moving_traces(
        self, panel: str, run: Any, seed: int | None = None, feature: int = 0
    ) -> list[int]:
        """Indices into `frame_traces` of the traces that change with the frame."""
        mod, sel = self.module(panel), self.select(run, seed, feature)
        return list(panel_parts(mod, sel).moving)

    def panel_layout(self, panel: str, run: Any, seed: int | None = None, feature: int = 0):
        """The layout of one panel, fixed across frames: plain JSON, template included."""
        mod, sel = self.module(panel), self.select(run, seed, feature)
        revision = f"{sel.config.key}:{sel.seed}:{sel.feature}:{panel}"
        return layout_from_parts(panel_parts(mod, sel), revision)

    def panel_figure(
        self, panel: str, run: Any, seed: int | None = None, frame: int = -1, feature: int = 0
    ) -> go.Figure:
        """The full figure of one panel at one frame (seed None = the run's best seed)."""
        layout = self.panel_layout(panel, run, seed, feature)
        data = at_corners(self.frame_traces(panel, run, seed, frame, feature), layout)
        return go.Figure({"data": data, "layout": layout})


def at_corners(data: list[dict[str, Any]], layout: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Texts that hang from a corner of the axes moved there on the axes `layout` draws
    (assets/tempsup.js atCorners does the same in the page): a trace whose `meta` holds
    "corner" (an inset, a share of each axis's span) at the top-left corner, one holding
    "top" at that inset below the y axis's top. A frame places them on the axes of the
    frames up to it (`causal`); a figure draws them on the whole run's. Traces already
    there (to 4 digits) are returned as they came."""
    xr = (layout.get("xaxis") or {}).get("range")
    yr = (layout.get("yaxis") or {}).get("range")
    if not (isinstance(xr, list) and isinstance(yr, list)):
        return data
    out = []
    for t in data:
        meta = t.get("meta") if isinstance(t, dict) else None
        corner = meta.get("corner") if isinstance(meta, dict) else None
        top = meta.get("top") if isinstance(meta, dict) else None
        if isinstance(corner, (int, float)) and t.get("x") and t.get("y"):
            x, y = xr[0] + corner * (xr[1] - xr[0]), yr[1] - corner * (yr[1] - yr[0])
            t = _moved(t, x, y, xr, yr)
        elif isinstance(top, (int, float)) and t.get("x") and t.get("y"):
            t = _moved(t, t["x"][0], yr[1] - top * (yr[1] - yr[0]), xr, yr)
        out.append(t)
    return out


def _moved(t: dict[str, Any], x: float, y: float, xr: list[float], yr: list[float]) -> dict:
    def near(a: Any, b: float, span: float) -> bool:
        return isinstance(a, (int, float)) and abs(a - b) <= 1e-3 * abs(span)

    if near(t["x"][0], x, xr[1] - xr[0]) and near(t["y"][0], y, yr[1] - yr[0]):
        return t
    return {**t, "x": [float(f"{x:.4g}")], "y": [float(f"{y:.4g}")]}  # 4 digits, as drawn
