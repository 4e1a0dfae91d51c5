"""Playwright helpers for the phone, accessibility and class-poll browser tests.

Playwright drives the system's Chromium (the one `scripts/setup --browser`
installs; `playwright install` is never run, nothing is downloaded). It is used
where Selenium is clumsy: many cheap browser contexts in one browser (thirty
students and a teacher), the network throttled like a mid-range phone, the
colour scheme emulated and switched, and axe-core 4.x injected by
axe-playwright-python.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.browser import CHROMIUM_ARGS, find_binary

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 720}
# Chromium's network emulation for a mid-range phone (the profile):
# about 1.6 Mbps down, 750 kbps up, 150 ms round trip. Rates are bytes per second.
MID_PHONE = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1.6e6 / 8,
    "uploadThroughput": 750e3 / 8,
}
# Dash has drawn the page: the page's content is there and no callback is loading.
DASH_READY = (
    "() => !!document.querySelector('#page-content > *') && "
    "!document.querySelector('._dash-loading')"
)


@contextmanager
def chromium() -> Iterator[Any]:
    """The system's Chromium under Playwright, closed after."""
    from playwright.sync_api import sync_playwright

    path = find_binary("chromium", "chromium-browser", "google-chrome")
    if not path:
        raise RuntimeError("chromium is needed: run scripts/setup --browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, size: dict[str, int] = PHONE, dark: bool = False, **context: Any):
    """A page in a fresh context (its own storage: a separate 'browser' for the app) of
    `size`, in the dark or light colour scheme. Close it with `page.context.close()`."""
    ctx = browser.new_context(
        viewport=size,
        color_scheme="dark" if dark else "light",
        is_mobile=size["width"] < 600,
        has_touch=size["width"] < 600,
        **context,
    )
    return ctx.new_page()


def throttle(page, profile: dict[str, Any] = MID_PHONE) -> None:
    """Throttle `page`'s network to `profile` (Chromium's DevTools network emulation)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", profile)


def wait_dash(page, timeout_ms: float = 60_000) -> None:
    """Wait until Dash has drawn the page's content and finished its callbacks."""
    page.wait_for_function(DASH_READY, timeout=timeout_ms)


def serious_violations(page, size_note: str = "") -> list[str]:
    """axe-core 4.x's critical and serious violations on the open page, one line each,
    with every rule on."""
    from axe_playwright_python.sync_playwright import Axe

    result = Axe().run(page)
    out = []
    for v in result.response["violations"]:
        if v.get("impact") in ("critical", "serious"):
            targets = [n["target"] for n in v["nodes"]][:5]
            out.append(f"{size_note}{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {targets}")
    return out
