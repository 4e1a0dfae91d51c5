"""What both animations share: lean frames, the play/pause buttons and step slider, the HTML page.

`tempsup.figures.animation` (the RNN's 2 × 2 subplot grid) and
`tempsup.bows.figures.animation` (the correlated-features lab's hand-laid
grid) place their panels differently but animate them alike: one Plotly frame
per snapshot that lists only the traces that move and, of each, only the keys
that differ between frames (layout is never repeated per frame), replayed by
the same controls. Both export one standalone page with plotly.js inlined,
so the file works offline.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import plotly.graph_objects as go
import plotly.io
import plotly.io.json

from tempsup.core.frames import frame_label
from tempsup.core.palette import TEMPLATE
from tempsup.figures import view

FRAME_MS = 120  # play speed: ~8 frames a second, a 100-frame run in 12 s

# A moving trace: (its index in the figure's data, its dict in every frame).
Moving = tuple[int, list[dict[str, Any]]]


def varying_keys(per_frame: list[dict[str, Any]]) -> list[str]:
    """Keys of one trace whose value is not the same in every frame."""
    first = per_frame[0]
    keys = {k for t in per_frame for k in t}
    return sorted(k for k in keys if any(t.get(k) != first.get(k) for t in per_frame))


def lean_frames(n_frames: int, moving: list[Moving]) -> list[dict[str, Any]]:
    """One frame per snapshot, named by its index, with only what changes of the moving traces.

    Plain JSON, as the figures' traces already are: Plotly's `go.Frame` validates every
    number of every frame again (twice: when made and when set on a figure), which took
    most of a static site's build."""
    keys = {index: varying_keys(per_frame) for index, per_frame in moving}
    moving = [(i, per) for i, per in moving if keys[i]]  # drop traces that stay put after all
    traces = [i for i, _ in moving]
    return [
        {
            "data": [{"type": per[f]["type"], **{k: per[f][k] for k in keys[i]}}
                     for i, per in moving],
            "name": str(f),
            "traces": traces,
        }
        for f in range(n_frames)
    ]  # fmt: skip


def figure_json(fig: go.Figure, frames: list[dict[str, Any]]) -> dict[str, Any]:
    """`fig` (base traces and layout, validated by Plotly as they were set) with `frames`,
    as the plain JSON every surface serializes: the page, the site, the app's lesson."""
    return {**fig.to_plotly_json(), "frames": frames}


@contextmanager
def stdlib_json() -> Iterator[None]:
    """Plotly's encoder on the json module for what is written inside: Plotly takes orjson
    when it is installed (the app packs its frames with it), which writes "ᵀ" where the
    json module writes "\\u1d40", so a page would depend on what else is installed (the
    export from the Python API and from the CLI differed). A setting of Plotly's, put back
    afterwards; the app sets it so for every answer (app/__init__.py)."""
    config = plotly.io.json.config
    before, config.default_engine = config.default_engine, "json"
    try:
        yield
    finally:
        config.default_engine = before


BUTTONS_PX = 190  # the play and pause buttons' width, their padding included


def play_controls(steps: Sequence[int], y: float, pad_top: int) -> dict[str, list[dict[str, Any]]]:
    """`updatemenus` (play, pause) and `sliders` (one stop per frame, labelled "frame 41 of
    101 (step 800)") for `update_layout`, side by side at height `y` (paper coordinates)
    below the plots."""
    play = {"frame": {"duration": FRAME_MS, "redraw": True}, "transition": {"duration": 0}}
    pause = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate"}
    buttons = {
        "type": "buttons",
        "direction": "left",
        "x": 0,
        "xanchor": "left",
        "y": y,
        "yanchor": "top",
        "pad": {"r": 10, "t": pad_top},
        "showactive": False,
        "buttons": [
            {"label": "▶ play", "method": "animate", "args": [None, {**play, "fromcurrent": True}]},
            {"label": "❚❚ pause", "method": "animate", "args": [[None], pause]},
        ],
    }
    go_to = {"frame": {"duration": 0, "redraw": True}, "mode": "immediate"}
    go_to["transition"] = {"duration": 0}
    slider = {
        "active": len(steps) - 1,
        "x": 0,
        "len": 1,
        "y": y,
        "yanchor": "top",
        # the buttons' width in pixels, not a fraction: a narrower figure (the lesson's two
        # runs side by side) put the buttons over the slider's "frame … of …" label
        "pad": {"t": pad_top, "l": BUTTONS_PX},
        # "frame 41 of 101 (step 800)": the numbering of every surface (tempsup.core.frames)
        "currentvalue": {"prefix": "", "font": {"size": 13, "color": "#222222"}},
        "font": {"color": "rgba(0, 0, 0, 0)"},  # no tick labels: 100 step numbers would collide
        "steps": [
            {"label": frame_label(f, len(steps), s), "method": "animate", "args": [[str(f)], go_to]}
            for f, s in enumerate(steps)
        ],
    }
    return {"updatemenus": [buttons], "sliders": [slider]}


