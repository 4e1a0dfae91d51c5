"""Fixtures shared by the test files.

- Torch trains on one thread for the whole session (tests train many tiny
  models; more threads only make them slower and noisier on a shared machine).
- Every test leaves global state as it found it: torch's thread count and
  `os.environ` are put back after each test, whatever the test did.
- `redis_server`: one real `redis-server` on loopback for the session (tests
  separate their data by key prefix).
- Two test processes share the cores (`pytest -n 2 --dist loadfile`,
  pytest-xdist): each test file runs whole in one of them, so its module
  fixtures (a server, a browser, trained runs) are built once. The session's
  `quick_preset_runs` are trained once for both, in the background from the
  session's start (tests/quick_runs.py); a test that needs them waits for them.
- The Selenium browser tests' app (tests/browser.py): `server`, one `python -m app`
  with one training worker for the test file that asks for it, on its job store
  `app_cache`, whose queue `store` reads directly (what the worker wrote); `browser`,
  a fresh headless Chromium for each test. A test file may define its own of any.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from tests import quick_runs
from tests.services import RedisServer


@pytest.fixture(autouse=True, scope="session")
def _torch_one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(autouse=True)
def _global_state_restored():
    """Undo what a test changed in torch's thread count or the environment."""
    threads = torch.get_num_threads()
    environ = dict(os.environ)
    yield
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    if dict(os.environ) != environ:
        os.environ.clear()
        os.environ.update(environ)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A redis-server on a free loopback port for the whole session."""
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def gate(tmp_path, monkeypatch):
    """`tests.gate.Gate` for this test: workers started after it hold jobs at their gate."""
    from tests.gate import ENV, Gate

    monkeypatch.setenv(ENV, str(tmp_path / "gate"))
    return Gate(tmp_path / "gate")


QUICK_RUNS = "quick_preset_runs.pickle"


def _shared(tmp_path_factory) -> Path:
    """The directory this session's test processes share (xdist: their basetemps' parent;
    read from the environment, so that this works without xdist too)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(autouse=True, scope="session")
def _quick_preset_runs_in_background(request, tmp_path_factory):
    """When a selected test needs `quick_preset_runs`, the first test process to start
    launches their training in the background at low priority (tests/quick_runs.py), so
    they are ready by the time a test asks for them."""
    needed = (getattr(item, "fixturenames", ()) for item in request.session.items)
    if not any("quick_preset_runs" in names for names in needed):
        yield
        return
    proc = quick_runs.ensure_started(_shared(tmp_path_factory) / QUICK_RUNS)
    yield
    if proc is not None and proc.poll() is None:
        if request.session.shouldstop or request.session.shouldfail:
            proc.kill()  # the session was cut short: nobody will read them
        proc.wait()  # otherwise another test process may still be waiting for them


@pytest.fixture(scope="session")
def quick_preset_runs(tmp_path_factory):
    """Every run of the quick presets, trained once for the session (minutes: the report,
    the static site and the claims tests all read these same runs), shared by the xdist
    processes of this session through their common temporary directory: trained in the
    background since the session started (or from here, if nothing started them)."""
    path = _shared(tmp_path_factory) / QUICK_RUNS
    quick_runs.ensure_started(path)  # if nothing started them (a fixture asked for by name)
    return quick_runs.wait(path)


@pytest.fixture(scope="session")
def pw_browser():
    """Headless Chromium under Playwright for the session (`tests.pw`)."""
    from tests.pw import chromium

    with chromium() as browser:
        yield browser


@pytest.fixture(scope="session")
def shipped_cache(tmp_path_factory):
    """The job store of `shipped_app` (a test may train a small job into it in-process)."""
    return tmp_path_factory.mktemp("shipped-app") / "jobs"


@pytest.fixture(scope="session")
def shipped_app(shipped_cache):
    """One app server for the session's phone, accessibility and poll tests: the shipped
    full presets' runs (so trained runs are on screen at once), no training worker."""
    from tests.browser import app_server

    with app_server(shipped_cache, workers=0, env={"TEMPSUP_PRESETS": "full"}) as url:
        yield url


@pytest.fixture(scope="module")
def app_cache(tmp_path_factory) -> Path:
    """The job store of the test file's `server`."""
    return tmp_path_factory.mktemp("app") / "jobs"


@pytest.fixture(scope="module")
def server(app_cache):
    """`python -m app` with one training worker for the test file; its URL."""
    from tests.browser import app_server

    with app_server(app_cache) as url:
        yield url


@pytest.fixture(scope="module")
def store(server, app_cache):
    """The job queue of the test file's `server`, read directly (what its worker wrote)."""
    from tests.browser import job_queue

    with job_queue(app_cache) as queue:
        yield queue


@pytest.fixture
def browser(tmp_path):
    """A fresh headless Chromium (Selenium) for the test; its downloads land in `tmp_path`
    (`browser.download_dir`)."""
    from tests.browser import driver_session

    with driver_session(tmp_path) as driver:
        yield driver
