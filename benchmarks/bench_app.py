"""The app's responsiveness targets, measured in a real browser.

    python benchmarks/bench_app.py [--repeats 3] [--pages 10]

Starts two `python -m app` servers, each with a fresh cache and no presets:
the main one with one training worker (it trains the default example at
start-up), and a baseline one with no worker (its pages never get a run).
Then headless Chromium measures, as a user would feel them:

1. click → first frame: on the explorer showing the default example, a new
   base seed in the advanced box (an untrained default-sized config), then
   Train, until the first frame is drawn (target ≤ 0.5 s), and until the job says
   Done (target ≤ 3 s);
2. cached shared link → all frames: open the default example's link (a
   finished run of 101 frames, served inside the page) until the player
   shows "frame 101 of 101" and all four panels have drawn that frame (Plotly's
   `plotly_afterplot`, so an earlier frame drawn first does not count),
   against the same link on the baseline server (the same page without a
   run) until its four empty panels are drawn; both from navigation start,
   interleaved pair by pair (`--pages` pairs), each page after three
   unmeasured loads, so that both run from Chromium's caches alike, compiled
   scripts included (target: ratio ≤ 1.2);
3. export size: a 100-frame run exported as HTML, minus plotly.js (≤ 1 MB).

Times come from the page itself: a script installed before each document
(a MutationObserver) notes `performance.now()` whenever the player's label
or the panels' drawing changes, so WebDriver's polling adds nothing to them.
Ids are the app's own (`app/ids.py`: the explorer's job widget and player
have pattern-matching ids), as the browser tests find them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from selenium.webdriver.common.keys import Keys  # noqa: E402

from app import ids  # noqa: E402
from tempsup.model.config import DEFAULTS, query_string  # noqa: E402
from tests.browser import app_server, css, make_driver  # noqa: E402

EX = ids.EXPLORER
TRAIN, STATUS = css(ids.job(ids.RUN, EX)), css(ids.job(ids.TEXT, EX))
LABEL = css(ids.player(ids.FRAME_LABEL, EX))
PANELS = ("directions", "loss", "projections", "eigen")
GRAPHS = [css(ids.graph(EX, p)) for p in PANELS]
SEED_BOX = css(ids.SEED)

CLICK_TARGET = 0.5  # s, click → first frame
DONE_TARGET = 3.0  # s, click → the default run done (issue 44)
RATIO_TARGET = 1.2  # cached link with all frames / the same page without a run
WARM_LOADS = 3  # unmeasured loads of each page first (Chromium keeps compiled code from the 3rd)

# Noted before every document: (time, label, panels drawn, panels with traces) at each change,
# and, per panel, each time Plotly finished drawing it (plotly_afterplot) with what it drew.
WATCH_JS = """
(() => {
  const LABEL = LABEL_CSS, GRAPHS = GRAPHS_CSS;
  const log = [], plots = [];
  window.__bench = log;
  window.__plots = plots;
  let last = null;
  const look = () => {
    const el = document.querySelector(LABEL);
    const label = el ? el.textContent : "";
    let drawn = 0, traces = 0;
    GRAPHS.forEach((g, panel) => {
      const gd = document.querySelector(g + " .js-plotly-plot");
      if (gd && !gd.__benchWatched && typeof gd.on === "function") {
        gd.__benchWatched = true;
        const note = () => plots.push({t: performance.now(), panel: panel,
                                       data: JSON.stringify(gd.data || [])});
        gd.on("plotly_afterplot", note);
        if (gd._fullLayout) note();  // drawn before it could be watched
      }
      if (gd && gd._fullLayout) {
        drawn += 1;
        if (gd.data && gd.data.length) traces += 1;
      }
    });
    const sig = label + "|" + drawn + "|" + traces;
    if (sig !== last) {
      last = sig;
      log.push({t: performance.now(), label: label, drawn: drawn, traces: traces});
    }
  };
  new MutationObserver(look).observe(document, {childList: true, subtree: true,
                                                characterData: true});
})();
""".replace("LABEL_CSS", json.dumps(LABEL)).replace("GRAPHS_CSS", json.dumps(GRAPHS))


def watch(driver) -> None:
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_JS})


def wait_log(driver, match, after: float = -1.0, timeout: float = 120.0) -> float:
    """performance.now() (ms) of the first noted change after `after` for which `match`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in driver.execute_script("return window.__bench || [];"):
            if entry["t"] > after and match(entry):
                return entry["t"]
        time.sleep(0.05)
    seen = driver.execute_script("return window.__bench;")
    raise TimeoutError(f"no change matched (noted: {seen})")


