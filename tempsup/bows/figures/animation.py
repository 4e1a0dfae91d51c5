"""All four panels in one animated figure, and the standalone HTML page built on it.

The grid is laid out by hand (no make_subplots) because the matrices panel
holds two axis pairs: every panel gets a cell in paper coordinates, and each
of its local axes ("x", "x2", …) is renamed to a global one with its domain
mapped into the cell. Frames carry only the traces that move, and of those
only the keys that change; they, the play controls and the page come from
`tempsup.figures._animation`, as for the RNN's `tempsup.figures.animation`.
"""

from __future__ import annotations

import html
import json
from typing import Any

import plotly.graph_objects as go

from tempsup.bows.config import MODEL_NAMES, STRUCTURE_NAMES
from tempsup.bows.figures._common import select
from tempsup.bows.figures.lab import PANEL_SET, panel_captions
from tempsup.bows.run import BowsRun
from tempsup.core.palette import TEMPLATE
from tempsup.figures import _animation
from tempsup.figures._animation import (
    FRAME_MS,  # noqa: F401 - the play speed, still importable here
    PAGE,  # noqa: F401 - the page template, still importable here
    config_html,
    figure_json,
    lean_frames,
    play_controls,
    summary_html,
    table,
)
from tempsup.figures.panel import Selection

# Cells (x0, x1, y0, y1) in paper coordinates: each panel's in the lab's registry.
CELLS = {e.name: e.cell for e in PANEL_SET.entries}
HEIGHT = 1500


class _Namer:
    """Hands out global axis numbers per letter: x 1 -> "x", x 2 -> "x2", …"""

    def __init__(self) -> None:
        self.n = {"x": 0, "y": 0}

    def next(self, letter: str) -> int:
        self.n[letter] += 1
        return self.n[letter]


def _global(letter: str, n: int) -> tuple[str, str]:
    suffix = "" if n == 1 else str(n)
    return f"{letter}axis{suffix}", f"{letter}{suffix}"


def place_panel(
    panel: str, parts_axes: dict[str, dict[str, Any]], namer: _Namer
) -> tuple[dict[str, str], dict[str, Any]]:
    """Rename a panel's local axes to global ones inside its cell.

    Returns the map local ref -> global ref ("x2" -> "x5") and the layout axes.
    """
    x0, x1, y0, y1 = CELLS[panel]
    refs: dict[str, str] = {}
    for key in sorted(parts_axes):
        letter, suffix = key[0], key[5:]
        refs[letter + suffix] = _global(letter, namer.next(letter))[1]
    layout: dict[str, Any] = {}
    for key, axis in parts_axes.items():
        letter, suffix = key[0], key[5:]
        ref = refs[letter + suffix]
        name = ref[0] + "axis" + ref[1:]
        axis = dict(axis)
        a, b = axis.get("domain", [0.0, 1.0])
        lo, hi = (x0, x1) if letter == "x" else (y0, y1)
        axis["domain"] = [lo + a * (hi - lo), lo + b * (hi - lo)]
        for k in ("anchor", "scaleanchor"):
            if axis.get(k) in refs:
                axis[k] = refs[axis[k]]
        if "anchor" not in axis:  # the panel's only pair anchors each other
            other = ("y" if letter == "x" else "x") + suffix
            axis["anchor"] = refs.get(other, other)
        layout[name] = axis
    return refs, layout


def _place_trace(trace: dict[str, Any], refs: dict[str, str], panel: str) -> dict[str, Any]:
    trace = dict(trace)
    trace["xaxis"] = refs[trace.get("xaxis", "x")]
    trace["yaxis"] = refs[trace.get("yaxis", "y")]
    marker = trace.get("marker")
    if isinstance(marker, dict) and "colorbar" in marker:
        x0, x1, y0, y1 = CELLS[panel]
        bar = {**marker["colorbar"], "x": x1 + 0.01, "xanchor": "left"}
        bar.update({"y": (y0 + y1) / 2, "len": y1 - y0})
        trace["marker"] = {**marker, "colorbar": bar}
    return trace


def _place_shape(shape: dict[str, Any], refs: dict[str, str]) -> dict[str, Any]:
    shape = dict(shape)
    for key in ("xref", "yref"):
        ref = shape.get(key, "")
        axis, _, rest = ref.partition(" ")
        if axis in refs:
            shape[key] = refs[axis] + (" " + rest if rest else "")
    return shape


def animation_figure(run: BowsRun, seed: int | None = None) -> go.Figure:
    """The four panels in one figure, one Plotly frame per snapshot, play/pause and a slider."""
    fig, frames = _grid(run, seed)
    fig.frames = frames
    return fig


