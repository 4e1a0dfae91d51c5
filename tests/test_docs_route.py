"""The app serves the built documentation at /docs/ and every page links to it."""

from __future__ import annotations

from pathlib import Path

import flask

from app import docs_site


def _client(directory: Path) -> flask.testing.FlaskClient:
    server = flask.Flask(__name__)
    server.register_blueprint(docs_site.blueprint(directory))
    return server.test_client()


def test_the_built_pages_are_served_under_docs(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<h1>home</h1>", encoding="utf-8")
    (tmp_path / "teaching").mkdir()
    (tmp_path / "teaching" / "lesson.html").write_text("<h1>lesson</h1>", encoding="utf-8")
    client = _client(tmp_path)
    assert client.get("/docs").status_code == 308
    home = client.get("/docs/")
    assert home.status_code == 200 and b"home" in home.data
    assert b"lesson" in client.get("/docs/teaching/lesson.html").data
    assert client.get("/docs/nothing.html").status_code == 404
    (tmp_path.parent / "secret.txt").write_text("no", encoding="utf-8")
    assert client.get("/docs/../secret.txt").status_code == 404


def test_an_unbuilt_site_says_how_to_build_it(tmp_path: Path) -> None:
    answer = _client(tmp_path / "missing").get("/docs/reference/api.html")
    assert answer.status_code == 404
    assert b"scripts/docs" in answer.data and answer.mimetype == "text/html"


def test_the_app_links_to_the_docs_and_routes_them() -> None:
    import app

    hrefs = [getattr(c, "href", None) for c in app.nav().children]
    assert docs_site.URL in hrefs
    answer = app.server.test_client().get(docs_site.URL)
    built = (docs_site.BUILT / "index.html").is_file()
    assert answer.status_code == (200 if built else 404)
    assert (b"tempsup" in answer.data) if built else (b"scripts/docs" in answer.data)
