"""The tempsup web app (placeholder until the dashboard lands).

`app` is the Dash application and `server` its Flask server, the WSGI entry
point (`gunicorn -c gunicorn.conf.py app:server`). Static files are served from
the repository's top-level `assets/` folder.
"""

from __future__ import annotations

from pathlib import Path

import dash
from dash import html

ASSETS = Path(__file__).resolve().parent.parent / "assets"

app = dash.Dash(__name__, assets_folder=str(ASSETS), title="tempsup")
server = app.server

app.layout = html.Main(
    className="page",
    children=[
        html.H1("tempsup"),
        html.P("tempsup — temporal superposition explorer; the dashboard is coming."),
    ],
)


@server.route("/healthz")
def healthz() -> tuple[str, int, dict[str, str]]:
    """Liveness probe for load balancers and the Docker HEALTHCHECK."""
    return "ok", 200, {"Content-Type": "text/plain; charset=utf-8"}
