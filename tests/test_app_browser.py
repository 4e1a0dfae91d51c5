"""The app in a real browser: headless Chromium against `python -m app`.

One server (with one training worker) serves every test in this module; each
test opens its own page. Configs are tiny so the worker answers in seconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser import app_server, make_driver

pytestmark = pytest.mark.browser

TINY = (
    "model=linear&k=2&sparsity=0.5&hidden=2&inputs=1&steps=200&batch=64&seeds=2&snapshot_every=10"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> str:
    cache = tmp_path_factory.mktemp("cache") / "jobs"
    with app_server(cache) as url:
        yield url


@pytest.fixture
def browser(tmp_path: Path):
    driver = make_driver(tmp_path)
    driver.download_dir = tmp_path
    yield driver
    driver.quit()


def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except Exception as exc:  # the DOM may be mid-update
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def find(driver, css: str, timeout: float = 30.0):
    """The element once the page has rendered it (pages render after a callback)."""
    return wait_for(lambda: driver.find_element("css selector", css), timeout, css)


def n_traces(driver, graph_id: str) -> int:
    return driver.execute_script(
        "const g = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');"
        "return g && g.data ? g.data.length : 0;",
        graph_id,
    )


def frame_label(driver) -> str:
    return find(driver, "#player-label").text


def frame_count(driver) -> tuple[int, int]:
    """(current frame, number of frames) from the player's label."""
    text = frame_label(driver)
    if "frame" not in text:
        return 0, 0
    cur, total = text.split("frame ")[1].split(" ")[0].split("/")
    return int(cur), int(total)


def query(driver) -> dict[str, list[str]]:
    return parse_qs(urlparse(driver.current_url).query)


def test_page_loads_with_trained_default_example(server, browser):
    browser.get(server)
    # the default example is queued at start-up; its frames appear without any click
    wait_for(lambda: n_traces(browser, "graph-directions") > 0, 90, "default example frames")
    wait_for(lambda: frame_count(browser)[1] > 1, 90, "several frames")
    for graph in ("graph-loss", "graph-projections", "graph-eigen"):
        assert n_traces(browser, graph) > 0, graph
    assert query(browser)["model"] == ["ssm"]


def test_moving_a_control_changes_the_url(server, browser):
    browser.get(server)
    wait_for(lambda: "model" in query(browser), 30, "URL with the config")
    find(browser, "#ctl-model input[value='linear']").click()
    wait_for(lambda: query(browser).get("model") == ["linear"], 10, "model=linear in the URL")


def test_train_shows_progress_then_frames_and_play_advances(server, browser):
    browser.get(f"{server}/?{TINY}&seed=11")
    # the link trains by itself; frames stream in and the job finishes
    wait_for(lambda: frame_count(browser)[1] >= 2, 60, "first frames")
    wait_for(lambda: "Done" in find(browser, "#job-status").text, 60, "job done")
    cur, total = frame_count(browser)
    assert total == 21 and cur == total
    # change a control: not trained yet; Train trains it with a progress bar
    find(browser, "#ctl-model input[value='ssm']").click()
    wait_for(lambda: "press Train" in find(browser, "#job-status").text, 20, "hint")
    find(browser, "#btn-train").click()
    bar = find(browser, "#job-progress-bar")
    wait_for(lambda: bar.get_attribute("style") != "width: 0%;", 30, "progress bar moves")
    wait_for(lambda: "Done" in find(browser, "#job-status").text, 60, "ssm done")
    # play from the start advances the scrubber
    find(browser, "#btn-prev").click()
    find(browser, "#btn-play").click()
    first = frame_count(browser)[0]
    wait_for(lambda: frame_count(browser)[0] > first, 10, "playing advances frames")


def test_cancel_stops_a_long_job(server, browser):
    browser.get(f"{server}/?model=rnn&k=3&sparsity=0.9&steps=100000&seeds=4&snapshot_every=100")
    wait_for(lambda: "training" in find(browser, "#job-status").text, 60, "training")
    find(browser, "#btn-cancel").click()
    wait_for(lambda: "cancel" in find(browser, "#job-status").text.lower(), 30, "cancelled")


def test_export_downloads_html_with_frames(server, browser):
    browser.get(f"{server}/?{TINY}&seed=12")
    wait_for(lambda: "Done" in find(browser, "#job-status").text, 60, "done")
    find(browser, "#btn-export-html").click()
    path = wait_for(lambda: next(iter(browser.download_dir.glob("*.html")), None), 30, "download")
    text = path.read_text()
    assert "frames" in text and '"k": 2' in text.replace("'", '"') or "k=2" in text
    assert '<script src="http' not in text  # offline: plotly.js is inlined


