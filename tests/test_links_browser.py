"""Links in a real browser: every page's view is a link, restored in a fresh browser; what
a link or a control had refused is said where the user looks; a link that names a
configuration trains it and says so; the sliders' labels never overlap.

One server (one training worker) for the module; "a fresh browser" is a second Chromium
with its own empty profile. Configs and sweeps are tiny so the worker answers in seconds.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.keys import Keys

from app import ids
from app.urlstate import config_from_query
from tests.browser import app_server, click, css, find, make_driver, set_viewport, wait_for

pytestmark = pytest.mark.browser

EX = ids.EXPLORER
STATUS = css(ids.job(ids.TEXT, EX))
PHASE_STATUS = css(ids.job(ids.TEXT, ids.PHASE))
# three features (A, B, C), trained in a few seconds
THREE = (
    "model=linear&k=2&sparsity=0.5&hidden=2&inputs=3&steps=200&batch=64&seeds=2&snapshot_every=10"
)
TINY = THREE.replace("inputs=3", "inputs=1")
SIZES = [(1280, 720), (390, 844)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("links") / "jobs"


@pytest.fixture(scope="module")
def server(cache) -> str:
    from tempsup.jobs import JobQueue
    from tempsup.model.config import DEFAULTS

    with app_server(cache) as url:
        # the start-up job (the default example) is not needed here: cancelled, it leaves
        # the worker to this module's tiny jobs
        queue = JobQueue(cache)
        queue.cancel(DEFAULTS.key)
        queue.close()
        yield url


@pytest.fixture(scope="module")
def store(server, cache):
    """The server's job queue, read directly (what the worker wrote)."""
    from tempsup.jobs import JobQueue

    queue = JobQueue(cache)
    yield queue
    queue.close()


@pytest.fixture
def browser(tmp_path: Path):
    driver = make_driver(tmp_path / "a")
    yield driver
    driver.quit()


@pytest.fixture
def fresh(tmp_path: Path):
    """A second browser: its own profile, so nothing of the first one's state (local
    storage, history) reaches it — only the link."""
    driver = make_driver(tmp_path / "b")
    yield driver
    driver.quit()


def text_of(driver, selector: str) -> str:
    return find(driver, selector).text


def query(driver) -> dict[str, list[str]]:
    return parse_qs(urlparse(driver.current_url).query)


def in_view(driver, selector: str) -> dict:
    """Where the element is, whether all of it lies inside the viewport, and whether it is
    what the user sees at its centre (nothing drawn over it)."""
    return driver.execute_script(
        """
        const el = document.querySelector(arguments[0]);
        const r = el.getBoundingClientRect();
        const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                height: window.innerHeight, width: window.innerWidth,
                inside: r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 &&
                        r.bottom <= window.innerHeight && r.right <= window.innerWidth,
                seen: !!top && (el.contains(top) || el.parentElement.contains(top))};
        """,
        selector,
    )


def feature_shown(driver) -> str:
    """The feature menu's chosen entry, as the user reads it."""
    return find(driver, "#feature-pick").text.strip()


def pick_feature(driver, name: str) -> None:
    click(driver, "#feature-pick")

    def choose() -> bool:
        next(
            o
            for o in driver.find_elements("css selector", ".dash-dropdown-option")
            if o.text.strip().split(" ")[0] == name
        ).click()
        return True

    wait_for(choose, 10, f"feature {name} in the menu")


def directions_texts(driver) -> str:
    """Every text the directions panel draws (titles, annotations, trace names)."""
    return driver.execute_script(
        """
        const g = document.querySelector(arguments[0] + ' .js-plotly-plot');
        if (!g || !g._fullLayout) return '';
        const l = g._fullLayout;
        const parts = [(l.title && l.title.text) || ''];
        (l.annotations || []).forEach((a) => parts.push(a.text || ''));
        (g.data || []).forEach((t) => parts.push(t.name || ''));
        return parts.join(' | ');
        """,
        css(ids.graph(EX, "directions")),
    )


# ---- item 6: every page's view is a link ------------------------------------------------


