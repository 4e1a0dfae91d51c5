"""What every spec shares: its content key, strict JSON both ways, checks that name the problem.

A *spec* is what the job queue is asked to train (`tempsup.jobs.kinds`): a run
config (`tempsup.model.config.RunConfig`, `tempsup.bows.config.BowsConfig`) or a
sweep of one (`tempsup.analysis.sweeps.SweepSpec`, `tempsup.bows.sweeps.BowsSweepSpec`).
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
import functools
import hashlib
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from tempsup.core import files as _files
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


class Spec(ABC):
    """JSON out, JSON in and the content key, for a spec that provides `to_dict`,
    `from_dict` (strict, raising TempsupError) and `_key_payload`."""

    what: ClassVar[str]  # the spec's name in error messages: "config", "sweep", …

    @abstractmethod
    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    @abstractmethod
    def from_dict(cls, data: Any) -> Any: ...

    @abstractmethod
    def _key_payload(self) -> dict[str, Any]:
        """What `key` hashes: the spec's content plus whatever keeps it apart from others."""
        ...

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Any:
        return cls.from_dict(parse_json(text, cls.what))

    @functools.cached_property
    def key(self) -> str:
        """Stable content hash of `_key_payload`: the job id, cache key and share-link id.

        Computed once per spec (specs are frozen): a poll asks a config for it a
        dozen times."""
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


# ---- sweeps: a base config × two lists of values, trained as one batch, and the result ----