def test_shared_link_restores_controls(server, browser):
    browser.get(f"{server}/?model=rnn&k=4&sparsity=0.95&hidden=3&steps=100&seeds=1&batch=32")
    radio = find(browser, "#ctl-model input[value='rnn']")
    wait_for(lambda: radio.is_selected(), 20, "rnn selected")
    assert query(browser)["k"] == ["4"]
    wait_for(
        lambda: (
            browser.find_element("css selector", "#ctl-k [role='slider']").get_attribute(
                "aria-valuenow"
            )
            == "4"
        ),
        20,
        "k slider at 4",
    )
    assert browser.find_element("css selector", "#ctl-sparsity input").get_attribute("value") in (
        "0.95",
        ".95",
    )


def test_phase_sweep_draws_and_a_click_opens_the_point(server, browser):
    browser.get(f"{server}/phase")
    for box, value in (("#phase-sparsities", "0.3, 0.9"), ("#phase-seeds", "2"),
                       ("#phase-steps", "100")):  # fmt: skip
        el = find(browser, box)
        el.clear()
        el.send_keys(value + "\n")
    find(browser, "#phase-run").click()
    wait_for(lambda: "Done" in find(browser, "#phase-status").text, 90, "sweep done")
    wait_for(lambda: n_traces(browser, "phase-graph") >= 3, 10, "diagram traces")
    # click the first |kθ| marker: the explorer opens with that point's config
    from selenium.webdriver.common.action_chains import ActionChains

    marker = find(browser, "#phase-graph .scatterlayer .trace .points path")
    # plotly listens on the layer above its markers: hover, then click at the marker's spot
    ActionChains(browser).move_to_element(marker).pause(0.3).click().perform()
    wait_for(lambda: "sparsity=0.3" in browser.current_url, 20, "explorer link")
    wait_for(lambda: "Done" in find(browser, "#job-status").text, 30, "point run served")


def test_compare_two_runs_with_one_scrubber(server, browser):
    from urllib.parse import urlencode

    left = TINY + "&seed=21"
    right = TINY.replace("model=linear", "model=ssm") + "&seed=21"
    browser.get(f"{server}/compare?" + urlencode({"left": left, "right": right}))
    wait_for(lambda: frame_label_compare(browser).count("frame 21/21") == 2, 90, "both runs")
    for side in ("left", "right"):
        assert n_traces(browser, f"compare-{side}-directions") > 0
    # the linked scrubber: start of training on both sides
    find(browser, "#compare-play").click()
    wait_for(lambda: frame_label_compare(browser).count("frame 21/21") == 0, 10, "scrub")


def frame_label_compare(driver) -> str:
    return find(driver, "#compare-label").text


def test_lab_trains_and_shows_the_four_panels(server, browser):
    browser.get(f"{server}/lab")
    epochs = find(browser, "#lab-epochs")
    epochs.clear()
    epochs.send_keys("3")
    find(browser, "#lab-train").click()
    wait_for(lambda: "Done" in find(browser, "#lab-status").text, 90, "lab run done")
    wait_for(lambda: "frame" in find(browser, "#lab-label").text, 20, "frames")
    for panel in ("matrices", "columns", "r2", "loss"):
        assert n_traces(browser, f"lab-{panel}") > 0, panel


def test_lab_sweep_over_m(server, browser):
    browser.get(f"{server}/lab")
    for box, value in (("#lab-epochs", "2"), ("#lab-sweep-ms", "2, 6"), ("#lab-sweep-wds", "1")):
        el = find(browser, box)
        el.clear()
        el.send_keys(value + "\n")
    find(browser, "#lab-sweep-run").click()
    wait_for(lambda: "Done" in find(browser, "#lab-sweep-status").text, 90, "lab sweep done")
    # WᵀW per point (2) and 3 measures against m: the finished sweep figure
    wait_for(lambda: n_traces(browser, "lab-sweep-graph") >= 5, 20, "sweep figure traces")
    assert find(browser, "#lab-sweep-error").text == ""


def test_gallery_fills_in_the_background_and_opens_a_preset(tmp_path_factory, browser):
    cache = tmp_path_factory.mktemp("gallery") / "jobs"
    with app_server(cache, env={"TEMPSUP_PRESETS": "quick"}) as url:
        browser.get(f"{url}/gallery")
        cards = wait_for(lambda: browser.find_elements("css selector", ".preset"), 30, "cards")
        assert len(cards) == 6
        # the first preset (the linear spiral sink) is trained first: its claims appear
        spiral = "#preset-spiral-sink"
        wait_for(lambda: "held" in find(browser, spiral).text, 240, "spiral-sink claims")
        assert "seeds" in find(browser, spiral).text
        find(browser, f"{spiral} a.chip").click()
        wait_for(lambda: "model=linear" in browser.current_url, 20, "explorer opened")
        wait_for(lambda: "Done" in find(browser, "#job-status").text, 30, "preset run served")
