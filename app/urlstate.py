"""The config in the URL: query string ↔ `RunConfig`, strictly and safely.

A shared link is the whole state of a view, so `?model=rnn&k=3&sparsity=0.97`
must rebuild exactly that config. Parsing never raises past this module: a bad
value falls back to the default for that field and comes back as a message the
page shows beside the controls.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode

from tempsup.config import DEFAULTS, RunConfig
from tempsup.errors import TempsupError

# Always written, so a link states its main settings even when they are defaults.
MAIN_FIELDS = ("model", "k", "sparsity", "hidden", "inputs")
# Query values longer than this are refused outright (no field needs more).
MAX_VALUE_LEN = 40
# In the web app a warm start may only name a run in the job store, never a path.
RUN_KEY = re.compile(r"^[0-9a-f]{16}$")

_TYPES = {f.name: type(getattr(DEFAULTS, f.name)) for f in dataclasses.fields(RunConfig)}
_TYPES["curriculum"] = float
_TYPES["warm_start"] = str


def parse_value(name: str, text: str) -> Any:
    """One query value to the field's type; TempsupError names field and value."""
    if len(text) > MAX_VALUE_LEN:
        raise TempsupError(f"{name}: value too long ({len(text)} characters)")
    kind = _TYPES[name]
    if name in ("curriculum", "warm_start") and text.lower() in ("", "none", "off"):
        return None
    try:
        if kind is bool:
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
    except ValueError:
        raise TempsupError(
            f"{name}: expected {'true/false' if kind is bool else kind.__name__}, got {text!r}"
        ) from None
    if name == "warm_start" and not RUN_KEY.match(text):
        raise TempsupError(f"warm_start: expected a 16-character run key, got {text!r}")
    return text


def config_from_query(search: str | None) -> tuple[RunConfig, list[str]]:
    """The config a query string describes, and messages for what was ignored."""
    values: dict[str, Any] = {}
    errors: list[str] = []
    query = search.lstrip("?") if isinstance(search, str) else ""
    for name, text in parse_qsl(query, keep_blank_values=True)[:64]:
        if name not in _TYPES:
            continue  # view parameters (seed, frame) and unknown keys
        try:
            values[name] = parse_value(name, text)
        except TempsupError as exc:
            errors.append(str(exc))
    try:
        return RunConfig(**values), errors
    except TempsupError:
        pass
    # keep each field that is valid on its own, drop (and name) the rest; fields that
    # bound others go first (k < seq_len, snapshot_every <= steps)
    config = DEFAULTS
    for name in sorted(values, key=lambda n: n not in ("seq_len", "steps")):
        try:
            config = config.replace(**{name: values[name]})
        except TempsupError as exc:
            errors.append(str(exc))
    return config, errors


def query_from_config(config: RunConfig) -> str:
    """A short, stable query string: main fields plus every non-default one."""
    pairs = []
    for f in dataclasses.fields(RunConfig):
        value = getattr(config, f.name)
        if f.name in MAIN_FIELDS or value != getattr(DEFAULTS, f.name):
            pairs.append((f.name, _text(value)))
    return "?" + urlencode(pairs)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value)
    return str(value)
