"""How the app's files reach a browser quickly on a slow phone network.

A phone on a mid-range connection (about 200 kB/s, 150 ms round trip) used to
wait for ~10 MB of JavaScript before it saw a panel: every lazily loaded chunk
of Dash's components (MathJax, tables, date pickers… that no page uses) and
the whole plotly.js came with the page. Now:

- responses are compressed (brotli, else gzip: flask-compress). A static file's
  compressed form is made once per process and kept (`StaticCache`), so a class
  opening the page together costs the server one compression per file; an asset
  with a `.br` file beside it (the 2-D plotly.js) is sent in that smaller form;
- versioned files may be cached by the browser for a year: Dash's fingerprinted
  bundles already say so, and the assets' URLs carry their file's time (`?m=`);
- the page asks for its layout and callbacks at once, beside its scripts (`PRELOADED`);
- only the component chunks a first page draws with come with it (`EAGER_CHUNKS`;
  the others load if a page ever needs them), and plotly.js is the 2-D bundle in
  assets/plotly/, which loads the full one only for a 3-D figure
  (assets/plotly/upgrade.js);
- a page whose first panel the server knows (`first_paint`: the explorer's, from
  app/firstpanel.py) comes with that panel's figure inside its HTML and loads plotly.js
  first, alone on the network, drawing the panel as soon as it has arrived; Dash's
  scripts follow in their order (app/first_paint.js) and Dash then renders the page in
  the panel's place. The first panel is drawn after the HTML and plotly.js instead of
  after every script.
"""

from __future__ import annotations

import functools
import html
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import brotli
import flask
from dash import Dash
from flask_compress import Compress
from werkzeug.security import safe_join

# Dash's lazily loaded component chunks that every first page draws with: graphs, sliders
# (the explorer's controls) and dropdowns (the player's menus). They come with the page as
# plain scripts, so Dash never holds the first callbacks back while it fetches them (a
# round trip each, ~0.2 s on a shared link before). The others (markdown, MathJax, date
# pickers, upload…) load when a page first shows one.
EAGER_CHUNKS = ("graph", "slider", "dropdown")
PRELOADED = ("_dash-layout", "_dash-dependencies")
COMPRESSED_TYPES = (
    "text/html",
    "text/css",
    "text/plain",
    "text/javascript",
    "application/javascript",
    "application/json",
    "image/svg+xml",
    "image/x-icon",
    "image/vnd.microsoft.icon",
)
# brotli's quality 5 compresses the 2-D plotly.js (1.2 MB) in ~0.3 s to 32 % of its size;
# 11 saves another 10 % but takes ~20 s of CPU per file
BROTLI_QUALITY = 5
YEAR = 365 * 24 * 3600
# compressed forms of shared poll answers kept per process and encoding (app/answers.py)
SHARED_KEEP = 64
SHARED_NAME = "answer:"  # how app/answers.py names a shared answer: "answer:" + its digest
_SHARED_KEY = ";" + SHARED_NAME  # in flask-compress's key: "br;answer:…"
# The asset drawn with first (`first_paint`), and the script that loads it and then Dash's.
PLOTLY_2D = "plotly/plotly-2d.min.js"
FIRST_PAINT_JS = Path(__file__).with_name("first_paint.js")
# (title, figure JSON) of the first panel of the page at a path and query, or None
FirstPanel = Callable[[str, str], "tuple[str, str] | None"]
_STATIC = ("/_dash-component-suites/", "/assets/")
log = logging.getLogger("tempsup.app")


class StaticCache:
    """flask-compress's cache of compressed bodies: static files, and shared answers.

    A static file's key is its path (never its query: a URL's `?m=` cannot grow the
    cache) and its ETag when it has one (fingerprinted bundles change their path
    instead), set by `_static_response`. A poll answer that a class shares
    (`app.answers`) is named by that module, and its compressed forms are kept for the
    last `SHARED_KEEP` such answers. Every other response (callbacks, layouts, pages)
    gets the empty key and is compressed afresh.
    """

    def __init__(self) -> None:
        self._bodies: dict[str, bytes] = {}
        self._shared: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        if _SHARED_KEY in key:
            with self._lock:
                return self._shared.get(key)
        return self._bodies.get(key)

    def set(self, key: str, value: bytes) -> None:
        if key.endswith(";"):  # "br;" + "": neither a static file nor a shared answer
            return
        if _SHARED_KEY not in key:
            self._bodies[key] = value
            return
        with self._lock:
            self._shared[key] = value
            while len(self._shared) > SHARED_KEEP:
                self._shared.popitem(last=False)


