"""The class poll's promises without a browser (issue 23, item 8): on a real diskcache
store (and a real Redis), then over HTTP through the app's own Flask server.

One vote per browser per step (a second is refused and changes nothing); only the
class's own teacher key reads its counts; codes, steps, choices and browser ids are
checked; live classes, browsers per class and requests per minute are bounded with a
clear refusal; everything expires a day after the class was made — by the poll's
clock (injected here, so no test waits a day) and by the store itself (each entry is
written with an expiry). The HTTP tests send what a crafted request would.
"""

from __future__ import annotations

import json
import secrets

import pytest

from tempsup.jobs.disk import DiskStore
from tempsup.teaching import lesson
from tempsup.teaching.poll import (
    ALPHABET,
    CLASSES,
    DAY,
    Poll,
    PollLimits,
    PollRefused,
    Rate,
    choice_identity,
    class_name,
    normal_code,
)

IP = "203.0.113.7"


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def browser() -> str:
    return secrets.token_hex(16)


@pytest.fixture
def store(tmp_path):
    s = DiskStore(tmp_path / "jobs")
    yield s
    s.close()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def poll(store, clock):
    return Poll(store, clock=clock)


def refused(fn, status: int, *words: str) -> str:
    with pytest.raises(PollRefused) as info:
        fn()
    message = str(info.value)
    assert info.value.status == status, message
    for w in words:
        assert w in message, message
    return message


def test_a_code_is_short_and_unambiguous_and_the_key_is_secret(poll):
    made = poll.create(IP)
    assert len(made.code) == 6 and set(made.code) <= set(ALPHABET)
    assert not set(ALPHABET) & set("01OI")
    assert len(made.key) == 32 and made.key not in json.dumps(poll.store.view().text(
        class_name(made.code)))  # fmt: skip
    assert normal_code(f" {made.code[:3].lower()}-{made.code[3:]} ") == made.code
    assert poll.exists(made.code) and not poll.exists("ZZZZZZ") and not poll.exists("0")


def test_one_vote_per_browser_per_step(poll):
    made, me = poll.create(IP), browser()
    assert poll.vote(made.code, 1, me, 0, IP) == 1
    refused(lambda: poll.vote(made.code, 1, me, 2, IP), 409, "already counted", "step 1")
    assert poll.vote(made.code, 2, me, 1, IP) == 1  # another step: a vote of its own
    assert poll.vote(made.code, 1, browser(), 2, IP) == 2  # another browser
    res = poll.results(made.code, made.key, 1, IP)
    assert res.counts == (1, 0, 1, 0) and res.total == 2 and res.browsers == 2
    # the store keeps neither the browser id nor anything but hashes of it
    assert me not in (poll.store.view().text(class_name(made.code)) or "")


def test_votes_are_kept_by_the_choice_not_its_shown_place(poll):
    """Step 1's choices are shuffled for display: a vote for the place a choice is shown
    in counts for that choice, and the teacher's rows come back in the shown order."""
    made = poll.create(IP)
    item = lesson.step(1)
    shown, _ = lesson.shown_choices(item)
    assert shown != list(item.choices)  # the test means something only if shuffled
    for place in range(len(shown)):
        for _ in range(place + 1):
            poll.vote(made.code, 1, browser(), choice_identity(1, place), IP)
    res = poll.results(made.code, made.key, 1, IP)
    assert res.shown() == [(c, i + 1) for i, c in enumerate(shown)]
    assert res.counts[item.choices.index(shown[0])] == 1


def test_only_the_classs_own_key_reads_its_counts(poll):
    a, b = poll.create(IP), poll.create(IP)
    poll.vote(b.code, 1, browser(), 0, IP)
    refused(lambda: poll.results(b.code, a.key, 1, IP), 403, f"does not open class {b.code}")
    refused(lambda: poll.results(b.code, None, 1, IP), 403, "teacher key")
    refused(lambda: poll.results(b.code, b.code, 1, IP), 403, "teacher key")  # a student's code
    assert poll.results(b.code, b.key, 1, IP).total == 1
    refused(lambda: poll.end(b.code, a.key, IP), 403)
    poll.end(b.code, b.key, IP)
    refused(lambda: poll.vote(b.code, 1, browser(), 0, IP), 404, "not running")


