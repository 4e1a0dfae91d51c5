"""The class poll in real browsers at phone size (issue 23, item 8): the poll with 30
simulated students and a teacher in separate browser contexts.

Each browser context is a separate browser to the app (its own local storage, hence
its own random browser id). The teacher starts a class on the lesson page and gets the
code, the short link and its QR code; thirty students open the link at 390 × 844 and
predict step 1 with a known spread over the choices; the teacher's view, never
reloaded, comes to show exactly those counts before the answer is revealed. A student
who tries again — with the button, or with a request crafted in their page — is refused,
and the count stays. Set TEMPSUP_SHOTS to a directory to keep screenshots.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import segno

from tempsup.teaching import lesson
from tests.pw import PHONE, new_page, serious_violations, until, wait_dash, wait_idle

pytestmark = pytest.mark.browser

# How many of the 30 students pick each choice of step 1, by the place it is shown in.
SPREAD = (11, 9, 6, 4)
CRAFTED_VOTE = """async ([code, step, browser]) => {
    const r = await fetch(`/poll/api/classes/${code}/votes`, {method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({step: step, choice: 0, browser: browser})});
    return [r.status, await r.json()];
}"""
COUNTS_JS = """() => Array.from(document.querySelectorAll('#poll-results .poll-row'),
                                (r) => Number(r.dataset.count))"""


def shot(page, name: str) -> None:
    folder = os.environ.get("TEMPSUP_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def counts_become(page, expected: list[int]) -> None:
    page.wait_for_function(
        f"(want) => JSON.stringify(({COUNTS_JS})()) === JSON.stringify(want)",
        arg=list(expected),
    )


def vote(page, place: int, before: str = "") -> str:
    """Pick the choice shown at `place`, press Send my prediction; the note under it
    (once it differs from `before`)."""
    page.locator("#lesson-choice input[type=radio]").nth(place).check()
    page.get_by_role("button", name="Send my prediction").click()
    page.wait_for_function(
        "(before) => { const p = document.querySelector('#poll-note p');"
        " return p && p.innerText !== before; }",
        arg=before,
    )
    return page.locator("#poll-note p").inner_text()


def test_class_poll_thirty_students_and_a_teacher(pw_browser, shipped_app):
    assert len(lesson.shown_choices(lesson.step(1))[0]) == len(SPREAD)
    teacher = new_page(pw_browser, PHONE)
    teacher.goto(shipped_app + "/lesson")
    wait_dash(teacher)
    teacher.get_by_role("button", name="Start a class poll").click()
    teacher.locator("#poll-results .poll-row").first.wait_for()
    code = teacher.locator(".poll h2 .poll-code").inner_text()
    link = teacher.locator("a.poll-link").get_attribute("href")
    assert link == f"{shipped_app}/lesson?class={code}"
    assert len(code) == 6 and not set(code) & set("01OI"), code
    # the QR code is the link's, drawn as SVG in the page (no network)
    src = teacher.locator("img.poll-qr").get_attribute("src")
    expected = segno.make(link, error="m").svg_data_uri(
        scale=6, border=2, dark="#000", light="#fff"
    )
    assert src == expected and src.startswith("data:image/svg+xml")
    assert teacher.evaluate(COUNTS_JS) == [0, 0, 0, 0]
    box = teacher.locator("img.poll-qr").bounding_box()
    assert box["width"] >= 150 and box["x"] + box["width"] <= PHONE["width"]
    assert teacher.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    places = [p for p, n in enumerate(SPREAD) for _ in range(n)]
    kept = None
    for i, place in enumerate(places):
        student = new_page(pw_browser, PHONE)
        student.goto(link, wait_until="commit")  # Dash drawn is what counts: wait_dash
        wait_dash(student)
        joined = student.locator(".poll-student", has_text=f"You are in class {code}")
        joined.first.wait_for()  # (the page's callback writes it)
        assert "anonymously" in joined.first.inner_text()
        if i == 0:
            shot(student, "student-before")
        note = vote(student, place)
        assert note.startswith("✓ Counted"), note
        if i == 0:
            kept = student
            shot(student, "student-counted")
            steps = student.locator(".lesson-steps a")
            assert steps.nth(1).get_attribute("href") == f"/lesson?step=2&class={code}"
        else:
            student.context.close()
        if i == 5:  # the teacher's view follows while the class votes, without a reload
            counts_become(teacher, [min(6, sum(1 for p in places[:6] if p == c))
                                    for c in range(4)])  # fmt: skip

    counts_become(teacher, list(SPREAD))
    assert "Step 1: 30 predictions" in teacher.locator(".poll-total").inner_text()
    # before the reveal: the teacher's page has not shown the answer
    assert teacher.locator("#lesson-answer").inner_text().strip() == ""
    shot(teacher, "teacher-light")
    teacher.emulate_media(color_scheme="dark")
    shot(teacher, "teacher-dark")
    teacher.emulate_media(color_scheme="light")

    assert serious_violations(teacher, "teacher: ") == []
    assert serious_violations(kept, "student: ") == []

    # the first student tries again: another choice and the button, then a crafted request
    refreshes: list[int] = []  # the teacher's view asking for the counts, answered
    teacher.on(
        "requestfinished",
        lambda r: (
            refreshes.append(1)
            if "_dash-update-component" in r.url and "poll-results" in (r.post_data or "")
            else None
        ),
    )
    again = vote(kept, 3, before=kept.locator("#poll-note p").inner_text())
    assert again.startswith("Not counted") and "already counted" in again, again
    browser_id = kept.evaluate("JSON.parse(localStorage.getItem('poll-browser'))")
    crafted = kept.evaluate(CRAFTED_VOTE, [code, 1, browser_id])
    assert crafted[0] == 409 and "already counted" in crafted[1]["error"], crafted
    # the teacher's view refreshed twice since, and drew the answers: the count stays
    until(teacher, lambda: len(refreshes) >= 2, "two refreshes of the teacher's view")
    wait_idle(teacher)
    assert teacher.evaluate(COUNTS_JS) == list(SPREAD)

    # the teacher ends the poll: the offer comes back, the class's code stops working
    teacher.get_by_role("button", name="End the poll").click()
    teacher.get_by_role("button", name="Start a class poll").wait_for()
    ended = kept.evaluate(CRAFTED_VOTE, [code, 2, browser_id])
    assert ended[0] == 404 and "not running" in ended[1]["error"], ended
    kept.goto(link)
    wait_dash(kept)
    kept.locator(".poll", has_text=f"Class {code} is not running").first.wait_for()
    kept.context.close()
    teacher.context.close()


def _CALLBACK(url: str) -> bool:  # noqa: N802 - a URL pattern, named like one
    return "_dash-update-component" in url


def _held_callbacks(page, output: str) -> list:
    """Hold (unanswered) the page's first callback request whose outputs include
    `output`; the list it is put in is returned."""
    held: list = []
    asked: list = []

    def hold(route) -> None:
        if not asked and output in (route.request.post_data or ""):
            asked.append(route)
            held.append(route)
        else:
            route.continue_()

    page.route(_CALLBACK, hold)
    return held


def _wait_held(page, held: list) -> None:
    until(page, lambda: held, "the page asking for that callback")


@pytest.mark.parametrize("query", ["?step=2", "?class=ABCDEF"])
def test_a_prediction_picked_while_the_page_reads_its_url_is_kept(pw_browser, shipped_app, query):
    """On load the page reads its URL (dcc.Location) and asks the lesson's body callback
    about it: the step already drawn must not be drawn again over a prediction picked
    meanwhile (a student on a slow phone picks at once). The callback's answer is held
    until the pick is made, so the race is the same every run."""
    page = new_page(pw_browser, PHONE)
    held = _held_callbacks(page, "lesson-body.children")
    page.goto(shipped_app + "/lesson" + query)
    wait_dash(page)
    _wait_held(page, held)
    page.locator("#lesson-choice input[type=radio]").nth(2).check()
    route = held.pop()
    with page.expect_request_finished(lambda r: r.post_data == route.request.post_data):
        route.continue_()
    wait_idle(page)  # the answer drawn, if it redraws anything, and what it set off
    assert page.locator("#lesson-choice input[type=radio]").nth(2).is_checked()
    page.context.close()


def test_start_pressed_while_the_panel_reads_the_url_starts_one_class(pw_browser, shipped_app):
    """The poll panel's first callback (a teacher's stored class, or none) can answer
    after the teacher pressed Start: the offer must not be drawn over the class."""
    page = new_page(pw_browser, PHONE)
    held = _held_callbacks(page, "poll-panel.children")
    page.goto(shipped_app + "/lesson")
    wait_dash(page)
    _wait_held(page, held)
    first = held.pop()
    page.get_by_role("button", name="Start a class poll").click()
    page.locator("#poll-results .poll-row").first.wait_for()
    with page.expect_request_finished(lambda r: r.post_data == first.request.post_data):
        first.continue_()
    wait_idle(page)  # the late answer drawn, if it redraws anything, and what it set off
    assert page.locator("#poll-results .poll-row").count() == 4
    assert page.get_by_role("button", name="Start a class poll").count() == 0
    page.get_by_role("button", name="End the poll").click()
    page.context.close()
