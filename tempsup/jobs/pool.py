"""Worker processes started and supervised by another process: `WorkerPool`.

The app at start-up, `tempsup worker -n N` and the tests start `n` workers
for a queue with it; the queue says which command a worker runs
(`BaseQueue.worker_command`: `python -m tempsup.jobs.worker` for diskcache,
a Celery worker for Redis). The worker loop itself is `tempsup.jobs.worker`.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import time
from pathlib import Path

from tempsup.errors import TempsupError
from tempsup.jobs.queue import BaseQueue, JobQueue

POLL = 0.2  # seconds an idle worker sleeps between looks at the queue
STOP_TIMEOUT = 6.0  # WorkerPool.stop waits this long before SIGKILL (a server stops in 10 s)


def as_queue(queue: BaseQueue | str | Path) -> BaseQueue:
    """A queue handle: a queue as is, a directory as a diskcache JobQueue."""
    if isinstance(queue, BaseQueue):
        return queue
    return JobQueue(queue)


class WorkerPool:
    """`n` worker subprocesses for one queue (a BaseQueue or a diskcache directory);
    `n` may be 0 (no local workers).

    The queue says which command a worker runs (`BaseQueue.worker_command`:
    `python -m tempsup.worker` for diskcache, a Celery worker for Redis).
    Starts them at construction (`start()` again is harmless, and restarts a
    stopped pool); `stop()` (also at exit, or leaving a `with` block)
    terminates them: each gives its running job back to the queue.
    Workers also exit by themselves when the process that started them dies.
    """

    def __init__(
        self,
        queue: BaseQueue | str | Path,
        n: int = 1,
        threads: int = 1,
        *,
        poll: float = POLL,
        python: str | None = None,
        imports: tuple[str, ...] = (),
    ) -> None:
        for name, value, low in (("n", n, 0), ("threads", threads, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise TempsupError(
                    f"WorkerPool: {name} expected an integer >= {low}, got {value!r}"
                )
        self.queue = as_queue(queue)
        self.n, self.threads, self.poll = n, threads, poll
        self.python = python or sys.executable
        self.imports = tuple(imports)
        self.processes: list[subprocess.Popen] = []
        self._stopped = False
        self._owner = os.getpid()  # a forked child (a gunicorn worker) must not manage them
        self.start()

    @property
    def directory(self) -> Path | None:
        return getattr(self.queue, "directory", None)

    def start(self) -> WorkerPool:
        """Make sure `n` workers run (idempotent); return the pool."""
        self._stopped = False
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
        atexit.unregister(self.stop)  # registered once, however often we start
        atexit.register(self.stop)
        self.check()
        return self

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes if p.poll() is None]

    def check(self) -> int:
        """Reap dead workers and start new ones up to `n`; return how many started."""
        if self._stopped or os.getpid() != self._owner:
            return 0
        self.processes = [p for p in self.processes if p.poll() is None]
        started = 0
        while len(self.processes) < self.n:
            self.processes.append(self._spawn())
            started += 1
        return started

    def _spawn(self) -> subprocess.Popen:
        root = str(Path(__file__).resolve().parents[2])
        cmd, extra = self.queue.worker_command(self.threads, self.poll, self.imports)
        if cmd[0] == sys.executable:
            cmd = [self.python, *cmd[1:]]
        env = {**os.environ, **extra, "TEMPSUP_PARENT_PID": str(os.getpid())}  # they watch us
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(self.threads)
        # Own session: a Ctrl-C in the terminal reaches the parent, which stops us in order.
        return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, start_new_session=True)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Terminate every worker (SIGTERM, then SIGKILL after `timeout` s)."""
        self._stopped = True
        if os.getpid() != self._owner:
            return
        for p in self.processes:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + timeout
        for p in self.processes:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.processes = []
        atexit.unregister(self.stop)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"WorkerPool({self.queue!r}, n={self.n}, pids={self.pids})"
