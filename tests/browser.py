"""Helpers for the browser tests: a real app server and headless Chromium.

The server is the README's own entry point (`python -m app`) in a subprocess,
with its own cache directory and its own training worker; the browser is the
system's Chromium driven through the system's chromedriver (nothing is
downloaded). Browser tests are marked `browser`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.net import free_port, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
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


@contextmanager
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
            wait_healthy(url, proc, 60)
        except RuntimeError:
            log.flush()
            raise RuntimeError("app server did not start:\n" + log_path.read_text()) from None
        yield url
    finally:
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
        10,
        f"a {width} × {height} viewport",
    )


def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
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
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def find(driver, selector: str, timeout: float = 30.0):
    """The element once the page has rendered it (pages render after a callback)."""
    return wait_for(lambda: driver.find_element("css selector", selector), timeout, selector)


def click(driver, selector: str, timeout: float = 30.0) -> None:
    """Click the element once it is there, finding it again if a callback redrew it
    between the finding and the click (a failed click is not performed: safe to retry)."""

    def attempt() -> bool:
        driver.find_element("css selector", selector).click()
        return True

    wait_for(attempt, timeout, f"click on {selector}")
