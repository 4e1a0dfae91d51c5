"""The player and the graphs' toolbar on a phone, and the lesson by keyboard alone.

- The explorer's ◀ Play ▶, scrubber and frame label stay pinned at the top of a 390 px
  screen while the loss and eigenvalue panels scroll under them, and scrub by keyboard.
- Plotly's toolbar (always shown on a touch screen) covers no title of a graph at 390 px
  (the explorer, Compare, the phase diagram, the lesson; the gallery's pictures have no
  toolbar); at desktop width it is still there, shown on hover.
- The lesson with the keyboard only: pick a prediction, reveal (the verdict is announced
  by a status region), step the animation a frame, go on to the next step (whose
  heading then has the focus).

Browser state is measured (bounding boxes, what is focused, what a live region holds);
the app is the session's shipped-runs server (`shipped_app`), so every preset's run is
on screen at once.
"""

from __future__ import annotations

import pytest

from app.urlstate import compare_href, query_from_config
from tempsup.paper.presets import presets
from tests.pw import DESKTOP, PHONE, new_page, wait_dash, wait_settled

pytestmark = pytest.mark.browser

PRESETS = {p.name: p for p in presets(False)}  # the server serves the full presets
EXPLORER = "/" + query_from_config(PRESETS["spiral-sink"].configs[0])
DUO = PRESETS["ssm-dense-vs-sparse"].configs
COMPARE = compare_href(DUO[0], DUO[1])
PLAYER_ROW = ".card.player > .player-row:first-child"
PLAYER_PARTS = {
    "play": f"{PLAYER_ROW} button[id*='player-play']",
    "scrubber": f"{PLAYER_ROW} [role='slider']",
    "label": f"{PLAYER_ROW} .frame-label",
}
DRAWN = "() => document.querySelectorAll('.js-plotly-plot .main-svg').length > 0"
# every graph with a toolbar has its figure drawn (its title: no longer a placeholder)
TITLED = """() => {
  const graphs = [...document.querySelectorAll('.js-plotly-plot')].filter(
    (g) => g.querySelector('.modebar'));
  return graphs.length > 0 && graphs.every((g) => g.querySelector('.gtitle'));
}"""
# every shown toolbar of the page against every title and annotation of every graph
TOOLBAR_OVER_TITLES = """() => {
  const box = (e) => e.getBoundingClientRect();
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom &&
    b.top < a.bottom;
  const titles = [...document.querySelectorAll('.js-plotly-plot .gtitle, ' +
    '.js-plotly-plot .annotation-text')].filter((t) => box(t).width > 0);
  const bars = [...document.querySelectorAll('.js-plotly-plot .modebar')].filter(
    (m) => m.checkVisibility({opacityProperty: true, visibilityProperty: true}) &&
      [...m.querySelectorAll('.modebar-group')].some(
        (g) => g.checkVisibility({opacityProperty: true})));
  const hits = [];
  bars.forEach((m) => titles.forEach((t) => {
    if (meet(box(m), box(t))) hits.push(t.textContent.slice(0, 40));
  }));
  return {bars: bars.length, titles: titles.length, hits: hits};
}"""


def boxes(page, selectors: dict[str, str]) -> dict[str, dict]:
    return {name: page.locator(sel).first.bounding_box() for name, sel in selectors.items()}


def in_view(box: dict, height: int) -> bool:
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def on_top(page, selector: str) -> bool:
    """Whether the element is what the screen shows at its centre (nothing over it)."""
    return page.eval_on_selector(
        selector,
        """(e) => { const r = e.getBoundingClientRect();
          const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
          return !!top && (e === top || e.contains(top) || top.contains(e)); }""",
    )


def toolbar_clear(page, where: str, ready: str = TITLED) -> None:
    """The page's graphs show their toolbars (a touch screen has no hover: always), and
    none lies over a graph's title or annotation."""
    page.wait_for_function(ready)
    wait_settled(page, ".js-plotly-plot")  # measured once every graph is laid out
    found = page.evaluate(TOOLBAR_OVER_TITLES)
    assert found["titles"] and found["bars"], f"{where}: nothing measured: {found}"
    assert not found["hits"], f"{where}: the toolbar covers {found['hits']}"


def open_page(browser, url: str, size=PHONE, dark: bool = False):
    page = new_page(browser, size, dark=dark)
    page.goto(url)
    wait_dash(page)
    return page


