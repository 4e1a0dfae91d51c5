"""A class of 50 pressing Train at once: the app under load, on loopback only.

    python benchmarks/load_test.py [--backend diskcache|redis] [--clients 50] [--json out.json]
    python benchmarks/load_test.py --burst 30 [--backend diskcache|redis] [--json out.json]
    python benchmarks/load_test.py --classroom [--viewers 60] [--trainers 10] [--seconds 60]
                                   [--before REV] [--compressed] [--keep-alive] [--json out.json]

Starts the production server (`gunicorn -c gunicorn.conf.py`, 2 web workers
× 4 threads) on 127.0.0.1 at a free port, with its training workers bounded
to 2 (`TEMPSUP_WORKERS=2`: worker processes for diskcache, Celery workers
for Redis, whose `redis-server` this script starts and stops too). Then 50
simulated clients, one thread each, do what a browser does:

1. load the page: GET `/`, `/_dash-layout`, `/_dash-dependencies`;
2. press Train: POST `/_dash-update-component` with the exact JSON the Dash
   renderer sends for `app.explorer.show_config` (built from the app's own
   dependency list), so the submit goes through the real callback, the
   per-client id, the limits and the job queue of a web process;
3. poll like the page's `dcc.Interval` (the `poll` callback, every 0.5 s)
   until the job is done, or stop at the refusal message.

Why HTTP for everything, not the Python API for the submit: the point is the
web tier under load (thread pools, JSON sizes, one queue handle per web
process), and `/_dash-update-component` is what the browser really calls.

Clients share 12 distinct configs (so most submissions are duplicates that
must join an existing job), one greedy client tries 5 of its own, two ask for
a job larger than the server accepts, and the queue holds at most 8 waiting
jobs, so some refusals are expected: each must carry its reason. Clients
arrive over 5 s, in the order of the plan. Meanwhile a
probe loads the page every 0.1 s to measure responsiveness while jobs train.
Afterwards the server is restarted and finished runs must still be served
without training again. Everything is bounded (a deadline per client, a
fixed number of requests) and addressed to 127.0.0.1 only.

Checks: no 5xx; every client's job completed or was refused with a message;
identical configs trained once (one attempt per job); no result lost after
the restart. Prints p50/p95 latencies and the counts.

Burst mode (`--burst N`, the target of "Performance round 2": 30 distinct
default configurations submitted at once all finish within 90 s on 2 cores
with 2 workers): the same server, with the size and rate limits at their
defaults and the queue holding N, so none is refused. Once the default
example it queues at start-up is trained (the workers idle), N browsers, one
thread each, load the page, then all press Train at the same moment (a
barrier) on N distinct default-sized configs (`DEFAULTS` with base seeds
1..N), through the same real `show_config` submit, and poll like the page
(every 0.3 s, or at the period an answer sets: 2 s while others are ahead
in line, up to 1.5 s while many jobs are active) until done. Prints the time
from the first submit to the last job seen done, the per-job submit → done
p50/p95, whether that is within the target, the same from the job records
(submitted → finished, and each job's training time on its worker), the
load average before and after, and the CPU seconds the server's web
processes and its training workers used meanwhile.

Classroom mode (`--classroom`, the target of issue 25, "Viewers that read only what is
new"): 60 browsers watch one job stream while 10 others train their own, on the same
server as above (2 web workers × 4 threads, 2 training workers), twice in one run: first
the app as it was at `--before` (default: the commit before the viewers read only what is
new), checked out with `git worktree add` into a temporary directory and served from
there, then this checkout, with the same settings and the same script. The teacher
presses Train on the default configuration (a new base seed each round: a trained job is
served from the store and no longer streams); each viewer opens the teacher's link (the
config store's change with `autostart`, as a link does: it joins the job) and then polls
exactly as the page does: the widget's interval fires the page's poll callback, with the
job store, the config store, the feature and the seed menus as the last answers left them,
at the period the answers set, until the job ends (its last answer: the whole run); then
it waits for the teacher's next round. The ten trainers each press Train on a small config
of their own and poll it until done, again and again. Every request is built from the
server's own `/_dash-dependencies` (`DashCalls`), so the benchmark cannot poll the wrong
callback. Prints, before and after side by side with the ratio: the viewers' per-poll
latency p50/p95, the web processes' CPU seconds per viewer-minute (psutil, the gunicorn
processes only; the trainers' and the teacher's requests are included, as in a class), the
mean bytes of a poll's answer, the frames the viewers received, the trainers' Train
presses and the load average. With `--compressed` every client says it accepts brotli and
gzip, as a browser does, so the server compresses its answers (flask-compress) and the
table also gives the bytes as sent; without it (the default, as in the measurements the
README reports) nothing is compressed. With `--keep-alive` every client keeps its
connection open between requests (HTTP/1.1 keep-alive), as a browser does; without it
(the default, as in the earlier measurements) each request opens a connection of its own,
which costs the server about 0.1 ms more per request (measured on /healthz).
Targets: p95 poll ≤ 300 ms, web CPU per viewer-minute ≥ 5× lower after.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import ids  # noqa: E402 - the explorer's ids (no Dash imported)
from tempsup.jobs import JobQueue  # noqa: E402
from tempsup.model.config import DEFAULTS, RunConfig  # noqa: E402
from tests.net import free_port, wait_healthy  # noqa: E402
from tests.services import RedisServer  # noqa: E402

CLIENT_DEADLINE = 240.0  # seconds a client waits for its job before giving up (a failure)
POLL_EVERY = 0.5
PROBE_EVERY = 0.1
N_DISTINCT = 12
MAX_QUEUE = 8
MAX_WORK = 1e8  # refuses the oversized config (and the 1e9 default example at warm-up)
BASE = RunConfig(steps=600, batch=64, seeds=2, snapshot_every=20)
ARRIVAL_SPREAD = 5.0  # clients arrive over this many seconds (a class, not one packet)
OVERSIZED = BASE.replace(steps=20_000, batch=2048)
# burst mode
BURST_TARGET = 90.0  # seconds from the first submit to the last job done
BURST_POLL_EVERY = 0.3  # as the explorer page's dcc.Interval (app/pages/explorer.py, POLL_MS),
# until an answer sets another period (WAITING_POLL_MS while others are ahead in line, up to
# MAX_STREAM_POLL_MS while many jobs are active or many pages poll: jobfollow.poll_interval)
BURST_DEADLINE = 900.0  # seconds a burst client waits for its job (a failure beyond)


def _decoded(payload: bytes, coding: str) -> bytes:
    """An answer's body as the browser reads it (each encoding it says it takes undone)."""
    if coding == "br":
        import brotli

        return brotli.decompress(payload)
    if coding == "gzip":
        import gzip

        return gzip.decompress(payload)
    if coding == "deflate":
        import zlib

        return zlib.decompress(payload)
    return payload


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


