"""What a server accepts: job size, jobs waiting, active jobs and new jobs per client.

`Limits` is one frozen object, built from the settings (`tempsup.settings`)
by the entry points and checked by the queue inside its submit transaction,
so limits hold under concurrent submits. Each refusal is a TempsupError that
says what was expected, what was received and what to do.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from tempsup.errors import TempsupError
from tempsup.jobs.store import Txn, rate_key

# The rate limit's window: `max_rate` new jobs per client per this many seconds.
RATE_WINDOW = 60.0


def _positive_int(name: str, value: Any, allow_none: bool = False) -> None:
    if allow_none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TempsupError(f"limits: {name} expected an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class Limits:
    """`max_queue` jobs waiting in total, `max_per_client` queued or running jobs per
    client (a browser session), `max_work` multiply-adds per job (None: only the
    spec's own hard limits), `max_rate` new jobs per client per `rate_window`
    seconds (None: no rate limit)."""

    max_queue: int = 50
    max_per_client: int = 3
    max_work: float | None = None
    max_rate: int | None = None
    rate_window: float = RATE_WINDOW

    def __post_init__(self) -> None:
        _positive_int("max_queue", self.max_queue)
        _positive_int("max_per_client", self.max_per_client)
        _positive_int("max_rate", self.max_rate, allow_none=True)
        work = self.max_work
        if work is not None and (isinstance(work, bool) or not isinstance(work, (int, float))
                                 or not work > 0):  # fmt: skip
            raise TempsupError(f"limits: max_work expected a positive number, got {work!r}")
        if self.max_work is not None:
            object.__setattr__(self, "max_work", float(self.max_work))
        object.__setattr__(self, "rate_window", float(self.rate_window))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def check(self, spec: Any, waiting: int, mine: int, recent: list[float], now: float) -> None:
        """Refuse `spec` from a client with `mine` active jobs and `recent` submit times,
        with `waiting` jobs in the queue."""
        if self.max_work is not None and spec.work > self.max_work:
            raise TempsupError(
                f"job too large: this config needs {spec.work:.3g} multiply-adds "
                f"(steps*seq_len*seeds*batch*(hidden^2 + hidden*inputs)); this server accepts "
                f"at most {self.max_work:.3g}; lower steps, batch or seeds"
            )
        if mine >= self.max_per_client:
            raise TempsupError(
                f"too many active jobs: expected at most {self.max_per_client} queued or "
                f"running per user, you have {mine}; wait for one to finish or cancel one"
            )
        if self.max_rate is not None and len(recent) >= self.max_rate:
            wait = max(1, int(recent[0] + self.rate_window - now + 0.999))
            raise TempsupError(
                f"too many new jobs: expected at most {self.max_rate} per "
                f"{self.rate_window:.0f} s per user, you started {len(recent)}; "
                f"try again in {wait} s"
            )
        if waiting >= self.max_queue:
            raise TempsupError(
                f"queue full: {waiting} jobs are waiting (at most {self.max_queue}); "
                "try again when some have finished"
            )

    def recent(self, db: Txn, client: str, now: float) -> list[float]:
        """Times within the rate window at which `client` queued a job, oldest first."""
        text = db.text(rate_key(client))
        try:
            times = json.loads(text) if text is not None else []
        except ValueError:
            times = []
        if not isinstance(times, list):
            times = []
        ok = (t for t in times if isinstance(t, (int, float)) and not isinstance(t, bool))
        return sorted(t for t in ok if now - self.rate_window < t <= now + 1.0)

    def count(self, db: Txn, client: str, now: float) -> None:
        """Note that `client` queued a job now (only while a rate limit is on)."""
        if self.max_rate is not None:
            db.set(rate_key(client), json.dumps([*self.recent(db, client, now), now]))
