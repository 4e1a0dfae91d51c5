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
  `quick_preset_runs` are trained once for both: the first process to need
  them trains them under a file lock, the other reads them.
"""

from __future__ import annotations

import fcntl
import os
import pickle

import pytest
import torch

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


@pytest.fixture(scope="session")
def quick_preset_runs(tmp_path_factory, worker_id):
    """Every run of the quick presets, trained once for the session (minutes: the report,
    the static site and the claims tests all read these same runs), shared by the xdist
    processes of this session through their common temporary directory."""
    from tempsup.paper.presets import preset_configs
    from tempsup.paper.reproduce import train_configs

    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent  # parent: this session's only
    path = shared / "quick_preset_runs.pickle"
    with open(shared / "quick_preset_runs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other process waits here while one trains
        if path.exists():
            return pickle.loads(path.read_bytes())
        runs = train_configs(preset_configs(quick=True))
        path.write_bytes(pickle.dumps(runs))
        return runs


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
