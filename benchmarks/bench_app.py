"""The app's responsiveness targets, measured in a real browser.

    python benchmarks/bench_app.py [--repeats 3]

Starts `python -m app` (one training worker, a fresh cache) and headless
Chromium, then measures, as a user would feel them:

1. click → first frame: press Train on an untrained config until the first
   frame is drawn (target ≤ 1 s for the default config);
2. cached shared link → full animation: open the link of a finished run until
   every frame is in the player (target ≤ 0.5 s), measured from navigation
   start and, separately, from the moment the page's scripts were ready;
3. export size: a 100-frame run exported as HTML, minus plotly.js (≤ 1 MB).

The baseline for 2 is the same page with nothing to show (an empty cache):
the ratio says how much the run itself adds to loading the app.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser import app_server, make_driver  # noqa: E402

LABEL_JS = "const e = document.getElementById('player-label'); return e ? e.innerText : '';"


def wait_label(driver, needle: str, timeout: float = 120.0) -> float:
    """Poll the player label every 10 ms; return performance.now() when it matches."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if needle in driver.execute_script(LABEL_JS):
            return driver.execute_script("return performance.now();")
        time.sleep(0.01)
    raise TimeoutError(f"label never showed {needle!r}")


def wait_ready(driver, css: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.find_elements("css selector", css):
            return
        time.sleep(0.01)
    raise TimeoutError(css)


def click_to_first_frame(driver, base: str, seed: int) -> float:
    """Seconds from pressing Train (untrained default config) to the first frame drawn."""
    driver.get(f"{base}/?model=ssm&k=3&sparsity=0.9&hidden=2&inputs=1&seed={seed + 1}")
    wait_ready(driver, "#job-status")
    deadline = time.monotonic() + 180  # that link trains by itself: let the worker go idle
    while "Done" not in driver.find_element("id", "job-status").text:
        if time.monotonic() > deadline:
            raise TimeoutError("link run")
        time.sleep(0.05)
    # change the base seed in the advanced box: a new, untrained default-sized config
    box = driver.find_element("css selector", "#ctl-seed")
    driver.execute_script("arguments[0].closest('details').open = true;", box)
    box.clear()
    box.send_keys(str(1000 + seed) + "\n")
    deadline = time.monotonic() + 20
    while "press Train" not in driver.find_element("id", "job-status").text:
        if time.monotonic() > deadline:
            raise TimeoutError("hint")
        time.sleep(0.02)
    t0 = driver.execute_script(
        "document.getElementById('btn-train').click(); return performance.now();"
    )
    t1 = wait_label(driver, "frame ")  # the first frame (step 0) is on screen
    return (t1 - t0) / 1000


def cached_link(driver, url: str, total: int) -> tuple[float, float]:
    """(from navigation start, from scripts ready) seconds until all frames are shown."""
    driver.get("about:blank")
    driver.get(url)
    t_done = wait_label(driver, f"frame {total}/{total}")
    t_ready = driver.execute_script(
        "return performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd;"
    )
    return t_done / 1000, (t_done - t_ready) / 1000


def empty_page(driver, url: str) -> float:
    driver.get("about:blank")
    driver.get(url)
    wait_ready(driver, "#graph-directions .js-plotly-plot")
    return driver.execute_script("return performance.now();") / 1000


def export_size() -> tuple[int, int]:
    import plotly.offline

    from tempsup.config import RunConfig
    from tempsup.figures import export_html
    from tempsup.sweep import train_runs

    config = RunConfig(steps=2000, snapshot_every=20, batch=64)  # 101 frames, 8 seeds
    (run,) = train_runs([config])
    html = export_html(run)
    return len(html.encode()), len(plotly.offline.get_plotlyjs().encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "jobs"
        with app_server(cache) as base:
            driver = make_driver(Path(tmp))
            try:
                clicks = [click_to_first_frame(driver, base, i) for i in range(args.repeats)]
                # the default example (queued at start-up) is the cached shared link
                link = f"{base}/?model=ssm&k=3&sparsity=0.9&hidden=2&inputs=1"
                driver.get(link)
                wait_label(driver, "frame 101/101")
                cached = [cached_link(driver, link, 101) for _ in range(args.repeats)]
                empty = [
                    empty_page(driver, f"{base}/?seed=999&steps=5") for _ in range(args.repeats)
                ]
            finally:
                driver.quit()
    size, plotly_js = export_size()
    nav = statistics.median(c[0] for c in cached)
    after = statistics.median(c[1] for c in cached)
    base_load = statistics.median(empty)
    click = statistics.median(clicks)
    print(f"click -> first frame:            {click:6.3f} s  (target 1.0 s: {click / 1.0:.2f}x)")
    print(f"cached link -> all 101 frames:   {nav:6.3f} s from navigation start")
    print(f"   of which after page scripts:  {after:6.3f} s  (target 0.5 s: {after / 0.5:.2f}x)")
    print(f"   empty page (baseline):        {base_load:6.3f} s  (ratio {nav / base_load:.2f}x)")
    extra = (size - plotly_js) / 1e6
    print(
        f"export of 101 frames:            {size / 1e6:6.2f} MB = plotly.js + {extra:.3f} MB "
        f"(target + 1 MB)"
    )


if __name__ == "__main__":
    main()
