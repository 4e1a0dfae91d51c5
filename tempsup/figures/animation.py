"""All four panels in one animated figure, and the standalone HTML export built on it.

The animation is a subplot grid (directions | loss / projections | eigen: each panel's
cell is its entry's in the registry, `tempsup.figures.rnn`) whose base data is the final
frame, with one Plotly frame per snapshot, a
play/pause button and a step slider. Frames stay lean: a frame lists only the
traces that move (`Parts.moving`, addressed by index with `traces=`), and of
each only the keys that differ between frames (usually x/y, the count text);
layout is never repeated per frame. A 100-frame run therefore adds a few
hundred kB to the page, next to plotly.js itself (≈ 4.8 MB, inlined so the
file works offline). The frames, the controls and the page are shared with
the bows lab's animation (`tempsup.figures._animation`); the grid is this
module's own.
"""

from __future__ import annotations

import html
import re
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tempsup.analysis import captions
from tempsup.core.frames import stop_note
from tempsup.core.palette import TEMPLATE
from tempsup.figures import rnn
from tempsup.figures._animation import (
    FRAME_MS,  # noqa: F401 - the play speed, still importable here
    config_html,
    figure_json,
    lean_frames,
    page,
    play_controls,
    summary_html,
)
from tempsup.figures._common import feature_name, select
from tempsup.figures.panel import PanelEntry, Parts, Selection, at_corners
from tempsup.figures.status import NEAR_BEST, status_line
from tempsup.figures.view import narrow_meta
from tempsup.io.run import Run
from tempsup.model.config import MODEL_NAMES

# The export's summary table: these `Run.summary` keys, in these words.
SUMMARY_WORDS = {
    "seed": "seed shown",
    "loss": "measured loss",
    "expected_loss": "expected loss E[L]",
    "expected_loss_se": "standard error of E[L]",
    "successes": "seeds near the best loss",
    "seeds": "seeds trained",
    "swept_angle_deg": "swept angle kθ, w_0 → w_k (degrees)",
    "spectral_radius": "spectral radius ρ(W_h)",
    "w0_norm": "‖w_0‖",
    "n_interference_free": "directions in the interference-free half-space",
}
HEIGHT = 1050
INTRO = (
    "Exported from tempsup (temporal superposition in recurrent networks, "
    "Sharma et al., ICLR 2026)."
)


def _refs(fig: go.Figure, row: int, col: int) -> dict[str, str]:
    """Axis names of one grid cell: {"scene": "scene"} or {"x": "x2", "y": "y2", …}."""
    sp = fig.get_subplot(row, col)
    if str(getattr(sp, "plotly_name", "")).startswith("scene"):
        return {"scene": sp.plotly_name}
    xa, ya = sp.xaxis.plotly_name, sp.yaxis.plotly_name  # "xaxis2", "yaxis2"
    return {"xaxis": xa, "yaxis": ya, "x": "x" + xa[5:], "y": "y" + ya[5:]}


def _place_trace(trace: dict[str, Any], refs: dict[str, str]) -> dict[str, Any]:
    trace = dict(trace)
    if "scene" in refs:
        trace["scene"] = refs["scene"]
    else:
        trace["xaxis"], trace["yaxis"] = refs["x"], refs["y"]
    return trace


def _place_axes(parts: Parts, refs: dict[str, str]) -> dict[str, Any]:
    if "scene" in refs:
        return {refs["scene"]: parts.axes["scene"]}
    out = {}
    for key, name in (("xaxis", refs["xaxis"]), ("yaxis", refs["yaxis"])):
        axis = dict(parts.axes.get(key, {}))
        if axis.get("scaleanchor") in ("x", "y"):
            axis["scaleanchor"] = refs[axis["scaleanchor"]]
        out[name] = axis
    return out


def _place_shape(shape: dict[str, Any], refs: dict[str, str]) -> dict[str, Any]:
    shape = dict(shape)
    for key in ("xref", "yref"):
        ref = shape.get(key, "")
        axis = ref.split(" ")[0]
        if axis in ("x", "y"):
            shape[key] = refs[axis] + ref[len(axis) :]
    return shape


