"""The job store: the few primitives the queue's logic needs and their names.

A backend supplies a `Store`: reads and writes of text (JSON) and bytes,
a job's frames, and `atomic(fn)`, a read-modify-write that applies all of
`fn`'s writes or none (it may run `fn` more than once).
`tempsup.jobs.disk.DiskStore` is one diskcache directory (atomic =
`cache.transact()`, an SQLite write lock); `tempsup.jobs.redis.RedisStore`
is the other. Names (prefixed in Redis;
values are JSON text or bytes, never pickles):

    queue                 JSON list of QUEUED keys, oldest first (the FIFO)
    running               JSON list of RUNNING keys (what `recover` inspects)
    status:{key}          the job's record (`tempsup.jobs.record.JobRecord`) as JSON
    config:{key}          JSON {"kind": name, "spec": spec.to_json()}
    frame:{key}:{i}       published frame i as `np.savez` bytes (in Redis: one list
                          `frames:{key}`), while running and kept after a failure or
                          cancel; dropped once the job is DONE
    run:{key}             result.to_bytes() of a DONE job; its frames are served from it
    rate:{client hash}    JSON list of the times a client queued a job (the rate limit)
    blob:{sha256}         content a spec names by its hash (an uploaded text)
    poll:…                the class poll's entries (`tempsup.teaching.poll`), each with an expiry

`set(name, value, expire=seconds)` writes an entry that the store itself drops
after that many seconds (diskcache's expire, Redis's PX): data that must not
outlive a day need not wait for a sweep.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

import cachetools
import numpy as np

from tempsup.errors import TempsupError

T = TypeVar("T")

QUEUE = "queue"
RUNNING = "running"


class StoreUnavailable(TempsupError):
    """The job store (Redis) cannot be reached; the operation may be retried."""


def status_key(key: str) -> str:
    return f"status:{key}"


def config_key(key: str) -> str:
    return f"config:{key}"


def frame_key(key: str, index: int) -> str:
    return f"frame:{key}:{index}"


def run_key(key: str) -> str:
    return f"run:{key}"


def rate_key(client: str) -> str:
    digest = hashlib.sha256(client.encode("utf-8", "surrogatepass")).hexdigest()
    return f"rate:{digest[:16]}"


def blob_key(digest: str) -> str:
    return f"blob:{digest}"


# ---- frames as bytes ---------------------------------------------------------------


# A frame is a header and the arrays' raw bytes: b"TSF1", the header's length (4 bytes,
# little-endian), the header (JSON: [name, dtype, shape] per array), then each array's
# bytes in order. Every poll of a running job decodes all its frames so far (its view
# needs the whole run), so the format is made for reading: np.savez's zip and per-array
# headers cost 2.3 ms a frame (0.1 s a poll at 100 frames), this some 30 µs.
FRAME_MAGIC = b"TSF1"


def frame_to_bytes(frame: dict[str, np.ndarray]) -> bytes:
    arrays = {name: np.asarray(value) for name, value in frame.items()}
    header = json.dumps([[n, a.dtype.str, list(a.shape)] for n, a in arrays.items()]).encode()
    parts = [FRAME_MAGIC, len(header).to_bytes(4, "little"), header]
    parts += [a.tobytes(order="C") for a in arrays.values()]
    return b"".join(parts)


# Decoded frames by the digest of their bytes: a streaming page reads every frame of its
# job on each poll, and all but the newest were decoded before. The arrays are read-only
# (shared by every reader in the process); bounded by bytes.
_DECODED: cachetools.LRUCache = cachetools.LRUCache(
    maxsize=32 * 2**20, getsizeof=lambda arrays: sum(a.nbytes for a in arrays.values()) + 512
)
_DECODED_LOCK = threading.Lock()


def frame_from_bytes(data: bytes, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Decode a stored frame holding the arrays `names` (read-only arrays); TempsupError
    if it is not one."""
    digest = hashlib.blake2b(data, digest_size=16).digest()
    with _DECODED_LOCK:
        arrays = _DECODED.get(digest)
    if arrays is None:
        try:
            arrays = _decode_frame(data)
        except Exception as exc:  # damaged data fails in many ways
            raise TempsupError(f"stored frame: expected a tempsup frame ({exc})") from None
        for a in arrays.values():
            a.flags.writeable = False
        with _DECODED_LOCK:
            _DECODED[digest] = arrays
    missing = [name for name in names if name not in arrays]
    if missing:
        raise TempsupError(f"stored frame: missing {', '.join(missing)}")
    return {name: arrays[name] for name in names}


def _decode_frame(data: bytes) -> dict[str, np.ndarray]:
    if data[:2] == b"PK":  # frames written by np.savez (before this format)
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    if data[:4] != FRAME_MAGIC:
        raise ValueError("no frame header")
    size = int.from_bytes(data[4:8], "little")
    offset = 8 + size
    arrays = {}
    for name, dtype, shape in json.loads(data[8:offset]):
        dt = np.dtype(dtype)
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(f"{name}: shape {shape!r}")
        if dt.hasobject:
            raise ValueError(f"{name}: object arrays are not frames")
        count = math.prod(shape)
        end = offset + count * dt.itemsize
        if end > len(data):
            raise ValueError(f"{name}: {end - len(data)} bytes missing")
        arrays[name] = np.frombuffer(data, dt, count, offset).reshape(shape).copy()
        offset = end
    if offset != len(data):
        raise ValueError(f"{len(data) - offset} bytes after the last array")
    return arrays


# ---- the storage a backend provides ------------------------------------------------


class Txn(Protocol):
    """Reads and writes of one store; inside `Store.atomic` they form one transaction.

    `text`/`data` return None for a missing entry and for one that cannot be
    read as text (JSON) or bytes: a damaged entry is a missing one.
    """

    def text(self, name: str) -> str | None: ...
    def data(self, name: str) -> bytes | None: ...
    def set(self, name: str, value: str | bytes, expire: float | None = None) -> None: ...
    def delete(self, name: str) -> None: ...
    def set_frame(self, key: str, index: int, data: bytes, stored: int) -> None: ...
    def drop_frames(self, key: str, stored: int) -> None: ...


class Store(Protocol):
    def view(self) -> Txn:
        """Reads and writes outside a transaction (each one atomic by itself)."""
        ...

    def atomic(self, fn: Callable[[Txn], T]) -> T:
        """Run `fn` as one transaction: all its writes or none; it may run more than once."""
        ...

    def frames(self, key: str, start: int, stop: int) -> list[bytes | None]:
        """Stored frames start..stop-1 of a job (None where missing)."""
        ...

    def close(self) -> None: ...


# ---- lists of keys (the FIFO, the running set) --------------------------------------


def read_list(db: Txn, name: str) -> list[str]:
    """A stored JSON list of keys; a damaged one is empty."""
    text = db.text(name)
    try:
        items = json.loads(text) if text is not None else []
    except ValueError:
        return []
    return [k for k in items if isinstance(k, str)] if isinstance(items, list) else []


def write_list(db: Txn, name: str, items: list[str]) -> None:
    db.set(name, json.dumps(items))


def remove_from(db: Txn, name: str, key: str) -> None:
    items = read_list(db, name)
    if key in items:
        write_list(db, name, [k for k in items if k != key])
