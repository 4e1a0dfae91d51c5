"""The static site (`tempsup site`): every page from `file://`, with no server and no network.

The site is built once (module fixture) from a job store holding the quick
presets' runs (the session's, shared with the report tests) but one, which the
build trains and stores; a second build then reads every run from the store.
The browser test opens every page from disk in headless Chromium and checks
that its first graph draws, that the console stays clean and that no request
leaves `file://`; a graph further down draws when scrolled to, and the
lesson's reveal is clicked through.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempsup.jobs.queue import JobQueue
from tempsup.paper.presets import preset, presets
from tempsup.teaching import lesson, site

pytestmark = pytest.mark.slow
# the graphs drawn so far (site.js draws a graph when it comes into view, frames included)
DRAWN = "return [...document.querySelectorAll('div.plot')].filter(d => d.dataset.ready).length;"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, quick_preset_runs) -> tuple[Path, JobQueue]:
    """The site built from a job store holding every quick run but the spiral sink's,
    which the build must train and store itself."""
    queue = JobQueue(tmp_path_factory.mktemp("jobs"))
    missing = preset("spiral-sink", quick=True).main_key
    for key, run in quick_preset_runs.items():
        if key != missing:
            queue.put_run(run)
    out = tmp_path_factory.mktemp("site")
    site.build(out, quick=True, queue=queue)
    assert queue.run(missing) is not None, "the run the build trained was not stored"
    return out, queue


def test_the_site_has_every_page_and_one_plotly(built) -> None:
    out, _ = built
    names = {p.name for p in presets(quick=True)}
    files = {f.name for f in out.iterdir()}
    assert {
        "index.html",
        "lesson.html",
        "report.html",
        "report.md",
        site.PLOTLY_JS,
        site.JS,
    } <= files
    assert {f"{n}.html" for n in names} <= files
    for page in out.glob("*.html"):
        text = page.read_text()
        assert text.count(f'<script src="{site.PLOTLY_JS}">') == 1, page.name
        assert "cdn.plot.ly" not in text and "https://cdn" not in text, page.name
        assert 'lang="en"' in text


def test_index_cards_carry_claims_numbers_and_a_picture(built) -> None:
    out, _ = built
    index = (out / "index.html").read_text()
    for p in presets(quick=True):
        card = index.split(f'id="preset-{p.name}"', 1)[1].split("</article>", 1)[0]
        # every claim's count ("3 of 8 seeds", or what else it counts, e.g. persistences)
        assert re.search(r"\d+ of \d+ \w+", card), p.name
        assert "measured" in card and 'class="plot"' in card, p.name
        assert f'href="{p.name}.html"' in card


def test_preset_pages_animate_every_run(built) -> None:
    out, _ = built
    for p in presets(quick=True):
        text = (out / f"{p.name}.html").read_text()
        assert text.count('class="plot"') >= len(p.configs), p.name
        assert '"frames"' in text or "addFrames" in text, p.name


def test_the_lesson_explains_with_measured_numbers(built) -> None:
    out, _ = built
    text = (out / "lesson.html").read_text()
    for i in range(1, len(lesson.STEPS) + 1):
        assert f'id="step-{i}"' in text
    # every number the explanations name was measured (none reads as missing)
    answers = re.findall(r'<div class="answer" hidden><p>(.*?)</p>', text, flags=re.S)
    assert len(answers) == len(lesson.STEPS)
    for a in answers:
        assert lesson.MISSING not in a, a


def test_a_second_build_reads_the_runs_from_the_store(built, tmp_path, monkeypatch) -> None:
    _, queue = built
    import tempsup.analysis.sweeps

    def refuse(*_a, **_k):
        raise AssertionError("trained again although the job store has every run")

    monkeypatch.setattr(tempsup.analysis.sweeps, "train_runs", refuse)
    site.build(tmp_path / "again", quick=True, queue=queue)
    assert (tmp_path / "again" / "index.html").exists()


@pytest.mark.browser
def test_every_page_draws_from_file_with_no_network(built, tmp_path) -> None:
    from selenium.webdriver.common.by import By

    from tests.browser import make_driver
    from tests.helpers import wait_for

    out, _ = built
    driver = make_driver(tmp_path, logging=True)
    try:
        for page in sorted(out.glob("*.html")):
            driver.get(page.as_uri())
            if page.name not in ("report.html", "lesson.html"):  # text; answers are hidden
                wait_for(f"the first graph of {page.name}", lambda: driver.execute_script(DRAWN))
            urls = driver.execute_script(
                "return performance.getEntriesByType('resource').map(e => e.name)"
            )
            assert all(u.startswith("file://") for u in urls), (page.name, urls)
            errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            assert not errors, (page.name, errors)

        # a graph further down is drawn when scrolled to, with its animation frames
        driver.get((out / "ssm-jump.html").as_uri())
        wait_for("the first graph", lambda: driver.execute_script(DRAWN))
        last = driver.find_elements(By.CSS_SELECTOR, "div.plot")[-1]
        driver.execute_script("arguments[0].scrollIntoView()", last)
        wait_for("the last graph", lambda: last.get_attribute("data-ready"))
        assert driver.execute_script("return arguments[0]._transitionData._frames.length", last)

        driver.get((out / "lesson.html").as_uri() + "#step-3")
        step = driver.find_element(By.ID, "step-3")
        _, right = lesson.shown_choices(lesson.STEPS[2])
        step.find_element(By.CSS_SELECTOR, "button.reveal").click()
        assert "Pick an answer first" in step.find_element(By.CLASS_NAME, "verdict").text
        step.find_elements(By.CSS_SELECTOR, "input[type=radio]")[right].click()
        step.find_element(By.CSS_SELECTOR, "button.reveal").click()
        assert step.find_element(By.CLASS_NAME, "verdict").text.startswith("✓ Right")
        answer = step.find_element(By.CLASS_NAME, "answer")
        assert answer.is_displayed()
        plot = answer.find_element(By.CSS_SELECTOR, "div.plot")
        wait_for("the step's run drawn", lambda: plot.get_attribute("data-ready"))
        assert plot.size["height"] > 100
    finally:
        driver.quit()
