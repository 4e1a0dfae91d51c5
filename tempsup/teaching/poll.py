"""The class poll: a teacher's class code, students' anonymous predictions, their counts.

A teacher creates a class (`Poll.create`) and gets a short code for the
students and a secret key for themselves; students vote on a lesson step with
the code and a random id their browser made (`Poll.vote`), one vote per browser
per step; only the key reads the counts (`Poll.results`). No accounts and no
names: the store keeps a hash of each browser id, never the id itself.

Everything lives in the job store (`tempsup.jobs.store.Store`, diskcache or
Redis), so every web worker sees the same classes, and every entry is written
with an expiry: a class and its votes are gone a day after it was made. Each
operation is one store transaction that also counts the request against the
rate limits (per client address, per browser, per class), so the limits hold
across processes. Sizes are bounded (`PollLimits`): live classes, browsers per
class, hence votes per class. A refusal is a `PollRefused`, whose message says
what was wrong and what to do, and whose `status` is the HTTP status to answer.

Votes are kept by the choice's identity (its index in `Step.choices`), not by
the place a student saw it in, so a different shuffle could never move a vote.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tempsup.errors import TempsupError
from tempsup.jobs.store import Store, Txn
from tempsup.teaching import lesson

# Codes are read off a projector and typed on phones: no 0/O, 1/I.
ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
CODE_LENGTH = 6
CODE = re.compile(f"^[{ALPHABET}]{{{CODE_LENGTH}}}$")
BROWSER = re.compile(r"^[0-9a-f]{32}$")  # 128 random bits, made by the browser
KEY = re.compile(r"^[A-Za-z0-9_-]{32}$")  # secrets.token_urlsafe(24)
DAY = 24 * 3600.0

CLASSES = "poll:classes"  # {code: expiry time} of the live classes (the bound)


def class_name(code: str) -> str:
    return f"poll:class:{code}"


def rate_name(kind: str, who: str, window: int) -> str:
    digest = hashlib.sha256(who.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"poll:rate:{kind}:{digest}:{window}"


class PollRefused(TempsupError):
    """A poll request refused; `status` is the HTTP status that says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Rate:
    """At most `count` requests per `window` seconds (fixed windows)."""

    count: int
    window: float


@dataclass(frozen=True)
class PollLimits:
    """What the server accepts. A school's students share one address, so the per-address
    rate is generous; one browser and one class's results are held much tighter."""

    max_classes: int = 200  # live classes on the server
    max_browsers: int = 300  # browsers voting in one class (so ≤ 300 × steps votes)
    ttl: float = DAY  # a class and its votes expire this long after it was made
    per_address: Rate = Rate(600, 60.0)  # every poll request from one client address
    per_browser: Rate = Rate(20, 60.0)  # votes from one browser id
    per_class: Rate = Rate(120, 60.0)  # results read of one class (a view polls every 2 s)
    new_classes: Rate = Rate(10, 3600.0)  # classes made from one address


@dataclass(frozen=True)
class Created:
    code: str
    key: str  # only the creator gets it: reading the counts needs it
    expires: float


@dataclass(frozen=True)
class Results:
    """The counts of one step, by choice identity (`Step.choices` order)."""

    step: int
    counts: tuple[int, ...]
    browsers: int  # browsers that voted on any step of the class
    expires: float

    @property
    def total(self) -> int:
        return sum(self.counts)

    def shown(self) -> list[tuple[str, int]]:
        """(choice, count) in the order the students see the choices."""
        item = lesson.step(self.step)
        choices, _ = lesson.shown_choices(item)
        return [(c, self.counts[item.choices.index(c)]) for c in choices]


def choice_identity(step: int, shown_place: int) -> int:
    """The identity (index in `Step.choices`) of the choice shown at `shown_place`."""
    item = lesson.step(step)
    choices, _ = lesson.shown_choices(item)
    if not 0 <= shown_place < len(choices):
        raise PollRefused(f"choice: expected 0 … {len(choices) - 1}, got {shown_place}")
    return item.choices.index(choices[shown_place])