def reading_order() -> list[PanelEntry]:
    """The registry's panels by grid cell, row by row: the order of the grid's subplot
    titles (Plotly numbers them so) and of the narrow arrangement's stack."""
    return sorted(rnn.PANEL_SET.entries, key=lambda e: e.cell)


def animation_figure(run: Run, seed: int | None = None, feature: int = 0) -> go.Figure:
    """The four panels as subplots, one Plotly frame per snapshot, play/pause and a slider."""
    fig, frames = _grid(run, seed, feature)
    fig.frames = frames
    return fig


def animation_json(run: Run, seed: int | None = None, feature: int = 0) -> dict[str, Any]:
    """`animation_figure` as plain JSON, its frames not validated by Plotly: what the
    export, the static site and the app's lesson serialize."""
    return figure_json(*_grid(run, seed, feature))


def _grid(run: Run, seed: int | None, feature: int) -> tuple[go.Figure, list[dict[str, Any]]]:
    """The animation's subplot grid (base traces, layout, controls) and its lean frames."""
    sel = select(run, seed, feature)
    n = run.n_frames
    panels = rnn.PANEL_SET
    data = {e.name: e.module.prepare(sel) for e in panels.entries}
    parts = {e.name: e.module.parts(sel, data[e.name]) for e in panels.entries}
    rows = max(e.cell[0] for e in panels.entries)
    cols = max(e.cell[1] for e in panels.entries)
    specs: list[list[dict[str, str] | None]] = [[None] * cols for _ in range(rows)]
    for e in panels.entries:
        specs[e.cell[0] - 1][e.cell[1] - 1] = {
            "type": "scene" if "scene" in parts[e.name].axes else "xy"
        }
    fig = make_subplots(
        rows=rows,
        cols=cols,
        specs=specs,
        subplot_titles=[parts[e.name].title for e in reading_order()],
        horizontal_spacing=0.1,
        vertical_spacing=0.2,
    )
    layout: dict[str, Any] = {}
    base: list[dict[str, Any]] = []
    moving: list[tuple[int, list[dict[str, Any]]]] = []  # (global index, trace per frame)
    shapes: list[dict[str, Any]] = []
    refs_of: dict[str, dict[str, str]] = {}
    traces_of: dict[str, list[int]] = {}
    for e in panels.entries:
        p = e.name
        refs = refs_of[p] = _refs(fig, *e.cell)
        traces_of[p] = []
        # texts hanging from a corner at the whole run's corner (each frame draws them at
        # the corner of the frames up to it)
        per_frame = [at_corners(e.module.traces(sel, data[p], f), parts[p].axes) for f in range(n)]
        for i, trace in enumerate(per_frame[-1]):
            trace = _place_trace(trace, refs)
            if not e.legend:
                trace["showlegend"] = False  # another panel's legend names its traces
            if trace["type"] == "heatmap":
                trace["colorbar"] = {**trace.get("colorbar", {}), **_colorbar(fig, refs)}
            if i in parts[p].moving:
                moving.append((len(base), [frames[i] for frames in per_frame]))
            traces_of[p].append(len(base))
            base.append(trace)
        layout.update(_place_axes(parts[p], refs))
        shapes += [_place_shape(s, refs) for s in parts[p].shapes]
        # a panel's own margin is for its figure alone: the grid sets the page's margins
        layout.update({k: v for k, v in parts[p].extra.items() if k != "margin"})
    frames = lean_frames(run.n_frames, moving)
    fig.add_traces(base)
    fig.update_layout(
        template=TEMPLATE,
        title={"text": _title(sel)},
        height=HEIGHT,
        margin={"l": 60, "r": 30, "t": 110, "b": 230},
        # the legend at the figure's bottom edge, under the slider (a fraction of the plot's
        # height below the axes put it over the slider's ticks)
        legend={
            "orientation": "h",
            "x": 0,
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "font": {"size": 11},
        },  # fmt: skip
        hovermode="closest",
        shapes=shapes,
        **play_controls(run["step"], y=-0.06, pad_top=30),
        **layout,
    )
    for a in fig.layout.annotations:  # subplot titles: left-aligned, smaller than the page title
        a.update(font={"size": 13})
    fig.update_layout(meta=_narrow(fig, refs_of, traces_of))
    return fig, frames


