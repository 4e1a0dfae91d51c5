"""A job's own entries in the store: its status record and its spec, read and written
inside a transaction (or a view).

The queue's web verbs, the worker's lease and the results store all read and
write these; here they are spelt once. A missing or damaged entry reads as None.
"""

from __future__ import annotations

import json
from typing import Any

from tempsup.errors import TempsupError
from tempsup.jobs.kinds import JobKind, get_kind
from tempsup.jobs.record import JobRecord
from tempsup.jobs.store import Txn, config_key, status_key
from tempsup.model.config import RunConfig


def get_record(db: Txn, key: str) -> JobRecord | None:
    """The job's record; None if missing or unreadable."""
    text = db.text(status_key(key))
    return None if text is None else JobRecord.from_json(text, key)


def put_record(db: Txn, rec: JobRecord) -> None:
    db.set(status_key(rec.key), rec.to_json())


def spec_entry(kind: JobKind, spec: Any) -> str:
    """A job's config entry: its kind's name and its spec."""
    return json.dumps({"kind": kind.name, "spec": spec.to_json()})


def parse_spec_entry(text: str) -> tuple[JobKind, Any] | None:
    """(kind, spec) of a stored config entry, or None if it cannot be read."""
    try:
        data = json.loads(text)
        if isinstance(data, dict) and set(data) == {"kind", "spec"}:
            kind = get_kind(str(data["kind"]))
            return kind, kind.spec_from_json(data["spec"])
        return get_kind("run"), RunConfig.from_dict(data)  # written before job kinds
    except (TempsupError, TypeError, ValueError):
        return None


def get_spec(db: Txn, key: str) -> tuple[JobKind, Any] | None:
    """The stored (kind, spec) of a job; None if missing or unreadable."""
    text = db.text(config_key(key))
    return None if text is None else parse_spec_entry(text)


def drop_frames(db: Txn, key: str, rec: JobRecord | None) -> None:
    """Delete the frames a job's record says are stored (none without a record)."""
    db.drop_frames(key, rec.n_frames if rec is not None else 0)