def normal_code(code: Any) -> str:
    """A class code as typed (any case, spaces, a dash) in its stored form; PollRefused if
    it cannot be one."""
    text = re.sub(r"[\s-]", "", code).upper() if isinstance(code, str) and len(code) < 40 else ""
    if not CODE.match(text):
        raise PollRefused(
            f"class code: expected {CODE_LENGTH} letters and digits (no 0, O, 1 or I), "
            f"got {str(code)[:40]!r}"
        )
    return text


def _whole(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise PollRefused(f"{name}: expected a whole number in [{lo}, {hi}], got {value!r}"[:160])
    return value


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _load(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text is not None else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class Poll:
    """Class polls in `store`; `clock` (seconds) is injectable so expiry can be tested."""

    def __init__(
        self,
        store: Store,
        limits: PollLimits | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.limits = limits or PollLimits()
        self.clock = clock

    # ---- the rate limits -------------------------------------------------------------

    def _spend(self, db: Txn, kind: str, who: str, rate: Rate, now: float) -> PollRefused | None:
        """Count one request of `who` in the current window; a refusal once over the rate."""
        window = int(now // rate.window)
        name = rate_name(kind, who, window)
        try:
            used = int(db.text(name) or 0)
        except ValueError:
            used = 0
        if used >= rate.count:
            wait = max(1, math.ceil((window + 1) * rate.window - now))
            return PollRefused(
                f"too many requests: at most {rate.count} per {rate.window:.0f} s "
                f"({kind.replace('-', ' ')}); try again in {wait} s",
                429,
            )
        db.set(name, str(used + 1), expire=2 * rate.window)
        return None

    def _spend_each(
        self, db: Txn, now: float, *spends: tuple[str, str, Rate]
    ) -> PollRefused | None:
        """Count the request against each (kind, who, rate) in turn; the first refusal
        stops it, so a request refused for its address does not count against the next."""
        for kind, who, rate in spends:
            refused = self._spend(db, kind, who, rate, now)
            if refused:
                return refused
        return None

    def _class_after(
        self, db: Txn, code: str, now: float, client: str, spend: tuple[str, str, Rate]
    ) -> dict[str, Any] | PollRefused:
        """Class `code`'s data once the request is counted (its address's rate, then
        `spend`): a poll's every read or vote pays before it learns anything."""
        address = ("address", client, self.limits.per_address)
        return self._spend_each(db, now, address, spend) or self._class(db, code, now)

    def _atomic(self, fn: Callable[[Txn, float], Any]) -> Any:
        """Run `fn(db, now)` as one transaction; a refusal it returns is raised after the
        commit, so the requests it counted stay counted."""
        now = self.clock()
        out = self.store.atomic(lambda db: fn(db, now))
        if isinstance(out, PollRefused):
            raise out
        return out

    def _live(self, db: Txn, now: float) -> dict[str, float]:
        classes = _load(db.text(CLASSES))
        return {c: t for c, t in classes.items() if isinstance(t, (int, float)) and t > now}

    def _class(self, db: Txn, code: str, now: float) -> dict[str, Any] | PollRefused:
        data = _load(db.text(class_name(code)))
        expires = data.get("expires")
        if not isinstance(expires, (int, float)) or expires <= now:
            return PollRefused(
                f"class {code} is not running: no such class, or it ended (a class lasts "
                f"{self.limits.ttl / 3600:.0f} h); ask your teacher for the current code",
                404,
            )
        return data

    def _save(self, db: Txn, code: str, data: dict[str, Any], now: float) -> None:
        db.set(class_name(code), json.dumps(data, separators=(",", ":")),
               expire=max(1.0, data["expires"] - now))  # fmt: skip

    # ---- what the app calls ----------------------------------------------------------

    def create(self, client: str) -> Created:
        """A new class for the teacher at address `client`."""
        key = secrets.token_urlsafe(24)

        def fn(db: Txn, now: float) -> Created | PollRefused:
            address = ("address", client, self.limits.per_address)
            refused = self._spend_each(
                db, now, address, ("new-classes", client, self.limits.new_classes)
            )
            if refused:
                return refused
            live = self._live(db, now)
            if len(live) >= self.limits.max_classes:
                return PollRefused(
                    f"too many class polls: {len(live)} are running on this server (at most "
                    f"{self.limits.max_classes}); try again later (a class lasts "
                    f"{self.limits.ttl / 3600:.0f} h)",
                    503,
                )
            while (code := "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))) in live:
                pass
            expires = now + self.limits.ttl
            self._save(db, code, {"key": _hash(key), "expires": expires, "votes": {}}, now)
            live[code] = expires
            db.set(CLASSES, json.dumps(live), expire=max(live.values()) - now)
            return Created(code, key, expires)

        return self._atomic(fn)

    def exists(self, code: Any) -> bool:
        """Whether `code` names a running class (what a student's page says)."""
        try:
            code = normal_code(code)
        except PollRefused:
            return False
        return not isinstance(self._class(self.store.view(), code, self.clock()), PollRefused)

    def vote(self, code: Any, step: Any, browser: Any, choice: Any, client: str) -> int:
        """Count `browser`'s prediction `choice` (its identity) on `step` of class `code`;
        returns how many predictions the step has. A browser votes once per step."""
        code = normal_code(code)
        step = _whole("step", step, 1, len(lesson.STEPS))
        choice = _whole("choice", choice, 0, len(lesson.step(step).choices) - 1)
        if not isinstance(browser, str) or not BROWSER.match(browser):
            raise PollRefused("browser id: expected 32 hexadecimal digits (made by the page)")
        voter = _hash(f"{code}:{browser}")[:24]  # the store never sees the id itself

        def fn(db: Txn, now: float) -> int | PollRefused:
            data = self._class_after(
                db, code, now, client, ("browser", browser, self.limits.per_browser)
            )
            if isinstance(data, PollRefused):
                return data
            votes = data.setdefault("votes", {})
            mine = votes.setdefault(str(step), {})
            if voter in mine:
                return PollRefused(
                    f"already counted: this browser's prediction for step {step} is in; "
                    "one prediction per step",
                    409,
                )
            voters = {v for per_step in votes.values() for v in per_step}
            if voter not in voters and len(voters) >= self.limits.max_browsers:
                return PollRefused(
                    f"class {code} is full: {len(voters)} browsers have voted (at most "
                    f"{self.limits.max_browsers})",
                    503,
                )
            mine[voter] = choice
            self._save(db, code, data, now)
            return len(mine)

        return self._atomic(fn)

    def results(self, code: Any, key: Any, step: Any, client: str) -> Results:
        """The counts of `step` in class `code`, for the holder of its teacher key."""
        code = normal_code(code)
        step = _whole("step", step, 1, len(lesson.STEPS))
        if not isinstance(key, str) or not KEY.match(key):
            raise PollRefused("teacher key: expected the key this class was created with", 403)

        def fn(db: Txn, now: float) -> Results | PollRefused:
            data = self._class_after(db, code, now, client, ("class", code, self.limits.per_class))
            if isinstance(data, PollRefused):
                return data
            if not hmac.compare_digest(str(data.get("key")), _hash(key)):
                return PollRefused(f"teacher key: this key does not open class {code}", 403)
            votes = data.get("votes", {})
            mine = votes.get(str(step), {})
            n = len(lesson.step(step).choices)
            counts = [0] * n
            for choice in mine.values():
                if isinstance(choice, int) and 0 <= choice < n:
                    counts[choice] += 1
            browsers = len({v for per_step in votes.values() for v in per_step})
            return Results(step, tuple(counts), browsers, float(data["expires"]))

        return self._atomic(fn)

    def end(self, code: Any, key: Any, client: str) -> None:
        """End class `code` now (its teacher's key): the code and its votes are deleted."""
        code = normal_code(code)

        def fn(db: Txn, now: float) -> None | PollRefused:
            refused = self._spend(db, "address", client, self.limits.per_address, now)
            if refused:
                return refused
            data = self._class(db, code, now)
            if isinstance(data, PollRefused):
                return None  # gone already
            if not isinstance(key, str) or not hmac.compare_digest(str(data.get("key")),
                                                                   _hash(key)):  # fmt: skip
                return PollRefused(f"teacher key: this key does not open class {code}", 403)
            db.delete(class_name(code))
            live = self._live(db, now)
            live.pop(code, None)
            db.set(CLASSES, json.dumps(live), expire=max([*live.values(), now + 1]) - now)
            return None

        self._atomic(fn)
