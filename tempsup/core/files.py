"""The files tempsup writes and reads: .npz archives (run files, stored sweep results), CSV tables.

Run files (`tempsup.io.run.Run`, `tempsup.bows.run.BowsRun`; README, "Run file
format") and stored sweep results (`tempsup.analysis.sweeps.SweepResult`,
`tempsup.bows.sweeps.BowsSweepResult`) are compressed .npz archives: arrays
under their names, and JSON (a config, a sweep's spec and rows) as a 0-d
string array. Reading never unpickles (`allow_pickle=False`), so a file from
elsewhere cannot run code; a damaged archive, a missing array, an invalid
config or a shape that does not fit it is a TempsupError that names the file
(`source`), so a cache can treat the file as absent and the CLI can print the
message as it is. Writing a file creates its folder.
"""

from __future__ import annotations

import csv
import io
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from tempsup.errors import TempsupError

C = TypeVar("C")
R = TypeVar("R", bound="RunFile")


def pack(**entries: Any) -> bytes:
    """A compressed .npz archive of the entries (arrays, numbers, or strings such as JSON)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **{name: np.asarray(value) for name, value in entries.items()})
    return buf.getvalue()


def unpack(
    data: bytes, source: str, expected: str, kind: str | None = None
) -> dict[str, np.ndarray]:
    """Every array of an .npz archive. Anything else says what was expected and what came:
    `{source}: [not a {kind}: ]expected {expected}, got {what the bytes are}`, never numpy's
    own words (which suggest `allow_pickle`, the one thing a reader must not do)."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            if not isinstance(npz, np.lib.npyio.NpzFile):
                raise ValueError("not an archive")
            return dict(npz.items())
    except Exception as exc:  # numpy raises many types for a damaged file
        head = f"{source}: " + (f"not a {kind}: " if kind else "")
        what = received(data)
        if data.startswith(b"PK") and "pickle" in str(exc):  # an object array inside
            what = "an .npz archive holding Python objects (never loaded: they could run code)"
        raise TempsupError(f"{head}expected {expected}, got {what}") from None


def received(data: bytes) -> str:
    """What bytes that are not an .npz archive look like, in words."""
    if not data:
        return "an empty file"
    size = f"{len(data)} bytes"
    if data.startswith(b"PK"):
        return f"a zip archive numpy cannot read as .npz ({size}; damaged or cut short?)"
    if data.startswith(b"\x93NUMPY"):
        return f"a single .npy array ({size}), not an .npz archive of named arrays"
    if data.startswith(b"\x80"):
        return f"what looks like a Python pickle ({size}; never loaded: it could run code)"
    try:
        text = data[:400].decode("utf-8")
    except UnicodeDecodeError:
        return f"{size} of unknown content (starting {data[:8].hex(' ')})"
    first = text.strip().splitlines()[0][:40] if text.strip() else ""
    return f"text ({size}, starting {first!r})"


def check_shapes(
    source: str, arrays: Mapping[str, np.ndarray], expect: Mapping[str, tuple]
) -> None:
    """Each named array has the shape its config implies."""
    for name, shape in expect.items():
        if arrays[name].shape != shape:
            raise TempsupError(f"{source}: {name} has shape {arrays[name].shape}, expected {shape}")


def write_bytes(path: str | Path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def write_csv(
    rows: Sequence[Mapping[str, object]], path: str | Path, columns: Sequence[str]
) -> Path:
    """A table with a header of `columns`; a missing value is empty, floats keep 6 digits."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _cell(row.get(c, "")) for c in columns})
    return path


def _cell(value: object) -> object:
    return f"{value:.6g}" if isinstance(value, float) else value


# ---- run files ------------------------------------------------------------------------------


def read_run(
    data: bytes,
    source: str,
    names: Sequence[str],
    file_kind: str,
    config_from_dict: Callable[[Any], C],
    optional: Sequence[str] = (),
    written_by: str = '`tempsup train`/`Download run` (see README, "Run file format")',
    prefixes: Sequence[str] = (),
) -> tuple[C, dict[str, np.ndarray]]:
    """The config and the arrays `names` (and those of `optional` it has, and any whose name
    starts with one of `prefixes`) of a run file.

    The caller checks their shapes. `file_kind` ("tempsup run file") is what a
    file that is no archive or lacks an array is said not to be; `written_by`
    says what writes one (and where the README describes it).
    """
    files = unpack(data, source, f"a .npz archive written by {written_by}", kind=file_kind)
    missing = [k for k in (*names, "config") if k not in files]
    if missing:
        raise TempsupError(f"{source}: not a {file_kind} (missing {', '.join(missing)})")
    try:
        config = config_from_dict(json.loads(str(files["config"])))
    except (TempsupError, ValueError, TypeError) as exc:
        raise TempsupError(f"{source}: its config is invalid ({exc})") from None
    extra = [k for k in files if any(k.startswith(p) for p in prefixes)]
    return config, {k: files[k] for k in (*names, *optional, *extra) if k in files}


class RunFile(ABC):
    """`save` and `load` for a run class that has `to_bytes()` and `from_bytes(data, source=)`."""

    @abstractmethod
    def to_bytes(self) -> bytes: ...

    @classmethod
    @abstractmethod
    def from_bytes(cls: type[R], data: bytes, source: str = "run file") -> R: ...

    def save(self, path: str | Path) -> Path:
        return write_bytes(path, self.to_bytes())

    @classmethod
    def load(cls: type[R], path: str | Path) -> R:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise TempsupError(f"{path}: cannot read run file ({exc.strerror})") from None
        return cls.from_bytes(data, source=str(path))
