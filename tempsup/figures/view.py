"""The script that shows every figure as the screen asks (`view.js`), for every surface.

A figure is drawn by the server (or the export) once, for a wide light screen;
`view.js` redraws it in the browser with the narrow arrangement it carries
(`layout.meta["tempsup"]["narrow"]`, see `narrow_meta`) on a phone and with the
palette's dark colours (`tempsup.core.palette.DARK`) under a dark system scheme, and
draws it again from what the page drew when either changes back. The app puts
`script_tag()` in its page head; the export and the static site inline the same
text, so the four surfaces share one copy of the logic.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from tempsup.core.palette import DARK

JS = Path(__file__).with_name("view.js")
NARROW_PX = 600  # view.js's "(max-width: 600px)": the app's and the site's phone width


@cache
def script_text() -> str:
    """The dark colours, then view.js: one script, for a page's head or a `.js` file."""
    return f"window.tempsupDark = {json.dumps(DARK)};\n{JS.read_text(encoding='utf-8')}"


def script_tag() -> str:
    text = script_text()
    assert "</script" not in text.lower()  # it would end the tag early
    return f"<script>{text}</script>"


def narrow_meta(
    layout: dict[str, Any], data: dict[int, dict[str, Any]], wide: dict[str, Any]
) -> dict[str, Any]:
    """`layout.meta` holding a narrow arrangement: `layout` as attribute paths to values
    (`{"xaxis2.domain": [0, 1], "sliders[0].y": 0.01}`, as Plotly.relayout takes them)
    and, by trace index, each trace's paths; `wide`: the paths back to the figure as drawn
    that Plotly may have changed in it while drawing it narrow (an axis's domain)."""
    narrow = {"layout": layout, "data": {str(i): v for i, v in data.items()}}
    return {"tempsup": {"narrow": narrow, "wide": {"layout": wide}}}


__all__ = ["NARROW_PX", "narrow_meta", "script_tag", "script_text"]
