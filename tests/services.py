"""Real services for the tests: a `redis-server` on loopback, started and stopped by them.

`RedisServer` runs Debian's `redis-server` (installed by `scripts/setup
--services`, which `scripts/test` runs) on 127.0.0.1 at a free port, with
its files in a temporary directory; `persist=True` turns on the append-only
file so that a restart keeps the data (what docker-compose.yml does).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.net import free_port

START_TIMEOUT = 15.0


def need_redis_server() -> str:
    """The redis-server binary; skip (fail on CI) when it is not installed."""
    path = shutil.which("redis-server")
    if path is None:
        message = "redis-server is not installed: run scripts/setup --services (or scripts/test)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


class RedisServer:
    """One redis-server process on 127.0.0.1:`port`, data in `directory`."""

    def __init__(self, directory: Path, port: int | None = None, persist: bool = False) -> None:
        self.binary = need_redis_server()
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.persist = persist
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        cmd = [
            self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
            "--dir", str(self.directory), "--save", "",
            "--appendonly", "yes" if self.persist else "no", "--appendfsync", "always",
            "--logfile", str(self.directory / "redis.log"), "--daemonize", "no",
        ]  # fmt: skip
        self.process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while not self.ping():
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: see {self.directory / 'redis.log'}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not answer within {START_TIMEOUT:.0f}s")
            time.sleep(0.05)
        return self

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM: redis flushes its append-only file and exits."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