def wait_text(driver, selector: str, needle: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = driver.find_elements("css selector", selector)
        try:
            if found and needle in found[0].text:
                return
        except Exception:  # noqa: BLE001 - re-rendered between find and read
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{selector} never said {needle!r}")


def click_to_first_frame(driver, link: str, seed: int) -> tuple[float, float]:
    """Seconds from pressing Train (an untrained default-sized config) to its first frame,
    and to the job's "Done" (read by polling every 50 ms: up to that much late)."""
    driver.get(link)  # the default example, trained: the worker is idle
    wait_text(driver, STATUS, "Done")
    # a new base seed in the advanced box: a new, untrained default-sized config
    box = driver.find_element("css selector", SEED_BOX)
    driver.execute_script("arguments[0].closest('details').open = true;", box)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(str(seed), Keys.ENTER)
    wait_text(driver, STATUS, "press Train", 20)
    t0 = driver.execute_script(
        "document.querySelector(arguments[0]).click(); return performance.now();", TRAIN
    )
    t1 = wait_log(driver, lambda e: "frame " in e["label"], after=t0)  # frame 1 on screen
    wait_text(driver, STATUS, "Done")  # the worker idle again before the next repeat
    t2 = driver.execute_script("return performance.now();")
    return (t1 - t0) / 1000, (t2 - t0) / 1000


def final_draws(driver, quiet: float = 1.0, timeout: float = 30.0) -> float:
    """performance.now() (ms) by which every panel had drawn what it finally shows: wait
    until no panel has drawn for `quiet` s, then, per panel, the first draw of its last
    picture (a panel drawn twice, first another frame, counts from its second draw)."""
    deadline = time.monotonic() + timeout
    count = -1
    while time.monotonic() < deadline:
        plots = driver.execute_script("return window.__plots || [];")
        if len(plots) == count:
            break
        count = len(plots)
        time.sleep(quiet)
    last: dict[int, tuple[float, str]] = {}
    for p in plots:
        if p["panel"] not in last or last[p["panel"]][1] != p["data"]:
            last[p["panel"]] = (p["t"], p["data"])
    if len(last) < len(PANELS):
        raise TimeoutError(f"only panels {sorted(last)} were drawn")
    return max(t for t, _ in last.values())


def cached_link(driver, url: str, total: int) -> float:
    """Seconds from navigation start until the player says frame `total`/`total` and every
    panel has drawn that frame (not an earlier one it showed first)."""
    driver.get("about:blank")
    driver.get(url)
    done = f"frame {total} of {total}"
    label = wait_log(driver, lambda e: done in e["label"] and e["traces"] == len(PANELS))
    return max(label, final_draws(driver)) / 1000


def empty_page(driver, url: str) -> tuple[float, float]:
    """Seconds from navigation start until the page without a run has drawn its four
    (empty) panels, and until its status has settled too (the player's label says why
    there is nothing to show, after the config's round trips to the server)."""
    driver.get("about:blank")
    driver.get(url)
    drawn = wait_log(driver, lambda e: e["drawn"] == len(PANELS))
    settled = wait_log(
        driver, lambda e: e["drawn"] == len(PANELS) and e["label"] and "loading" not in e["label"]
    )
    return drawn / 1000, settled / 1000


def export_size() -> tuple[int, int]:
    import plotly.offline

    from tempsup.analysis.sweeps import train_runs
    from tempsup.figures import export_html
    from tempsup.model.config import RunConfig

    config = RunConfig(steps=2000, snapshot_every=20, batch=64)  # 101 frames, 8 seeds
    (run,) = train_runs([config])
    html = export_html(run)
    return len(html.encode()), len(plotly.offline.get_plotlyjs().encode())


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (os.getloadavg: Linux and macOS alike)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="clicks on Train")
    parser.add_argument("--pages", type=int, default=10, help="cached / empty page pairs")
    args = parser.parse_args()
    link_path = "/" + query_string(DEFAULTS)  # the default example's shared link
    total = DEFAULTS.n_snapshots
    with tempfile.TemporaryDirectory() as tmp:
        main_cache, empty_cache = Path(tmp) / "main" / "jobs", Path(tmp) / "empty" / "jobs"
        main_cache.parent.mkdir()
        empty_cache.parent.mkdir()
        with app_server(main_cache) as base, app_server(empty_cache, workers=0) as bare:
            driver = make_driver(Path(tmp))
            try:
                watch(driver)
                load_before = load_average()
                clicks = [
                    click_to_first_frame(driver, base + link_path, 1000 + i)
                    for i in range(args.repeats)
                ]
                load_clicks = load_average()
                for _ in range(WARM_LOADS):  # unmeasured: the scripts cached and compiled
                    cached_link(driver, base + link_path, total)
                    empty_page(driver, bare + link_path)
                cached, empty = [], []
                for _ in range(args.pages):
                    cached.append(cached_link(driver, base + link_path, total))
                    empty.append(empty_page(driver, bare + link_path))
                load_pages = load_average()
            finally:
                driver.quit()
    size, plotly_js = export_size()
    click = statistics.median(c for c, _ in clicks)
    done = statistics.median(d for _, d in clicks)
    nav = statistics.median(cached)
    drawn = statistics.median(e[0] for e in empty)
    settled = statistics.median(e[1] for e in empty)
    ms = ", ".join
    print(f"load average (1/5/15 min): before {load_before}, after the clicks {load_clicks}, "
          f"after the pages {load_pages}")  # fmt: skip
    print(f"click -> first frame:             {click:6.3f} s median of "
          f"{ms(f'{c:.3f}' for c, _ in clicks)}  (target {CLICK_TARGET} s: "
          f"{click / CLICK_TARGET:.2f}x)")  # fmt: skip
    print(f"click -> the run done:            {done:6.3f} s median of "
          f"{ms(f'{d:.3f}' for _, d in clicks)}  (target {DONE_TARGET} s: "
          f"{done / DONE_TARGET:.2f}x)")  # fmt: skip
    print(f"cached link -> all {total} frames:    {nav:6.3f} s median of "
          f"{ms(f'{c:.3f}' for c in cached)}, from navigation start")  # fmt: skip
    print(f"same page without a run (drawn):  {drawn:6.3f} s median of "
          f"{ms(f'{e[0]:.3f}' for e in empty)}")  # fmt: skip
    pairs = [c / e[0] for c, e in zip(cached, empty, strict=True)]  # measured side by side
    print(f"   ratio cached / without a run:  {nav / drawn:6.2f}x  (target <= {RATIO_TARGET}x); "
          f"per repeat {ms(f'{r:.2f}' for r in pairs)}, median "
          f"{statistics.median(pairs):.2f}x")  # fmt: skip
    print(f"   (without a run, settled:       {settled:6.3f} s; ratio {nav / settled:.2f}x)")
    extra = (size - plotly_js) / 1e6
    print(
        f"export of {total} frames:             {size / 1e6:6.2f} MB = plotly.js + "
        f"{extra:.3f} MB (target + 1 MB)"
    )


if __name__ == "__main__":
    main()