def test_the_feature_shown_is_in_the_link_and_a_fresh_browser_opens_it(server, browser, fresh):
    browser.get(f"{server}/?{THREE}&seed=51")
    wait_for(lambda: "Done" in text_of(browser, STATUS), 90, "the run trained")
    assert feature_shown(browser).startswith("A")
    pick_feature(browser, "C")
    link = wait_for(
        lambda: (h := find(browser, "#share-link").get_attribute("href")) and "feature=" in h and h,
        10,
        "the share link names the feature",
    )
    assert parse_qs(urlparse(link).query)["feature"] == ["C"], link
    seen_before = wait_for(lambda: "C: every" in (t := directions_texts(browser)) and t)
    # the link in a browser that never saw the page: feature C, not A
    fresh.get(link)
    wait_for(lambda: "Done" in text_of(fresh, STATUS), 60, "the cached run served")
    wait_for(lambda: feature_shown(fresh).startswith("C"), 20, "feature C in the menu")
    wait_for(lambda: directions_texts(fresh) == seen_before, 20, "the panels draw feature C")
    again = find(fresh, "#share-link").get_attribute("href")
    assert parse_qs(urlparse(again).query)["feature"] == ["C"], again


def test_a_link_to_an_untrained_run_opens_on_its_feature(server, browser):
    """The other way in: no run yet, so the page is built by the callbacks while the link's
    run trains; the feature menu and the panels still follow the link."""
    browser.get(f"{server}/?{THREE}&seed=56&feature=B")
    wait_for(lambda: "Done" in text_of(browser, STATUS), 90, "the run trained")
    wait_for(lambda: feature_shown(browser).startswith("B"), 20, "feature B in the menu")
    link = find(browser, "#share-link").get_attribute("href")
    assert parse_qs(urlparse(link).query)["feature"] == ["B"], link
    streamed = wait_for(lambda: "B: every" in (t := directions_texts(browser)) and t)
    # the same link again, now trained: the page comes built with its run; the same panels
    browser.get(f"{server}/?{THREE}&seed=56&feature=B")
    wait_for(lambda: feature_shown(browser).startswith("B"), 20, "feature B in the menu")
    wait_for(lambda: directions_texts(browser) == streamed, 20, "the same panels of feature B")


def test_a_link_naming_a_feature_it_does_not_have_says_so(server, browser):
    browser.get(f"{server}/?{THREE}&seed=51&feature=Q")
    message = wait_for(lambda: text_of(browser, "#config-error"), 60, "a message")
    assert "feature: expected one of A … C, got 'Q'" in message, message


def test_the_phase_page_keeps_its_sweep_in_the_url_and_a_reload_reopens_it(
    server, browser, fresh, store
):
    browser.get(f"{server}/phase")
    for box, value in (("#phase-sparsities", "0.3, 0.9"), ("#phase-k", "2"),
                       ("#phase-seeds", "1"), ("#phase-steps", "60"),
                       ("#phase-hidden", "3")):  # fmt: skip
        el = find(browser, box)
        el.clear()
        el.send_keys(value + "\t")
    click(browser, "#phase-model input[value='linear']")
    click(browser, css(ids.job(ids.RUN, ids.PHASE)))
    wait_for(lambda: "Done" in text_of(browser, PHASE_STATUS), 90, "the sweep done")
    wanted = {"model": ["linear"], "sparsities": ["0.3,0.9"], "k": ["2"], "seeds": ["1"],
              "steps": ["60"], "hidden": ["3"]}  # fmt: skip
    wait_for(lambda: query(browser) == wanted, 10, f"the sweep in the URL ({wanted})")
    link = browser.current_url
    from app.pages.phase import build_spec

    key = build_spec("linear", "0.3, 0.9", "2", 1, 60, 3).key
    record = store.details(key)
    assert record["state"] == "done", record
    # a fresh browser: the controls and the diagram of that sweep, without training again
    fresh.get(link)
    wait_for(lambda: "Done" in text_of(fresh, PHASE_STATUS), 30, "the cached sweep shown")
    wait_for(lambda: _n_traces(fresh, "#phase-graph") >= 3, 20, "the diagram drawn")
    assert find(fresh, "#phase-sparsities").get_attribute("value") == "0.3, 0.9"
    assert find(fresh, "#phase-k").get_attribute("value") == "2"
    for box, value in (("#phase-seeds", "1"), ("#phase-steps", "60"), ("#phase-hidden", "3")):
        assert find(fresh, box).get_attribute("value") == value, box
    assert find(fresh, "#phase-model input[value='linear']").is_selected()
    title = fresh.execute_script(
        "return document.querySelector('#phase-graph .js-plotly-plot')._fullLayout.title.text"
    )
    assert "final (step 60)" in title, title
    # the same record: not submitted again, not trained again
    assert store.details(key) == record
    assert not store.queued() and not store.running()


