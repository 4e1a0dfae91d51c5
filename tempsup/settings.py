"""The server's settings: every `TEMPSUP_*` variable (and `PORT`), read once, checked.

`Settings.from_env(os.environ)` is the only reader of these variables; the
entry points (`python -m app`, gunicorn's `app.server`, `tempsup`, the
workers) call it once and pass the object on. A bad value raises a
`SettingsError` whose one line names the variable, the value and what is
allowed, so a server refuses to start instead of silently using a default:

    TEMPSUP_MAX_QUEUE: expected an integer >= 1, got 'abc'

Every variable, its default and its meaning is in `VARIABLES` (and in the
README's table, which a test keeps equal to it).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tempsup.errors import TempsupError

DEFAULT_CACHE = Path(__file__).resolve().parent.parent / "cache" / "jobs"
PRESET_MODES = ("full", "quick", "off")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
OFF = ("off", "none")

# variable -> (default as written in the README, meaning)
VARIABLES: dict[str, tuple[str, str]] = {
    "PORT": ("8050", "port of `python -m app` and of gunicorn"),
    "TEMPSUP_CACHE": ("`cache/jobs`", "the job store directory (diskcache backend)"),
    "TEMPSUP_WORKERS": (
        "1 (Redis: 0)",
        "training worker processes started beside the web server (0: none)",
    ),
    "TEMPSUP_THREADS": (
        "1",
        "torch threads per worker (two workers × two threads on two cores is ~3× slower)",
    ),
    "TEMPSUP_WORKER_NICE": (
        "10",
        "how far below the web server the training workers run (a nice increment, 0–19; "
        "0: the same priority): pages answer at once while a class trains",
    ),
    "TEMPSUP_MAX_QUEUE": ("50", "jobs waiting at most; more are refused with a message"),
    "TEMPSUP_MAX_PER_CLIENT": ("3", "queued or running jobs per browser"),
    "TEMPSUP_MAX_WORK": (
        "2e12",
        "largest job accepted, in multiply-adds (`off`: no limit but the config's own): "
        "the largest preset fits; about 20 minutes on one worker (the default run is 1e9, "
        "seconds). Lower it for a busy public demo",
    ),
    "TEMPSUP_MAX_PER_MINUTE": ("30", "new jobs per browser per minute (`off`: no rate limit)"),
    "TEMPSUP_PRESETS": (
        "`full`",
        "presets the gallery shows and the server pre-trains as low-priority jobs: "
        "`full`, `quick` or `off`",
    ),
    "TEMPSUP_REDIS_URL": ("unset", 'set: jobs go to Redis + Celery workers (see "Scaling out")'),
    "TEMPSUP_REDIS_PREFIX": ("`tempsup:`", "namespace of this deployment's keys in Redis"),
    "TEMPSUP_WORKER_LOGLEVEL": ("`INFO`", "log level of the Celery workers a server starts"),
    "TEMPSUP_PARENT_PID": (
        "unset",
        "set by the server for the Celery workers it starts: they stop when it is gone",
    ),
}


class SettingsError(TempsupError):
    """A setting has a value it may not have; the message is one line naming the variable."""


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int | None = None) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    allowed = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
    try:
        value = int(text)
    except ValueError:
        raise SettingsError(f"{name}: expected {allowed}, got {text!r}") from None
    if value < low or (high is not None and value > high):
        raise SettingsError(f"{name}: expected {allowed}, got {text!r}")
    return value


def _int_or_off(env: Mapping[str, str], name: str, default: int) -> int | None:
    text = env.get(name, "").strip()
    if text.lower() in OFF:
        return None
    try:
        return _int(env, name, default, 1)
    except SettingsError:
        raise SettingsError(f"{name}: expected an integer >= 1 or off, got {text!r}") from None


def _number_or_off(env: Mapping[str, str], name: str, default: float) -> float | None:
    text = env.get(name, "").strip()
    if not text:
        return default
    if text.lower() in OFF:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise SettingsError(f"{name}: expected a positive number (e.g. 2e12) or off, got {text!r}")
    return value


def _choice(env: Mapping[str, str], name: str, default: str, allowed: tuple[str, ...]) -> str:
    text = env.get(name, "").strip()
    if not text:
        return default
    if text not in allowed:
        raise SettingsError(f"{name}: expected one of {', '.join(allowed)}, got {text!r}")
    return text


@dataclass(frozen=True)
class Settings:
    """What a deployment may tune; see `VARIABLES` for each field's variable."""

    port: int = 8050
    cache: Path = DEFAULT_CACHE
    workers: int | None = None  # None: 1 with diskcache, 0 with Redis (workers run elsewhere)
    threads: int = 1
    # training is batch work and a page waits on every answer: with both on two cores, the
    # class's polls waited behind training (README, the classroom benchmark)
    worker_nice: int = 10
    max_queue: int = 50
    max_per_client: int = 3
    # 2e12 multiply-adds: every preset stays retrainable; ~20 min on one core
    max_work: float | None = 2e12
    # the active-jobs limit already bounds concurrency; this one stops a scripted flood
    max_per_minute: int | None = 30
    presets: str = "full"
    redis_url: str | None = None
    redis_prefix: str = "tempsup:"
    worker_loglevel: str = "INFO"
    parent_pid: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Read every variable once; SettingsError (one line) for the first bad value."""
        d = cls()
        workers = env.get("TEMPSUP_WORKERS", "").strip()
        parent = env.get("TEMPSUP_PARENT_PID", "").strip()
        return cls(
            port=_int(env, "PORT", d.port, 1, 65535),
            cache=Path(env.get("TEMPSUP_CACHE", "").strip() or d.cache),
            workers=_int(env, "TEMPSUP_WORKERS", 0, 0) if workers else None,
            threads=_int(env, "TEMPSUP_THREADS", d.threads, 1),
            worker_nice=_int(env, "TEMPSUP_WORKER_NICE", d.worker_nice, 0, 19),
            max_queue=_int(env, "TEMPSUP_MAX_QUEUE", d.max_queue, 1),
            max_per_client=_int(env, "TEMPSUP_MAX_PER_CLIENT", d.max_per_client, 1),
            max_work=_number_or_off(env, "TEMPSUP_MAX_WORK", 2e12),
            max_per_minute=_int_or_off(env, "TEMPSUP_MAX_PER_MINUTE", 30),
            presets=_choice(env, "TEMPSUP_PRESETS", d.presets, PRESET_MODES),
            redis_url=env.get("TEMPSUP_REDIS_URL", "").strip() or None,
            redis_prefix=env.get("TEMPSUP_REDIS_PREFIX", "").strip() or d.redis_prefix,
            worker_loglevel=_choice(env, "TEMPSUP_WORKER_LOGLEVEL", d.worker_loglevel, LOG_LEVELS),
            parent_pid=_int(env, "TEMPSUP_PARENT_PID", 0, 1) if parent else None,
        )

    def replace(self, **changes: object) -> Settings:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @property
    def worker_count(self) -> int:
        """Training workers beside the web server: the setting, else 1 (Redis: 0)."""
        if self.workers is not None:
            return self.workers
        return 0 if self.redis_url else 1
