"""The explorer page: controls and the job bar beside the player and four panels."""

from __future__ import annotations

from dash import dcc, html

from app import controls, explorer, ids, panels, player
from app.pages import register


def layout() -> html.Div:
    return html.Div(
        children=[
            dcc.Location(id=ids.URL, refresh="callback-nav"),
            dcc.Store(id=ids.CONFIG),
            dcc.Store(id=ids.JOB),
            dcc.Store(id=ids.VIEW, data=player.INITIAL_VIEW),
            html.Div(
                className="main",
                children=[
                    html.Aside(className="side", children=[controls.layout(), explorer.layout()]),
                    html.Section(className="content", children=[player.layout(), panels.grid()]),
                ],
            ),
        ]
    )


register("/", "Explorer", layout, order=0)
