"""What app.delivery promises a browser: compressed responses, year-long caching of
versioned files, the page's eager chunks, and a 2-D plotly.js in step with the full one."""

from __future__ import annotations

import re

import brotli
import pytest
from plotly.offline import get_plotlyjs_version

from app import ASSETS, app
from app.delivery import EAGER_CHUNKS, PRELOADED

BUNDLE = ASSETS / "plotly" / "plotly-2d.min.js"


@pytest.fixture(scope="module")
def client():
    return app.server.test_client()


@pytest.fixture(scope="module")
def page(client) -> str:
    """A page served as Dash serves it (the explorer's first paint: tests/test_first_paint.py)."""
    return client.get("/gallery").get_data(as_text=True)


def test_bundle_is_the_full_plotly_version():
    """The 2-D bundle and the full plotly.js a 3-D figure loads are one plotly.js
    (a plotly upgrade needs `scripts/plotly-bundle/build`)."""
    head = BUNDLE.read_text(encoding="utf-8")[:400]
    assert "Licensed under the MIT license" in head
    assert re.search(r"plotly\.js \(tempsup 2-D[^)]*\) v(\S+)", head)[1] == get_plotlyjs_version()


def test_bundle_brotli_form_is_the_bundle():
    packed = BUNDLE.with_name(BUNDLE.name + ".br").read_bytes()
    assert brotli.decompress(packed) == BUNDLE.read_bytes()


def test_page_scripts(page):
    """The page brings the eager chunks and the 2-D bundle, never the full plotly.js or
    chunks no first page needs, and asks for its layout beside its scripts."""
    scripts = re.findall(r'<script src="([^"]+)"', page)
    names = [s.split("?")[0].rsplit("/", 1)[-1] for s in scripts]
    for chunk in EAGER_CHUNKS:
        assert any(n.startswith(f"async-{chunk}.") for n in names), chunk
    assert "plotly-2d.min.js" in names and "upgrade.js" in names
    assert names.index("plotly-2d.min.js") < names.index("upgrade.js")
    assert not any(n.startswith(("plotly.", "async-mathjax", "async-markdown")) for n in names)
    for path in PRELOADED:
        assert f'<link rel="preload" href="/{path}" as="fetch" crossorigin="anonymous">' in page


def test_compressed_and_cached(client, page):
    src = next(s for s in re.findall(r'<script src="([^"]+)"', page) if "dash_renderer" in s)
    plain = client.get(src).get_data()
    for _ in range(2):  # the second answer comes from the per-process cache
        r = client.get(src, headers={"Accept-Encoding": "gzip, deflate, br, zstd"})
        assert r.headers["Content-Encoding"] == "br"
        assert brotli.decompress(r.get_data()) == plain
        assert r.cache_control.max_age == 365 * 24 * 3600
    r = client.get(src, headers={"Accept-Encoding": "gzip"})
    assert r.headers["Content-Encoding"] == "gzip"
    assert client.get("/", headers={"Accept-Encoding": "br"}).headers["Content-Encoding"] == "br"


def test_asset_sent_in_its_brotli_form(client, page):
    src = next(s for s in re.findall(r'<script src="([^"]+)"', page) if "plotly-2d" in s)
    r = client.get(src, headers={"Accept-Encoding": "gzip, br"})
    assert r.headers["Content-Encoding"] == "br"
    assert r.get_data() == BUNDLE.with_name(BUNDLE.name + ".br").read_bytes()
    assert r.cache_control.max_age == 365 * 24 * 3600 and not r.cache_control.no_cache
    r = client.get(src, headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in r.headers and r.get_data() == BUNDLE.read_bytes()
