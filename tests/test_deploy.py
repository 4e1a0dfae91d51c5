"""The teaching-demo deployment: gunicorn serves the app and runs the training workers.

`gunicorn -c gunicorn.conf.py app:server` is what the Dockerfile runs: the
master starts the worker pool once (not one per web worker), queues the
default example, and stops the pool on shutdown. `python -m app` and gunicorn
read the settings first (a bad value: one line, no server), and SIGTERM or
SIGINT stops every process they started within 10 s, while presets train as
ordinary low-priority jobs of the pool — real processes, real signals.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tempsup.jobs import JobQueue
from tempsup.jobs.queue import pid_alive
from tempsup.jobs.record import JobState
from tempsup.model.config import DEFAULTS
from tests.browser import ROOT
from tests.helpers import wait_for
from tests.net import free_port, wait_healthy

STOP_WITHIN = 10.0  # seconds from the signal until no process the server started is left


def test_a_stop_is_bounded_within_the_grace_a_service_manager_gives():
    """gunicorn waits for its web workers, then `on_exit` stops the training pool: the two
    timeouts run one after the other, so their sum must fit (a busy machine takes all of
    each: 5 + 6 s once missed the 10 s)."""
    import runpy

    from tempsup.jobs.pool import STOP_TIMEOUT

    conf = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert conf["graceful_timeout"] + STOP_TIMEOUT < STOP_WITHIN


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return resp.status, resp.read()


def _pool_pids(cache: Path) -> list[int]:
    pattern = f"tempsup.jobs.worker --cache {cache}"
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def test_gunicorn_serves_the_app_and_runs_the_workers(tmp_path: Path) -> None:
    port, cache = free_port(), tmp_path / "jobs"
    env = {**os.environ, "PORT": str(port), "TEMPSUP_CACHE": str(cache), "HOME": str(tmp_path),
           "TEMPSUP_PRESETS": "off"}  # fmt: skip
    gunicorn = Path(sys.executable).with_name("gunicorn")
    cmd = [str(gunicorn), "-c", "gunicorn.conf.py", "app:server"]
    log = tmp_path / "gunicorn.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, 60)
        status, page = _get(f"{base}/")
        assert status == 200 and b"tempsup" in page
        _callbacks_are_answered_but_not_logged(base, log)
        pids = _pool_pids(cache)
        assert len(pids) == 1, pids  # one pool in the master, not one per web worker
        queue = JobQueue(cache)

        def trained():
            status = queue.status(DEFAULTS.key)
            return status is not None and status.state == JobState.DONE

        wait_for("the default example to be trained", trained)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    wait_for("the training workers to stop with gunicorn", lambda: not _pool_pids(cache), 15)


def _callbacks_are_answered_but_not_logged(base: str, log: Path) -> None:
    """The access log (gunicorn.conf.py `AccessLog`) has the page load but not a callback
    the app answered (a link's config opening the explorer, as the browser sends it); a
    callback it refused is logged."""
    from benchmarks.load_test import DashCalls, Http, PageState

    http = Http(base, keep_alive=True)  # one connection: one web process answers its
    # requests in turn and writes each one's line (if any) before it reads the next
    calls = DashCalls(json.loads(http.call("page", "/_dash-dependencies")[1]))
    status, answer = http.call(
        "open", "/_dash-update-component", PageState(calls, "t").open_link(DEFAULTS)
    )
    assert status == 200 and answer, answer[:200]
    assert http.call("bad", "/_dash-update-component", {"output": "no.such"})[0] >= 400
    refused = '"POST /_dash-update-component HTTP/1.1" 5'

    def logged() -> list[str]:
        return log.read_text(errors="replace").splitlines()

    # the refusal came last on the connection: once its line is there, so is any before it
    wait_for("the refused callback in the access log", lambda: any(refused in x for x in logged()))
    lines = logged()
    assert any('"GET / HTTP/1.1" 200' in line for line in lines), lines
    assert any('"GET /_dash-dependencies HTTP/1.1" 200' in line for line in lines), lines
    answered = [x for x in lines if '"POST /_dash-update-component HTTP/1.1" 2' in x]
    assert not answered, answered


@pytest.mark.parametrize("n", [0, 2])
def test_python_m_app_starts_the_workers_its_flag_asks_for(n: int, tmp_path: Path) -> None:
    """`--workers N` wins over the environment, although importing the app (which
    `python -m app` does before its main runs) reads the settings. With 0, a gated
    browser test's own workers must be the only ones: a server's worker once took
    their job and trained it past the gate."""
    flag = ("--workers", str(n))
    proc, base = _server("python -m app", tmp_path, flag, TEMPSUP_PRESETS="off",
                         TEMPSUP_WORKERS="1")  # fmt: skip
    try:
        wait_healthy(base, proc, 60)  # the pool starts before the server answers
        pids = _pool_pids(tmp_path / "jobs")
        assert len(pids) == n
        # training runs below the web server (TEMPSUP_WORKER_NICE, default 10)
        below = min(os.getpriority(os.PRIO_PROCESS, proc.pid) + 10, 19)
        wait_for("the workers to lower their priority", lambda: all(
            os.getpriority(os.PRIO_PROCESS, p) == below for p in pids), 30)  # fmt: skip
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    wait_for("the workers to stop with the server", lambda: not _pool_pids(tmp_path / "jobs"), 15)


def _descendants(pid: int) -> dict[int, str]:
    """Every live process below `pid` (from /proc), with its command line."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, todo = {}, [pid]
    while todo:
        parent = todo.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                try:
                    cmd = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
                except OSError:
                    continue
                found[child] = cmd.decode(errors="replace")
                todo.append(child)
    return found


def _server(
    kind: str, tmp_path: Path, args: tuple[str, ...] = (), **env: str
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "PORT": str(port), "TEMPSUP_CACHE": str(tmp_path / "jobs"),
           "HOME": str(tmp_path), **env}  # fmt: skip
    if kind == "gunicorn":
        cmd = [str(Path(sys.executable).with_name("gunicorn")), "-c", "gunicorn.conf.py"]
    else:
        cmd = [sys.executable, "-m", "app", "--port", str(port), *args]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    return proc, f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("kind", ["python -m app", "gunicorn"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_every_process_the_server_started(kind, sig, tmp_path):
    """While the presets train (low-priority jobs of the one worker), a signal to the
    server — what a service manager or `docker stop` sends — leaves no process behind."""
    proc, base = _server(kind, tmp_path, TEMPSUP_PRESETS="quick", TEMPSUP_WORKERS="1")
    try:
        wait_healthy(base, proc, 60)
        queue = JobQueue(tmp_path / "jobs")

        def training_a_preset() -> list[dict]:  # after the default example, which goes first
            found = [queue.details(key) for key in queue.running()]
            return [d for d in found if d is not None and d["client"] == "presets"]

        running = wait_for("a preset job to train", training_a_preset)  # one batch of them
        assert all(r["priority"] == 1 for r in running)
        assert queue.status(DEFAULTS.key).state == JobState.DONE
        started = _descendants(proc.pid)
        workers = [cmd for cmd in started.values() if "tempsup.jobs.worker" in cmd]
        assert len(workers) == 1, started  # the presets train in the pool, bounded by it
        assert not [c for c in started.values() if "presets" in c], started  # no side trainer
        t0 = time.monotonic()
        proc.send_signal(sig)
        proc.wait(timeout=STOP_WITHIN)
        left = STOP_WITHIN - (time.monotonic() - t0)
        gone = lambda: not [p for p in started if pid_alive(p)]  # noqa: E731
        wait_for(f"every process of {started} to stop", gone, left)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # the job the worker was training went back to the queue, untouched
    assert queue.running() == [] and queue.queued()


@pytest.mark.parametrize("kind", ["python -m app", "gunicorn"])
def test_a_bad_setting_stops_the_server_with_one_line(kind, tmp_path):
    proc, _ = _server(kind, tmp_path, TEMPSUP_MAX_QUEUE="abc")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [f"{kind.split()[0] if kind == 'gunicorn' else 'python -m app'}: error: "
                     "TEMPSUP_MAX_QUEUE: expected an integer >= 1, got 'abc'"], err  # fmt: skip


def test_each_web_process_freezes_its_start_up_heap_and_collects_in_batches(tmp_path: Path) -> None:
    """gunicorn's `post_worker_init` (each web process, once it has imported the app)
    applies `app.heap.settle`: what start-up made is never walked by a collection again,
    and young objects are collected in batches of `app.heap.YOUNG` allocations."""
    code = (
        "import gc, json, runpy\n"
        "conf = runpy.run_path('gunicorn.conf.py')\n"
        "before = [gc.get_freeze_count(), list(gc.get_threshold())]\n"
        "conf['post_worker_init'](None)\n"
        "from app import heap\n"
        "after = [gc.get_freeze_count(), list(gc.get_threshold())]\n"
        "print(json.dumps([before, after, [heap.YOUNG, heap.MIDDLE, heap.OLD]]))\n"
    )
    env = {**os.environ, "TEMPSUP_CACHE": str(tmp_path / "jobs"), "TEMPSUP_REDIS_URL": ""}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    before, after, wanted = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == [0, [700, 10, 10]]  # CPython's defaults until the hook runs
    assert after[1] == wanted
    assert after[0] > 50_000  # the app's modules, Dash's and Plotly's: frozen
