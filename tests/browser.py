"""Helpers for the browser tests: a real app server and headless Chromium.

The server is the README's own entry point (`python -m app`) in a subprocess,
with its own cache directory and its own training worker; the browser is the
system's Chromium driven through the system's chromedriver (nothing is
downloaded). Browser tests are marked `browser`.

A browser test waits on the state it asserts (a frame number shown, a trace drawn, an
element's text), polled until it holds, for `PATIENCE` seconds: never on a sleep, and
never on how fast keys, clicks or animation frames are taken in. One action, then a
wait for what it does, before the next action: two key presses read once are two
actions racing the page.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from tests.helpers import DEADLINE
from tests.net import free_port, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
# Seconds a browser test waits for the state it asserts before it fails: long enough for
# two test processes, their servers and their Chromiums on two busy cores, so that running
# out of it means a hang, not a slow machine. Tests wait on the state, never on a clock.
PATIENCE = DEADLINE
# Dash has drawn the page: the page's content is there and no callback is loading.
DASH_READY = (
    "() => !!document.querySelector('#page-content > *') && "
    "!document.querySelector('._dash-loading')"
)
# No callback of the page is under way: none of its components waits for an answer.
DASH_IDLE = f"() => ({DASH_READY})() && !document.querySelector('[data-dash-is-loading]')"
# Chromium's switches for tests (Selenium's and Playwright's): no sandbox (containers), no
# GPU, and none of the background connections a closed network refuses at every start.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def find_binary(*names: str) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


@contextlib.contextmanager
def app_server(cache: Path, workers: int = 1, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run `python -m app` on a free port; yield its base URL; stop it after."""
    port = free_port()
    # presets are pre-trained in the background only where a test asks for them
    base = {"TEMPSUP_CACHE": str(cache), "PYTHONUNBUFFERED": "1", "TEMPSUP_PRESETS": "off"}
    full_env = {**os.environ, **base, **(env or {})}
    log = open(cache.parent / f"server-{port}.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "--port", str(port), "--workers", str(workers)],
        cwd=ROOT,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        log_path = cache.parent / f"server-{port}.log"
        try:
            wait_healthy(url, proc, PATIENCE)
        except RuntimeError:
            log.flush()
            raise RuntimeError("app server did not start:\n" + log_path.read_text()) from None
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):  # (a server that failed to start)
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        log.close()


def make_driver(download_dir: Path, logging: bool = False):
    """Headless Chromium with downloads into `download_dir` (and, with `logging`, the
    page's console kept for `driver.get_log("browser")`)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = find_binary("chromium", "chromium-browser", "google-chrome")
    driver_path = find_binary("chromedriver")
    if not chromium or not driver_path:
        raise RuntimeError("chromium and chromedriver are needed: run scripts/setup --browser")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in (*CHROMIUM_ARGS, "--headless=new", "--window-size=1600,1400"):
        opts.add_argument(arg)
    if logging:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    opts.add_experimental_option(
        "prefs",
        {"download.default_directory": str(download_dir), "download.prompt_for_download": False},
    )
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)


@contextlib.contextmanager
def job_queue(cache: Path) -> Iterator:
    """The job queue of a server's job store, read directly (what the worker wrote)."""
    from tempsup.jobs import JobQueue

    queue = JobQueue(cache)
    try:
        yield queue
    finally:
        queue.close()


@contextlib.contextmanager
def gated_app_server(cache: Path) -> Iterator[tuple[str, object]]:
    """A server without a worker of its own, and one worker (started here with
    `tests.gate` imported) that holds jobs at their gate; yields the URL and the queue.
    The `gate` fixture must come first: the worker reads the gate's place at its start."""
    from tempsup.jobs.worker import WorkerPool
    from tests.gate import GATED

    with (
        app_server(cache, workers=0) as url,
        job_queue(cache) as queue,
        WorkerPool(queue, n=1, threads=1, imports=GATED),
    ):
        yield url, queue


@contextlib.contextmanager
def driver_session(download_dir: Path, logging: bool = False) -> Iterator:
    """`make_driver` for the block, quit after; its downloads land in `driver.download_dir`."""
    driver = make_driver(download_dir, logging)
    driver.download_dir = download_dir
    try:
        yield driver
    finally:
        driver.quit()


def comparable(panel: str, trace: dict) -> dict:
    """A moving trace without what depends on the axes, which grow while a job streams:
    the loss panel's cursor spans the whole log axis, and its label sits at the axis top.
    The rest (steps, values, texts, the label's side) must be the same whether a frame
    was streamed or built at the end."""
    if panel == "loss" and trace.get("name") != "current loss":
        return {k: v for k, v in trace.items() if k != "y"}
    return trace


def merged_frames(view: dict) -> dict[str, list]:
    """A view store's frames with each moving trace whole: a streaming view's lean frames
    merged over its `template` (the stream's first frame), as assets/tempsup.js draws them."""
    from app.view import unpacked

    template = view.get("template") or {}
    return {
        p: [[{**(template.get(p) or [{}] * len(f))[j], **t} for j, t in enumerate(f)]
            for f in map(unpacked, frames)]
        for p, frames in view["frames"].items()
    }  # fmt: skip


