"""A job's record (tempsup.jobs.record): the one table of state changes, and its JSON."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tempsup.errors import TempsupError
from tempsup.jobs.record import (
    ACTIVE,
    LOW,
    NORMAL,
    TRANSITIONS,
    JobRecord,
    JobState,
    JobStatus,
    new_record,
    transition,
)

Q, R, D, F, C = (JobState.QUEUED, JobState.RUNNING, JobState.DONE, JobState.FAILED,
                 JobState.CANCELLED)  # fmt: skip
# what the queue does, written out once more by hand: the table must say exactly this
ALLOWED = {
    (Q, R), (Q, C), (Q, F), (Q, D),
    (R, R), (R, D), (R, F), (R, C), (R, Q),
    (D, F), (D, D),
    (F, Q), (F, D),
    (C, Q), (C, D),
}  # fmt: skip


def record(state: JobState) -> JobRecord:
    return dataclasses.replace(new_record("0123456789abcdef", "run", 40, "alice"), state=state)


def test_the_table_is_the_life_of_a_job():
    table = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}
    assert table == ALLOWED
    assert set(TRANSITIONS) == set(JobState) and ACTIVE == (Q, R)


@pytest.mark.parametrize("old", list(JobState))
@pytest.mark.parametrize("new", list(JobState))
def test_transition_allows_the_table_and_refuses_the_rest(old, new):
    rec = record(old)
    if (old, new) in ALLOWED:
        moved = transition(rec, new, step=7, message="why")
        assert (moved.state, moved.step, moved.message) == (new, 7, "why")
        assert rec.state == old and rec.step == 0  # records are values: the old one stays
    else:
        with pytest.raises(TempsupError, match=f"cannot go from {old.value} to {new.value}"):
            transition(rec, new)


def test_a_new_record_is_queued_with_its_priority():
    rec = new_record("k" * 16, "sweep", 300, "bob", attempts=2, priority=LOW, now=5.0)
    assert (rec.state, rec.kind, rec.total, rec.client) == (Q, "sweep", 300, "bob")
    assert (rec.attempts, rec.priority, rec.submitted, rec.step, rec.n_frames) == (
        2,
        LOW,
        5.0,
        0,
        0,
    )
    assert new_record("k" * 16, "run", 1, "x").priority == NORMAL
    with pytest.raises(TempsupError, match=r"priority: expected one of \(0, 1\), got 5"):
        new_record("k" * 16, "run", 1, "x", priority=5)
    with pytest.raises(TypeError):
        transition(rec, R, no_such_field=1)


def test_records_round_trip_and_damaged_ones_are_missing():
    rec = transition(record(Q), R, pid=12, host="h", token="t", rate=3.5, updated=1.0)
    assert JobRecord.from_json(rec.to_json(), rec.key) == rec
    assert json.loads(rec.to_json())["state"] == "running"
    old = json.loads(rec.to_json())
    del old["kind"], old["priority"]  # written before job kinds and priorities
    back = JobRecord.from_json(json.dumps(old), rec.key)
    assert back.kind == "run" and back.priority == NORMAL
    damaged = [
        "{not json", "[]", json.dumps({**old, "state": "lost"}), json.dumps({**old, "step": "7"}),
        json.dumps({**old, "n_frames": -1}), json.dumps({**old, "attempts": True}),
        json.dumps({k: v for k, v in old.items() if k != "total"}),
    ]  # fmt: skip
    for text in damaged:
        assert JobRecord.from_json(text, rec.key) is None, text
    assert JobRecord.from_json(rec.to_json(), "another0key00000") is None


def test_a_status_round_trips_through_a_browser_store():
    status = JobStatus("k" * 16, R, 5, 40, 2, None, 1.5, "", "run", cancelling=True)
    assert JobStatus.from_dict(json.loads(json.dumps(status.to_dict()))) == status
    assert status.active and not dataclasses.replace(status, state=D).active
