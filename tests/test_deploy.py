"""The teaching-demo deployment: gunicorn serves the app and runs the training workers.

`gunicorn -c gunicorn.conf.py app:server` is what the Dockerfile runs: the
master starts the worker pool once (not one per web worker), queues the
default example, and stops the pool on shutdown.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tempsup.config import DEFAULTS
from tempsup.jobs import JobQueue, JobState
from tests.browser import ROOT
from tests.net import free_port, wait_healthy


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return resp.status, resp.read()


def _pool_pids(cache: Path) -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"tempsup.worker --cache {cache}"], capture_output=True,
                         text=True)  # fmt: skip
    return [int(p) for p in out.stdout.split()]


def test_gunicorn_serves_the_app_and_runs_the_workers(tmp_path: Path) -> None:
    port, cache = free_port(), tmp_path / "jobs"
    env = {**os.environ, "PORT": str(port), "TEMPSUP_CACHE": str(cache), "HOME": str(tmp_path),
           "TEMPSUP_PRESETS": "off"}  # fmt: skip
    gunicorn = Path(sys.executable).with_name("gunicorn")
    cmd = [str(gunicorn), "-c", "gunicorn.conf.py", "app:server"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, **quiet)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, 60)
        status, page = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and b"tempsup" in page
        pids = _pool_pids(cache)
        assert len(pids) == 1, pids  # one pool in the master, not one per web worker
        queue = JobQueue(cache)
        deadline = time.monotonic() + 120
        while (s := queue.status(DEFAULTS.key)) is None or s.state != JobState.DONE:
            assert time.monotonic() < deadline, f"default example not trained: {s}"
            time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while _pool_pids(cache):
        assert time.monotonic() < deadline, "training workers outlived gunicorn"
        time.sleep(0.2)