@pytest.mark.parametrize(
    ("code", "step", "who", "choice", "field"),
    [
        ("ABC", 1, None, 0, "class code"),
        ("ABCDE0", 1, None, 0, "class code"),  # 0 is not in the alphabet
        (["AB"], 1, None, 0, "class code"),
        (None, 0, None, 0, "step"),
        (None, 7, None, 0, "step"),
        (None, "1", None, 0, "step"),
        (None, True, None, 0, "step"),
        (None, 1, None, 4, "choice"),  # step 1 has four choices
        (None, 1, None, -1, "choice"),
        (None, 1, None, 1.0, "choice"),
        (None, 1, "x" * 32, 0, "browser id"),
        (None, 1, "ab" * 8, 0, "browser id"),
        (None, 1, 12345, 0, "browser id"),
    ],
)
def test_bad_requests_are_refused_naming_the_field(poll, code, step, who, choice, field):
    made = poll.create(IP)
    code = made.code if code is None else code
    who = browser() if who is None else who
    refused(lambda: poll.vote(code, step, who, choice, IP), 400, field)


def test_unknown_class_is_refused(poll):
    refused(lambda: poll.vote("ZZZZZZ", 1, browser(), 0, IP), 404, "ZZZZZZ", "not running")


def test_live_classes_and_browsers_per_class_are_bounded(store, clock):
    poll = Poll(store, PollLimits(max_classes=3, max_browsers=4), clock=clock)
    made = [poll.create(f"10.0.0.{i}") for i in range(3)]
    refused(lambda: poll.create("10.0.0.9"), 503, "too many class polls", "at most 3")
    voters = [browser() for _ in range(4)]
    for v in voters:
        poll.vote(made[0].code, 1, v, 0, IP)
    refused(lambda: poll.vote(made[0].code, 1, browser(), 0, IP), 503, "is full", "at most 4")
    assert poll.vote(made[0].code, 2, voters[0], 0, IP) == 1  # a browser in the class votes on
    poll.end(made[1].code, made[1].key, IP)  # an ended class frees its place
    assert poll.create("10.0.0.9").code
    clock.now += DAY + 1  # so does an expired one
    assert len({poll.create(f"10.0.1.{i}").code for i in range(3)}) == 3


def test_requests_are_rate_limited(store, clock):
    limits = PollLimits(per_browser=Rate(3, 60), per_address=Rate(10, 60), per_class=Rate(2, 60),
                        new_classes=Rate(2, 3600))  # fmt: skip
    poll = Poll(store, limits, clock=clock)
    a = poll.create("10.1.1.1")
    poll.create("10.1.1.1")
    refused(lambda: poll.create("10.1.1.1"), 429, "at most 2 per 3600 s", "try again in")
    me = browser()
    for step in (1, 2, 3):
        poll.vote(a.code, step, me, 0, IP)
    # the fourth request of one browser within the minute: refused before anything else
    refused(lambda: poll.vote(a.code, 4, me, 0, IP), 429, "at most 3 per 60 s", "browser")
    refused(lambda: poll.vote(a.code, 1, me, 0, IP), 429)  # a flood counts too
    for _ in range(2):
        poll.results(a.code, a.key, 1, IP)
    refused(lambda: poll.results(a.code, a.key, 1, IP), 429, "class")
    for _ in range(2):  # the address: 10 requests, 8 spent above (refused ones count)
        poll.vote(a.code, 1, browser(), 0, IP)
    refused(lambda: poll.vote(a.code, 1, browser(), 0, IP), 429, "address")
    clock.now += 61  # a new minute
    assert poll.vote(a.code, 4, me, 0, IP) == 1
    assert poll.results(a.code, a.key, 4, IP).total == 1


def test_a_class_expires_after_a_day(poll, clock, store):
    made = poll.create(IP)
    me = browser()
    poll.vote(made.code, 1, me, 0, IP)
    clock.now += DAY - 5
    assert poll.results(made.code, made.key, 1, IP).total == 1
    clock.now += 10
    refused(lambda: poll.vote(made.code, 1, browser(), 0, IP), 404, "not running", "24 h")
    refused(lambda: poll.results(made.code, made.key, 1, IP), 404)
    assert not poll.exists(made.code)


