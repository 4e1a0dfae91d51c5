"""How soon a `tempsup` command answers: each command run as a fresh process, the median.

    python benchmarks/bench_startup.py [--repeats 7]

Runs, in turns (one of each per round, so a busy machine slows all alike):

- `python -c pass` and `python -c "import torch"`: the interpreter's and torch's own
  start, the floor under any command that trains;
- `tempsup --help`: must not import torch (issue 44: within 1 s);
- `tempsup train --steps 1 --seeds 1`: the whole command up to and including its first
  optimizer step and the run file written (issue 44: the first step within 1 s);
- `tempsup train` with the defaults (8 seeds × 2,000 steps): the default job (issue
  44: ≤ 2 s of training).

and prints each command's median wall time and its ratio to `import torch`. Compare
ratios, not seconds, on a shared machine; the training commands use one torch thread.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def commands(out: Path) -> dict[str, list[str]]:
    # the installed command, as a person types it (pyproject's [project.scripts])
    tempsup = [shutil.which("tempsup", path=str(Path(sys.executable).parent)) or "tempsup"]
    train = [*tempsup, "train", "--quiet", "--threads", "1", "--out"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import torch'": [sys.executable, "-c", "import torch"],
        "tempsup --help": [*tempsup, "--help"],
        "tempsup train --steps 1 --seeds 1": [
            *train, str(out / "one.npz"), "--steps", "1", "--seeds", "1"
        ],
        "tempsup train (defaults)": [*train, str(out / "default.npz")],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="rounds (the median is kept)")
    args = parser.parse_args()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        runs = commands(Path(tmp))
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, cmd in runs.items():
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
                times[name].append(time.perf_counter() - t0)
    base = statistics.median(times["python -c 'import torch'"])
    print(f"{args.repeats} rounds, wall time of each command as a fresh process, median")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:38s} {med:7.3f} s   {med / base:5.2f}× import torch")


if __name__ == "__main__":
    main()
