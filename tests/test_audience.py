"""A web process's count of the pages polling it (`app.audience`): each poll counts as its
page's period over the window, so a page counts once whatever its period; a poll request
is read for the period it carries, and only the polls of listened intervals count."""

from __future__ import annotations

import pytest

from app import audience, ids

POLL = {"type": "test-poll", "page": "audience"}


@pytest.fixture(autouse=True)
def fresh():
    audience.clear()
    audience.listen(POLL)
    yield
    audience.clear()
    audience._TRIGGERS.pop(f"{ids.text(POLL)}.n_intervals", None)


def _poll(period: object, changed: str | None = None) -> dict:
    return {
        "output": "x.data",
        "changedPropIds": [changed or f"{ids.text(POLL)}.n_intervals"],
        "inputs": [{"id": POLL, "property": "n_intervals", "value": 3}],
        "state": [
            {"id": "job-store", "property": "data", "value": {"key": "k"}},
            {"id": POLL, "property": "interval", "value": period},
        ],
    }


@pytest.mark.parametrize("periods", [[300] * 12, [2000] * 5, [300] * 6 + [1100] * 4 + [2000]])
def test_each_page_counts_once_whatever_its_period(periods):
    """Pages polling at their own periods, for a long while: the count is their number."""
    t = 100.0
    for step in range(int(40 * 1000 / 300)):  # 40 s in steps of 0.3 s
        t = 100.0 + step * 0.3
        for i, p in enumerate(periods):
            # page i polls at t when a multiple of its period falls in (t - 0.3, t]
            if int((t * 1000 + 37 * i) // p) != int(((t - 0.3) * 1000 + 37 * i) // p):
                audience.heard(p, now=t)
    assert audience.pages(now=t) == pytest.approx(len(periods), rel=0.12)


def test_a_page_that_stops_polling_stops_counting_after_the_window():
    for k in range(20):
        audience.heard(500, now=10.0 + 0.5 * k)
    assert audience.pages(now=19.6) == pytest.approx(1.0, abs=0.13)
    assert audience.pages(now=9.5 + 0.5 * 20 + audience.WINDOW_S + 0.01) == 0.0


def test_only_a_period_is_counted():
    for bad in (None, True, 0, -300, "300", [300]):
        audience.heard(bad, now=1.0)
    assert audience.pages(now=1.0) == 0.0
    audience.heard(10_000, now=1.0)  # slower than the window: one request is one page
    assert audience.pages(now=1.0) == 1.0


def test_a_poll_request_says_its_period_and_others_say_none():
    assert audience.period_of(_poll(1100)) == 1100
    assert audience.period_of(_poll(1100, changed="other.n_intervals")) is None
    assert audience.period_of({**_poll(1100), "changedPropIds": ["a.b", "c.d"]}) is None
    no_interval = _poll(1100)
    no_interval["state"] = no_interval["state"][:1]
    assert audience.period_of(no_interval) is None
    for body in (None, [], "text", {"changedPropIds": None}):
        assert audience.period_of(body) is None