# The narrow arrangement (a phone, `tempsup.figures.view`): the panels one above the other,
# each with its title above and its own legend below, then the controls. Heights in px.
# "modebar": room above the title for Plotly's buttons, shown at all times on a touch screen
# (the title's pad is 14 px more: Plotly draws a title with <sup> lines that much above it).
NARROW = {"plot": 270, "axis": 62, "title_line": 15, "legend_row": 19, "gap": 30,
          "top_line": 19, "modebar": 30, "controls": 110,
          "margin": {"l": 58, "r": 14, "b": 10}}  # fmt: skip
# A line's characters at 390 px (then it wraps); a legend entry's, for two in a row.
NARROW_CHARS = {"title": 36, "panel": 40, "sup": 58, "entry": 18}


def _narrow(
    fig: go.Figure, refs_of: dict[str, dict[str, str]], traces_of: dict[str, list[int]]
) -> dict[str, Any]:
    """`layout.meta` with the grid's narrow arrangement: each panel full width, stacked in
    the grid's reading order, titles wrapped to the width, a legend per panel."""
    g = NARROW
    title = _wrap(fig.layout.title.text, NARROW_CHARS["title"], NARROW_CHARS["sup"] + 6)
    pad = g["modebar"] + 14
    top = pad + g["top_line"] * (title.count("<br>") + 1)
    patch: dict[str, Any] = {"title.text": title, "title.yref": "container", "title.y": 1,
                             "title.yanchor": "top", "title.pad": {"t": pad}}  # fmt: skip
    legends: dict[str, int] = {}  # legend → entries in a row
    data: dict[int, dict[str, Any]] = {}
    spans: list[tuple[str, float, float]] = []  # (what, top px, bottom px) from the top
    y = float(top)
    order = [e.name for e in reading_order()]  # annotations[n] is order[n]'s title
    for n, p in enumerate(order):
        note = _wrap(fig.layout.annotations[n].text, NARROW_CHARS["panel"], NARROW_CHARS["sup"])
        patch[f"annotations[{n}].text"] = note
        patch[f"annotations[{n}].x"] = 0.5
        y += g["title_line"] * (note.count("<br>") + 1) + 6
        spans.append((f"panel {n}", y, y + g["plot"]))
        y += g["plot"] + g["axis"]
        shown = [
            fig.data[i].name or "" for i in traces_of[p] if fig.data[i].showlegend is not False
        ]
        if shown:
            legend = "legend" if n == 0 else f"legend{n + 1}"
            for i in traces_of[p]:
                data[i] = {"legend": legend}
            spans.append((legend, y, y))
            longest = max(len(re.sub(r"<[^>]*>", "", name)) for name in shown)
            legends[legend] = 2 if longest <= NARROW_CHARS["entry"] else 1
            y += g["legend_row"] * -(-len(shown) // legends[legend])
        for i in traces_of[p]:
            if fig.data[i].type == "heatmap":  # its cells print their values
                data.setdefault(i, {})["showscale"] = False
        y += g["gap"]
    spans.append(("controls", y, y))
    height = y + g["controls"] + g["margin"]["b"]
    inner = height - top - g["margin"]["b"]

    def paper(px: float) -> float:  # px from the top → paper fraction of the plot area
        return round(1 - (px - top) / inner, 5)

    wide: dict[str, Any] = {}
    for what, y0, y1 in spans:
        if what.startswith("panel"):
            n = int(what.split()[1])
            refs = refs_of[order[n]]
            domain = [paper(y1), paper(y0)]
            if "scene" in refs:
                patch[f"{refs['scene']}.domain"] = {"x": [0, 1], "y": domain}
                wide[f"{refs['scene']}.domain"] = fig.layout[refs["scene"]].domain.to_plotly_json()
            else:
                patch[f"{refs['xaxis']}.domain"] = [0, 1]
                patch[f"{refs['yaxis']}.domain"] = domain
                for axis in (refs["xaxis"], refs["yaxis"]):
                    wide[f"{axis}.domain"] = list(fig.layout[axis].domain)
            patch[f"annotations[{n}].y"] = paper(y0)
        elif what == "controls":
            patch["updatemenus[0].y"] = paper(y0)
            patch["updatemenus[0].pad"] = {"r": 10, "t": 0}
            patch["sliders[0].x"] = 0
            patch["sliders[0].len"] = 1
            patch["sliders[0].y"] = paper(y0 + 40)
            patch["sliders[0].pad"] = {"t": 0}
        else:
            patch[what] = {
                **fig.layout.legend.to_plotly_json(),
                "orientation": "h", "x": 0, "xanchor": "left", "yref": "paper",
                "y": paper(y0), "yanchor": "top", "traceorder": "normal",
                "entrywidth": 1 / legends[what], "entrywidthmode": "fraction",
                "font": {"size": 10},
            }  # fmt: skip
    patch.update({"height": round(height), "margin": {**g["margin"], "t": top}})
    return narrow_meta(patch, data, wide)


def _wrap(text: str, chars: int, sup_chars: int) -> str:
    """`text` (Plotly's HTML subset) with each line longer than `chars` visible characters
    (`sup_chars` in <sup>, smaller) broken at spaces, tags kept whole (Plotly carries an open
    <sup> over a <br>)."""
    lines, in_sup = [], False
    for line in text.split("<br>"):
        width = sup_chars if in_sup or line.startswith("<sup>") else chars
        out, count = [""], 0
        for word in line.split(" "):
            seen = len(re.sub(r"<[^>]*>", "", word)) + 1
            if out[-1] and count + seen > width:
                out.append("")
                count = 0
            out[-1] = f"{out[-1]} {word}" if out[-1] else word
            count += seen
        lines += out
        in_sup = line.rfind("<sup>") > line.rfind("</sup>") or (in_sup and "</sup>" not in line)
    return "<br>".join(lines)


def _colorbar(fig: go.Figure, refs: dict[str, str]) -> dict[str, Any]:
    xd, yd = fig.layout[refs["xaxis"]].domain, fig.layout[refs["yaxis"]].domain
    return {"x": xd[1] + 0.005, "xanchor": "left", "y": sum(yd) / 2, "len": yd[1] - yd[0]}


def _title(sel: Selection) -> str:
    cfg = sel.config
    text = (
        f"{MODEL_NAMES[cfg.model]}: k = {cfg.k}, sparsity S = {cfg.sparsity:g}, "
        f"N<sub>h</sub> = {cfg.hidden}, N<sub>x</sub> = {cfg.inputs}, "
        f"{'tied' if cfg.tied else 'free'} readout{', bias' if cfg.bias else ''}"
    )
    choice = sel.run.best_seed  # why it is best, and the seeds tied with it
    tie = f"; {choice.tie_text}" if choice.tied else ""
    best = f" (best: {choice.reason}{tie})" if sel.seed == choice.seed else ""
    best = best or (" (tied with the best)" if sel.seed in choice.tied else "")
    sub = f"seed {sel.seed}{best} of {sel.run['loss'].shape[1]} · run {cfg.key}"
    if cfg.inputs > 1:
        sub += f" · directions of feature {feature_name(sel.feature)}"
    stopped = stop_note(int(sel.run["step"][-1]), cfg.steps)
    if stopped:
        sub += f" · {stopped}"
    return f"{text}<br><sup>{sub}</sup>"


def export_html(
    run: Run, seed: int | None = None, link: str | None = None, feature: int = 0
) -> str:
    """A standalone page: the animation (plotly.js inlined), the config and the share link."""
    sel = select(run, seed, feature)
    cfg = run.config
    described = run.summary(sel.seed)  # `tempsup inspect`'s numbers: the headline ones here
    numbers = {k: described[k] for k in SUMMARY_WORDS if described.get(k) is not None}
    last = int(run["step"][-1])
    summary: dict[str, Any] = {
        "training": stop_note(last, cfg.steps) or f"complete: {last} of {cfg.steps} steps"
    }
    summary.update({SUMMARY_WORDS.get(k, k): v for k, v in numbers.items()})
    summary["near the best loss"] = NEAR_BEST
    summary["gauge"] = captions.gauge_note(cfg)
    summary["status line of the last frame"] = status_line(run, sel.seed, -1, sel.feature)
    return page(
        f"tempsup run {cfg.key}: {MODEL_NAMES[cfg.model]}",
        animation_json(run, sel.seed, sel.feature),
        summary=summary_html(summary),
        # under the figure, before the configuration: what each panel shows
        config=panel_captions_html(run, sel.seed, sel.feature)
        + config_html(cfg.to_dict(), cfg.to_json()),
        link=link,
        intro=INTRO,
        div_id="tempsup-animation",
    )


def panel_captions_html(run: Run, seed: int | None = None, feature: int = 0, level: int = 2) -> str:
    """What each panel shows, for one seed (None: the best) and feature of a run: the
    explorer's captions, written for this run by the same function (the registry,
    `tempsup.figures.rnn.run_captions`), each headline visible and its explanation under
    a native "Why?" disclosure, under a heading of `level` (each panel's one below). The
    export prints them under its figure; the static site under each animation."""
    h, sub = f"h{level}", f"h{level + 1}"
    items = "".join(
        f'<section class="panel-caption" data-panel="{html.escape(name, quote=True)}">'
        f"<{sub}>{html.escape(rnn.PANEL_SET.entry(name).title)}</{sub}>{words.html()}"
        "</section>"
        for name, words in rnn.run_captions(run, seed, feature).items()
    )
    return f'<div class="captions"><{h}>What the panels show</{h}>{items}</div>'


SHORT_TITLE = 32  # side by side, a panel title longer than this runs into its neighbour's
# Side by side, the legend takes two entries a row (in a half-width column, entries laid
# out by their text's width ran into each other), in rows of this many px (font 11), under
# the slider, whose step labels end this far below the plots (both measured in Chromium).
# The bottom margin grows to hold them, and the figure with it: the plots keep their size.
SIDE_LEGEND_ROW, SIDE_SLIDER_DEPTH, SIDE_LEGEND_GAP = 29, 144, 18


def side_by_side(figure: dict[str, Any]) -> dict[str, Any]:
    """An animation narrowed for a half-width column: each panel keeps the first line of
    its title, shortened before its parenthesis when long (the explorer, one click away,
    has the full notes), in a smaller font; a heatmap without its colour bar, which would
    sit over the next panel (its cells print their values)."""
    layout = dict(figure.get("layout", {}))
    notes = []
    for note in layout.get("annotations", []):
        text = str(note.get("text", "")).split("<br>")[0]
        if len(text) > SHORT_TITLE and " (" in text:
            text = text.split(" (")[0]
        notes.append({**note, "text": text, "font": {**note.get("font", {}), "size": 11}})
    layout["annotations"] = notes
    title = dict(layout.get("title", {}))
    title["font"] = {**title.get("font", {}), "size": 13}
    layout["title"] = title
    data = [
        {**t, "showscale": False} if t.get("type") == "heatmap" else t
        for t in figure.get("data", [])
    ]
    rows = -(-_legend_entries(data) // 2)
    margin = dict(layout.get("margin", {}))
    below = SIDE_SLIDER_DEPTH + SIDE_LEGEND_GAP + rows * SIDE_LEGEND_ROW
    extra = max(0, below - margin.get("b", 0))
    layout.update(
        legend={**layout.get("legend", {}), "entrywidth": 0.48, "entrywidthmode": "fraction"},
        margin={**margin, "b": margin.get("b", 0) + extra},
        height=layout.get("height", HEIGHT) + extra,
    )
    return {**figure, "data": data, "layout": layout}


def _legend_entries(data: list[dict[str, Any]]) -> int:
    """How many entries the legend lists: named traces not hidden from it, one per group."""
    shown = {t.get("legendgroup") or t.get("name") for t in data
             if t.get("showlegend", True) and t.get("name")}  # fmt: skip
    return len(shown)


__all__ = [
    "animation_figure",
    "animation_json",
    "export_html",
    "panel_captions_html",
    "side_by_side",
]
