"""Accessibility and phone layout of every page, in headless Chromium under Playwright.

axe-core 4.x (bundled by axe-playwright-python, so nothing is fetched), with every rule
on, must find no critical or serious violation, and none of the moderate findings that
mark a page's structure (landmarks, the heading one, heading order, content outside a
region), on every page at a phone's 390 × 844 and a laptop's 1280 × 720, in the light
and in the dark colour scheme (contrast differs), and with trained runs on screen: the
explorer on a shipped preset's run (and its seed menu open), the lesson after Reveal
(and its class poll, as the teacher and as a student), Compare with two runs, the phase
diagram of a sweep, the lab with its grid. The page's structure is also measured
directly: exactly one main landmark, headings that never skip a level. No page may
scroll sideways at 390 px.

One server for the session (`shipped_app`: the shipped presets' runs, no training
worker; a tiny sweep is trained into its store by this process) and one browser page
per viewport, reused; each state is checked in light, then switched to dark in place
(the plots redraw in their dark colours first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.pw import DESKTOP, PHONE, new_page, wait_dash

pytestmark = pytest.mark.browser

SIZES = {"phone": PHONE, "desktop": DESKTOP}
# How long a state may take to come (generous: the suite shares a loaded machine; a
# state that never comes fails all the same).
WAIT_MS = 60_000
# The moderate findings that are about a page's structure; every critical or serious
# one counts too.
STRUCTURE_RULES = ("landmark-", "page-has-heading-one", "heading-order", "region")
# Every plot on the page has been drawn (a loading callback or an undrawn graph is not
# what the user sees).
PLOTS_DRAWN = (
    "() => !document.querySelector('._dash-loading') && "
    "[...document.querySelectorAll('.js-plotly-plot')].every((g) => !!g._fullLayout)"
)
PLOT_BACKGROUNDS = (
    "() => [...document.querySelectorAll('.js-plotly-plot')]"
    ".map((g) => g._fullLayout && g._fullLayout.paper_bgcolor)"
)
# Headings as a screen reader lists them: in document order, those it can reach.
HEADINGS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6, [role=heading]')]
  .filter((h) => h.checkVisibility() && !h.closest('[aria-hidden=true]'))
  .map((h) => [Number(h.getAttribute('aria-level') || h.tagName.slice(1)),
               h.textContent.trim().slice(0, 60)])"""


def _preset(name: str):
    from tempsup.paper.presets import presets

    return next(p for p in presets(quick=False) if p.name == name)


def explorer_run() -> str:
    """A shipped preset's run with several features (the feature menu is live too)."""
    from app.urlstate import query_from_config

    return "/" + query_from_config(_preset("vector-all-or-none").config("k=2"))


def compare_runs() -> str:
    from app.urlstate import compare_href

    preset = _preset("ssm-dense-vs-sparse")
    return compare_href(preset.configs[0], preset.configs[1])


def run_drawn(page) -> None:
    """The explorer's panels hold the run's data (the shipped run comes with the page)."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".filter((g) => g.data && g.data.length).length >= 3",
        timeout=WAIT_MS,
    )


def seed_menu_open(page) -> None:
    """The seed menu open (its list of seeds, its search box)."""
    page.click("#seed-pick")
    page.wait_for_selector("#seed-pick[aria-expanded='true']", timeout=WAIT_MS)


def revealed(page) -> None:
    """The lesson's step answered: a choice picked, Reveal pressed, the animation shown."""
    page.locator("#lesson-choice input").first.check()
    page.click("#lesson-reveal")
    page.wait_for_selector("#lesson-answer .lesson-runs .js-plotly-plot", timeout=WAIT_MS)


def both_sides(page) -> None:
    """Compare's status names both runs, served (a side still training reads "left (…)")."""
    page.wait_for_function(
        "() => { const t = document.querySelector('#compare-status').textContent;"
        "return t.includes('left:') && t.includes('right:') && !t.includes('left (') &&"
        "!t.includes('right ('); }",
        timeout=WAIT_MS,
    )


