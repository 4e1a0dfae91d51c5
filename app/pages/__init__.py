"""Pages: each module arranges panels and registers itself under a path.

Routing is by path only (`ROOT_URL.pathname`): the explorer keeps its whole
config in the query string, and a page must not be rebuilt when only the
query changes (that would throw away the frames in the browser).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dash import html


@dataclass(frozen=True)
class Page:
    path: str
    name: str
    layout: Callable[[], html.Div]
    order: int = 0
    # builds the page for the URL query it is opened with (first page load only)
    initial: Callable[[str], html.Div] | None = None


PAGES: dict[str, Page] = {}


def register(
    path: str,
    name: str,
    layout: Callable[[], html.Div],
    order: int = 0,
    initial: Callable[[str], html.Div] | None = None,
) -> None:
    PAGES[path] = Page(path, name, layout, order, initial)


def ordered() -> list[Page]:
    return sorted(PAGES.values(), key=lambda p: p.order)


def intro(title: str, text: str) -> html.Div:
    """A page's first card: its heading and, in a sentence or two, what it is for."""
    return html.Div(className="card", children=[html.H2(title), html.P(text, className="explain")])
