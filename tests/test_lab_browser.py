"""The correlations lab in a real browser: its first picture, its upload, its links.

One server (with one training worker) and one job store serve the module; each test opens
its own page. Trainings are tiny (2 epochs) so the worker answers in seconds.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from app import ids
from tests.browser import app_server, css, make_driver, wait_for

pytestmark = pytest.mark.browser

RUN_STATUS = css(ids.job(ids.TEXT, ids.LAB))
SWEEP_STATUS = css(ids.job(ids.TEXT, ids.LAB_SWEEP))


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> str:
    with app_server(tmp_path_factory.mktemp("lab") / "jobs") as url:
        yield url


def new_browser(tmp_path: Path):
    driver = make_driver(tmp_path)
    driver.set_window_size(1280, 900)
    return driver


@pytest.fixture
def browser(tmp_path: Path):
    driver = new_browser(tmp_path)
    yield driver
    driver.quit()


def text_of(driver, selector: str) -> str:
    return driver.find_element("css selector", selector).text


def n_panels(driver, graph_id: str) -> int:
    """The matrices drawn in a grid figure (one mosaic heatmap; its layout names them)."""
    return driver.execute_script(
        "const g = document.querySelector(arguments[0] + ' .js-plotly-plot');"
        "return g && g.layout && g.layout.meta ? g.layout.meta.panels.length : 0;",
        f"#{graph_id}",
    )


def n_traces(driver, selector: str) -> int:
    return driver.execute_script(
        "const g = document.querySelector(arguments[0] + ' .js-plotly-plot')"
        " || document.querySelector(arguments[0]);"
        "return g && g.data ? g.data.length : 0;",
        selector,
    )


def test_the_authors_grid_is_the_lab_first_picture(server, browser):
    browser.get(f"{server}/lab")
    wait_for(lambda: n_panels(browser, ids.LAB_GRID_GRAPH) == 28, 30, "the grid's 28 matrices")
    first = browser.execute_script(
        "return [...document.querySelectorAll('.content .dash-graph')]"
        ".filter(g => g.offsetParent !== null)[0].id"
    )
    assert first == ids.LAB_GRID_GRAPH
    # what it shows at each m, under it: one row per m of the authors' nine
    rows = browser.find_elements("css selector", f"#{ids.LAB_GRID_TEXT} tbody tr")
    assert [r.find_element("css selector", "th").text for r in rows] == [
        "2", "3", "4", "6", "7", "8", "10", "11", "12",
    ]  # fmt: skip
    assert "PCA projection" in rows[0].text


def test_upload_shows_the_file_name_and_a_five_word_text_warns(server, browser, tmp_path):
    text = tmp_path / "spring-poem.txt"
    text.write_text("Spring rain waters green fields\n", encoding="utf-8")
    browser.get(f"{server}/lab")
    upload = wait_for(
        lambda: browser.find_element("css selector", f"#{ids.LAB_UPLOAD} input[type=file]"),
        20,
        "the upload's file input",
    )
    upload.send_keys(str(text))
    name = wait_for(lambda: text_of(browser, f"#{ids.LAB_UPLOAD_NAME}"), 20, "the file's name")
    assert "spring-poem.txt" in name and "5 words" in name
    warning = text_of(browser, f"#{ids.LAB_TEXT_WARNING}")
    assert "5 words" in warning and "at least 50 samples" in warning
    assert browser.find_element("css selector", f"#{ids.LAB_TEXT_WARNING}").is_displayed()
    # before anything trains: the bag of words is chosen, no job is running
    assert text_of(browser, RUN_STATUS) == ""
    # the link names the text and the file (written by the link's own callback, after the
    # upload's answer: a moment later): a fresh page shows them again
    wait_for(
        lambda: (
            (q := parse_qs(urlparse(browser.current_url).query)).get("structure") == ["text"]
            and q.get("file") == ["spring-poem.txt"]
        ),
        20,
        "the link naming the text and its file",
    )
    browser.get(browser.current_url)
    name = wait_for(lambda: text_of(browser, f"#{ids.LAB_UPLOAD_NAME}"), 20, "name after reload")
    assert "spring-poem.txt" in name and "5 words" in text_of(browser, f"#{ids.LAB_TEXT_WARNING}")


def slider_value(driver, slider_id: str) -> str:
    thumb = driver.find_element("css selector", f"#{slider_id} [role='slider']")
    return thumb.get_attribute("aria-valuenow")


def test_a_fresh_browser_restores_the_lab_and_its_cached_sweep(server, browser, tmp_path):
    browser.get(f"{server}/lab?m=3&epochs=2&seeds=1&ms=2%2C+3&wds=1")
    wait_for(lambda: slider_value(browser, ids.LAB_M) == "3", 20, "m from the link")
    browser.find_element("css selector", css(ids.job(ids.RUN, ids.LAB_SWEEP))).click()
    wait_for(lambda: "Done" in text_of(browser, SWEEP_STATUS), 120, "the sweep done")
    browser.find_element("css selector", css(ids.job(ids.RUN, ids.LAB))).click()
    wait_for(lambda: "Done" in text_of(browser, RUN_STATUS), 120, "the run done")
    link = wait_for(
        lambda: (
            browser.current_url
            if "sweep=1" in browser.current_url and "run=1" in browser.current_url
            else None
        ),
        20,
        "run=1 and sweep=1 in the link",
    )
    query = parse_qs(urlparse(link).query)
    assert query["m"] == ["3"] and query["epochs"] == ["2"] and query["ms"] == ["2, 3"]
    sweep_traces = n_traces(browser, f"#{ids.LAB_SWEEP_GRAPH}")
    assert sweep_traces >= 5
    fresh = new_browser(tmp_path / "fresh")
    try:
        fresh.get(link)
        wait_for(lambda: slider_value(fresh, ids.LAB_M) == "3", 20, "m restored")
        assert fresh.find_element("css selector", "#lab-epochs").get_attribute("value") == "2"
        assert fresh.find_element("css selector", "#lab-seeds").get_attribute("value") == "1"
        ms = fresh.find_element("css selector", f"#{ids.LAB_SWEEP_MS}").get_attribute("value")
        assert ms == "2, 3"
        # the cached sweep and run, from the job store: done at once, nothing retrained
        wait_for(lambda: "Done" in text_of(fresh, SWEEP_STATUS), 30, "the cached sweep")
        wait_for(lambda: n_traces(fresh, f"#{ids.LAB_SWEEP_GRAPH}") == sweep_traces, 30, "figure")
        wait_for(lambda: "Done" in text_of(fresh, RUN_STATUS), 30, "the cached run")
        graph = css(ids.graph(ids.LAB, "matrices"))
        wait_for(lambda: n_traces(fresh, graph) > 0, 30, "the run's panels")
        assert text_of(fresh, f"#{ids.LAB_NOTE}") == ""  # nothing was started by the link
        assert parse_qs(urlparse(fresh.current_url).query) == query
    finally:
        fresh.quit()
