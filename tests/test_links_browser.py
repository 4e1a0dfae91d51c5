"""Links in a real browser: every page's view is a link, restored in a fresh browser; what
a link or a control had refused is said where the user looks; a link that names a
configuration trains it and says so; the sliders' labels never overlap.

One server (one training worker) for the module, its job store read directly (`store`);
"a fresh browser" is a second Chromium with its own empty profile. Configs and sweeps
are tiny so the worker answers in seconds.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.keys import Keys

from app import ids
from app.urlstate import config_from_query
from tests.browser import (
    app_server,
    click,
    compare_scrubber,
    css,
    driver_session,
    find,
    job_queue,
    n_traces,
    open_page,
    set_viewport,
    settled,
    text_of,
    wait_for,
)
from tests.browser import url_query as query

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
def server(app_cache) -> str:
    """The module's server (tests/conftest.py's, but for its start-up job)."""
    from tempsup.model.config import DEFAULTS

    with app_server(app_cache) as url:
        # the start-up job (the default example) is not needed here: cancelled, it leaves
        # the worker to this module's tiny jobs
        with job_queue(app_cache) as queue:
            queue.cancel(DEFAULTS.key)
        yield url


@pytest.fixture
def fresh(tmp_path: Path):
    """A second browser: its own profile, so nothing of the first one's state (local
    storage, history) reaches it — only the link."""
    with driver_session(tmp_path / "b") as driver:
        yield driver


def share_link_with(driver, selector: str, **wanted: str) -> str:
    """The share link at `selector` once its query holds `wanted` (the link follows the
    view by a callback of its own, after the view is drawn)."""
    return wait_for(
        lambda: (
            (href := find(driver, selector).get_attribute("href"))
            and all(parse_qs(urlparse(href).query).get(k) == [v] for k, v in wanted.items())
            and href
        ),
        what=f"the link at {selector} with {wanted}",
    )


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

    wait_for(choose, what=f"feature {name} in the menu")


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
    wait_for(lambda: "Done" in text_of(browser, STATUS), what="the run trained")
    wait_for(lambda: feature_shown(browser).startswith("A"), what="feature A in the menu")
    pick_feature(browser, "C")
    link = share_link_with(browser, "#share-link", feature="C")
    seen_before = wait_for(lambda: "C: every" in (t := directions_texts(browser)) and t)
    # the link in a browser that never saw the page: feature C, not A
    fresh.get(link)
    wait_for(lambda: "Done" in text_of(fresh, STATUS), what="the cached run served")
    wait_for(lambda: feature_shown(fresh).startswith("C"), what="feature C in the menu")
    wait_for(lambda: directions_texts(fresh) == seen_before, what="the panels draw feature C")
    share_link_with(fresh, "#share-link", feature="C")


def test_a_link_to_an_untrained_run_opens_on_its_feature(server, browser):
    """The other way in: no run yet, so the page is built by the callbacks while the link's
    run trains; the feature menu and the panels still follow the link."""
    browser.get(f"{server}/?{THREE}&seed=56&feature=B")
    wait_for(lambda: "Done" in text_of(browser, STATUS), what="the run trained")
    wait_for(lambda: feature_shown(browser).startswith("B"), what="feature B in the menu")
    share_link_with(browser, "#share-link", feature="B")
    streamed = wait_for(lambda: "B: every" in (t := directions_texts(browser)) and t)
    # the same link again, now trained: the page comes built with its run; the same panels
    browser.get(f"{server}/?{THREE}&seed=56&feature=B")
    wait_for(lambda: feature_shown(browser).startswith("B"), what="feature B in the menu")
    wait_for(lambda: directions_texts(browser) == streamed, what="the same panels of feature B")


def test_a_link_naming_a_feature_it_does_not_have_says_so(server, browser):
    browser.get(f"{server}/?{THREE}&seed=51&feature=Q")
    message = wait_for(lambda: text_of(browser, "#config-error"), what="a message")
    assert "feature: expected one of A … C, got 'Q'" in message, message


def test_the_phase_page_keeps_its_sweep_in_the_url_and_a_reload_reopens_it(
    server, browser, fresh, store
):
    open_page(browser, f"{server}/phase")
    for box, value in (("#phase-sparsities", "0.3, 0.9"), ("#phase-k", "2"),
                       ("#phase-seeds", "1"), ("#phase-steps", "60"),
                       ("#phase-hidden", "3")):  # fmt: skip
        el = find(browser, box)
        el.clear()
        el.send_keys(value + "\t")
    click(browser, "#phase-model input[value='linear']")
    click(browser, css(ids.job(ids.RUN, ids.PHASE)))
    wait_for(lambda: "Done" in text_of(browser, PHASE_STATUS), what="the sweep done")
    wanted = {"model": ["linear"], "sparsities": ["0.3,0.9"], "k": ["2"], "seeds": ["1"],
              "steps": ["60"], "hidden": ["3"]}  # fmt: skip
    wait_for(lambda: query(browser) == wanted, what=f"the sweep in the URL ({wanted})")
    link = browser.current_url
    from app.pages.phase import build_spec

    key = build_spec("linear", "0.3, 0.9", "2", 1, 60, 3).key
    record = store.details(key)
    assert record["state"] == "done", record
    # a fresh browser: the controls and the diagram of that sweep, without training again
    fresh.get(link)
    wait_for(lambda: "Done" in text_of(fresh, PHASE_STATUS), what="the cached sweep shown")
    wait_for(lambda: n_traces(fresh, "#phase-graph") >= 3, what="the diagram drawn")
    boxes = {"#phase-sparsities": "0.3, 0.9", "#phase-k": "2", "#phase-seeds": "1",
             "#phase-steps": "60", "#phase-hidden": "3"}  # fmt: skip
    wait_for(
        lambda: {b: find(fresh, b).get_attribute("value") for b in boxes} == boxes,
        what=f"the sweep's controls restored ({boxes})",
    )
    wait_for(lambda: find(fresh, "#phase-model input[value='linear']").is_selected(), what="linear")
    title = fresh.execute_script(
        "return document.querySelector('#phase-graph .js-plotly-plot')._fullLayout.title.text"
    )
    assert "final (step 60)" in title, title
    # the same record: not submitted again, not trained again
    assert store.details(key) == record
    assert not store.queued() and not store.running()


def test_a_compare_link_restores_both_runs_and_the_scrubbers_place(server, browser, fresh):
    from urllib.parse import urlencode

    pair = {"left": TINY + "&seed=55", "right": TINY.replace("linear", "ssm") + "&seed=55"}
    browser.get(f"{server}/compare?" + urlencode(pair))
    wait_for(lambda: _compare_done(browser), what="both runs trained")
    at_end = text_of(browser, "#compare-label")
    browser.get(f"{server}/compare?" + urlencode({**pair, "at": 40}))
    wait_for(lambda: _compare_done(browser), what="both runs served")
    wait_for(lambda: compare_scrubber(browser) == 40, what="the scrubber at 40 %")
    at_40 = wait_for(lambda: (t := text_of(browser, "#compare-label")) != at_end and t)
    link = share_link_with(browser, "#compare-share", at="40")
    # one step back: the share link follows the scrubber
    click(browser, css(ids.player(ids.PREV, ids.COMPARE)))
    wait_for(lambda: "at=39" in find(browser, "#compare-share").get_attribute("href"), what="39")
    # the link in a fresh browser: the same two runs at the same place
    fresh.get(link)
    wait_for(lambda: _compare_done(fresh), what="both runs served")
    wait_for(lambda: compare_scrubber(fresh) == 40, what="the scrubber at 40 %")
    wait_for(lambda: text_of(fresh, "#compare-label") == at_40, what="the same frames")
    for side in ("left", "right"):
        wanted = config_from_query(pair[side])[0]
        wait_for(
            lambda s=side, w=wanted: (
                config_from_query(find(fresh, f"#compare-{s}").get_attribute("value"))[0] == w
            ),
            what=f"the {side} box showing its run",
        )
    # a bad place is named, not silently dropped
    fresh.get(f"{server}/compare?" + urlencode({**pair, "at": "abc"}))
    wait_for(lambda: "at: expected an integer in [0, 100], got 'abc'" in
             text_of(fresh, "#compare-status"), what="the bad value named")  # fmt: skip


def _compare_done(driver) -> bool:
    """Both sides served (a side still training reads "left (…): …" in the status line)."""
    text = text_of(driver, "#compare-status")
    return "left:" in text and "right:" in text and "left (" not in text and "right (" not in text


# ---- item 7: messages where the user looks ----------------------------------------------


def seen_in_view(driver, selector: str) -> dict:
    """Where the element is, once all of it is inside the viewport with nothing drawn over
    it (the page may still be laying itself out when its text arrives)."""
    return wait_for(
        lambda: (w := in_view(driver, selector))["inside"] and w["seen"] and w,
        what=f"{selector} wholly in view, nothing over it",
    )


def named_in_view(driver, url: str, selector: str, fields: tuple[str, ...]) -> None:
    """Open `url` and read its message at `selector`: it names each of `fields`, in view."""
    driver.get(url)
    message = wait_for(lambda: text_of(driver, selector), what="a message")
    for field in fields:
        assert f"{field}:" in message, (field, message)
    seen_in_view(driver, selector)
    assert find(driver, selector).get_attribute("role") == "alert"


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_bad_link_is_named_in_view(server, browser, width, height):
    set_viewport(browser, width, height)
    link = f"{server}/?model=foo&k=-1&sparsity=abc"
    named_in_view(browser, link, "#config-error", ("model", "k", "sparsity"))


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_bad_phase_link_is_named_in_view_and_runs_nothing(server, browser, store, width, height):
    set_viewport(browser, width, height)
    link = f"{server}/phase?model=foo&sparsities=abc&k=2&seeds=0&steps=60&hidden=3"
    named_in_view(browser, link, "#phase-link-error", ("model", "sparsities", "seeds"))
    # the valid values are applied, nothing is submitted
    for box, value in (("#phase-k", "2"), ("#phase-steps", "60")):
        wait_for(lambda b=box, v=value: find(browser, b).get_attribute("value") == v, what=box)
    assert not store.queued() and not store.running()


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_refused_k_is_named_in_view_beside_the_box(server, browser, width, height):
    set_viewport(browser, width, height)
    open_page(browser, f"{server}/?{TINY}&seed=52")
    wait_for(lambda: query(browser).get("k") == ["2"], what="the link's config")
    box = find(browser, "#ctl-k-box")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("99", Keys.ENTER)
    message = wait_for(lambda: text_of(browser, "#config-error"), what="a message")
    assert "k:" in message and "99" in message, message
    wait_for(lambda: find(browser, "#ctl-k-box").get_attribute("value") == "2", what="k back at 2")
    seen_in_view(browser, "#config-error")
    assert in_view(browser, "#ctl-k-box")["inside"]  # the box too: both at once
    # dismissed, it is gone
    click(browser, "#notice-close")
    wait_for(lambda: not text_of(browser, "#config-error"), what="the message dismissed")


# ---- item 8: a link trains the configuration it names ---------------------------------


def test_a_link_to_an_untrained_config_trains_at_once_and_says_so(server, browser, store):
    link = f"{TINY}&seed=53"
    config, _ = config_from_query(link)
    assert store.status(config.key) is None
    browser.get(f"{server}/?{link}")
    note = wait_for(lambda: text_of(browser, "#link-note"), what="the note")
    assert "Training started from the link" in note, note
    wait_for(lambda: "Done" in text_of(browser, STATUS), what="trained without a click")
    assert store.status(config.key) is not None
    # moving a control does not train: it waits for Train, and the note goes
    click(browser, "#ctl-model input[value='ssm']")
    wait_for(lambda: "press Train" in text_of(browser, STATUS), what="press Train")
    wait_for(lambda: not text_of(browser, "#link-note"), what="the note gone")
    moved, _ = config_from_query(link.replace("model=linear", "model=ssm"))
    assert store.status(moved.key) is None


def test_a_link_with_a_refused_value_does_not_train(server, browser, store):
    link = f"{TINY}&seed=54&sparsity=abc"
    config, errors = config_from_query(link)
    assert errors
    browser.get(f"{server}/?{link}")
    wait_for(lambda: text_of(browser, "#config-error"), what="a message")
    wait_for(lambda: "press Train" in text_of(browser, STATUS), what="press Train")
    assert store.status(config.key) is None


# ---- item 9 (part): the sliders' labels --------------------------------------------------


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_no_two_slider_labels_overlap(server, browser, width, height):
    set_viewport(browser, width, height)
    browser.get(server)
    sliders = [ids.K, ids.SPARSITY, ids.HIDDEN, ids.INPUTS]
    marks_script = """
        const out = {};
        for (const id of arguments[0]) {
          out[id] = [...document.querySelectorAll('#' + id + ' .dash-slider-mark')]
            .filter((m) => m.textContent.trim())
            .map((m) => { const r = m.getBoundingClientRect();
                          return [m.textContent.trim(), r.left, r.right]; });
        }
        return out;
        """
    boxes = settled(
        lambda: (
            (b := browser.execute_script(marks_script, sliders))
            and all(len(m) >= 3 for m in b.values())
            and b
        ),
        what=f"three labelled marks or more on each of {sliders}, laid out",
    )
    for slider, marks in boxes.items():
        marks.sort(key=lambda m: m[1])
        for (a, _, a_right), (b, b_left, _) in zip(marks, marks[1:], strict=False):
            assert a_right <= b_left, f"{slider} at {width} px: {a!r} overlaps {b!r} ({marks})"