def _cache_key(request: flask.Request) -> str:
    """The static file's identity (noted by `_static_response`) or the shared answer's
    name (`app.answers`: its digest, worked out now), or "" (not cached)."""
    shared = flask.g.get("tempsup_shared")
    return flask.g.get("tempsup_static_key") or (shared.name if shared is not None else "")


def _is_static(path: str) -> bool:
    prefix = flask.current_app.config.get("TEMPSUP_PREFIX", "/")
    return any(path.startswith(prefix.rstrip("/") + s) for s in _STATIC)


def _static_response(response: flask.Response) -> flask.Response:
    """A static file's body in memory (so flask-compress may keep its compressed form)
    and a year of browser caching when its URL is versioned."""
    request = flask.request
    if request.method != "GET" or response.status_code != 200 or not _is_static(request.path):
        return response
    if response.is_streamed:  # the assets' files come as a stream from send_file
        response.direct_passthrough = False
        response.make_sequence()
    etag, _weak = response.get_etag()
    flask.g.tempsup_static_key = f"{request.path}@{etag or ''}"
    asset = _asset_path(request.path)
    if asset is not None:
        if request.args.get("m"):
            response.cache_control.no_cache = None  # send_file's default: ask every time
            response.cache_control.max_age = YEAR
            response.cache_control.public = True
        _precompressed(response, asset, etag)
    return response


def _asset_path(path: str) -> Path | None:
    """The file under the assets folder that `path` (a request's) names, if it does."""
    config = flask.current_app.config
    prefix = config["TEMPSUP_PREFIX"] + "assets/"
    if not path.startswith(prefix):
        return None
    joined = safe_join(config["TEMPSUP_ASSETS"], path[len(prefix) :])
    return Path(joined) if joined else None


def _precompressed(response: flask.Response, asset: Path, etag: str | None) -> None:
    """Send an asset's brotli form made beforehand (`NAME.br` beside it, at brotli's best
    quality, too slow to make per process) to a browser that takes brotli."""
    packed = asset.with_name(asset.name + ".br")
    if "br" not in flask.request.accept_encodings or not packed.is_file():
        return
    body = _brotli_form(str(asset), asset.stat().st_mtime_ns, packed.stat().st_mtime_ns)
    if body is None:
        return
    response.set_data(body)
    response.headers["Content-Encoding"] = "br"  # flask-compress leaves it as it is
    response.vary.add("Accept-Encoding")
    if etag:
        response.set_etag(f"{etag}:br")


@functools.lru_cache(maxsize=16)
def _brotli_form(asset: str, _mtime: int, _packed_mtime: int) -> bytes | None:
    """`asset`'s `.br` file if it still holds this asset (checked once per process and
    version of the two files: a rebuilt asset whose `.br` was not remade is sent as usual)."""
    packed = Path(asset + ".br").read_bytes()
    try:
        same = brotli.decompress(packed) == Path(asset).read_bytes()
    except brotli.error:
        same = False
    if not same:
        log.warning("%s.br is not that file's brotli form: sent without it", asset)
    return packed if same else None


