"""Settings (`tempsup.settings`): every TEMPSUP_* read once, a bad value refused in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempsup.settings import DEFAULT_CACHE, VARIABLES, Settings, SettingsError

ROOT = Path(__file__).resolve().parent.parent


def test_defaults_without_any_variable():
    s = Settings.from_env({})
    assert s == Settings()
    assert (s.port, s.cache, s.threads, s.max_queue, s.max_per_client) == (
        8050, DEFAULT_CACHE, 1, 50, 3,
    )  # fmt: skip
    assert (s.max_work, s.max_per_minute, s.presets, s.redis_url) == (2e12, 30, "full", None)
    assert (s.redis_prefix, s.worker_loglevel, s.parent_pid) == ("tempsup:", "INFO", None)
    assert s.worker_count == 1 and s.replace(redis_url="redis://x").worker_count == 0


def test_every_variable_is_read():
    env = {
        "PORT": "9000", "TEMPSUP_CACHE": "/srv/jobs", "TEMPSUP_WORKERS": "0",
        "TEMPSUP_THREADS": "2", "TEMPSUP_MAX_QUEUE": "5", "TEMPSUP_MAX_PER_CLIENT": "1",
        "TEMPSUP_MAX_WORK": "off", "TEMPSUP_MAX_PER_MINUTE": "off", "TEMPSUP_PRESETS": "quick",
        "TEMPSUP_REDIS_URL": " redis://r:6379/0 ", "TEMPSUP_REDIS_PREFIX": "demo:",
        "TEMPSUP_WORKER_LOGLEVEL": "WARNING", "TEMPSUP_PARENT_PID": "42",
        "TEMPSUP_WORKER_NICE": "5",
    }  # fmt: skip
    assert set(env) == set(VARIABLES)
    s = Settings.from_env(env)
    assert s == Settings(
        port=9000, cache=Path("/srv/jobs"), workers=0, threads=2, max_queue=5, max_per_client=1,
        max_work=None, max_per_minute=None, presets="quick", redis_url="redis://r:6379/0",
        redis_prefix="demo:", worker_loglevel="WARNING", parent_pid=42, worker_nice=5,
    )  # fmt: skip
    assert Settings.from_env({"TEMPSUP_MAX_WORK": "1e9"}).max_work == 1e9
    assert Settings.from_env({"TEMPSUP_WORKERS": "3", "TEMPSUP_REDIS_URL": "r"}).worker_count == 3


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("TEMPSUP_MAX_QUEUE", "abc", "an integer >= 1"),
        ("TEMPSUP_MAX_QUEUE", "0", "an integer >= 1"),
        ("TEMPSUP_MAX_PER_CLIENT", "2.5", "an integer >= 1"),
        ("TEMPSUP_WORKERS", "-1", "an integer >= 0"),
        ("TEMPSUP_THREADS", "many", "an integer >= 1"),
        ("PORT", "70000", "an integer in [1, 65535]"),
        ("TEMPSUP_MAX_WORK", "lots", "a positive number (e.g. 2e12) or off"),
        ("TEMPSUP_MAX_WORK", "-5", "a positive number (e.g. 2e12) or off"),
        ("TEMPSUP_MAX_WORK", "nan", "a positive number (e.g. 2e12) or off"),
        ("TEMPSUP_MAX_PER_MINUTE", "fast", "an integer >= 1 or off"),
        ("TEMPSUP_PRESETS", "some", "one of full, quick, off"),
        ("TEMPSUP_WORKER_LOGLEVEL", "LOUD", "one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("TEMPSUP_PARENT_PID", "me", "an integer >= 1"),
        ("TEMPSUP_WORKER_NICE", "20", "an integer in [0, 19]"),
    ],
)
def test_a_bad_value_is_refused_in_one_line_naming_the_variable(name, value, allowed):
    with pytest.raises(SettingsError) as info:
        Settings.from_env({name: value})
    assert str(info.value) == f"{name}: expected {allowed}, got {value!r}"


def test_the_documented_table_is_the_list_of_variables():
    """The settings page of the documentation (docs/reference/settings.md) lists them all."""
    page = (ROOT / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([A-Z_]+)` \| (.+?) \| (.+) \|$", page, flags=re.M)
    table = {name: (default, meaning) for name, default, meaning in rows if name in VARIABLES}
    assert table == VARIABLES