def sorted_unique(what: str, name: str, values: Any, kind: type) -> tuple:
    """A sweep's list of values, sorted: a non-empty sequence of distinct finite numbers
    (integers if `kind` is int), each converted to `kind`."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise TempsupError(f"{what}: {name} expected a non-empty list of numbers, got {values!r}")
    out = []
    for v in values:
        ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
        if ok and kind is int:
            ok = float(v).is_integer()
        if not ok:
            what_ = "integers" if kind is int else "numbers"
            raise TempsupError(f"{what}: {name} expected {what_}, got {v!r} in {list(values)!r}")
        out.append(kind(v))
    if len(set(out)) != len(out):
        raise TempsupError(f"{what}: {name} expected distinct values, got {list(values)!r}")
    return tuple(sorted(out))


class SweepSpecBase(Spec):
    """A sweep job: every point of two value lists applied to a `base` config, each point
    × its seeds, all trained as one batch.

    A subclass is a frozen dataclass with the fields `base` and the two lists
    named by `axes` ((field, number type) each): the first list is required,
    the second may be empty and then holds only `_outer_default()`, the base's
    own value. Both are stored sorted and without repeats. `configs` (one per
    point) is the subclass's; `key` hashes the points' config keys, so two
    specs with the same points are the same job.
    """

    kind: ClassVar[str]  # the job kind, also the tag in `key` (never a run's key)
    version: ClassVar[int]  # the configs' schema version
    config_type: ClassVar[type]
    axes: ClassVar[tuple[tuple[str, type], tuple[str, type]]]

    base: Any
    configs: Any  # list of one config per point (a cached property of the subclass)

    @abstractmethod
    def _outer_default(self) -> tuple: ...

    def _check_points(self, max_points: int) -> int:
        """Check the base and both lists, store the lists sorted, validate every point;
        returns the number of points."""
        if not isinstance(self.base, self.config_type):
            raise TempsupError(
                f"{self.what}: base expected a {self.config_type.__name__}, "
                f"got {type(self.base).__name__}"
            )
        (first, first_type), (second, second_type) = self.axes
        values = sorted_unique(self.what, first, getattr(self, first), first_type)
        given = getattr(self, second)
        outer = (
            sorted_unique(self.what, second, given, second_type) if given else self._outer_default()
        )
        object.__setattr__(self, first, values)
        object.__setattr__(self, second, outer)
        n = len(values) * len(outer)
        if n > max_points:
            raise TempsupError(
                f"{self.what}: expected at most {max_points} points ({first} × {second}), got "
                f"{len(values)} × {len(outer)} = {n}; sweep fewer values"
            )
        try:  # validates every point; the config names the field
            self.configs  # noqa: B018 - computed (and cached) for its checks
        except TempsupError as exc:
            raise TempsupError(f"{self.what}: a point is invalid: {exc}") from None
        return n

    def _check_memory(self, size: float, limit: float, formula: str, lower: str) -> None:
        """Refuse a sweep whose one batch would exhaust memory, naming what to lower."""
        if size > limit:
            raise TempsupError(
                f"{self.what} too large: {formula} = {size:.3g} exceeds {limit:.3g} "
                f"(it would exhaust memory); lower {lower}"
            )

    def _check_work(self, max_work: float, lower: str) -> None:
        work = self.work
        if work > max_work:
            raise TempsupError(
                f"{self.what} too long: {len(self.configs)} points need {work:.3g} "
                f"multiply-adds, more than {max_work:.3g} (hours of training); lower {lower}"
            )

    def _key_payload(self) -> dict[str, Any]:
        return {"kind": self.kind, "v": self.version, "points": self.point_keys}

    @property
    def steps(self) -> int:
        """Optimizer steps: every point trains in the same batch, so the base's."""
        return self.base.steps

    @property
    def n_snapshots(self) -> int:
        return self.base.n_snapshots

    @property
    def work(self) -> float:
        """Multiply-adds of the whole batch: the sum over points."""
        return float(sum(c.work for c in self.configs))

    @property
    def point_keys(self) -> list[str]:
        return [c.key for c in self.configs]

    def to_dict(self) -> dict[str, Any]:
        (first, _), (second, _) = self.axes
        return {
            "base": self.base.to_dict(),
            first: list(getattr(self, first)),
            second: list(getattr(self, second)),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        (first, _), (second, _) = cls.axes
        if not isinstance(data, dict):
            raise TempsupError(f"{cls.what}: expected a mapping, got {type(data).__name__}")
        unknown = sorted(set(data) - {"base", first, second})
        if unknown or "base" not in data or first not in data:
            raise TempsupError(
                f"{cls.what}: expected fields base, {first} and optionally {second}, "
                f"got {sorted(data)}"
            )
        base = cls.config_type.from_dict(data["base"])  # type: ignore[attr-defined]
        return cls(base, data[first], tuple(data.get(second) or ()))  # type: ignore[call-arg]


@dataclass
class SweepResultBase:
    """A finished sweep: the table rows (`configs` order), the points' run keys, and the
    published frames stacked (axis 0 frames, axis 1 points), stored as one .npz archive
    (`tempsup.core.files`: the frame arrays, and the spec, rows and keys as JSON "meta").

    `runs` holds the points' runs only on the worker that trained them (they are
    stored as jobs of their own); it is not serialised. A subclass names its
    `spec_type`, the `frame_arrays` of a published frame ("step" first, then
    one (P,) array per measure) and what a stored result is called.
    """

    spec_type: ClassVar[type]
    frame_arrays: ClassVar[tuple[str, ...]]
    expected: ClassVar[str]  # "a tempsup sweep result": what a damaged one is said not to be
    source: ClassVar[str]  # the default name of a stored result in messages

    spec: Any
    rows: list[dict[str, object]]
    keys: list[str]
    arrays: dict[str, np.ndarray]
    runs: list[Any] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def assemble(
        cls, spec: Any, runs: list[Any], published: Sequence[dict[str, Any]], row: Callable
    ) -> Any:
        """The result of `spec` from its points' runs (`row(run)` makes a table row) and
        the published frames, stacked by `frame_arrays`."""
        arrays = {n: np.stack([f[n] for f in published]) for n in cls.frame_arrays}
        return cls(spec, [row(r) for r in runs], [r.config.key for r in runs], arrays, runs=runs)

    @property
    def n_frames(self) -> int:
        return int(self.arrays["step"].shape[0])

    def frames(self, start: int = 0) -> list[dict[str, np.ndarray]]:
        return [
            {name: np.array(a[i]) for name, a in self.arrays.items()}
            for i in range(start, self.n_frames)
        ]

    def to_bytes(self) -> bytes:
        meta = {"spec": self.spec.to_dict(), "rows": self.rows, "keys": self.keys}
        return _files.pack(**self.arrays, meta=json.dumps(meta))

    @classmethod
    def from_bytes(cls, data: bytes, source: str | None = None) -> Any:
        source = cls.source if source is None else source
        files = _files.unpack(data, source, cls.expected)
        try:
            meta = json.loads(str(files.pop("meta")))
            spec = cls.spec_type.from_dict(meta["spec"])
            rows, keys = list(meta["rows"]), [str(k) for k in meta["keys"]]
        except TempsupError as exc:
            raise TempsupError(f"{source}: its spec is invalid ({exc})") from None
        except Exception as exc:  # json and a missing entry raise many types for damaged data
            raise TempsupError(f"{source}: expected {cls.expected} ({exc})") from None
        missing = [n for n in cls.frame_arrays if n not in files]
        if missing:
            raise TempsupError(f"{source}: missing {', '.join(missing)}")
        arrays = {n: files[n] for n in cls.frame_arrays}
        step = arrays["step"]
        n_frames, n_points = (step.shape[0] if step.ndim == 1 else 0), len(spec.configs)
        if n_frames == 0:
            raise TempsupError(f"{source}: step has shape {step.shape}, no frames")
        _files.check_shapes(
            source, arrays, {name: (n_frames, n_points) for name in cls.frame_arrays[1:]}
        )
        if keys != spec.point_keys or len(rows) != n_points:
            raise TempsupError(f"{source}: its rows and keys do not match its points")
        return cls(spec, rows, keys, arrays)