def _n_traces(driver, selector: str) -> int:
    return driver.execute_script(
        "const g = document.querySelector(arguments[0] + ' .js-plotly-plot');"
        "return g && g.data ? g.data.length : 0;",
        selector,
    )


def test_a_compare_link_restores_both_runs_and_the_scrubbers_place(server, browser, fresh):
    from urllib.parse import urlencode

    pair = {"left": TINY + "&seed=55", "right": TINY.replace("linear", "ssm") + "&seed=55"}
    browser.get(f"{server}/compare?" + urlencode(pair))
    wait_for(lambda: _compare_done(browser), 90, "both runs trained")
    at_end = text_of(browser, "#compare-label")
    browser.get(f"{server}/compare?" + urlencode({**pair, "at": 40}))
    wait_for(lambda: _compare_done(browser), 30, "both runs served")
    wait_for(lambda: _scrubber(browser) == "40", 20, "the scrubber at 40 %")
    at_40 = wait_for(lambda: (t := text_of(browser, "#compare-label")) != at_end and t, 20)
    link = find(browser, "#compare-share").get_attribute("href")
    assert parse_qs(urlparse(link).query)["at"] == ["40"], link
    # one step back: the share link follows the scrubber
    click(browser, css(ids.player(ids.PREV, ids.COMPARE)))
    wait_for(lambda: "at=39" in find(browser, "#compare-share").get_attribute("href"), 10, "39")
    # the link in a fresh browser: the same two runs at the same place
    fresh.get(link)
    wait_for(lambda: _compare_done(fresh), 30, "both runs served")
    wait_for(lambda: _scrubber(fresh) == "40", 20, "the scrubber at 40 %")
    wait_for(lambda: text_of(fresh, "#compare-label") == at_40, 20, "the same frames")
    for side in ("left", "right"):
        shown = find(fresh, f"#compare-{side}").get_attribute("value")
        assert config_from_query(shown)[0] == config_from_query(pair[side])[0], (side, shown)
    # a bad place is named, not silently dropped
    fresh.get(f"{server}/compare?" + urlencode({**pair, "at": "abc"}))
    wait_for(lambda: "at: expected an integer in [0, 100], got 'abc'" in
             text_of(fresh, "#compare-status"), 30, "the bad value named")  # fmt: skip


def _compare_done(driver) -> bool:
    """Both sides served (a side still training reads "left (…): …" in the status line)."""
    text = text_of(driver, "#compare-status")
    return "left:" in text and "right:" in text and "left (" not in text and "right (" not in text


def _scrubber(driver) -> str | None:
    selector = css(ids.player(ids.FRAME, ids.COMPARE)) + " [role='slider']"
    return driver.find_element("css selector", selector).get_attribute("aria-valuenow")


