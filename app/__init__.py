"""The tempsup web app: the temporal-superposition explorer.

`app` is the Dash application and `server` its Flask server, the WSGI entry
point (`gunicorn -c gunicorn.conf.py app:server`). Pages (`app/pages/`) arrange
panels; each module owns its part (controls, explorer, player, panels), and
component ids live in `app/ids.py`. Training never happens in this process:
jobs go to the worker processes through the shared job store.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlparse

import dash
import flask
import plotly.io.json
from dash import Input, Output, State, dcc, html, no_update, set_props

from app import answers, audience, delivery, ids
from tempsup.figures import view as screen_view  # not `view`: app.view is a module

ASSETS = Path(__file__).resolve().parent.parent / "assets"

# Dash writes every answer with Plotly's encoder, which takes orjson once it is installed
# (app.view packs the drawn frames with it). orjson refuses a string holding a lone
# surrogate, which a crafted request can carry and a callback echo back (an uploaded
# file's name: tests/test_callbacks_fuzz.py), and Plotly's encoder then fails the answer;
# the json module escapes it. Answers are plain data with the frames already text, so the
# json module writes them quickly enough. (The library's pages pin it the same way while
# they write: `tempsup.figures._animation.stdlib_json`.)
plotly.io.json.config.default_engine = "json"

app = dash.Dash(
    __name__,
    assets_folder=str(ASSETS),
    title="tempsup",
    suppress_callback_exceptions=True,  # page components exist only on their page
    on_error=lambda exc: report_error(exc),
)
server = app.server
# compression, caching headers, and only the component chunks a first page draws with
# (the graph, slider and dropdown: Dash holds callbacks until lazy components are ready)
delivery.install(app)
# every poll counts the page that sent it (app/audience.py), shared answer or not: Flask
# runs its before-request hooks in order, and a shared answer ends them
audience.install(server)
# a class's identical polls within a tick share one answer (app/answers.py); installed
# after compression, so that it sees an answer before it is compressed
answers.install(server)
# The page's language (for screen readers; Dash's own page says none) and the script that
# shows every plot as the screen asks (a phone's narrow arrangement, the dark scheme), the
# same one the export and the static site inline (tempsup.figures.view).
app.index_string = app.index_string.replace("<html>", '<html lang="en">', 1).replace(
    "{%metas%}", "{%metas%}\n" + screen_view.script_tag(), 1
)

# Page and callback modules register themselves on import.
from app import docs_site, firstpanel, panels  # noqa: E402
from app.pages import PAGES, compare, explorer, gallery, lab, lesson, ordered, phase  # noqa: E402, F401
from app.pollapi import blueprint as poll_api  # noqa: E402

server.register_blueprint(poll_api)  # the class poll's JSON routes (/poll/api/…)
server.register_blueprint(docs_site.blueprint())  # the built documentation (/docs/…)
# The explorer's first panel comes inside its HTML, drawn before Dash's scripts arrive.
delivery.first_paint(app, firstpanel.first_panel)

log = logging.getLogger("tempsup.app")


def report_error(exc: Exception) -> None:
    """Any callback that raises ends here: its outputs stay as they were, and the
    page shows one line instead of a traceback (the log keeps the traceback)."""
    from tempsup.errors import TempsupError
    from tempsup.jobs.store import StoreUnavailable

    if isinstance(exc, StoreUnavailable):
        text = f"The job store cannot be reached right now ({exc}); try again in a moment."
    elif isinstance(exc, TempsupError):
        text = str(exc)
    else:
        log.exception("callback failed", exc_info=exc)
        text = f"Something went wrong ({type(exc).__name__}); the server log has the details."
    set_props(ids.ALERT, {"children": text})


def _requested_url() -> tuple[str, str | None]:
    """Path and query of the page being opened, when Dash asks for the layout.

    The browser sends the page's URL as the referrer of its layout request, so
    the first page is part of the layout itself — a shared link saves a round
    trip (`route` then only handles later navigation).
    """
    if not flask.has_request_context():
        return "/", None
    url = urlparse(flask.request.referrer or "")
    return url.path or "/", url.query


def page_content(pathname: object, query: str | None = None) -> html.Div:
    page = PAGES.get(pathname if isinstance(pathname, str) and pathname else "/")
    if page is None:
        return html.Div(
            className="card",
            children=[html.H2("Page not found"), dcc.Link("Back to the explorer", href="/")],
        )
    if query is not None and page.initial is not None:
        return page.initial(query)
    return page.layout()


def nav() -> html.Nav:
    return html.Nav(
        className="nav",
        children=[
            *[dcc.Link(p.name, href=p.path, className="nav-link") for p in ordered()],
            # a plain link, not Dash's router: the documentation is static pages beside the app
            html.A("Docs", href=docs_site.URL, className="nav-link"),
        ],
    )


def layout() -> html.Div:
    path, query = _requested_url()
    return html.Div(
        className="page",
        children=[
            dcc.Location(id=ids.ROOT_URL),
            dcc.Store(id=ids.CLIENT, storage_type="local"),
            html.Header(
                className="header",
                children=[
                    html.Div(className="title-row", children=[html.H1("tempsup"), nav()]),
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
            html.Div(id=ids.ALERT, className="error alert", role="alert"),
            dcc.Store(id=ids.PAGE_PATH, data=path),
            # the page's one main landmark (screen readers jump to it past the header)
            html.Main(id=ids.PAGE, children=page_content(path, query)),
        ],
    )


app.layout = layout
# Every page's components, so Dash can check each callback against them.
app.validation_layout = html.Div([layout(), *[p.layout() for p in ordered()]])


@app.callback(
    Output(ids.PAGE, "children"),
    Output(ids.PAGE_PATH, "data"),
    Input(ids.ROOT_URL, "pathname"),
    State(ids.PAGE_PATH, "data"),
)
def route(pathname: object, shown: object):
    """Navigation between pages (the first page comes with the layout)."""
    if pathname == shown:
        return no_update, no_update
    return page_content(pathname), pathname if isinstance(pathname, str) else "/"


@server.route("/healthz")
def healthz() -> tuple[str, int, dict[str, str]]:
    """Liveness probe for load balancers and the Docker HEALTHCHECK."""
    return "ok", 200, {"Content-Type": "text/plain; charset=utf-8"}


# Dash moves the registered callbacks into its callback map on the first request, after
# marking that setup done: under a threaded server a second request arriving meanwhile
# found no callback ("Callback function not found", a 500 seen in the Redis load test).
# Everything is registered by now, so do that setup here, once, before any request.
with server.test_request_context("/"):
    app._setup_server()