class Http:
    """Bounded urllib calls to one loopback server, recording every latency and status.

    With `encodings` (e.g. BROWSER_ENCODINGS) every request says it takes compressed
    answers, as a browser does, and the answers are decompressed here; `wire` records
    their sizes as sent."""

    def __init__(self, base: str, encodings: str | None = None, keep_alive: bool = False) -> None:
        assert base.startswith("http://127.0.0.1:"), base  # loopback only
        self.base = base
        self.encodings = encodings
        self.keep_alive = keep_alive
        self.local = threading.local()  # each client thread's open connection (keep_alive)
        self.lock = threading.Lock()
        self.records: list[tuple[str, int, float]] = []  # (kind, status, seconds)
        self.sizes: dict[str, list[int]] = {}  # answer bytes by kind (classroom mode)
        self.wire: dict[str, list[int]] = {}  # the same answers' bytes as sent

    def call(self, kind: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data else {}
        if self.encodings:
            headers["Accept-Encoding"] = self.encodings
        start = time.perf_counter()
        if self.keep_alive:
            status, payload, coding = self._kept(path, data, headers)
        else:
            status, payload, coding = self._once(path, data, headers)
        with self.lock:
            self.records.append((kind, status, time.perf_counter() - start))
            self.wire.setdefault(kind, []).append(len(payload))
        return status, _decoded(payload, coding)

    def latencies(self, kind: str) -> list[float]:
        return [s for k, _, s in self.records if k == kind]

    def _once(self, path: str, data: bytes | None, headers: dict) -> tuple[int, bytes, str]:
        """A request on a connection of its own (urllib closes it after the answer)."""
        method = "POST" if data else "GET"
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, resp.read(), resp.headers.get("Content-Encoding", "")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), ""
        except OSError:
            return 0, b"", ""  # connection refused/reset: counted as a failure

    def _kept(self, path: str, data: bytes | None, headers: dict) -> tuple[int, bytes, str]:
        """A request on this thread's open connection, as a browser sends its polls (HTTP/1.1
        keep-alive): a connection the server closed meanwhile (it keeps an idle one a few
        seconds) is opened again once and the request sent again."""
        for _ in range(2):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                host, port = self.base.removeprefix("http://").split(":")
                conn = self.local.conn = http.client.HTTPConnection(host, int(port), timeout=60)
            try:
                conn.request("POST" if data else "GET", path, body=data, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
            except (http.client.HTTPException, OSError):
                conn.close()
                self.local.conn = None
                continue
            if resp.will_close:
                conn.close()
                self.local.conn = None
            return resp.status, payload, resp.getheader("Content-Encoding", "")
        return 0, b"", ""  # failed twice: counted as a failure


# ---- the Dash requests a browser sends ------------------------------------------------


def _outputs(output: str) -> Any:
    def one(text: str) -> dict[str, Any]:
        ident, prop = text.split(".", 1)
        # a dict id (the job widget's) is sent as the object itself
        return {"id": json.loads(ident) if ident.startswith("{") else ident, "property": prop}

    return (
        [one(p) for p in output.strip(".").split("...")] if output.startswith("..") else one(output)
    )


# the explorer's job widget, as Dash names its parts in requests and answers
JOB, STATUS, POLL, TRAIN = (ids.text(ids.job(part, ids.EXPLORER))
                            for part in (ids.STORE, ids.STATUS, ids.POLL, ids.RUN))  # fmt: skip


class DashCalls:
    """Payloads for show_config (Train) and poll, from the app's dependency list."""

    def __init__(self, deps: list[dict[str, Any]]) -> None:
        def find(first_input: str) -> dict[str, Any]:
            """The server callback driven by `first_input` that writes the job store (other
            callbacks, e.g. captions, may listen to the same input)."""
            for dep in deps:
                names = [f"{i['id']}.{i['property']}" for i in dep["inputs"]]
                if (
                    names
                    and names[0] == first_input
                    and not dep.get("clientside_function")
                    and f"{JOB}.data" in dep["output"]
                ):
                    return dep
            raise RuntimeError(f"no server callback with input {first_input} writing job-store")

        self.show = find("config-store.data")
        self.poll = find(f"{POLL}.n_intervals")

    def train(self, config: RunConfig, client: str) -> dict[str, Any]:
        store = {"config": config.to_dict(), "key": config.key, "autostart": False}
        values = {
            "config-store.data": store,
            f"{TRAIN}.n_clicks": 1,
            "client-store.data": client,
            "feature-pick.value": 0,
        }
        return request_body(self.show, values, f"{TRAIN}.n_clicks")

    def poll_body(self, config: RunConfig, job: dict[str, Any], n: int) -> dict[str, Any]:
        store = {"config": config.to_dict(), "key": config.key, "autostart": False}
        values = {
            f"{POLL}.n_intervals": n,
            f"{JOB}.data": job,
            "config-store.data": store,
            "feature-pick.value": 0,
        }
        return request_body(self.poll, values, f"{POLL}.n_intervals")


def _outputs_of(payload: bytes) -> dict[str, Any]:
    """{id: {property: value}} of a callback answer ({} for 204 / no update)."""
    if not payload:
        return {}
    return json.loads(payload).get("response", {})


# ---- the server ------------------------------------------------------------------------


class Served(str):
    """The base URL of a running server, which also knows the server's process id."""

    pid: int

    def __new__(cls, base: str, pid: int) -> Served:
        self = super().__new__(cls, base)
        self.pid = pid
        return self


def server_cpu(pid: int) -> dict[str, float]:
    """CPU seconds used so far by the server's processes, by role: "web" (gunicorn's
    master and web workers) and "training" (the worker programs it started)."""
    import psutil

    out = {"web": 0.0, "training": 0.0}
    root = psutil.Process(pid)
    for p in [root, *root.children(recursive=True)]:
        try:
            role = "web" if "gunicorn" in " ".join(p.cmdline()) else "training"
            t = p.cpu_times()
            out[role] += t.user + t.system
        except psutil.Error:  # a process that ended in between
            continue
    return out


@contextmanager
def server(cache: Path, env_extra: dict[str, str], root: Path = ROOT):
    """gunicorn on 127.0.0.1:free port with 2 training workers, serving the checkout at
    `root`; yields the base URL (a `Served`, which carries the master's pid)."""
    port = free_port()
    env = {
        **os.environ,
        "TEMPSUP_CACHE": str(cache),
        "TEMPSUP_WORKERS": "2",
        "TEMPSUP_THREADS": "1",
        "TEMPSUP_MAX_QUEUE": str(MAX_QUEUE),
        "TEMPSUP_MAX_WORK": str(MAX_WORK),
        "TEMPSUP_MAX_PER_CLIENT": "3",
        "TEMPSUP_MAX_PER_MINUTE": "10",
        "TEMPSUP_WORKER_LOGLEVEL": "WARNING",
        "TEMPSUP_PRESETS": "off",  # no background preset training during the measurement
        "PYTHONUNBUFFERED": "1",
        **env_extra,
    }
    if root != ROOT:  # another checkout's app and library, not this one's
        env["PYTHONPATH"] = str(root)
    log = open(cache.parent / f"server-{port}.log", "w")  # noqa: SIM115 - closed below
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    cmd = [gunicorn, "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, 90, log.name)
        yield Served(base, proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)  # gunicorn stops its web workers, then the pool
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# ---- the clients -----------------------------------------------------------------------


def client_plan(n_clients: int) -> list[tuple[str, list[RunConfig]]]:
    """(client id, configs it presses Train on): duplicates, a greedy one, two oversized."""
    distinct = [BASE.replace(seed=i) for i in range(N_DISTINCT)]
    plan = [(f"student-{i:02d}", [distinct[i % N_DISTINCT]]) for i in range(n_clients - 3)]
    plan.append(("greedy", [BASE.replace(seed=100 + i) for i in range(5)]))
    plan += [(f"ambitious-{i}", [OVERSIZED]) for i in range(2)]
    return plan


def load_page(http: Http) -> None:
    for part in ("/", "/_dash-layout", "/_dash-dependencies"):
        http.call("page", part)


def train_and_wait(
    http: Http,
    calls: DashCalls,
    client: str,
    config: RunConfig,
    every: float = POLL_EVERY,
    wait: float = CLIENT_DEADLINE,
) -> dict[str, Any]:
    """Press Train on `config`, then poll every `every` s until the job ends (at most `wait`
    s). The outcome, with `submitted` and `ended` (time.monotonic of the submit's start and
    of the answer that said the job ended)."""
    outcome: dict[str, Any] = {"client": client, "key": config.key, "submitted": time.monotonic()}
    status, payload = http.call("submit", "/_dash-update-component", calls.train(config, client))
    answer = _outputs_of(payload) if status == 200 else {}
    bar = answer.get(STATUS, {}).get("data") or {}
    text = str(bar.get("text", ""))
    if status != 200 or text.startswith("Refused"):
        outcome.update(outcome="refused" if status == 200 else f"http {status}", message=text)
        return outcome
    job = answer.get(JOB, {}).get("data") or {}
    every = _interval(answer, every)
    deadline = time.monotonic() + wait
    n = 0
    while job.get("state") not in ("done", "failed", "cancelled") and not text.startswith("Done"):
        if time.monotonic() > deadline:
            outcome.update(outcome="timeout", message=text)
            break
        time.sleep(every)
        n += 1
        status, payload = http.call(
            "poll", "/_dash-update-component", calls.poll_body(config, job, n)
        )
        if status not in (200, 204):
            continue
        answer = _outputs_of(payload)
        job = answer.get(JOB, {}).get("data") or job
        bar = answer.get(STATUS, {}).get("data") or bar
        every = _interval(answer, every)
        text = str(bar.get("text", ""))
    outcome["ended"] = time.monotonic()
    outcome.setdefault("outcome", job.get("state") or ("done" if text.startswith("Done") else "?"))
    outcome.setdefault("message", text)
    return outcome


def _interval(answer: dict[str, Any], every: float) -> float:
    """The poll period the page was told to use (the explorer slows its poll while a job
    waits behind others), else `every`: s."""
    ms = answer.get(POLL, {}).get("interval")
    return every if ms is None else float(ms) / 1000.0


def run_client(
    http: Http, calls: DashCalls, client: str, configs: list[RunConfig], out: list, delay: float
):
    time.sleep(delay)
    load_page(http)
    for config in configs:
        out.append(train_and_wait(http, calls, client, config))


def probe(http: Http, stop: threading.Event) -> None:
    for _ in range(5000):  # bounded, whatever happens
        if stop.wait(PROBE_EVERY):
            return
        http.call("probe", "/")


# ---- the run ---------------------------------------------------------------------------


@contextmanager
def job_store(backend: str, name: str, workdir: Path | None):
    """(the job directory, the server's environment) for `backend`; Redis started and stopped."""
    tmp = Path(workdir or tempfile.mkdtemp(prefix=f"tempsup-{name}-"))
    cache = tmp / "jobs"
    cache.mkdir(parents=True, exist_ok=True)
    if backend != "redis":
        yield cache, {"TEMPSUP_REDIS_URL": ""}
        return
    redis = RedisServer(tmp / "redis", persist=True).start()
    try:
        yield cache, {"TEMPSUP_REDIS_URL": redis.url, "TEMPSUP_REDIS_PREFIX": f"{name}:"}
    finally:
        redis.stop()


def run(backend: str = "diskcache", n_clients: int = 50, workdir: Path | None = None) -> dict:
    with job_store(backend, "load", workdir) as (cache, env):
        return _run(backend, n_clients, cache, env)


def _queue(backend: str, cache: Path, env: dict[str, str]):
    if backend == "redis":
        from tempsup.jobs.redis import RedisQueue

        return RedisQueue(env["TEMPSUP_REDIS_URL"], env["TEMPSUP_REDIS_PREFIX"])
    return JobQueue(cache)


def _run(backend: str, n_clients: int, cache: Path, env: dict[str, str]) -> dict:
    plan = client_plan(n_clients)
    outcomes: list[dict[str, Any]] = []
    t0 = time.monotonic()
    with server(cache, env) as base:
        startup = time.monotonic() - t0
        http = Http(base)
        status, deps = http.call("page", "/_dash-dependencies")
        calls = DashCalls(json.loads(deps))
        stop = threading.Event()
        prober = threading.Thread(target=probe, args=(http, stop), daemon=True)
        prober.start()
        threads = [
            threading.Thread(
                target=run_client,
                args=(http, calls, c, cfgs, outcomes, ARRIVAL_SPREAD * i / len(plan)),
            )
            for i, (c, cfgs) in enumerate(plan)
        ]
        t1 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(CLIENT_DEADLINE + 60)
        elapsed = time.monotonic() - t1
        stop.set()
        prober.join()
    queue = _queue(backend, cache, env)
    done_keys = sorted({o["key"] for o in outcomes if o["outcome"] == "done"})
    attempts = {k: (queue.details(k) or {}).get("attempts") for k in done_keys}

    # the web server restarted: finished runs are still served, without training again
    with server(cache, env) as base:
        http2 = Http(base)
        calls2 = DashCalls(json.loads(http2.call("page", "/_dash-dependencies")[1]))
        served = 0
        by_key = {c.key: c for _, cfgs in plan for c in cfgs}
        for key in done_keys:
            status, payload = http2.call(
                "after-restart", "/_dash-update-component", calls2.train(by_key[key], "after")
            )
            text = str(_outputs_of(payload).get(STATUS, {}).get("data", {}).get("text"))
            served += status == 200 and text.startswith("Done")
        attempts_after = {k: (queue.details(k) or {}).get("attempts") for k in done_keys}
    queue.close()

    records = http.records + http2.records
    report = {
        "backend": backend,
        "clients": len(plan),
        "submissions": sum(len(c) for _, c in plan),
        "server_start_s": round(startup, 1),
        "load_duration_s": round(elapsed, 1),
        "requests": len(records),
        "http_5xx": sum(1 for _, s, _ in records if s >= 500),
        "http_failed": sum(1 for _, s, _ in records if s == 0 or 400 <= s < 500),
        "outcomes": _count(o["outcome"] for o in outcomes),
        "refusals": sorted({o["message"] for o in outcomes if o["outcome"] == "refused"}),
        "distinct_jobs_done": len(done_keys),
        "jobs_trained_more_than_once": sorted(k for k, a in attempts.items() if a != 1),
        "served_after_restart": f"{served}/{len(done_keys)}",
        "retrained_after_restart": sorted(k for k in done_keys if attempts_after[k] != attempts[k]),
    }
    for kind in ("page", "probe", "submit", "poll"):
        lat = http.latencies(kind)
        report[f"{kind}_ms"] = {
            "n": len(lat),
            "p50": round(1000 * statistics.median(lat), 1) if lat else None,
            "p95": round(1000 * percentile(lat, 95), 1) if lat else None,
            "max": round(1000 * max(lat), 1) if lat else None,
        }
    return report


# ---- burst mode -----------------------------------------------------------------------


def burst(n: int = 30, backend: str = "diskcache", workdir: Path | None = None) -> dict:
    """N distinct default configs submitted at once (see the module's docstring)."""
    with job_store(backend, "burst", workdir) as (cache, env):
        # the server's own defaults for size and rate; a queue that holds the whole burst
        env.update(
            TEMPSUP_MAX_QUEUE=str(max(n, MAX_QUEUE)),
            TEMPSUP_MAX_WORK="2e12",
            TEMPSUP_MAX_PER_CLIENT="3",
            TEMPSUP_MAX_PER_MINUTE="30",
        )
        return _burst(backend, n, cache, env)


def _wait_idle(queue, key: str, timeout: float = 300.0) -> None:
    """Until the job `key` (the default example queued at start-up) is done and none runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = queue.status(key)
        if status is not None and status.state.value == "done" and not queue.running():
            return
        time.sleep(0.2)
    raise RuntimeError(f"the start-up job {key} did not finish within {timeout:.0f} s")


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (os.getloadavg: Linux and macOS alike)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _burst(backend: str, n: int, cache: Path, env: dict[str, str]) -> dict:
    configs = [DEFAULTS.replace(seed=1 + i) for i in range(n)]
    outcomes: list[dict[str, Any]] = []
    with server(cache, env) as base:
        queue = _queue(backend, cache, env)
        t0 = time.monotonic()
        _wait_idle(queue, DEFAULTS.key)
        warm_up = time.monotonic() - t0
        http = Http(base)
        calls = DashCalls(json.loads(http.call("page", "/_dash-dependencies")[1]))
        ready = threading.Barrier(n + 1)
        lock = threading.Lock()

        def client(i: int, config: RunConfig) -> None:
            load_page(http)  # a browser opened the explorer …
            ready.wait()  # … and everyone presses Train at once
            outcome = train_and_wait(
                http, calls, f"burst-{i:02d}", config, BURST_POLL_EVERY, BURST_DEADLINE
            )
            with lock:
                outcomes.append(outcome)

        threads = [threading.Thread(target=client, args=a) for a in enumerate(configs)]
        for t in threads:
            t.start()
        ready.wait()
        load_before = load_average()
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        server_before = server_cpu(base.pid)
        for t in threads:
            t.join(BURST_DEADLINE + 60)
        load_after = load_average()
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
        server_after = server_cpu(base.pid)
        records = {c.key: queue.details(c.key) or {} for c in configs}
        queue.close()

    done = [o for o in outcomes if o["outcome"] == "done"]
    first = min(o["submitted"] for o in outcomes)
    total = max(o["ended"] for o in done) - first if len(done) == n else float("nan")
    per_job = [o["ended"] - o["submitted"] for o in done]
    times = [r for r in records.values() if r.get("finished") and r.get("submitted")]
    trained = [r["finished"] - r["started"] for r in times if r.get("started")]
    total_records = (
        max(r["finished"] for r in times) - min(r["submitted"] for r in times)
        if len(times) == n
        else float("nan")
    )
    report = {
        "backend": backend,
        "mode": f"burst of {n} distinct default configs",
        "config": {**DEFAULTS.to_dict(), "seed": f"1..{n}"},
        "training_workers": 2,
        "warm_up_s": round(warm_up, 1),
        "load_average_at_submit": load_before,
        "load_average_at_end": load_after,
        # the simulated browsers run on the server's cores (a classroom's do not)
        "clients_cpu_s": round(
            cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime, 1
        ),
        # where the server's cores went during the burst: answering polls or training
        "server_cpu_s": {k: round(server_after[k] - server_before[k], 1) for k in server_after},
        "outcomes": _count(o["outcome"] for o in outcomes),
        "refusals": sorted({o["message"] for o in outcomes if o["outcome"] == "refused"}),
        "total_s": round(total, 1),
        "target_s": BURST_TARGET,
        "within_target": bool(total <= BURST_TARGET),
        "ratio_to_target": round(total / BURST_TARGET, 2),
        "submit_to_done_s": _summary(per_job),
        "records_total_s": round(total_records, 1),
        "records_submitted_to_finished_s": _summary(
            [r["finished"] - r["submitted"] for r in times]
        ),
        "records_training_s": _summary(trained),
        "attempts": _count(str(r.get("attempts")) for r in records.values()),
        "requests": len(http.records),
        "http_5xx": sum(1 for _, s, _ in http.records if s >= 500),
        "http_failed": sum(1 for _, s, _ in http.records if s == 0 or 400 <= s < 500),
    }
    for kind in ("submit", "poll"):
        lat = http.latencies(kind)
        report[f"{kind}_ms"] = {k: v if v is None else round(1000 * v, 1)
                                for k, v in _summary(lat).items() if k != "n"}  # fmt: skip
        report[f"{kind}_ms"]["n"] = len(lat)
    return report


def _summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    return {
        "n": len(values),
        "p50": round(statistics.median(values), 3),
        "p95": round(percentile(values, 95), 3),
        "max": round(max(values), 3),
    }


# ---- classroom mode --------------------------------------------------------------------

CLASS_VIEWERS, CLASS_TRAINERS, CLASS_SECONDS = 60, 10, 60.0
BEFORE = "8e897e8"  # the commit before the viewers read only what is new (issue 25)
TRAINER_BASE = RunConfig(steps=600, batch=64, seeds=2, snapshot_every=20)  # a student's own
CLASS_ARRIVAL = 3.0  # viewers open the teacher's link over this many seconds
P95_TARGET_MS, CPU_TARGET = 300.0, 5.0
BROWSER_ENCODINGS = "gzip, deflate, br"  # what Chromium and Firefox send (`--compressed`)


def _wire_id(ident: Any) -> Any:
    """A component id as the renderer sends it: a dict id as the object, not its text."""
    return json.loads(ident) if isinstance(ident, str) and ident.startswith("{") else ident


def request_body(dep: dict[str, Any], values: dict[str, Any], changed: str) -> dict[str, Any]:
    """The request the renderer sends for callback `dep` fired by `changed`, each input and
    state read from `values` ("id.prop")."""

    def fill(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "id": _wire_id(i["id"]),
                "property": i["property"],
                "value": values.get(f"{i['id']}.{i['property']}"),
            }
            for i in items
        ]

    return {
        "output": dep["output"],
        "outputs": _outputs(dep["output"]),
        "inputs": fill(dep["inputs"]),
        "state": fill(dep["state"]),
        "changedPropIds": [changed],
    }


class PageState:
    """What one explorer page holds, as the renderer does: component props by
    "id.prop" (a dict id by its text, `app.ids.text`), updated from each callback answer;
    the view store is kept as a size (its content is output only, never sent back)."""

    def __init__(self, calls: DashCalls, client: str) -> None:
        self.calls = calls
        self.values: dict[str, Any] = {
            "client-store.data": client,
            "feature-pick.value": 0,
            "seed-pick.value": None,
            f"{TRAIN}.n_clicks": 0,
            f"{POLL}.n_intervals": 0,
            f"{POLL}.disabled": True,
            f"{POLL}.interval": round(1000 * BURST_POLL_EVERY),  # the layout's, as the page
            f"{JOB}.data": None,
            f"{ids.text(ids.player(ids.REQUEST, ids.EXPLORER))}.data": None,
        }

    def answer(self, payload: bytes) -> None:
        for ident, props in _outputs_of(payload).items():
            for prop, value in props.items():
                if not (isinstance(value, dict) and "__dash_patch_update" in value):
                    self.values[f"{ident}.{prop}"] = value

    def body(self, dep: dict[str, Any], changed: str) -> dict[str, Any]:
        """The request the renderer sends for callback `dep` fired by `changed`."""
        return request_body(dep, self.values, changed)

    def open_link(self, config: RunConfig) -> dict[str, Any]:
        """The teacher's link opened: the config store set with `autostart` fires show_config."""
        self.values["config-store.data"] = {
            "config": config.to_dict(),
            "key": config.key,
            "autostart": True,
        }
        self.values[f"{POLL}.n_intervals"] = 0
        return self.body(self.calls.show, "config-store.data")

    def press_train(self, config: RunConfig) -> dict[str, Any]:
        self.values["config-store.data"] = {
            "config": config.to_dict(),
            "key": config.key,
            "autostart": False,
        }
        self.values[f"{TRAIN}.n_clicks"] += 1
        self.values[f"{POLL}.n_intervals"] = 0
        return self.body(self.calls.show, f"{TRAIN}.n_clicks")

    def tick(self) -> dict[str, Any] | None:
        """The poll interval's next tick (None while it is disabled, as in the page)."""
        if self.values.get(f"{POLL}.disabled"):
            return None
        self.values[f"{POLL}.n_intervals"] += 1
        return self.body(self.calls.poll, f"{POLL}.n_intervals")

    @property
    def period(self) -> float:
        ms = self.values.get(f"{POLL}.interval")
        return float(ms) / 1000.0 if isinstance(ms, (int, float)) else BURST_POLL_EVERY

    @property
    def job(self) -> dict[str, Any]:
        return self.values.get(f"{JOB}.data") or {}


def follow(http: Http, page: PageState, kind: str, until: float) -> int:
    """Poll as the page does until the job ends or `until` (time.monotonic); the frames
    received (the cursor the answers set)."""
    while time.monotonic() < until:
        time.sleep(page.period)
        body = page.tick()
        if body is None:
            break
        status, payload = http.call(kind, "/_dash-update-component", body)
        with http.lock:
            http.sizes.setdefault(kind, []).append(len(payload))
        if status == 200:
            page.answer(payload)
    return int(page.job.get("cursor") or 0)


class Lecture:
    """The teacher's current job, for the viewers: a config and a round number."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.round, self.config = -1, DEFAULTS

    def start(self, config: RunConfig) -> None:
        with self.cond:
            self.round, self.config = self.round + 1, config
            self.cond.notify_all()

    def next_after(self, seen: int, until: float) -> tuple[int, RunConfig] | None:
        with self.cond:
            while self.round <= seen:
                left = until - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return self.round, self.config


def _classroom(
    root: Path,
    viewers: int,
    trainers: int,
    seconds: float,
    encodings: str | None = None,
    keep_alive: bool = False,
) -> dict[str, Any]:
    """One server (the checkout at `root`), one class; the measurements of its window.
    `encodings`: what every client says it accepts (None: no compression); `keep_alive`:
    each client keeps its connection open between requests."""
    tmp = Path(tempfile.mkdtemp(prefix="tempsup-classroom-"))
    env = {
        "TEMPSUP_REDIS_URL": "",
        "TEMPSUP_MAX_QUEUE": "50",
        "TEMPSUP_MAX_WORK": "2e12",
        "TEMPSUP_MAX_PER_CLIENT": "3",
        "TEMPSUP_MAX_PER_MINUTE": "off",
    }
    with server(tmp / "jobs", env, root) as base:
        queue = JobQueue(tmp / "jobs")
        _wait_idle(queue, DEFAULTS.key)  # the default example trained at start-up
        http = Http(base, encodings, keep_alive)
        calls = DashCalls(json.loads(http.call("page", "/_dash-dependencies")[1]))
        for _ in range(4):  # both web workers have imported the app and drawn a page
            load_page(http)
        lecture, frames, lock = Lecture(), [], threading.Lock()
        t0 = time.monotonic()
        until = t0 + seconds

        def viewer(i: int) -> None:
            time.sleep(CLASS_ARRIVAL * i / max(viewers, 1))
            page, seen, got = PageState(calls, f"viewer-{i:02d}"), -1, 0
            while (nxt := lecture.next_after(seen, until)) is not None:
                seen, config = nxt
                status, payload = http.call(
                    "open", "/_dash-update-component", page.open_link(config)
                )
                if status == 200:
                    page.answer(payload)
                got += follow(http, page, "poll", until)
            with lock:
                frames.append(got)

        def trainer(i: int) -> None:
            page, r = PageState(calls, f"trainer-{i:02d}"), 0
            while time.monotonic() < until:
                config = TRAINER_BASE.replace(seed=1000 * (i + 1) + r)
                r += 1
                status, payload = http.call(
                    "train", "/_dash-update-component", page.press_train(config)
                )
                if status == 200:
                    page.answer(payload)
                follow(http, page, "trainer-poll", until)

        teacher = PageState(calls, "teacher")
        threads = [threading.Thread(target=viewer, args=(i,)) for i in range(viewers)]
        threads += [threading.Thread(target=trainer, args=(i,)) for i in range(trainers)]
        load_before, cpu_before = load_average(), server_cpu(base.pid)
        for t in threads:
            t.start()
        rounds = 0
        while time.monotonic() < until:  # the teacher: one default-sized job after another
            config = DEFAULTS.replace(seed=DEFAULTS.seed + 1 + rounds)
            http.call("teacher", "/_dash-update-component", teacher.press_train(config))
            lecture.start(config)
            rounds += 1
            while time.monotonic() < until:
                status = queue.status(config.key)
                if status is None or not status.active:
                    break
                time.sleep(0.2)
        lecture.start(DEFAULTS)  # wakes viewers waiting for a round; none starts: time is up
        for t in threads:
            t.join(120)
        window = time.monotonic() - t0
        cpu_after, load_after = server_cpu(base.pid), load_average()
        queue.close()
    shutil.rmtree(tmp, ignore_errors=True)
    cpu = {key: cpu_after[key] - cpu_before[key] for key in ("web", "training")}
    return _class_measures(http, frames, viewers, window, rounds, cpu, (load_before, load_after))


def _class_measures(
    http: Http,
    frames: list[int],
    viewers: int,
    window: float,
    rounds: int,
    cpu: dict[str, float],
    loads: tuple[Any, Any],
) -> dict[str, Any]:
    """What one class's window measured: latencies and sizes of the polls, the server's
    CPU seconds (`cpu`: web and training, over the window), the load before and after."""
    lat, sizes, wire = http.latencies("poll"), http.sizes.get("poll", []), http.wire.get("poll", [])
    web_s = cpu["web"]
    got = statistics.mean(frames) if frames else 0.0  # frames a viewer received
    return {
        "window_s": round(window, 1),
        "rounds": rounds,
        # the trainers' Train presses: each a job trained, streamed and drawn whole (the
        # closed loop again: a faster server trains more of them in the same minute)
        "trainer_presses": len(http.latencies("train")),
        "polls": len(lat),
        "poll_p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
        "poll_p95_ms": round(1000 * percentile(lat, 95), 1) if lat else None,
        "web_cpu_s": round(web_s, 2),
        "training_cpu_s": round(cpu["training"], 1),
        "web_cpu_s_per_viewer_minute": round(web_s / (viewers * window / 60.0), 4),
        # the class is a closed loop (a faster server serves more rounds and more trainer
        # jobs in the same minute): the web's CPU per frame a viewer received, beside it
        "web_cpu_ms_per_viewer_frame": round(1000 * web_s / (viewers * got), 3) if got else None,
        "bytes_per_poll": round(statistics.mean(sizes)) if sizes else None,
        "wire_bytes_per_poll": round(statistics.mean(wire)) if wire else None,
        "frames_per_viewer": round(got, 1),
        "http_5xx": sum(1 for _, s, _ in http.records if s >= 500),
        "http_failed": sum(1 for _, s, _ in http.records if s == 0 or 400 <= s < 500),
        "load_average_start": loads[0],
        "load_average_end": loads[1],
    }


@contextmanager
def checkout(rev: str):
    """The repository at `rev` in a temporary worktree (removed afterwards)."""
    where = Path(tempfile.mkdtemp(prefix="tempsup-before-")) / "tree"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(where), rev],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    try:
        yield where
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(where)],
            cwd=ROOT,
            check=False,
            capture_output=True,
        )
        shutil.rmtree(where.parent, ignore_errors=True)


def classroom(
    viewers: int = CLASS_VIEWERS,
    trainers: int = CLASS_TRAINERS,
    seconds: float = CLASS_SECONDS,
    before: str = BEFORE,
    compressed: bool = False,
    keep_alive: bool = False,
) -> dict[str, Any]:
    """The same class on the app at `before` and on this checkout, one after the other;
    `compressed`: every client takes compressed answers, as a browser does; `keep_alive`:
    every client keeps its connection open, as a browser does."""
    encodings = BROWSER_ENCODINGS if compressed else None
    with checkout(before) as old:
        was = _classroom(old, viewers, trainers, seconds, encodings, keep_alive)
    now = _classroom(ROOT, viewers, trainers, seconds, encodings, keep_alive)
    ratio = {
        k: round(was[k] / now[k], 2) if isinstance(was[k], (int, float)) and now[k] else None
        for k in (
            "poll_p50_ms",
            "poll_p95_ms",
            "web_cpu_s_per_viewer_minute",
            "web_cpu_ms_per_viewer_frame",
            "bytes_per_poll",
            "wire_bytes_per_poll",
        )
    }
    return {
        "mode": f"classroom: {viewers} viewers, {trainers} trainers, {seconds:.0f} s each"
        + (f", answers compressed ({encodings})" if compressed else ", answers not compressed")
        + (", connections kept open" if keep_alive else ", a connection per request"),
        "before": {"rev": before, **was},
        "after": {"rev": "this checkout", **now},
        "before_over_after": ratio,
        "within_targets": bool(
            (now["poll_p95_ms"] or 1e9) <= P95_TARGET_MS
            and (ratio["web_cpu_s_per_viewer_minute"] or 0) >= CPU_TARGET
        ),
    }


def classroom_table(report: dict[str, Any]) -> str:
    """The before/after table the classroom mode prints."""
    rows = [
        ("poll p50 (ms)", "poll_p50_ms"),
        ("poll p95 (ms)", "poll_p95_ms"),
        ("web CPU s per viewer-minute", "web_cpu_s_per_viewer_minute"),
        ("web CPU ms per frame a viewer got", "web_cpu_ms_per_viewer_frame"),
        ("bytes per poll", "bytes_per_poll"),
        ("bytes per poll as sent", "wire_bytes_per_poll"),
        ("viewer polls", "polls"),
        ("frames per viewer", "frames_per_viewer"),
        ("lecture rounds", "rounds"),
        ("trainer Train presses", "trainer_presses"),
        ("web CPU s", "web_cpu_s"),
        ("training CPU s", "training_cpu_s"),
        ("window (s)", "window_s"),
        ("load avg at start", "load_average_start"),
        ("load avg at end", "load_average_end"),
    ]
    before, after, ratio = report["before"], report["after"], report["before_over_after"]
    lines = [report["mode"], f"{'':34} {'before ' + before['rev']:>18} {'after':>18} {'ratio':>7}"]
    for label, key in rows:
        r = ratio.get(key)
        lines.append(
            f"{label:34} {before[key]!s:>18} {after[key]!s:>18} "
            f"{'' if r is None else f'{r:.2f}x':>7}"
        )
    lines.append(
        f"targets: p95 <= {P95_TARGET_MS:.0f} ms, web CPU per viewer-minute "
        f">= {CPU_TARGET:.0f}x lower: {'met' if report['within_targets'] else 'MISSED'}"
    )
    return "\n".join(lines)


def check_burst(report: dict, n: int) -> list[str]:
    """What must hold for a burst (the 90 s target is a measurement, not a check)."""
    problems = []
    if report["outcomes"] != {"done": n}:
        problems.append(f"not every job done: {report['outcomes']} {report['refusals']}")
    if report["http_5xx"] or report["http_failed"]:
        problems.append(f"{report['http_5xx']} 5xx, {report['http_failed']} failed requests")
    if report["attempts"] != {"1": n}:
        problems.append(f"attempts per job: {report['attempts']}")
    return problems


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))


def check(report: dict) -> list[str]:
    """What must hold; an empty list means the run passed."""
    problems = []
    if report["http_5xx"]:
        problems.append(f"{report['http_5xx']} responses were 5xx")
    if report["http_failed"]:
        problems.append(f"{report['http_failed']} requests failed (connection or 4xx)")
    bad = {k: v for k, v in report["outcomes"].items() if k not in ("done", "refused")}
    if bad:
        problems.append(f"clients neither done nor refused: {bad}")
    unexplained = [m for m in report["refusals"] if len(m) < len("Refused: x: y")]
    if unexplained:
        problems.append(f"refusals without a reason: {unexplained}")
    if report["jobs_trained_more_than_once"]:
        problems.append(f"trained more than once: {report['jobs_trained_more_than_once']}")
    done, total = report["served_after_restart"].split("/")
    if done != total or report["retrained_after_restart"]:
        problems.append(f"after the restart: served {report['served_after_restart']}, "
                        f"retrained {report['retrained_after_restart']}")  # fmt: skip
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("diskcache", "redis"), default="diskcache")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--json", help="also write the report to this file")
    parser.add_argument(
        "--burst",
        type=int,
        metavar="N",
        help="instead: N distinct default configs submitted at once (the 90 s target: 30)",
    )
    parser.add_argument(
        "--classroom",
        action="store_true",
        help="instead: viewers watching one job stream, before and after",
    )
    parser.add_argument("--viewers", type=int, default=CLASS_VIEWERS)
    parser.add_argument("--trainers", type=int, default=CLASS_TRAINERS)
    parser.add_argument("--seconds", type=float, default=CLASS_SECONDS)
    parser.add_argument("--before", default=BEFORE, help="the revision measured as before")
    parser.add_argument(
        "--compressed",
        action="store_true",
        help=f"classroom: every client accepts compressed answers ({BROWSER_ENCODINGS!r}), "
        "as a browser does (default: none, as in the earlier measurements)",
    )
    parser.add_argument(
        "--keep-alive",
        action="store_true",
        help="classroom: every client keeps its connection open between requests (HTTP/1.1 "
        "keep-alive), as a browser does (default: a connection per request, as in the "
        "earlier measurements)",
    )
    args = parser.parse_args(argv)
    if args.classroom:
        report = classroom(
            args.viewers, args.trainers, args.seconds, args.before, args.compressed, args.keep_alive
        )
        print(json.dumps(report, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2))
        print(classroom_table(report))
        bad = [
            f"{side}: {report[side]['http_5xx']} 5xx, {report[side]['http_failed']} failed"
            for side in ("before", "after")
            if report[side]["http_5xx"] or report[side]["http_failed"]
        ]
        for p in bad:
            print("FAIL:", p)
        return 1 if bad else 0
    report = burst(args.burst, args.backend) if args.burst else run(args.backend, args.clients)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    if args.burst:
        print(
            f"burst of {args.burst}: first submit -> last done {report['total_s']} s "
            f"(target {BURST_TARGET:.0f} s: {report['ratio_to_target']}x, "
            f"{'within' if report['within_target'] else 'MISSED'}); submit -> done "
            f"p50 {report['submit_to_done_s']['p50']} s, p95 {report['submit_to_done_s']['p95']} s"
            f"; load average {report['load_average_at_submit']} at submit, "
            f"{report['load_average_at_end']} at the end; the simulated browsers used "
            f"{report['clients_cpu_s']} s of CPU, the server's web processes "
            f"{report['server_cpu_s']['web']} s and its training workers "
            f"{report['server_cpu_s']['training']} s"
        )
    problems = check_burst(report, args.burst) if args.burst else check(report)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
