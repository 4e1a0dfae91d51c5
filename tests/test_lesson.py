"""The lesson: its steps are well formed, and a step reveals the numbers of a real run.

The reveal test trains the lesson's first preset (the linear spiral sink, quick
form) into a temporary job store and checks that the explanation carries the
numbers its claims measured on that run — the words cannot drift from the run.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from dash import dcc, html

from tempsup.analysis.sweeps import train_runs
from tempsup.paper.presets import preset, presets
from tempsup.teaching import lesson


def test_every_step_names_a_preset_run_and_its_claims() -> None:
    by_name = {p.name: p for p in presets(quick=True)}
    assert 5 <= len(lesson.STEPS) <= 7
    assert len({s.slug for s in lesson.STEPS}) == len(lesson.STEPS)
    for item in lesson.STEPS:
        assert item.preset in by_name, item.slug
        assert item.run in by_name[item.preset].labels, item.slug
        assert len(item.choices) >= 3


def test_choices_are_shuffled_the_same_way_everywhere() -> None:
    places = []
    for item in lesson.STEPS:
        shown, right = lesson.shown_choices(item)
        assert sorted(shown) == sorted(item.choices)
        assert shown[right] == item.choices[item.answer]
        assert lesson.shown_choices(item) == (shown, right)
        places.append(right)
    assert len(set(places)) > 1, "the right answer sits in the same place in every step"


@pytest.mark.parametrize(
    ("query", "number"),
    [("", 1), ("?step=3", 3), ("step=6", 6), ("?step=99", 6), ("?step=0", 1), ("?step=x", 1)],
)
def test_the_step_comes_from_the_url(query: str, number: int) -> None:
    assert lesson.step_number(query) == number


def test_unmeasured_numbers_are_left_out_not_shown_as_a_dash_or_an_error() -> None:
    for item in lesson.STEPS:
        text = lesson.explanation(item, None)
        assert text and lesson.MISSING not in text and "{" not in text


def test_a_step_naming_a_claim_it_does_not_list_is_refused() -> None:
    with pytest.raises(ValueError, match="claims"):
        lesson.Step("x", "t", "spiral-sink", "linear", (0,), "q?", ("a", "b", "c"), 0, "{c1[a]}")


def _texts(component) -> list[str]:
    out = []
    if isinstance(component, str):
        return [component]
    if isinstance(component, (list, tuple)):
        for c in component:
            out += _texts(c)
        return out
    children = getattr(component, "children", None)
    return _texts(children) if children is not None else out


def _find(component, kind) -> list:
    found = [component] if isinstance(component, kind) else []
    children = getattr(component, "children", None)
    if isinstance(children, (list, tuple)):
        for c in children:
            found += _find(c, kind)
    elif children is not None and not isinstance(children, str):
        found += _find(children, kind)
    return found


def _reopen(services) -> None:
    """Make the app read its settings and open its job store anew (both are cached)."""
    services.settings.cache_clear()
    services.job_queue.cache_clear()


@pytest.fixture
def spiral_sink_store(tmp_path, monkeypatch):
    """The quick spiral-sink run, trained for real, in a fresh job store the app reads."""
    from app import services

    monkeypatch.setenv("TEMPSUP_CACHE", str(tmp_path / "jobs"))
    monkeypatch.setenv("TEMPSUP_PRESETS", "quick")
    _reopen(services)
    p = preset("spiral-sink", quick=True)
    (run,) = train_runs(p.configs)
    services.job_queue().put_run(run)
    yield p, run
    _reopen(services)


def test_reveal_explains_with_the_numbers_measured_on_the_run(spiral_sink_store) -> None:
    from app.pages import lesson as page

    p, run = spiral_sink_store
    item = lesson.step(1)
    _, right = lesson.shown_choices(item)
    claims = p.check([run])
    measured = claims[0].measured

    out = html.Div(page.reveal(1, right))
    text = " ".join(_texts(out))
    assert "Right" in text
    assert f"k·arg λ = {lesson._show(measured['k_arg_lambda_deg'])}°" in text
    assert claims[0].rate_text in text
    graphs = _find(out, dcc.Graph)
    assert len(graphs) == 1 and graphs[0].figure["frames"], "the run is not animated"
    hrefs = [link.href for link in _find(out, dcc.Link)]
    assert any(h.startswith("/?") and "model=linear" in h for h in hrefs), hrefs
    assert "/lesson?step=2" in hrefs

    wrong = html.Div(page.reveal(1, (right + 1) % len(item.choices)))
    assert "Not quite" in " ".join(_texts(wrong))


def test_reveal_before_the_runs_are_trained_says_so(tmp_path, monkeypatch) -> None:
    """Runs nobody started are not "still training": the step says they are not here and
    offers to train them (tests/test_lesson_presets_off.py: with presets off)."""
    from app import services
    from app.pages import lesson as page

    monkeypatch.setenv("TEMPSUP_CACHE", str(tmp_path / "empty"))
    _reopen(services)
    try:
        out = html.Div(page.reveal(3, 0))
    finally:
        _reopen(services)
    text = " ".join(_texts(out))
    assert "not trained here" in text and "training on the server" not in text
    assert lesson.MISSING not in text
    assert any("Train this step" in " ".join(_texts(b)) for b in _find(out, html.Button))


@pytest.mark.browser
@pytest.mark.slow
def test_predict_reveal_and_try_it_in_a_browser(tmp_path) -> None:
    """The lesson's flow on a real server: a step from the URL, reveal refused until a
    choice is made, the verdict, the measured numbers and the animated run, then
    "try it yourself" opens the explorer at the step's configuration."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    from app import ids
    from app.urlstate import config_from_query
    from tempsup.jobs.queue import JobQueue
    from tests.browser import app_server, make_driver
    from tests.helpers import wait_for

    cache = tmp_path / "jobs"
    p = preset("spiral-sink", quick=False)  # TEMPSUP_PRESETS=off serves the full presets
    (run,) = train_runs(p.configs)
    with JobQueue(cache) as queue:
        queue.put_run(run)
    measured = p.check([run])[0].measured
    _, right = lesson.shown_choices(lesson.step(1))

    driver = make_driver(tmp_path)

    def text_of(by: str, what: str) -> str:
        """The element's text, found anew each time: a step's card is redrawn as a whole
        (an element found just before a redraw is gone: read as not there yet)."""
        try:
            found = driver.find_elements(by, what)
            return found[0].text if found else ""
        except StaleElementReferenceException:
            return ""

    def heading() -> str:
        return text_of(By.CSS_SELECTOR, ".lesson-step h2")

    def answer() -> str:
        return text_of(By.ID, ids.LESSON_ANSWER)

    try:
        with app_server(cache, workers=0) as url:
            driver.get(f"{url}/lesson?step=2")
            wait_for("step 2", lambda: "Step 2 of" in heading())
            driver.find_element(By.CSS_SELECTOR, ".lesson-steps a").click()  # to step 1
            wait_for("step 1", lambda: "Step 1 of" in heading())
            assert "step=1" in driver.current_url
            driver.find_element(By.ID, ids.LESSON_REVEAL).click()
            wait_for("the refusal", lambda: "Pick an answer first" in answer())
            driver.find_elements(By.CSS_SELECTOR, f"#{ids.LESSON_CHOICE} input")[right].click()
            driver.find_element(By.ID, ids.LESSON_REVEAL).click()
            wait_for("the verdict", lambda: "Right" in answer())
            assert f"k·arg λ = {lesson._show(measured['k_arg_lambda_deg'])}°" in answer()
            wait_for("the animated run", lambda: driver.execute_script(
                "const g = document.querySelector(arguments[0] + ' .js-plotly-plot');"
                "return g && g._transitionData && g._transitionData._frames.length;",
                f"#{ids.LESSON_ANSWER}"))  # fmt: skip
            driver.find_element(By.PARTIAL_LINK_TEXT, "Try it yourself").click()
            wait_for("the explorer", lambda: "model=linear" in driver.current_url)
            opened, errors = config_from_query(urlparse(driver.current_url).query)
            assert errors == [] and opened.key == p.configs[0].key  # exactly the step's run
    finally:
        driver.quit()