def animation_json(run: BowsRun, seed: int | None = None) -> dict[str, Any]:
    """`animation_figure` as plain JSON, its frames not validated by Plotly (the export's)."""
    return figure_json(*_grid(run, seed))


def _grid(run: BowsRun, seed: int | None) -> tuple[go.Figure, list[dict[str, Any]]]:
    """The hand-laid grid (base traces, layout, controls) and its lean frames."""
    sel = select(run, seed)
    n = run.n_frames
    namer = _Namer()
    layout: dict[str, Any] = {}
    base: list[dict[str, Any]] = []
    moving: list[tuple[int, list[dict[str, Any]]]] = []
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for p, mod in PANEL_SET.modules.items():
        data = mod.prepare(sel)
        parts = mod.parts(sel, data)
        refs, axes = place_panel(p, parts.axes, namer)
        layout.update(axes)
        per_frame = [mod.traces(sel, data, f) for f in range(n)]
        for i, trace in enumerate(per_frame[-1]):
            if i in parts.moving:
                moving.append((len(base), [_place_trace(fr[i], refs, p) for fr in per_frame]))
            base.append(_place_trace(trace, refs, p))
        shapes += [_place_shape(s, refs) for s in parts.shapes]
        layout.update(parts.extra)
        x0, _, _, y1 = CELLS[p]
        annotations.append(
            {
                "text": parts.title,
                "xref": "paper",
                "yref": "paper",
                "x": x0,
                "y": y1 + 0.012,
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "align": "left",
                "font": {"size": 13},
            }
        )
    if "coloraxis" in layout:  # the matrices' shared colour bar, right of its cell
        x0, x1, y0, y1 = CELLS["matrices"]
        bar = layout["coloraxis"].get("colorbar", {})
        layout["coloraxis"] = {
            **layout["coloraxis"],
            "colorbar": {**bar, "x": x1 + 0.01, "xanchor": "left", "y": (y0 + y1) / 2,
                         "len": y1 - y0},
        }  # fmt: skip
    fig = go.Figure(data=base)
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title(sel)},
        height=HEIGHT,
        margin={"l": 60, "r": 60, "t": 120, "b": 170},
        legend={"orientation": "h", "x": 0, "y": -0.1, "yanchor": "top", "font": {"size": 11}},
        hovermode="closest",
        shapes=shapes,
        annotations=annotations,
        **play_controls(run["step"], y=-0.03, pad_top=10),
        **layout,
    )
    return fig, lean_frames(run.n_frames, moving)


def title(sel: Selection) -> str:
    cfg = sel.config
    data = STRUCTURE_NAMES[cfg.structure]
    if cfg.structure == "text":
        data += f" (text {cfg.text_sha256[:12]}, {sel.run.d} words, windows of {cfg.window} lines)"
    text = (
        f"{MODEL_NAMES[cfg.model]}: m = {cfg.m}, d = {sel.run.d}, weight decay {cfg.weight_decay:g}"
        f"<br><sup>{html.escape(data)} · seed {sel.seed}"
        f"{' (best)' if sel.seed == sel.run.best else ''} of {sel.run.n_seeds} · run {cfg.key}"
        "</sup>"
    )
    return text


# ---- standalone HTML -------------------------------------------------------------------

INTRO = (
    "Exported from tempsup's correlated-features lab (tied autoencoders on correlated "
    "features, after Prieto, Stevinson, Barsbey et al., arXiv 2603.09972)."
)


def page(
    title_text: str, fig: dict[str, Any], summary: str = "", config: str = "",
    link: str | None = None, intro: str = INTRO, div_id: str = "tempsup-bows",
) -> str:  # fmt: skip
    """A standalone page around one figure (plotly.js inlined), with the lab's intro."""
    return _animation.page(title_text, fig, summary, config, link, intro, div_id)


def export_html(run: BowsRun, seed: int | None = None, link: str | None = None) -> str:
    """A standalone page: the animation, the final frame's numbers, each panel's caption
    and the config."""
    sel = select(run, seed)
    cfg = run.config
    summary = {k: v for k, v in run.summary(sel.seed).items() if k != "key"}
    # the words under each panel, as the lab's page shows them (its registry writes them)
    summary.update({f"{name} panel": words for name, words in panel_captions(cfg).items()})
    return page(
        f"tempsup bows run {cfg.key}: {MODEL_NAMES[cfg.model]}, m = {cfg.m}",
        animation_json(run, sel.seed),
        summary=summary_html(summary),
        config=config_html(cfg.to_dict(), json.dumps({"kind": cfg.kind, **cfg.to_dict()})),
        link=link,
    )


__all__ = ["animation_figure", "animation_json", "export_html", "page", "table"]