def test_every_poll_entry_in_the_store_expires_by_itself(tmp_path):
    """The real store: each entry diskcache holds for the poll has an expiry, the class's
    a day away (the clock here is the real one, as the store's is)."""
    import time

    store = DiskStore(tmp_path / "jobs")
    poll = Poll(store)
    made = poll.create(IP)
    poll.vote(made.code, 1, browser(), 0, IP)
    poll.results(made.code, made.key, 1, IP)
    cache = store.cache
    names = [k for k in cache.iterkeys() if isinstance(k, str) and k.startswith("poll:")]
    assert class_name(made.code) in names and CLASSES in names and len(names) >= 5
    for name in names:
        _, expires = cache.get(name, expire_time=True)
        assert expires is not None, f"{name} never expires"
        assert expires <= time.time() + DAY + 5, name
    _, expires = cache.get(class_name(made.code), expire_time=True)
    assert expires > time.time() + DAY - 60
    store.close()


def test_the_poll_works_on_redis_with_expiring_keys(redis_server):
    import redis

    from tempsup.jobs.redis import RedisStore

    prefix = f"poll-{secrets.token_hex(4)}:"
    poll = Poll(RedisStore(redis_server.url, prefix))
    made, me = poll.create(IP), browser()
    poll.vote(made.code, 1, me, 2, IP)
    refused(lambda: poll.vote(made.code, 1, me, 1, IP), 409, "already counted")
    assert poll.results(made.code, made.key, 1, IP).counts == (0, 0, 1, 0)
    client = redis.Redis.from_url(redis_server.url)
    keys = client.keys(prefix + "poll:*")
    assert keys and all(client.pttl(k) > 0 for k in keys)
    assert DAY * 1000 - 60_000 < client.pttl(prefix + class_name(made.code)) <= DAY * 1000


def test_step_links_keep_a_class():
    from app.pollpanel import step_href

    assert step_href(2, "?step=1&class=dtf-kcg") == "/lesson?step=2&class=DTFKCG"
    assert step_href(3, "?class=<b>") == step_href(3, "") == step_href(3, None) == "/lesson?step=3"


# ---- over HTTP: what a crafted request meets ------------------------------------------


@pytest.fixture
def api(tmp_path, monkeypatch):
    from app import app, services

    monkeypatch.setenv("TEMPSUP_CACHE", str(tmp_path / "jobs"))
    services.job_queue.cache_clear()
    yield app.server.test_client()
    services.job_queue.cache_clear()


def post(api, path: str, body, ip: str = IP, **kw):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return api.post(path, data=data, content_type="application/json",
                    environ_base={"REMOTE_ADDR": ip}, **kw)  # fmt: skip


def test_http_create_vote_and_read(api):
    made = post(api, "/poll/api/classes", {})
    assert made.status_code == 201
    c = made.get_json()
    assert c["link"] == f"/lesson?class={c['code']}"
    me = browser()
    r = post(api, f"/poll/api/classes/{c['code']}/votes", {"step": 1, "choice": 3, "browser": me})
    assert r.status_code == 201 and r.get_json() == {"count": 1}
    # the same browser id again, in any form: refused, and the count stays
    for choice in (3, 0):
        again = post(api, f"/poll/api/classes/{c['code'].lower()}/votes",
                     {"step": 1, "choice": choice, "browser": me})  # fmt: skip
        assert again.status_code == 409 and "already counted" in again.get_json()["error"]
    auth = {"Authorization": f"Bearer {c['key']}"}
    res = api.get(f"/poll/api/classes/{c['code']}/results?step=1", headers=auth)
    assert res.status_code == 200
    body = res.get_json()
    assert body["counts"] == [0, 0, 0, 1] and body["total"] == 1
    assert body["choices"] == list(lesson.step(1).choices)
    assert api.delete(f"/poll/api/classes/{c['code']}", headers=auth).status_code == 204
    gone = post(api, f"/poll/api/classes/{c['code']}/votes",
                {"step": 1, "choice": 0, "browser": browser()})  # fmt: skip
    assert gone.status_code == 404


