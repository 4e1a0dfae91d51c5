"""All four panels in one animated figure, and the standalone HTML export built on it.

The animation is a 2 × 2 subplot grid (directions | loss / projections | eigen)
whose base data is the final frame, with one Plotly frame per snapshot, a
play/pause button and a step slider. Frames stay lean: a frame lists only the
traces that move (`Parts.moving`, addressed by index with `traces=`), and of
each only the keys that differ between frames (usually x/y, the count text);
layout is never repeated per frame. A 100-frame run therefore adds a few
hundred kB to the page, next to plotly.js itself (≈ 4.8 MB, inlined so the
file works offline).
"""

from __future__ import annotations

import html
import json
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tempsup.config import MODEL_NAMES
from tempsup.figures._common import Parts, Selection, feature_name, select
from tempsup.figures._registry import MODULES, PANELS
from tempsup.palette import TEMPLATE
from tempsup.run import Run

CELLS = {"directions": (1, 1), "loss": (1, 2), "projections": (2, 1), "eigen": (2, 2)}
FRAME_MS = 120  # play speed: ~8 frames a second, a 100-frame run in 12 s
HEIGHT = 1050


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


def _varying_keys(per_frame: list[dict[str, Any]]) -> list[str]:
    """Keys of one trace whose value is not the same in every frame."""
    first = per_frame[0]
    keys = {k for t in per_frame for k in t}
    return sorted(k for k in keys if any(t.get(k) != first.get(k) for t in per_frame))


def animation_figure(run: Run, seed: int | None = None, feature: int = 0) -> go.Figure:
    """The four panels as subplots, one Plotly frame per snapshot, play/pause and a slider."""
    sel = select(run, seed, feature)
    n = run.n_frames
    data = {p: MODULES[p].prepare(sel) for p in PANELS}
    parts = {p: MODULES[p].parts(sel, data[p]) for p in PANELS}
    is3d = "scene" in parts["directions"].axes
    fig = make_subplots(
        rows=2,
        cols=2,
        specs=[[{"type": "scene" if is3d else "xy"}, {"type": "xy"}], [{"type": "xy"}] * 2],
        subplot_titles=[parts[p].title for p in PANELS],
        horizontal_spacing=0.1,
        vertical_spacing=0.2,
    )
    layout: dict[str, Any] = {}
    base: list[dict[str, Any]] = []
    moving: list[tuple[int, list[dict[str, Any]]]] = []  # (global index, trace per frame)
    shapes: list[dict[str, Any]] = []
    for p in PANELS:
        refs = _refs(fig, *CELLS[p])
        per_frame = [MODULES[p].traces(sel, data[p], f) for f in range(n)]
        for i, trace in enumerate(per_frame[-1]):
            trace = _place_trace(trace, refs)
            if p == "projections":
                trace["showlegend"] = False  # same roles and colours as the directions panel
            if trace["type"] == "heatmap":
                trace["colorbar"] = {**trace.get("colorbar", {}), **_colorbar(fig, refs)}
            if i in parts[p].moving:
                moving.append((len(base), [frames[i] for frames in per_frame]))
            base.append(trace)
        layout.update(_place_axes(parts[p], refs))
        shapes += [_place_shape(s, refs) for s in parts[p].shapes]
        layout.update(parts[p].extra)
    frames = _frames(run, moving)
    fig.add_traces(base)
    fig.update_layout(
        template=TEMPLATE,
        title={"text": _title(sel)},
        height=HEIGHT,
        margin={"l": 60, "r": 30, "t": 110, "b": 210},
        legend={"orientation": "h", "x": 0, "y": -0.16, "yanchor": "top", "font": {"size": 11}},
        hovermode="closest",
        shapes=shapes,
        updatemenus=[_buttons()],
        sliders=[_slider(run)],
        **layout,
    )
    for a in fig.layout.annotations:  # subplot titles: left-aligned, smaller than the page title
        a.update(font={"size": 13})
    fig.frames = frames
    return fig


def _frames(run: Run, moving: list[tuple[int, list[dict[str, Any]]]]) -> list[go.Frame]:
    keys = {index: _varying_keys(per_frame) for index, per_frame in moving}
    moving = [(i, per) for i, per in moving if keys[i]]  # drop traces that stay put after all
    frames = []
    for f in range(run.n_frames):
        data = [{"type": per[f]["type"], **{k: per[f][k] for k in keys[i]}} for i, per in moving]
        frames.append(go.Frame(name=str(f), data=data, traces=[i for i, _ in moving]))
    return frames


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
    best = " (best)" if sel.seed == sel.run.best else ""
    sub = f"seed {sel.seed}{best} of {sel.run['loss'].shape[1]} · run {cfg.key}"
    if cfg.inputs > 1:
        sub += f" · directions of feature {feature_name(sel.feature)}"
    return f"{text}<br><sup>{sub}</sup>"