def poll_started(page) -> None:
    """A teacher's class poll on the lesson: its code, link, QR code and counts."""
    # the panel's first callback (a teacher's stored class) redraws it: click after that
    page.wait_for_function(
        "() => !document.querySelector('#poll-panel[data-dash-is-loading]')", timeout=WAIT_MS
    )
    page.get_by_role("button", name="Start a class poll").click()
    try:
        page.locator("#poll-results .poll-row").first.wait_for(timeout=WAIT_MS)
    except Exception as exc:  # say what the page showed instead (a refusal, a stale view)
        shown = page.evaluate(
            "() => [document.querySelector('.poll')?.innerText,"
            " document.querySelector('#config-error')?.innerText]"
        )
        raise AssertionError(f"no poll counts after Start; the page showed {shown!r}") from exc


def poll_voted(page) -> None:
    """A student in that class (this tab forgets it was the teacher's) who has sent a
    prediction."""
    link = page.locator("a.poll-link").get_attribute("href")
    page.evaluate("() => sessionStorage.clear()")
    page.goto(link)
    wait_dash(page)
    page.locator("#lesson-choice input").first.check()
    page.get_by_role("button", name="Send my prediction").click()
    page.locator("#poll-note p").wait_for(timeout=WAIT_MS)


# A sweep small enough to train in the test's own process in a second or two (the server
# has no worker): its phase page then shows the diagram.
SWEEP = ("linear", "0.3, 0.9", "2", 1, 60, 3)


def phase_link() -> str:
    from app.urlstate import phase_query

    model, sparsities, ks, seeds, steps, hidden = SWEEP
    return "/phase" + phase_query(model, sparsities.split(", "), [ks], seeds, steps, hidden)


def phase_drawn(page) -> None:
    """The sweep's diagram drawn: a trace per point (the empty diagram has none)."""
    page.wait_for_function(
        "() => { const g = document.querySelector('#phase-graph .js-plotly-plot');"
        "return !!g && !!g.data && g.data.length > 0; }",
        timeout=WAIT_MS,
    )


def lab_grid(page) -> None:
    page.wait_for_selector(".lab-grid .js-plotly-plot", state="attached", timeout=WAIT_MS)


Stage = Callable[[Any], None] | None
# name → (path, what brings each state to check on screen once Dash has drawn the page:
# one check per stage, in order, on one page load; None: the page as it opens)
STATES: dict[str, tuple[str | Callable[[], str], tuple[Stage, ...]]] = {
    "explorer": ("/", (None,)),
    "explorer with a run, then its seed menu open": (explorer_run, (run_drawn, seed_menu_open)),
    "gallery": ("/gallery", (None,)),
    "lesson, then revealed": ("/lesson", (None, revealed)),
    "lesson's class poll, teacher then student": ("/lesson", (poll_started, poll_voted)),
    "phase": ("/phase", (None,)),
    "phase with its diagram": (phase_link, (phase_drawn,)),
    "compare": ("/compare", (None,)),
    "compare with two runs": (compare_runs, (both_sides,)),
    "lab with its grid": ("/lab", (lab_grid,)),
    "a page that does not exist": ("/no-such-page", (None,)),
}


@pytest.fixture(scope="module")
def trained_sweep(shipped_cache):
    """`SWEEP` trained into the server's job store, as its worker would have."""
    from app.pages.phase import build_spec
    from tempsup.jobs import JobQueue
    from tempsup.jobs.record import JobState
    from tempsup.jobs.worker import Worker

    queue = JobQueue(shipped_cache)
    key = queue.submit(build_spec(*SWEEP)).key
    for _ in range(5):  # the one job in line (anything queued before it is trained too)
        if queue.status(key).state == JobState.DONE:
            break
        Worker(shipped_cache).run(once=True)
    assert queue.status(key).state == JobState.DONE, queue.details(key)
    queue.close()


@pytest.fixture(scope="module")
def pages(pw_browser, trained_sweep):
    """One page per viewport for the module (a fresh context each: its own storage)."""
    opened = {name: new_page(pw_browser, size) for name, size in SIZES.items()}
    yield opened
    for page in opened.values():
        page.context.close()


