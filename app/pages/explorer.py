"""The explorer page: the job bar and controls beside the player and four panels.

Opened from a link, the page is built for the link's config; if that run is
already trained, its frames come inside the page itself (no callback needed
before the animation can play), showing the link's seed, and the `REQUEST`
store carries the link's frame to the scrubber.
"""

from __future__ import annotations

from typing import Any

from dash import dcc, html

from app import controls, explorer, ids, panels, player
from app.controls import config_store
from app.pages import register
from app.urlstate import config_from_query, view_from_query
from tempsup.config import DEFAULTS
from tempsup.errors import TempsupError


def layout(query: str | None = None) -> html.Div:
    """The page; with `query` (the link being opened) prefilled for its config."""
    config, state, request = DEFAULTS, None, None
    if query is not None:
        parsed, errors = config_from_query(query)
        request, view_errors = view_from_query(query, parsed)
        if not errors + view_errors:  # a link with problems goes through the callbacks,
            seed = request["seed"] if request else None  # which explain them
            try:
                config, state = parsed, explorer.cached_state(parsed, seed)
            except TempsupError:  # the job store is unreachable: the callbacks will say so
                config, state = parsed, None
    stores: dict[str, Any] = {"config": None, "job": None, "view": player.INITIAL_VIEW,
                              "status": None, "options": [], "seed": None}  # fmt: skip
    if state is not None:
        stores.update(state, config=config_store(config, autostart=False))
    return html.Div(
        children=[
            dcc.Location(id=ids.URL, refresh="callback-nav"),
            dcc.Store(id=ids.CONFIG, data=stores["config"]),
            dcc.Store(id=ids.JOB, data=stores["job"]),
            dcc.Store(id=ids.VIEW, data=stores["view"]),
            dcc.Store(id=ids.REQUEST, data=request if state is not None else None),
            html.Div(
                className="main",
                children=[
                    # Train first, then the controls; both columns' tops stay in view while
                    # the panels scroll (assets/style.css: .side and .player are sticky)
                    html.Aside(
                        className="side",
                        children=[explorer.layout(stores["status"]), controls.layout(config)],
                    ),
                    html.Section(
                        className="content",
                        children=[
                            player.layout(stores["options"], stores["seed"]),
                            player.hint(),
                            panels.grid(config),
                        ],
                    ),
                ],
            ),
        ]
    )


register("/", "Explorer", layout, order=0, initial=layout)
