"""Loopback helpers for the tests and benchmarks that start real servers."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request


def free_port() -> int:
    """A TCP port nothing listens on right now (loopback only)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(base: str, proc: subprocess.Popen, timeout: float, log: str = "") -> None:
    """Until `base`/healthz answers "ok"; RuntimeError if the server exits or times out."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as resp:
                if resp.read() == b"ok":
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"server at {base} did not start" + (f":\n{log}" if log else ""))
        time.sleep(0.2)
