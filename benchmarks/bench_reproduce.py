"""`tempsup reproduce --jobs N`: wall clock per N, and the reports compared byte for byte.

Runs `tempsup reproduce [--quick] --jobs N` once per N given, one after the
other (never side by side: they would share the cores), each in its own
process, and prints per N the wall clock of the command, its training time,
the load average before and after (`os.getloadavg`: on a shared machine the
numbers are indicative; compare the ratio to the first N, measured in the same
run), and whether its report equals the first N's: `report.md` byte for byte
above its timing section (`tempsup.paper.reproduce.TIMING_HEADING`) and
`report.json` but for `TIMING_KEYS`.

    python benchmarks/bench_reproduce.py [--jobs 1 2] [--full] [--out-dir DIR]

Targets (issue 25, a quiet 2-core machine): `--quick` <= 120 s wall clock,
full <= 300 s, with `--jobs 2`. The full form trains for minutes: run it alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tempsup.paper.reproduce import TIMING_HEADING, TIMING_KEYS


def run(jobs: int, full: bool, out: Path) -> dict[str, object]:
    """One `tempsup reproduce` in a fresh process: its wall clock and load averages."""
    cmd = [sys.executable, "-m", "tempsup.cli", "reproduce", "--quiet", "--jobs", str(jobs)]
    cmd += ["--out-dir", str(out)] + ([] if full else ["--quick"])
    before = os.getloadavg()
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    report = json.loads((out / "report.json").read_text())
    return {
        "jobs": jobs,
        "wall": wall,
        "train": report["train_seconds"],
        "before": before,
        "after": os.getloadavg(),
        "text": (out / "report.md").read_text().split(TIMING_HEADING)[0],
        "json": {k: v for k, v in report.items() if k not in TIMING_KEYS},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--full", action="store_true", help="the full form (minutes)")
    parser.add_argument("--out-dir", type=Path, default=None, help="keep the reports here")
    args = parser.parse_args()
    root = args.out_dir or Path(tempfile.mkdtemp(prefix="bench-reproduce-"))
    rows = [run(j, args.full, root / f"jobs{j}") for j in args.jobs]
    first = rows[0]
    print(f"tempsup reproduce{'' if args.full else ' --quick'}, reports in {root}")
    print("jobs | wall s | training s | vs first | load before (1/5/15 min) | after | same report")
    for r in rows:
        same = r["text"] == first["text"] and r["json"] == first["json"]
        load = ["/".join(f"{x:.2f}" for x in r[k]) for k in ("before", "after")]
        print(
            f"{r['jobs']:>4} | {r['wall']:6.1f} | {r['train']:10.1f} | "
            f"{first['wall'] / r['wall']:7.2f}x | {load[0]:>24} | {load[1]} | "
            f"{'yes' if same else 'NO'}"
        )


if __name__ == "__main__":
    main()
