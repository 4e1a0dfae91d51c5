"""app.memo: one computation per key however many requests ask at once (a class polling
the same frame), bounded, and a failure that leaves the others to ask again."""

from __future__ import annotations

import threading
import time

import pytest

from app.memo import Memo


def _ask_at_once(memo: Memo, n: int, make) -> list[object]:
    barrier, out, errors = threading.Barrier(n), [None] * n, []

    def ask(i: int) -> None:
        barrier.wait()
        try:
            out[i] = memo.get_or("key", make)
        except RuntimeError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return out + errors


def test_requests_asking_at_once_share_one_computation() -> None:
    memo, calls = Memo(4), []

    def make() -> list[int]:
        calls.append(1)
        time.sleep(0.2)  # long enough for every request to arrive while it runs
        return [len(calls)]

    got = _ask_at_once(memo, 16, make)
    assert len(calls) == 1
    assert all(g is got[0] for g in got) and got[0] == [1]
    assert memo.get_or("key", make) is got[0] and len(calls) == 1


def test_a_failed_computation_is_not_kept_and_the_waiting_requests_ask_again() -> None:
    memo, calls = Memo(4), []

    def make() -> str:
        calls.append(1)
        time.sleep(0.1)
        if len(calls) == 1:
            raise RuntimeError("the first attempt fails")
        return "value"

    got = _ask_at_once(memo, 4, make)
    assert sum(isinstance(g, RuntimeError) for g in got) == 1
    assert got.count("value") == 3
    assert memo["key"] == "value"
    assert len(calls) == 2  # the failure, then one computation for the three waiting


def test_least_recently_used_entries_leave_first() -> None:
    memo = Memo(2)
    for k in "abc":
        memo.get_or(k, lambda k=k: k.upper())
    assert list(memo) == ["b", "c"]
    memo.get_or("b", pytest.fail)  # a hit: b becomes the most recent, make not called
    memo.put("d", "D")
    assert list(memo) == ["b", "d"]


def test_a_request_that_will_not_wait_gets_pending_while_another_makes_the_value() -> None:
    from app.memo import PENDING

    memo, started, release = Memo(4), threading.Event(), threading.Event()

    def make() -> str:
        started.set()
        release.wait(10)
        return "value"

    maker = threading.Thread(target=memo.get_or, args=("key", make))
    maker.start()
    assert started.wait(10)
    assert memo.get_or("key", pytest.fail, wait=False) is PENDING  # not made twice
    release.set()
    maker.join(10)
    assert memo.get_or("key", pytest.fail, wait=False) == "value"
    assert memo.get_or("other", lambda: "made", wait=False) == "made"  # nobody else: made
