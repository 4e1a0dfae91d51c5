"""The documentation site under /docs/: the pages `scripts/docs` builds into build/docs/.

The app serves them as static files so that a deployed demo (the Docker image builds
them) carries its own manual, one click from every page. A checkout where nobody ran
`scripts/docs` answers /docs/ with a page that says how to build it, not a bare 404.
"""

from __future__ import annotations

from pathlib import Path

import flask

BUILT = Path(__file__).resolve().parent.parent / "build" / "docs"
URL = "/docs/"

NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tempsup: documentation not built</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>The documentation is not built here</h1>
<p>Run <code>scripts/docs</code> in the repository to build it into
<code>build/docs/</code>; this page then shows it. The same pages are readable as
Markdown in the repository's <code>docs/</code> folder.</p>
<p><a href="/">Back to the explorer</a></p></main></body></html>
"""


def blueprint(directory: Path = BUILT) -> flask.Blueprint:
    """Routes serving the built site in `directory` at /docs/ (index.html for a folder)."""
    site = flask.Blueprint("docs", __name__)

    @site.route(URL.rstrip("/"))
    def docs_root() -> flask.Response:
        return flask.redirect(URL, code=308)

    @site.route(URL, defaults={"name": ""})
    @site.route(URL + "<path:name>")
    def docs_page(name: str) -> flask.Response | tuple[str, int, dict[str, str]]:
        if not (directory / "index.html").is_file():
            return NOT_BUILT, 404, {"Content-Type": "text/html; charset=utf-8"}
        if name == "" or name.endswith("/"):
            name += "index.html"
        # send_from_directory refuses any name that leaves `directory` (../, absolute)
        return flask.send_from_directory(directory, name)

    return site
