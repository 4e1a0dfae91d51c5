"""A first visit on a phone network: time to the first drawn panel, and bytes.

    python benchmarks/first_load.py [--tries 3] [--url URL] [--baseline-url URL]
                                    [--shots DIR]

Starts `python -m app` with a fresh cache, the shipped full presets' runs and no
training worker (the test suite's `shipped_app`), unless `--url` names a running
server. Then opens the start page and a shared link with its run (the first preset's)
`--tries` times each, every time in a fresh Chromium context (an empty cache) at
390×844 with the network throttled to a mid-range phone (`tests.pw.MID_PHONE`: about
1.6 Mbps down, 150 ms round trip), and prints each try, the best and the median: time
from navigation start to the first drawn panel (`tests.firstload` defines it) and the
bytes received before it and in all. The issue's budget is 3 s.

With `--baseline-url` (another server, e.g. an older checkout's), the same is measured
there too and the ratios printed (before / after). `--shots DIR` keeps a screenshot of
each page's first drawn state.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser import app_server  # noqa: E402
from tests.firstload import BUDGET_MS, FirstLoad, first_load, pages  # noqa: E402
from tests.pw import chromium  # noqa: E402

PAGES = pages()


def measure(browser, url: str, tries: int, shots: Path | None, tag: str) -> dict[str, FirstLoad]:
    """Each page `tries` times at `url`; the best (fastest) load of each."""
    best = {}
    for name, (path, data) in PAGES.items():
        runs = []
        for i in range(tries):
            shot = None
            if shots is not None and i == 0:
                shot = str(shots / f"first-load-{tag}-{name.replace(' ', '-')}.png")
            r = first_load(browser, url + path, data, screenshot=shot)
            runs.append(r)
            print(
                f"  {tag:8s} {name:11s} try {i + 1}: {r.ms:7.0f} ms  "
                f"(interactive {r.interactive_ms:7.0f} ms)  "
                f"{r.bytes_before / 1e3:8.1f} kB before, {r.bytes_total / 1e3:8.1f} kB in all"
            )
        best[name] = min(runs, key=lambda r: r.ms)
        median = statistics.median(r.ms for r in runs)
        print(
            f"  {tag:8s} {name:11s} best {best[name].ms:7.0f} ms, median {median:7.0f} ms "
            f"(budget {BUDGET_MS} ms)"
        )
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=3, help="fresh loads per page (default 3)")
    parser.add_argument("--url", help="a running server (default: start one)")
    parser.add_argument("--baseline-url", help="another server to compare with")
    parser.add_argument("--shots", type=Path, help="folder for screenshots of the first panel")
    args = parser.parse_args(argv)
    if args.shots is not None:
        args.shots.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        url = args.url
        if url is None:
            cache = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "jobs"
            url = stack.enter_context(app_server(cache, workers=0, env={"TEMPSUP_PRESETS": "full"}))
        browser = stack.enter_context(chromium())
        after = measure(browser, url, args.tries, args.shots, "this")
        if args.baseline_url:
            before = measure(browser, args.baseline_url, args.tries, args.shots, "baseline")
            for name in PAGES:
                b, a = before[name], after[name]
                print(
                    f"{name}: first panel {b.ms:.0f} -> {a.ms:.0f} ms ({b.ms / a.ms:.1f}x), "
                    f"bytes before it {b.bytes_before / 1e3:.0f} -> {a.bytes_before / 1e3:.0f} kB "
                    f"({b.bytes_before / a.bytes_before:.1f}x)"
                )
        else:
            for name, r in after.items():
                print(f"{name}: first panel {r.ms:.0f} ms, {r.bytes_before / 1e3:.0f} kB before it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