def css(id_: str | dict) -> str:
    """The CSS selector of a component id (a pattern-matching id is the JSON text Dash
    writes into the page, `app.ids.text`)."""
    from app import ids

    return f"[id='{ids.text(id_)}']" if isinstance(id_, dict) else f"#{id_}"


def set_viewport(driver, width: int, height: int) -> None:
    """The page's viewport exactly `width` × `height` CSS pixels. Through DevTools, not the
    window's size: a resized window reports its new inner size a moment later, and reading
    it too soon measured the old one."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    wait_for(
        lambda: driver.execute_script("return [innerWidth, innerHeight]") == [width, height],
        what=f"a {width} × {height} viewport",
    )


def wait_for(predicate, timeout: float = PATIENCE, what: str = "condition"):
    """`predicate()` once it is truthy (retried while the DOM is mid-update), or fail
    naming `what` and the last value seen."""
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
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def settled(read, timeout: float = PATIENCE, what: str = "a settled layout"):
    """`read()` once it is truthy and two reads in a row are the same: what is measured
    from a page that may still be laying itself out (a font, a graph's second draw)."""
    last = []

    def same_again():
        now = read()
        again = bool(now) and last == [now]
        last[:] = [now]
        return now if again else None

    return wait_for(same_again, timeout, what)


def open_page(driver, url: str) -> None:
    """Open `url` and wait until Dash has drawn the page and answered its first callbacks
    (`DASH_IDLE`): what a test does before then may land on a control that a first
    callback then draws again, and be lost."""
    driver.get(url)
    wait_for(
        lambda: driver.execute_script(f"return ({DASH_IDLE})()"),
        what=f"{url} drawn, no callback under way",
    )


def find(driver, selector: str, timeout: float = PATIENCE):
    """The element once the page has rendered it (pages render after a callback)."""
    return wait_for(lambda: driver.find_element("css selector", selector), timeout, selector)


def text_of(driver, selector: str) -> str:
    """The element's text as shown, once it is rendered."""
    return find(driver, selector).text


def click(driver, selector: str, timeout: float = PATIENCE) -> None:
    """Click the element once it is there, finding it again if a callback redrew it
    between the finding and the click (a failed click is not performed: safe to retry)."""

    def attempt() -> bool:
        driver.find_element("css selector", selector).click()
        return True

    wait_for(attempt, timeout, f"click on {selector}")


def n_traces(driver, selector: str) -> int:
    """How many traces the graph at `selector` (a dcc.Graph, or its plot) draws now."""
    return driver.execute_script(
        "const g = document.querySelector(arguments[0] + ' .js-plotly-plot')"
        " || document.querySelector(arguments[0]);"
        "return g && g.data ? g.data.length : 0;",
        selector,
    )


def url_query(driver) -> dict[str, list[str]]:
    """The page's URL query, parsed (what a shared link of the page would carry)."""
    return parse_qs(urlparse(driver.current_url).query)


def config_of(query_text: str):
    """The RunConfig a link's query describes (what the page must train)."""
    from app.urlstate import config_from_query

    config, errors = config_from_query(query_text)
    assert errors == [], errors
    return config


def compare_scrubber(driver) -> int:
    """Where the Compare page's scrubber stands (in % of training)."""
    from app import ids

    selector = css(ids.player(ids.FRAME, ids.COMPARE)) + " [role='slider']"
    return int(find(driver, selector).get_attribute("aria-valuenow"))


# ---- the explorer's player, as the page shows it -----------------------------------------


@functools.cache
def explorer_selectors() -> dict[str, str]:
    """The CSS selectors of the explorer's job widget and player (app/ids.py; imported
    when first asked for: importing the app takes seconds)."""
    from app import ids

    ex = ids.EXPLORER
    jobs = {"train": ids.RUN, "cancel": ids.CANCEL, "bar": ids.BAR, "status": ids.TEXT}
    player = {"play": ids.PLAY, "prev": ids.PREV, "next": ids.NEXT, "frame": ids.FRAME,
              "label": ids.FRAME_LABEL}  # fmt: skip
    return {**{k: css(ids.job(p, ex)) for k, p in jobs.items()},
            **{k: css(ids.player(p, ex)) for k, p in player.items()}}  # fmt: skip


def frame_label(driver) -> str:
    """The explorer's line under its player ("frame 3 of 21 (step 20) · seed 1: …")."""
    return text_of(driver, explorer_selectors()["label"])


def frame_count(driver) -> tuple[int, int]:
    """(current frame, number of frames) from the explorer player's label; (0, 0) before
    a run is shown."""
    found = re.search(r"frame (\d+) of (\d+)", frame_label(driver))
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def shown_seed(driver) -> int:
    """The seed the explorer draws, from its player's label."""
    return int(frame_label(driver).split("· seed ")[1].split(":")[0])


def explorer_status(driver) -> str:
    """The explorer's job line ("Done …", "press Train …")."""
    return text_of(driver, explorer_selectors()["status"])