def test_explorer_player_stays_in_view_and_scrubs_on_a_phone(pw_browser, shipped_app):
    page = open_page(pw_browser, shipped_app + EXPLORER)
    try:
        label = page.locator(PLAYER_PARTS["label"])
        page.wait_for_function(
            "(sel) => /^frame \\d+ of \\d+/.test(document.querySelector(sel).textContent)",
            arg=PLAYER_PARTS["label"],
        )
        page.wait_for_function(DRAWN)
        height = PHONE["height"]
        for panel in ("loss", "eigen"):
            graph = page.locator(f'[id*=\'"panel":"{panel}"\'] .js-plotly-plot')
            graph.scroll_into_view_if_needed()
            page.evaluate("(y) => window.scrollBy(0, y)", 200)  # well into the panel
            parts = boxes(page, PLAYER_PARTS)
            assert all(in_view(b, height) for b in parts.values()), (panel, parts)
            assert on_top(page, PLAYER_PARTS["play"]), f"the play button is covered at {panel}"
            row = page.locator(PLAYER_ROW).bounding_box()
            assert row["y"] + row["height"] <= 0.25 * height, f"the pinned player is {row}"
            shown = graph.bounding_box()
            assert shown["y"] < height and shown["y"] + shown["height"] > row["height"], panel
        toolbar_clear(page, "explorer")
        # the pinned scrubber works from the keyboard while the panels are in view: each
        # press steps one frame back (the next press once the page has taken the last in:
        # a press before it would step from the frame the page had not left yet)
        n = int(label.text_content().split()[1])
        scroll = page.evaluate("() => window.scrollY")
        page.focus(PLAYER_PARTS["scrubber"])
        for wanted in (n - 1, n - 2):
            page.keyboard.press("ArrowLeft")
            page.wait_for_function(
                "([sel, n]) => document.querySelector(sel).textContent.startsWith(`frame ${n} of`)",
                arg=[PLAYER_PARTS["label"], wanted],
            )
        assert abs(page.evaluate("() => window.scrollY") - scroll) < 5, "the page jumped"
        assert in_view(label.bounding_box(), height)
    finally:
        page.context.close()


def test_toolbar_covers_no_title_on_a_phone_and_stays_on_a_desktop(pw_browser, shipped_app):
    page = new_page(pw_browser, PHONE)
    try:
        # (the phase diagram waits for a sweep to be run, the lab's graphs for training:
        # their placeholders have toolbars all the same)
        for path, ready in ((COMPARE, TITLED), ("/phase", DRAWN)):
            page.goto(shipped_app + path)
            wait_dash(page)
            toolbar_clear(page, path, ready)
    finally:
        page.context.close()
    page = open_page(pw_browser, shipped_app + "/lab", size=DESKTOP)
    try:
        page.wait_for_function(DRAWN)
        graph = page.locator(".js-plotly-plot:has(.modebar)").first
        graph.hover()
        group = graph.locator(".modebar-group").first
        page.wait_for_function(
            "(g) => getComputedStyle(g).opacity === '1'", arg=group.element_handle()
        )
        assert group.is_visible(), "no toolbar on a desktop"
    finally:
        page.context.close()


def focused(page) -> dict:
    return page.evaluate(
        """() => { const e = document.activeElement;
          return {tag: e.tagName, id: e.id, text: (e.textContent || '').trim(),
                  frames: e.getAttribute('data-frames'), type: e.getAttribute('type'),
                  group: !!e.closest('#lesson-choice')}; }"""
    )


def tab_to(page, wanted, limit: int = 80) -> dict:
    """Press Tab until the focused element is `wanted` (a test of `focused`)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        now = focused(page)
        if wanted(now):
            return now
    raise AssertionError(f"Tab never reached it; last focused: {now}")


def test_lesson_by_keyboard_alone_on_a_phone(pw_browser, shipped_app):
    page = open_page(pw_browser, shipped_app + "/lesson?step=1")
    try:
        tab_to(page, lambda f: f["group"] and f["type"] == "radio")
        page.keyboard.press("ArrowDown")  # a native radio group: the arrow picks
        page.wait_for_function(
            "() => document.querySelectorAll('#lesson-choice input:checked').length === 1"
        )
        tab_to(page, lambda f: f["id"] == "lesson-reveal")
        page.keyboard.press("Enter")
        verdict = page.locator("#lesson-verdict")
        page.wait_for_function(
            "() => /Right|Not quite/.test(document.querySelector('#lesson-verdict').textContent)"
        )
        # the status region was there before the verdict (an announced live region) and
        # holds the verdict alone
        assert verdict.get_attribute("role") == "status"
        assert len(verdict.text_content()) < 200, verdict.text_content()
        assert focused(page)["id"] == "lesson-reveal", "Reveal lost the focus"
        page.wait_for_function(DRAWN)
        toolbar_clear(page, "lesson")
        # step the animation a frame back (it opens on the last) with its own buttons
        active = (
            "() => document.querySelector('#lesson-answer .js-plotly-plot').layout.sliders[0]"
            ".active"
        )
        label = page.locator("#lesson-answer .frame-buttons .frame-label").first
        last, shown = page.evaluate(active), label.text_content()
        assert label.get_attribute("aria-live") == "polite"
        tab_to(page, lambda f: f["frames"] == "prev")
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => ({active})() === {last - 1}")
        page.wait_for_function(
            "(want) => document.querySelector('#lesson-answer .frame-buttons .frame-label')"
            ".textContent.startsWith(want)",
            arg=f"frame {last} of {last + 1} ",
        )
        assert label.text_content() != shown
        page.keyboard.press("ArrowLeft")  # the arrows step too, from a frame button
        page.wait_for_function(f"() => ({active})() === {last - 2}")
        tab_to(page, lambda f: f["text"].startswith("Next step"))
        page.keyboard.press("Enter")
        page.wait_for_url("**/lesson?step=2*")
        # the focus goes to the new step's heading, and on from there to its question
        page.wait_for_function(
            "() => document.activeElement.matches('.lesson-step h2') && "
            "/Step 2 of/.test(document.activeElement.textContent)"
        )
        tab_to(page, lambda f: f["group"] and f["type"] == "radio", limit=3)
    finally:
        page.context.close()