# ---- item 7: messages where the user looks ----------------------------------------------


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_bad_link_is_named_in_view(server, browser, width, height):
    set_viewport(browser, width, height)
    browser.get(f"{server}/?model=foo&k=-1&sparsity=abc")
    message = wait_for(lambda: text_of(browser, "#config-error"), 30, "a message")
    for field in ("model", "k", "sparsity"):
        assert f"{field}:" in message, (field, message)
    where = in_view(browser, "#config-error")
    assert where["inside"] and where["seen"], where
    assert find(browser, "#config-error").get_attribute("role") == "alert"


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_bad_phase_link_is_named_in_view_and_runs_nothing(server, browser, store, width, height):
    set_viewport(browser, width, height)
    browser.get(f"{server}/phase?model=foo&sparsities=abc&k=2&seeds=0&steps=60&hidden=3")
    message = wait_for(lambda: text_of(browser, "#phase-link-error"), 30, "a message")
    for field in ("model", "sparsities", "seeds"):
        assert f"{field}:" in message, (field, message)
    where = in_view(browser, "#phase-link-error")
    assert where["inside"] and where["seen"], where
    # the valid values are applied, nothing is submitted
    assert find(browser, "#phase-k").get_attribute("value") == "2"
    assert find(browser, "#phase-steps").get_attribute("value") == "60"
    assert not store.queued() and not store.running()


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_refused_k_is_named_in_view_beside_the_box(server, browser, width, height):
    set_viewport(browser, width, height)
    browser.get(f"{server}/?{TINY}&seed=52")
    wait_for(lambda: query(browser).get("k") == ["2"], 30, "the link's config")
    box = find(browser, "#ctl-k-box")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("99", Keys.ENTER)
    message = wait_for(lambda: text_of(browser, "#config-error"), 10, "a message")
    assert "k:" in message and "99" in message, message
    wait_for(lambda: box.get_attribute("value") == "2", 10, "the box back at 2")
    where = in_view(browser, "#config-error")
    assert where["inside"] and where["seen"], where
    assert in_view(browser, "#ctl-k-box")["inside"]  # the box too: both at once
    # dismissed, it is gone
    click(browser, "#notice-close")
    wait_for(lambda: not text_of(browser, "#config-error"), 10, "the message dismissed")


# ---- item 8: a link trains the configuration it names ---------------------------------


def test_a_link_to_an_untrained_config_trains_at_once_and_says_so(server, browser, store):
    link = f"{TINY}&seed=53"
    config, _ = config_from_query(link)
    assert store.status(config.key) is None
    browser.get(f"{server}/?{link}")
    note = wait_for(lambda: text_of(browser, "#link-note"), 30, "the note")
    assert "Training started from the link" in note, note
    wait_for(lambda: "Done" in text_of(browser, STATUS), 90, "trained without a click")
    assert store.status(config.key) is not None
    # moving a control does not train: it waits for Train, and the note goes
    click(browser, "#ctl-model input[value='ssm']")
    wait_for(lambda: "press Train" in text_of(browser, STATUS), 20, "press Train")
    assert not text_of(browser, "#link-note")
    moved, _ = config_from_query(link.replace("model=linear", "model=ssm"))
    assert store.status(moved.key) is None


def test_a_link_with_a_refused_value_does_not_train(server, browser, store):
    link = f"{TINY}&seed=54&sparsity=abc"
    config, errors = config_from_query(link)
    assert errors
    browser.get(f"{server}/?{link}")
    wait_for(lambda: text_of(browser, "#config-error"), 30, "a message")
    wait_for(lambda: "press Train" in text_of(browser, STATUS), 20, "press Train")
    assert store.status(config.key) is None


# ---- item 9 (part): the sliders' labels --------------------------------------------------


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_no_two_slider_labels_overlap(server, browser, width, height):
    set_viewport(browser, width, height)
    browser.get(server)
    find(browser, "#ctl-sparsity .dash-slider-mark")
    boxes = browser.execute_script(
        """
        const out = {};
        for (const id of arguments[0]) {
          out[id] = [...document.querySelectorAll('#' + id + ' .dash-slider-mark')]
            .filter((m) => m.textContent.trim())
            .map((m) => { const r = m.getBoundingClientRect();
                          return [m.textContent.trim(), r.left, r.right]; });
        }
        return out;
        """,
        [ids.K, ids.SPARSITY, ids.HIDDEN, ids.INPUTS],
    )
    for slider, marks in boxes.items():
        assert len(marks) >= 3, (slider, marks)
        marks.sort(key=lambda m: m[1])
        for (a, _, a_right), (b, b_left, _) in zip(marks, marks[1:], strict=False):
            assert a_right <= b_left, f"{slider} at {width} px: {a!r} overlaps {b!r} ({marks})"
