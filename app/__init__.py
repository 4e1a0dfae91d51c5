"""The tempsup web app: the temporal-superposition explorer.

`app` is the Dash application and `server` its Flask server, the WSGI entry
point (`gunicorn -c gunicorn.conf.py app:server`). The page arranges the
panels; each module owns its part (controls, explorer, player, panels), and
component ids live in `app/ids.py`. Training never happens in this process:
jobs go to the worker processes through the shared job store.
"""

from __future__ import annotations

from pathlib import Path

import dash
from dash import dcc, html

from app import ids

ASSETS = Path(__file__).resolve().parent.parent / "assets"

app = dash.Dash(__name__, assets_folder=str(ASSETS), title="tempsup")
server = app.server

# Callback modules register themselves on import (dash.callback).
from app import controls, explorer, panels, player  # noqa: E402


def layout() -> html.Div:
    return html.Div(
        className="page",
        children=[
            dcc.Location(id=ids.URL, refresh="callback-nav"),
            dcc.Store(id=ids.CONFIG),
            dcc.Store(id=ids.JOB),
            dcc.Store(id=ids.VIEW, data=player.INITIAL_VIEW),
            dcc.Store(id=ids.CLIENT, storage_type="local"),
            html.Header(
                className="header",
                children=[
                    html.H1("tempsup"),
                    html.P(
                        [
                            "How a recurrent network packs what it must remember into a too-small "
                            "hidden state — ",
                            html.A(
                                "Temporal superposition and feature geometry of RNNs under "
                                "memory demands",
                                href=panels.PAPER_URL,
                                target="_blank",
                            ),
                            " (Sharma, Proca, Prieto, Mediano, ICLR 2026).",
                        ]
                    ),
                ],
            ),
            html.Div(
                className="main",
                children=[
                    html.Aside(className="side", children=[controls.layout(), explorer.layout()]),
                    html.Section(className="content", children=[player.layout(), panels.grid()]),
                ],
            ),
        ],
    )


app.layout = layout


@server.route("/healthz")
def healthz() -> tuple[str, int, dict[str, str]]:
    """Liveness probe for load balancers and the Docker HEALTHCHECK."""
    return "ok", 200, {"Content-Type": "text/plain; charset=utf-8"}