def _buttons() -> dict[str, Any]:
    play = {"frame": {"duration": FRAME_MS, "redraw": True}, "transition": {"duration": 0}}
    pause = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate"}
    return {
        "type": "buttons",
        "direction": "left",
        "x": 0,
        "xanchor": "left",
        "y": -0.06,
        "yanchor": "top",
        "pad": {"r": 10, "t": 30},
        "showactive": False,
        "buttons": [
            {"label": "▶ play", "method": "animate", "args": [None, {**play, "fromcurrent": True}]},
            {"label": "❚❚ pause", "method": "animate", "args": [[None], pause]},
        ],
    }


def _slider(run: Run) -> dict[str, Any]:
    go_to = {"frame": {"duration": 0, "redraw": True}, "mode": "immediate"}
    go_to["transition"] = {"duration": 0}
    return {
        "active": run.n_frames - 1,
        "x": 0.16,
        "len": 0.84,
        "y": -0.06,
        "yanchor": "top",
        "pad": {"t": 30},
        "currentvalue": {"prefix": "step ", "font": {"size": 13, "color": "#222222"}},
        "font": {"color": "rgba(0, 0, 0, 0)"},  # no tick labels: 100 step numbers would collide
        "steps": [
            {"label": str(int(s)), "method": "animate", "args": [[str(f)], go_to]}
            for f, s in enumerate(run["step"])
        ],
    }


# ---- standalone HTML -------------------------------------------------------------------

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: {font}; color: #222; margin: 1.5rem auto; max-width: 1300px;
       padding: 0 1rem; }}
h1 {{ font-size: 1.35rem; margin-bottom: 0.2rem; }}
table {{ border-collapse: collapse; font-size: 0.9rem; margin: 0.5rem 0 1rem; }}
td, th {{ border-bottom: 1px solid #e4e4e4; padding: 0.2rem 0.8rem 0.2rem 0; text-align: left; }}
th {{ font-weight: 600; }}
pre {{ background: #f6f6f6; padding: 0.8rem; overflow-x: auto; font-size: 0.85rem; }}
.muted {{ color: #666; font-size: 0.9rem; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="muted">Exported from tempsup (temporal superposition in recurrent networks,
Sharma et al., ICLR 2026). Press play or drag the slider to replay training.
Works offline: plotly.js is included in this file.</p>
{link}
<h2>Summary (final frame)</h2>
{summary}
{figure}
<h2>Configuration</h2>
{config_table}
<details><summary>as JSON</summary><pre id="tempsup-config-text">{config_pretty}</pre></details>
<script type="application/json" id="tempsup-config">{config_json}</script>
</body>
</html>
"""


def export_html(
    run: Run, seed: int | None = None, link: str | None = None, feature: int = 0
) -> str:
    """A standalone page: the animation (plotly.js inlined), the config and the share link."""
    sel = select(run, seed, feature)
    fig = animation_figure(run, sel.seed, sel.feature)
    figure = fig.to_html(
        include_plotlyjs=True,
        full_html=False,
        auto_play=False,
        div_id="tempsup-animation",
        config={"responsive": True, "displaylogo": False},
    )
    cfg = run.config
    title = f"tempsup run {cfg.key}: {MODEL_NAMES[cfg.model]}"
    summary = {
        k: v for k, v in run.summary(sel.seed).items() if k not in ("key",) and v is not None
    }
    link_html = (
        f'<p>Share link: <a id="tempsup-link" href="{html.escape(link, quote=True)}">'
        f"{html.escape(link)}</a></p>"
        if link
        else ""
    )
    return _PAGE.format(
        title=html.escape(title),
        font=TEMPLATE["layout"]["font"]["family"],
        link=link_html,
        summary=_table({k: _fmt(v) for k, v in summary.items()}),
        figure=figure,
        config_table=_table({k: json.dumps(v) for k, v in cfg.to_dict().items()}),
        config_pretty=html.escape(json.dumps(cfg.to_dict(), indent=2, sort_keys=True)),
        config_json=cfg.to_json().replace("</", "<\\/"),
    )


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _table(rows: dict[str, str]) -> str:
    body = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
        for k, v in rows.items()
    )
    return f"<table>{body}</table>"


__all__ = ["animation_figure", "export_html"]
