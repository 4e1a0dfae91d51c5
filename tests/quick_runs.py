"""The quick presets' runs for the session, trained in a background process.

They are the suite's largest single computation (about 70 s of CPU): trained inside
the test that first needs them, that test's process did nothing else meanwhile. The
two test processes keep 1.3 of two cores busy on average (their browser, server and
job tests wait on each other much of the time), so the first test process to start
launches this module at the lowest priority (`nice` 19, one torch thread in each of
its training processes), and the runs are usually ready before any test asks for them
(`quick_preset_runs` in conftest.py). The runs are those `tempsup reproduce --quick`
trains: `train_configs` trains the same runs whatever its `jobs` (its report is byte for
byte the same: tests/test_reproduce_parallel.py).

    python -m tests.quick_runs OUT.pickle   train them into OUT.pickle (atomically)

Beside OUT: OUT.lock and OUT.pid (`ensure_started`), OUT.log (what it printed) and, if
it fails, OUT.failed (the traceback).
"""

from __future__ import annotations

import fcntl
import os
import pickle
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NICENESS = 19  # only the CPU the tests leave idle: a test waiting for the runs leaves its core
JOBS = 2  # the idle time is spread over both cores


def _beside(out: Path, suffix: str) -> Path:
    return out.with_name(out.name + suffix)


def ensure_started(out: Path) -> subprocess.Popen | None:
    """Launch the training of the quick presets' runs into `out` unless they are there or
    being trained (the test processes race here: a file lock); the process, if this call
    launched it."""
    with open(_beside(out, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists() or _beside(out, ".pid").exists():
            return None
        with open(_beside(out, ".log"), "w") as log:  # the child writes it
            proc = subprocess.Popen(
                [sys.executable, "-m", "tests.quick_runs", str(out)],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        _beside(out, ".pid").write_text(str(proc.pid))
        return proc


def wait(out: Path) -> dict:
    """The runs once the background process has written them; raise if it failed or
    ended without writing them."""
    from tempsup.jobs.lease import pid_alive

    pid = int(_beside(out, ".pid").read_text())
    while True:
        alive = pid_alive(pid)  # before the file: runs written just before it ended count
        if out.exists():
            return pickle.loads(out.read_bytes())
        failed = _beside(out, ".failed")
        if failed.exists():
            raise RuntimeError("training the quick presets failed:\n" + failed.read_text())
        if not alive:
            log = _beside(out, ".log")
            said = log.read_text() if log.exists() else ""
            raise RuntimeError(f"the quick presets' trainer ended without its runs:\n{said}")
        time.sleep(0.2)


def main(out: Path) -> None:
    os.nice(NICENESS)  # before its training processes start: they inherit it
    import torch

    from tempsup.paper.presets import preset_configs
    from tempsup.paper.reproduce import train_configs

    torch.set_num_threads(1)
    try:
        runs = train_configs(preset_configs(quick=True), jobs=JOBS)
        tmp = _beside(out, ".partial")
        tmp.write_bytes(pickle.dumps(runs))
        tmp.replace(out)
    except BaseException:
        _beside(out, ".failed").write_text(traceback.format_exc())
        raise


if __name__ == "__main__":
    main(Path(sys.argv[1]))
