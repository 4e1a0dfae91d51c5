"""The correlations lab in a real browser: its first picture, its upload, its links.

One server (with one training worker: tests/conftest.py's `server`) and one job store
serve the module; each test opens
its own page. Trainings are tiny (2 epochs) so the worker answers in seconds.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from app import ids
from tests.browser import (
    click,
    css,
    driver_session,
    find,
    n_traces,
    open_page,
    set_viewport,
    text_of,
    wait_for,
)

pytestmark = pytest.mark.browser

RUN_STATUS = css(ids.job(ids.TEXT, ids.LAB))
SWEEP_STATUS = css(ids.job(ids.TEXT, ids.LAB_SWEEP))


@pytest.fixture
def browser(tmp_path: Path):
    with driver_session(tmp_path) as driver:
        set_viewport(driver, 1280, 900)
        yield driver


def n_panels(driver, graph_id: str) -> int:
    """The matrices drawn in a grid figure (one mosaic heatmap; its layout names them)."""
    return driver.execute_script(
        "const g = document.querySelector(arguments[0] + ' .js-plotly-plot');"
        "return g && g.layout && g.layout.meta ? g.layout.meta.panels.length : 0;",
        f"#{graph_id}",
    )


def test_the_authors_grid_is_the_lab_first_picture(server, browser):
    browser.get(f"{server}/lab")
    wait_for(lambda: n_panels(browser, ids.LAB_GRID_GRAPH) == 28, what="the grid's 28 matrices")
    first = browser.execute_script(
        "return [...document.querySelectorAll('.content .dash-graph')]"
        ".filter(g => g.offsetParent !== null)[0].id"
    )
    assert first == ids.LAB_GRID_GRAPH
    # what it shows at each m, under it: one row per m of the authors' nine
    ms = ["2", "3", "4", "6", "7", "8", "10", "11", "12"]
    rows = f"#{ids.LAB_GRID_TEXT} tbody tr"
    wait_for(
        lambda: (
            [th.text for th in browser.find_elements("css selector", f"{rows} > th:first-child")]
            == ms
        ),
        what=f"one row per m in {ms}",
    )
    assert "PCA projection" in text_of(browser, rows)


def test_upload_shows_the_file_name_and_a_five_word_text_warns(server, browser, tmp_path):
    text = tmp_path / "spring-poem.txt"
    text.write_text("Spring rain waters green fields\n", encoding="utf-8")
    open_page(browser, f"{server}/lab")
    upload = wait_for(
        lambda: browser.find_element("css selector", f"#{ids.LAB_UPLOAD} input[type=file]"),
        what="the upload's file input",
    )
    upload.send_keys(str(text))
    name = wait_for(lambda: text_of(browser, f"#{ids.LAB_UPLOAD_NAME}"), what="the file's name")
    assert "spring-poem.txt" in name and "5 words" in name
    warning = wait_for(lambda: text_of(browser, f"#{ids.LAB_TEXT_WARNING}"), what="a warning")
    assert "5 words" in warning and "at least 50 samples" in warning
    assert find(browser, f"#{ids.LAB_TEXT_WARNING}").is_displayed()
    # before anything trains: the bag of words is chosen, no job is running
    assert text_of(browser, RUN_STATUS) == ""
    # the link names the text and the file (written by the link's own callback, after the
    # upload's answer: a moment later): a fresh page shows them again
    wait_for(
        lambda: (
            (q := parse_qs(urlparse(browser.current_url).query)).get("structure") == ["text"]
            and q.get("file") == ["spring-poem.txt"]
        ),
        what="the link naming the text and its file",
    )
    browser.get(browser.current_url)
    name = wait_for(lambda: text_of(browser, f"#{ids.LAB_UPLOAD_NAME}"), what="name after reload")
    assert "spring-poem.txt" in name
    wait_for(
        lambda: "5 words" in text_of(browser, f"#{ids.LAB_TEXT_WARNING}"),
        what="the warning after reload",
    )


def slider_value(driver, slider_id: str) -> str:
    return find(driver, f"#{slider_id} [role='slider']").get_attribute("aria-valuenow")


def test_a_fresh_browser_restores_the_lab_and_its_cached_sweep(server, browser, tmp_path):
    open_page(browser, f"{server}/lab?m=3&epochs=2&seeds=1&ms=2%2C+3&wds=1")
    wait_for(lambda: slider_value(browser, ids.LAB_M) == "3", what="m from the link")
    click(browser, css(ids.job(ids.RUN, ids.LAB_SWEEP)))
    wait_for(lambda: "Done" in text_of(browser, SWEEP_STATUS), what="the sweep done")
    click(browser, css(ids.job(ids.RUN, ids.LAB)))
    wait_for(lambda: "Done" in text_of(browser, RUN_STATUS), what="the run done")
    link = wait_for(
        lambda: (
            browser.current_url
            if "sweep=1" in browser.current_url and "run=1" in browser.current_url
            else None
        ),
        what="run=1 and sweep=1 in the link",
    )
    query = parse_qs(urlparse(link).query)
    assert query["m"] == ["3"] and query["epochs"] == ["2"] and query["ms"] == ["2, 3"]
    sweep_traces = wait_for(
        lambda: (n := n_traces(browser, f"#{ids.LAB_SWEEP_GRAPH}")) >= 5 and n,
        what="the sweep figure's traces",
    )
    with driver_session(tmp_path / "fresh") as fresh:
        set_viewport(fresh, 1280, 900)
        fresh.get(link)
        wait_for(lambda: slider_value(fresh, ids.LAB_M) == "3", what="m restored")
        boxes = {"#lab-epochs": "2", "#lab-seeds": "1", f"#{ids.LAB_SWEEP_MS}": "2, 3"}
        wait_for(
            lambda: {b: find(fresh, b).get_attribute("value") for b in boxes} == boxes,
            what=f"the boxes restored ({boxes})",
        )
        # the cached sweep and run, from the job store: done at once, nothing retrained
        wait_for(lambda: "Done" in text_of(fresh, SWEEP_STATUS), what="the cached sweep")
        wait_for(lambda: n_traces(fresh, f"#{ids.LAB_SWEEP_GRAPH}") == sweep_traces, what="figure")
        wait_for(lambda: "Done" in text_of(fresh, RUN_STATUS), what="the cached run")
        graph = css(ids.graph(ids.LAB, "matrices"))
        wait_for(lambda: n_traces(fresh, graph) > 0, what="the run's panels")
        assert text_of(fresh, f"#{ids.LAB_NOTE}") == ""  # nothing was started by the link
        assert parse_qs(urlparse(fresh.current_url).query) == query