def test_http_reading_another_class_is_refused(api):
    a = post(api, "/poll/api/classes", {}).get_json()
    b = post(api, "/poll/api/classes", {}).get_json()
    url = f"/poll/api/classes/{b['code']}/results?step=1"
    for headers in ({"Authorization": f"Bearer {a['key']}"}, {}, {"Authorization": b["code"]}):
        r = api.get(url, headers=headers)
        assert r.status_code == 403 and "key" in r.get_json()["error"]
    r = api.get(f"/poll/api/classes/{b['code']}/results?step=1",
                headers={"Authorization": f"Bearer {b['key']}"})  # fmt: skip
    assert r.status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[1, 2]",
        {"step": 1, "choice": 0},
        {"step": 9, "choice": 0, "browser": "0" * 32},
        {"step": 1, "choice": 99, "browser": "0" * 32},
        {"step": 1, "choice": 0, "browser": "<script>" * 4},
        {"step": 1, "choice": 0, "browser": "0" * 32, "pad": "x" * 5000},
    ],
)
def test_http_bad_votes_get_a_clear_4xx_never_a_traceback(api, body):
    code = post(api, "/poll/api/classes", {}).get_json()["code"]
    r = post(api, f"/poll/api/classes/{code}/votes", body)
    assert 400 <= r.status_code < 500
    error = r.get_json()["error"]
    assert error and "Traceback" not in error and len(error) < 200


def test_http_a_flood_is_refused(api):
    """One browser id flooding votes, and one address flooding class creation."""
    code = post(api, "/poll/api/classes", {}, ip="198.51.100.1").get_json()["code"]
    me = browser()
    statuses = [
        post(
            api,
            f"/poll/api/classes/{code}/votes",
            {"step": 1, "choice": 0, "browser": me},
            ip=f"198.51.100.{i % 200 + 2}",
        ).status_code  # fmt: skip
        for i in range(30)
    ]
    assert statuses[0] == 201 and set(statuses[1:20]) == {409} and set(statuses[20:]) == {429}
    made = [post(api, "/poll/api/classes", {}, ip="198.51.100.250").status_code for _ in range(12)]
    assert made[:10] == [201] * 10 and made[10:] == [429, 429]
    r = post(api, "/poll/api/classes", {}, ip="198.51.100.250")
    assert "try again in" in r.get_json()["error"]


def test_a_crafted_dash_callback_cannot_vote_twice(api):
    """The lesson page's own path (its Send callback) refuses the same browser twice."""
    made = post(api, "/poll/api/classes", {}).get_json()
    code, me = made["code"], browser()

    def send(place: int) -> str:
        payload = {
            "output": "poll-note.children",
            "outputs": {"id": "poll-note", "property": "children"},
            "inputs": [
                {"id": "poll-send", "property": "n_clicks", "value": 1},
                {"id": "lesson-reveal", "property": "n_clicks", "value": None},
            ],
            "state": [
                {"id": "lesson-choice", "property": "value", "value": place},
                {"id": "lesson-step", "property": "data", "value": 2},
                {"id": "root-url", "property": "search", "value": f"?step=2&class={code}"},
                {"id": "poll-browser", "property": "data", "value": me},
            ],
            "changedPropIds": ["poll-send.n_clicks"],
        }
        r = post(api, "/_dash-update-component", payload)
        assert r.status_code == 200
        return json.dumps(r.get_json())

    assert "Counted" in send(0)
    assert "Not counted" in send(1) and "already counted" in send(2)
    mine = api.get(f"/poll/api/classes/{code}/results?step=2",
                   headers={"Authorization": f"Bearer {made['key']}"})  # fmt: skip
    assert mine.get_json()["total"] == 1
    key = post(api, "/poll/api/classes", {}).get_json()  # another class: its key reads none
    r = api.get(f"/poll/api/classes/{code}/results?step=2",
                headers={"Authorization": f"Bearer {key['key']}"})  # fmt: skip
    assert r.status_code == 403