def findings(page) -> list[str]:
    """axe-core's critical and serious violations and its structure findings on the open
    page, one line each (every rule on)."""
    from axe_playwright_python.sync_playwright import Axe

    out = []
    for v in Axe().run(page).response["violations"]:
        if v.get("impact") in ("critical", "serious") or v["id"].startswith(STRUCTURE_RULES):
            targets = [n["target"] for n in v["nodes"]][:4]
            out.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {targets}")
    return out


def structure(page) -> list[str]:
    """What is wrong with the page's outline: not exactly one main landmark, no h1 first,
    or a heading that skips a level."""
    problems = []
    mains = page.evaluate("() => document.querySelectorAll('main, [role=main]').length")
    if mains != 1:
        problems.append(f"{mains} main landmarks")
    headings = page.evaluate(HEADINGS)
    if not headings or headings[0][0] != 1:
        problems.append(f"the first heading is not an h1: {headings[:1]}")
    for (level, text), (next_level, next_text) in zip(headings, headings[1:], strict=False):
        if next_level > level + 1:
            problems.append(f"h{level} {text!r} is followed by h{next_level} {next_text!r}")
    return problems


def open_state(page, base: str, state: str) -> None:
    """Open `state`'s page in the light scheme and wait until Dash has drawn it."""
    path, _ = STATES[state]
    page.emulate_media(color_scheme="light")
    page.goto(base + (path() if callable(path) else path))
    wait_dash(page)


def bring(page, stage: Stage) -> None:
    """Bring `stage` on screen, in the light scheme, and wait until every plot is drawn."""
    page.emulate_media(color_scheme="light")
    if stage is not None:
        stage(page)
    page.wait_for_function(PLOTS_DRAWN, timeout=WAIT_MS)
    plots_in(page, "white")


def plots_in(page, background: str) -> None:
    """Wait until every plot on the page has `background` (they redraw on a scheme change)."""
    page.wait_for_function(
        f"() => ({PLOT_BACKGROUNDS})().every((c) => c === {background!r})", timeout=WAIT_MS
    )


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("state", STATES)
def test_every_page_is_clean_in_light_and_dark(shipped_app, pages, state, size):
    from tempsup.core.palette import DARK

    page = pages[size]
    open_state(page, shipped_app, state)
    problems = []
    for n, stage in enumerate(STATES[state][1]):
        bring(page, stage)
        where = f"stage {n + 1}, " if n else ""
        problems += [f"{where}light: {f}" for f in findings(page)]
        problems += [where + p for p in structure(page)]
        if size == "phone":
            width = page.evaluate("() => document.documentElement.scrollWidth")
            if width > PHONE["width"]:
                problems.append(f"{where}{width} px wide at {PHONE['width']} px: it scrolls")
        page.emulate_media(color_scheme="dark")
        plots_in(page, DARK["layout"]["paper_bgcolor"])
        problems += [f"{where}dark: {f}" for f in findings(page)]
    assert problems == [], f"{state} at {size}:\n" + "\n".join(problems)


def test_page_declares_its_language(shipped_app, pages):
    page = pages["desktop"]
    page.goto(shipped_app + "/")
    wait_dash(page)
    assert page.evaluate("() => document.documentElement.lang") == "en"


def test_a_menu_is_reached_and_opened_from_the_keyboard(shipped_app, pages):
    """Tab lands on the seed menu's button itself (not on a hidden input in front of it),
    Enter opens it, and after the menu closes the hidden input stays out of the Tab order."""
    page = pages["desktop"]
    open_state(page, shipped_app, "explorer with a run, then its seed menu open")
    bring(page, run_drawn)
    from app import ids
    from tests.browser import css

    page.focus(css(ids.player(ids.FRAME, ids.EXPLORER)) + " [role='slider']")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.id") == "seed-pick"
    page.keyboard.press("Enter")
    page.wait_for_selector("#seed-pick[aria-expanded='true']", timeout=5_000)
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # the button loses focus: Dash puts its input back, a11y.js not
    hidden = "() => [...document.querySelectorAll('.dash-dropdown-focus-target')]"
    assert page.evaluate(hidden + ".filter((e) => e.tabIndex !== -1).length") == 0