# ---- standalone HTML -------------------------------------------------------------------

# the start of every standalone page (exports and the static site): a phone's width, both
# colour schemes; its own page adds the title and what it loads
HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
"""

PAGE = (
    HEAD
    + """<title>{title}</title>
{view}
<style>
body {{ font-family: {font}; color: #222; margin: 1.5rem auto; max-width: 1300px;
       padding: 0 1rem; }}
h1 {{ font-size: 1.35rem; margin-bottom: 0.2rem; }}
table {{ border-collapse: collapse; font-size: 0.9rem; margin: 0.5rem 0 1rem; }}
td, th {{ border-bottom: 1px solid #e4e4e4; padding: 0.2rem 0.8rem 0.2rem 0; text-align: left; }}
th {{ font-weight: 600; }}
pre {{ background: #f6f6f6; padding: 0.8rem; overflow-x: auto; font-size: 0.85rem; }}
.muted {{ color: #666; font-size: 0.9rem; }}
.panel-caption h3 {{ font-size: 1rem; margin: 0.9rem 0 0.2rem; }}
.caption .headline {{ margin: 0.2rem 0; }} .caption details p {{ font-size: 0.9rem; }}
@media (prefers-color-scheme: dark) {{
  body {{ background: #15181d; color: #e6e8eb; }} a {{ color: #8ab4ff; }}
  td, th {{ border-color: #333a44; }} pre {{ background: #22272e; }} .muted {{ color: #a9b1bd; }}
}}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="muted">{intro} Works offline: plotly.js is included in this file.</p>
{link}
{summary}
{figure}
{config}
</body>
</html>
"""
)


def page(
    title_text: str,
    fig: dict[str, Any],
    summary: str,
    config: str,
    link: str | None,
    intro: str,
    div_id: str,
) -> str:
    """A standalone page around one figure (plotly.js inlined): title, `intro` (plain
    text; a hint to press play is added when the figure has frames), the share link,
    then the `summary`, the figure and the `config` HTML. The figure follows the screen
    like the app's (`tempsup.figures.view`: narrow arrangement, dark scheme)."""
    with stdlib_json():
        figure = plotly.io.to_html(
            fig,
            validate=False,  # plain JSON made from validated parts (`figure_json`)
            include_plotlyjs=True,
            full_html=False,
            auto_play=False,
            div_id=div_id,
            config={"responsive": True, "displaylogo": False},
        )
    # plotly sizes a box around the graph's to layout.height; the graph's own box has the
    # height instead, which view.js sets to the figure's, taller on a phone (its narrow
    # arrangement, tempsup.figures.view)
    height = re.match(r'<div style="height:([^;"]*); ', figure.lstrip())
    if height:
        figure = figure.lstrip()[height.end() :].replace(
            'style="height:100%; width:100%;"', f'style="height:{height[1]}; width:100%;"', 1
        )
        figure = '<div style="' + figure
    link_html = (
        f'<p>Share link: <a id="tempsup-link" href="{html.escape(link, quote=True)}">'
        f"{html.escape(link)}</a></p>"
        if link
        else ""
    )
    return PAGE.format(
        title=html.escape(title_text),
        view=view.script_tag(),
        font=TEMPLATE["layout"]["font"]["family"],
        intro=html.escape(intro) + " Press play or drag the slider to replay training."
        if fig.get("frames")
        else html.escape(intro),
        link=link_html,
        summary=summary,
        figure=figure,
        config=config,
    )


def summary_html(rows: dict[str, Any]) -> str:
    return "<h2>Summary (final frame)</h2>" + table(rows)


def config_html(fields: dict[str, Any], config_json: str) -> str:
    """A config as a table, as indented JSON (folded), and as the exact JSON a tool can
    read back from `#tempsup-config`."""
    return (
        "<h2>Configuration</h2>"
        + table({k: json.dumps(v) for k, v in fields.items()})
        + '<details><summary>as JSON</summary><pre id="tempsup-config-text">'
        + html.escape(json.dumps(fields, indent=2, sort_keys=True))
        + "</pre></details>"
        + '<script type="application/json" id="tempsup-config">'
        + config_json.replace("</", "<\\/")
        + "</script>"
    )


def table(rows: dict[str, Any]) -> str:
    body = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(fmt(v))}</td></tr>"
        for k, v in rows.items()
    )
    return f"<table>{body}</table>"


def fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
