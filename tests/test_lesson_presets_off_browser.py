"""The lesson on a server whose presets are off, in headless Chromium: a revealed step says
what the gallery says and offers Train for its runs; Train queues them (the server has no
worker: they stay in line), and the step then says they are training (revealed again
too): never that runs nobody started are. axe-core finds nothing critical or serious
on the answer, on a phone and on a laptop, in the light and the dark scheme.
(tests/test_lesson_presets_off.py checks the same words and the filled-in answer
in-process.)
"""

from __future__ import annotations

import pytest

from app import preset_runs
from tests.pw import DESKTOP, PHONE, new_page, serious_violations, wait_dash

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def presets_off_app(tmp_path_factory):
    """A server with its presets off and no training worker."""
    from tests.browser import app_server

    cache = tmp_path_factory.mktemp("presets-off") / "jobs"
    with app_server(cache, workers=0, env={"TEMPSUP_PRESETS": "off"}) as url:
        yield url


def revealed(page, base: str, step: int) -> None:
    """Step `step` answered: a choice picked, Reveal pressed, the answer shown."""
    page.goto(f"{base}/lesson?step={step}")
    wait_dash(page)
    page.locator("#lesson-choice input").first.check()
    page.click("#lesson-reveal")
    page.locator("#lesson-details .chips").wait_for()


# each size its own step: a step's queued runs stay in line (no worker), and then the
# step says they are training, which the second part of the test reads
CASES = {"phone": (PHONE, 1, 1), "desktop": (DESKTOP, 3, 2)}  # size, step, its runs


@pytest.mark.parametrize("case", CASES)
def test_a_step_without_its_runs_says_why_and_trains_them(pw_browser, presets_off_app, case):
    size, step, runs = CASES[case]
    page = new_page(pw_browser, size)
    try:
        revealed(page, presets_off_app, step)
        answer = page.locator("#lesson-details")
        text = answer.inner_text()
        assert preset_runs.OFF in text and "tempsup reproduce" in text, text
        assert "still training" not in text and "—" not in text, text
        problems = [f"light: {v}" for v in serious_violations(page)]
        page.emulate_media(color_scheme="dark")
        problems += [f"dark: {v}" for v in serious_violations(page)]
        assert problems == [], "\n".join(problems)
        page.get_by_role("button", name="Train this step's run").click()
        queued = f"Queued {runs} of the {runs} missing"
        page.get_by_role("status").filter(has_text=queued).wait_for()
        page.get_by_text(f"Training on this server: 0 of {runs} ready (queued").wait_for()
        revealed(page, presets_off_app, step)  # the step again: now its runs are in line
        text = page.locator("#lesson-details").inner_text()
        assert f"training on the server (0 of {runs} ready)" in text, text
        assert preset_runs.OFF not in text, "presets off, but these runs were asked for"
    finally:
        page.context.close()