def install(app: Dash) -> None:
    """Compression, caching headers and the page's eager chunks for `app` (the same Flask
    server under `python -m app` and gunicorn)."""
    server = app.server
    server.config.update(
        TEMPSUP_PREFIX=app.config.routes_pathname_prefix,
        TEMPSUP_ASSETS=app.config.assets_folder,
        COMPRESS_ALGORITHM=["br", "gzip"],
        COMPRESS_BR_LEVEL=BROTLI_QUALITY,
        COMPRESS_MIMETYPES=list(COMPRESSED_TYPES),
        COMPRESS_CACHE_BACKEND=StaticCache,
        COMPRESS_CACHE_KEY=_cache_key,
    )
    Compress(server)
    # after_request hooks run last-registered first: this one hands flask-compress the
    # static bodies in memory
    server.after_request(_static_response)
    # The page's layout and callback graph, fetched while the scripts download (Dash asks
    # for them only once its scripts have run: a round trip and the layout's transfer later).
    # (A first-paint page asks for them once plotly.js has arrived: `first_paint`.)
    original = app.interpolate_index
    app.interpolate_index = lambda **parts: original(**_index_parts(app, parts))
    for name in EAGER_CHUNKS:
        app.scripts.append_script(
            {"relative_package_path": f"dcc/async-{name}.js", "namespace": "dash"}
        )


def first_paint(app: Dash, first_panel: FirstPanel) -> None:
    """Serve each page with its first panel, drawn before Dash's scripts have arrived:
    `first_panel(path, query)` gives its (title, figure JSON) when the page has one."""
    app.server.config["TEMPSUP_FIRST_PANEL"] = first_panel


def _preloads(app: Dash) -> list[str]:
    prefix = app.config.requests_pathname_prefix
    return [prefix + path for path in PRELOADED]


def _index_parts(app: Dash, parts: dict[str, str]) -> dict[str, str]:
    """The parts of the page Dash serves (`Dash.interpolate_index`'s): with the layout's
    and callbacks' preloads, and with the page's first panel when it has one."""
    panel = _requested_panel(app)
    plotly = _script_tag(parts["scripts"], PLOTLY_2D)
    if panel is None or plotly is None:
        links = "".join(
            f'<link rel="preload" href="{href}" as="fetch" crossorigin="anonymous">'
            for href in _preloads(app)
        )
        return {**parts, "css": links + parts["css"]}
    title, figure = panel
    figure = figure.replace("</", "<\\/")  # JSON inside a script element: "</" would end it
    placeholder = (
        '<div id="react-entry-point"><div class="_dash-loading first-paint">'
        '<div class="page"><header class="header"><div class="title-row">'
        f"<h1>{html.escape(app.title)}</h1></div></header><main>"
        f'<div class="card panel"><h2>{html.escape(title)}</h2>'
        '<div id="tempsup-first-panel" class="graph" style="height: 30rem"></div>'
        "</div></main></div></div></div>"
        f'<script id="tempsup-first-figure" type="application/json">{figure}</script>'
    )
    preload = html.escape(json.dumps(_preloads(app)))
    scripts = (
        plotly.replace("<script ", '<script id="tempsup-first-plotly" async ', 1)
        + f'<template id="tempsup-deferred" data-preload="{preload}">'
        + parts["scripts"]
        + parts["renderer"]
        + "</template>"
        + f"<script>{_first_paint_js()}</script>"
    )
    return {**parts, "app_entry": placeholder, "scripts": scripts, "renderer": ""}


def _requested_panel(app: Dash) -> tuple[str, str] | None:
    """The first panel of the page being served (`first_paint`), or None."""
    first_panel = app.server.config.get("TEMPSUP_FIRST_PANEL")
    if first_panel is None or not flask.has_request_context():
        return None
    request = flask.request
    prefix = app.config.routes_pathname_prefix
    path = "/" + request.path[len(prefix) :] if request.path.startswith(prefix) else request.path
    return first_panel(path, request.query_string.decode("utf-8", "replace"))


def _script_tag(scripts: str, asset: str) -> str | None:
    """The script element of the asset `asset` among Dash's `scripts`, or None."""
    pattern = r'<script src="[^"]*/assets/' + re.escape(asset) + r'[^"]*"></script>'
    match = re.search(pattern, scripts)
    return match.group(0) if match else None


@functools.cache
def _first_paint_js() -> str:
    text = FIRST_PAINT_JS.read_text(encoding="utf-8")
    assert "</script" not in text.lower()  # it would end the tag early
    return text
