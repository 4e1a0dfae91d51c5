"""Take the documentation's screenshots from the real app (`scripts/docs_screenshots`).

Starts `python -m app` on a free port with a job store of its own (a temporary
directory; the shipped preset runs are copied into it at start, so the gallery, the
lesson and the lab are ready at once), drives the system's Chromium with Playwright
(the browser tests' own helpers, `tests/browser.py` and `tests/pw.py`: nothing is
downloaded), and writes PNGs into docs/img/:

    explorer.png        the explorer at 1280 × 900 after Train, its run streamed in
    explorer-loss.png   its loss panel at the last frame: the loss and its four terms
    explorer-phone.png  the same page at 390 px, scrolled to the first panel
    lesson.png          the lesson's first step, a choice picked and revealed
    gallery.png         the gallery's cards
    phase.png           the phase diagram of a sparsity sweep
    lab.png             the correlations lab's first picture (the shipped grid)

The server is stopped when the script ends, whatever happens.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
WAIT_MS = 180_000
# a sparsity sweep of the SSM: the default run's recipe at seven sparsities (one batch)
SWEEP = "/phase?model=ssm&sparsities=0.1,0.3,0.5,0.7,0.8,0.9,0.95&k=3&seeds=8&steps=2000&hidden=2"


def _settle(page, ms: int = 1500) -> None:
    """Let Plotly finish its transitions and the page its last redraws."""
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(ms)


def _shot(page, name: str, full_page: bool = False) -> Path:
    path = OUT / name
    page.screenshot(path=str(path), full_page=full_page)
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size / 1024:.0f} kB")
    return path


def explorer(browser, url: str, css, ids) -> None:
    """Train the default configuration from the explorer and wait for its last frame."""
    from tests.pw import new_page, wait_dash

    page = new_page(browser, DESKTOP)
    try:
        page.goto(url + "/", wait_until="domcontentloaded")
        wait_dash(page, WAIT_MS)
        train = page.locator(css(ids.job(ids.RUN, ids.EXPLORER)))
        train.wait_for(timeout=WAIT_MS)
        train.click()
        status = page.locator(css(ids.job(ids.TEXT, ids.EXPLORER)))
        label = page.locator(css(ids.player(ids.FRAME_LABEL, ids.EXPLORER)))
        deadline = time.monotonic() + WAIT_MS / 1000
        while time.monotonic() < deadline:  # trained, and the player on its last frame
            text = label.inner_text() if label.count() else ""
            words = text.split()
            done = "Done" in (status.inner_text() if status.count() else "")
            if done and len(words) >= 4 and words[0] == "frame" and words[1] == words[3]:
                break
            page.wait_for_timeout(500)
        else:
            raise RuntimeError(f"the explorer's run did not finish: {label.inner_text()!r}")
        page.wait_for_selector(".js-plotly-plot", timeout=WAIT_MS)
        _settle(page)
        _shot(page, "explorer.png")
        loss = OUT / "explorer-loss.png"
        page.locator(css(ids.graph(ids.EXPLORER, "loss"))).screenshot(path=str(loss))
        print(f"{loss.relative_to(ROOT)}: {loss.stat().st_size / 1024:.0f} kB")
        link = page.url
    finally:
        page.context.close()

    phone = new_page(browser, PHONE)
    try:
        phone.goto(link, wait_until="domcontentloaded")
        wait_dash(phone, WAIT_MS)
        phone.wait_for_selector(".js-plotly-plot", timeout=WAIT_MS)
        _settle(phone, 2500)
        # to the first panel: the player's row stays pinned above it
        phone.locator(css(ids.graph(ids.EXPLORER, "directions"))).scroll_into_view_if_needed()
        _settle(phone, 1500)
        _shot(phone, "explorer-phone.png")
    finally:
        phone.context.close()


def lesson(browser, url: str) -> None:
    from tests.pw import new_page, wait_dash

    page = new_page(browser, DESKTOP)
    try:
        page.goto(url + "/lesson", wait_until="domcontentloaded")
        wait_dash(page, WAIT_MS)
        page.locator("#lesson-choice input").first.check()
        page.click("#lesson-reveal")
        page.wait_for_selector("#lesson-answer .lesson-runs .js-plotly-plot", timeout=WAIT_MS)
        _settle(page)
        _shot(page, "lesson.png")
    finally:
        page.context.close()


def simple(browser, url: str, path: str, name: str, selector: str = ".js-plotly-plot") -> None:
    """A page that draws what it has at once (the gallery's cards, the lab's grid)."""
    from tests.pw import new_page, wait_dash

    page = new_page(browser, DESKTOP)
    try:
        page.goto(url + path, wait_until="domcontentloaded")
        wait_dash(page, WAIT_MS)
        page.wait_for_selector(selector, timeout=WAIT_MS)
        _settle(page, 2500)
        _shot(page, name)
    finally:
        page.context.close()


def phase(browser, url: str, css, ids) -> None:
    """A link to a sweep nobody ran starts it; wait until it is done and drawn."""
    from tests.pw import new_page, wait_dash

    page = new_page(browser, DESKTOP)
    try:
        page.goto(url + SWEEP, wait_until="domcontentloaded")
        wait_dash(page, WAIT_MS)
        status = page.locator(css(ids.job(ids.TEXT, ids.PHASE)))
        deadline = time.monotonic() + WAIT_MS / 1000
        while "Done" not in (status.inner_text() if status.count() else ""):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the sweep did not finish: {status.inner_text()!r}")
            page.wait_for_timeout(500)
        _settle(page, 2500)
        _shot(page, "phase.png")
    finally:
        page.context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        nargs="*",
        choices=("explorer", "lesson", "gallery", "phase", "lab"),
        help="take only these screenshots (default: all)",
    )
    args = parser.parse_args(argv)
    wanted = set(args.only or ("explorer", "lesson", "gallery", "phase", "lab"))

    sys.path.insert(0, str(ROOT))  # the browser tests' helpers and the app
    from app import ids
    from tests.browser import app_server, css
    from tests.pw import chromium

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tempsup-screenshots-") as tmp:
        cache = Path(tmp) / "jobs"
        with app_server(cache, env={"TEMPSUP_PRESETS": "full"}) as url, chromium() as browser:
            if "explorer" in wanted:
                explorer(browser, url, css, ids)
            if "lesson" in wanted:
                lesson(browser, url)
            if "gallery" in wanted:
                simple(browser, url, "/gallery", "gallery.png", ".card img, .card svg, .card")
            if "phase" in wanted:
                phase(browser, url, css, ids)
            if "lab" in wanted:
                simple(browser, url, "/lab", "lab.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
