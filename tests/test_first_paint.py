"""The first panel inside the served HTML (app.delivery `first_paint`, app/firstpanel.py).

A shared link of a finished run comes with its directions panel as the explorer draws it
(`PANEL_SET.panel_figure` at the link's seed, frame and feature); the start page with the
panel it shows while its run is not trained; a bad query still gives a page (Dash's
scripts, no panel, no traceback). No browser: the app's Flask test client.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qsl

import pytest

from app import app, panels
from app.delivery import PRELOADED
from tempsup.core.palette import empty_figure
from tempsup.figures import PANEL_SET
from tempsup.model.config import DEFAULTS, RunConfig
from tempsup.paper import shipped
from tests.firstload import pages

FIGURE = re.compile(r'<script id="tempsup-first-figure" type="application/json">(.*?)</script>')


@pytest.fixture
def client(tmp_path, monkeypatch):
    """The app with a fresh job store holding the shipped run of the shared link."""
    from app import services

    monkeypatch.setenv("TEMPSUP_CACHE", str(tmp_path / "jobs"))
    monkeypatch.setenv("TEMPSUP_PRESETS", "off")
    services.settings.cache_clear()
    services.job_queue.cache_clear()
    assert shipped.install(services.job_queue(), [_link_config()])
    yield app.server.test_client()
    services.settings.cache_clear()
    services.job_queue.cache_clear()


def _link_config() -> RunConfig:
    from app.urlstate import config_from_query

    config, errors = config_from_query(pages()["shared link"][0])
    assert not errors
    return config


def _figure(page: str) -> dict | None:
    found = FIGURE.search(page)
    return None if found is None else json.loads(found[1])


def _plain(figure) -> dict:
    """A figure as JSON compares: plotly's JSON, read back."""
    return json.loads(figure.to_json())


def _get(client, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200
    return r.get_data(as_text=True)


def test_shared_link_brings_its_first_panel(client):
    from app import services

    link = pages()["shared link"][0]
    config = _link_config()
    run = services.job_queue().run(config.key)
    for query, (seed, frame, feature) in {
        link: (run.best, run.n_frames - 1, 0),
        link + "&view_seed=3&frame=2": (3, 1, 0),
    }.items():
        page = _get(client, "/" + query)
        assert _figure(page) == _plain(
            PANEL_SET.panel_figure("directions", run, seed, frame, feature)
        )
        assert "Traceback" not in page and "Feature directions" in page


def test_start_page_brings_the_waiting_panel(client):
    page = _get(client, "/")
    from app import services

    assert services.job_queue().status(DEFAULTS.key) is None  # not trained in this store
    assert _figure(page) == _plain(empty_figure(panels.WAITING))


def test_deferred_scripts(client):
    """plotly.js comes first; Dash's scripts, renderer and preloads wait inert for it."""
    page = _get(client, "/")
    first = page.index('id="tempsup-first-plotly"')
    template = page.index('<template id="tempsup-deferred"')
    assert first < template < page.index("new DashRenderer()") < page.index("</template>")
    preload = re.search(r'data-preload="([^"]*)"', page)[1]
    assert json.loads(html.unescape(preload)) == [f"/{p}" for p in PRELOADED]
    assert '<link rel="preload"' not in page  # the layout waits for plotly.js too
    # the template holds Dash's scripts as a page without a first panel has them, in order
    deferred = page[template : page.index("</template>")]
    srcs = re.compile(r'<script src="([^"]+)"')
    assert srcs.findall(deferred) == srcs.findall(_get(client, "/gallery"))


@pytest.mark.parametrize(
    "query",
    ["?k=zzz", "?model=nope&view_seed=-4", "?run=" + "f" * 64, "?%ff%fe=\x00", "?frame=99999"],
)
def test_bad_query_still_gives_a_page(client, query):
    page = _get(client, "/" + query)
    assert "Traceback" not in page and "new DashRenderer()" in page
    params = dict(parse_qsl(query.lstrip("?")))
    if "k" in params or "model" in params or "run" in params:
        assert _figure(page) is None  # the page's callbacks explain the link
        assert '<link rel="preload"' in page  # served as Dash serves it


def test_other_pages_are_served_as_dash_serves_them(client):
    page = _get(client, "/gallery")
    assert _figure(page) is None and "tempsup-deferred" not in page
    for path in PRELOADED:
        assert f'<link rel="preload" href="/{path}" as="fetch" crossorigin="anonymous">' in page
