"""What every spec shares: its content key, strict JSON both ways, checks that name the problem.

A *spec* is what the job queue is asked to train (`tempsup.jobkinds`): a run
config (`tempsup.config.RunConfig`, `tempsup.bows.config.BowsConfig`) or a
sweep of one (`tempsup.sweep.SweepSpec`, `tempsup.bows.sweep.BowsSweepSpec`).
Its `key` is at once the job id, the cache key and the share-link id, so the
hashing lives here, once: every kind of spec hashes the same canonical JSON,
and keeps apart from the others by what its payload holds (a kind tag, a
schema version). Parsing is strict at this boundary, unknown fields are
refused rather than ignored, and every message names the field, the value
received and what was allowed (science.md §1), so the CLI prints it as one
line and the app shows it beside the control that caused it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any, ClassVar

from tempsup.errors import TempsupError

# Hex digits of a key: 64 bits, far from a collision among the runs one cache
# holds, and short enough for a URL. Changing it (or the JSON below) changes
# every key: cached results and shared links would all be lost.
KEY_LENGTH = 16


def content_key(payload: dict[str, Any]) -> str:
    """Stable hash of JSON-able data: sha256 of its canonical JSON, the first KEY_LENGTH digits.

    Canonical means sorted keys and no spaces, so equal payloads hash alike
    whatever order their fields were built in; floats go through `repr`
    (JSON), so 0.9 and 0.90000 hash alike but 0.9 and 0.9000001 do not.
    """
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def parse_json(text: str, what: str) -> Any:
    """`json.loads`, with a parse failure as a TempsupError prefixed by `what` ("config", …)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise TempsupError(f"{what}: expected JSON, could not parse it ({exc})") from None


class Spec:
    """JSON out, JSON in and the content key, for a spec that provides `to_dict`,
    `from_dict` (strict, raising TempsupError) and `_key_payload`."""

    what: ClassVar[str]  # the spec's name in error messages: "config", "sweep", …

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        raise NotImplementedError

    def _key_payload(self) -> dict[str, Any]:
        """What `key` hashes: the spec's content plus whatever keeps it apart from others."""
        raise NotImplementedError

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Any:
        return cls.from_dict(parse_json(text, cls.what))

    @property
    def key(self) -> str:
        """Stable content hash of `_key_payload`: the job id, cache key and share-link id."""
        return content_key(self._key_payload())


# ---- configs: a frozen dataclass of validated fields --------------------------------------


class Config(Spec):
    """A run config: a frozen dataclass whose fields are its JSON, built strictly."""

    what: ClassVar[str] = "config"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        """Build from JSON-like data (a run file, an API call, a URL), strictly."""
        if not isinstance(data, dict):
            raise TempsupError(f"config: expected a mapping of fields, got {type(data).__name__}")
        cls._refuse_unknown(data)
        return cls(**data)

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed, validated like a new config."""
        self._refuse_unknown(changes)
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    @classmethod
    def _refuse_unknown(cls, data: dict[str, Any]) -> None:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(str(name) for name in set(data) - names)
        if unknown:
            raise TempsupError(
                f"config: unknown field(s) {', '.join(unknown)}; "
                f"known fields are {', '.join(sorted(names))}"
            )


def check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise TempsupError(f"{name}: expected one of {', '.join(allowed)}, got {value!r}")


def check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise TempsupError(f"{name}: expected true or false, got {value!r}")


def check_int(name: str, value: object, lo: int, hi: int, hint: str = "") -> None:
    """A config integer: a Python int (JSON has no other), not a bool, in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TempsupError(f"{name}: expected an integer in [{lo}, {hi}], got {value!r}")
    if not lo <= value <= hi:
        extra = f" ({hint})" if hint else ""
        raise TempsupError(f"{name}: expected an integer in [{lo}, {hi}], got {value}{extra}")


def check_float(
    name: str,
    value: object,
    lo: float,
    hi: float,
    lo_open: bool = False,
    hi_open: bool = False,
) -> None:
    """A config number: finite, in the interval (open at either end if asked)."""
    interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TempsupError(f"{name}: expected a number in {interval}, got {value!r}")
    v = float(value)
    ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
    if not ok:
        raise TempsupError(f"{name}: expected a number in {interval}, got {value!r}")
