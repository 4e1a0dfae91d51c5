"""The config in the URL: query string ↔ `RunConfig`, strictly and safely.

A shared link is the whole state of a view, so `?model=rnn&k=3&sparsity=0.97`
must rebuild exactly that config, and the share link adds the view on top:
`view_seed` (the seed shown, 0-based as in the seed menu), `frame` (1-based,
as the player's label counts) and `feature` (named as the feature menu names it:
A, B, C, …). The phase page keeps its sweep in its own query (`phase_query`).
Parsing never raises past this module: a bad value falls back to the default for
that field and comes back as a message the page shows where the user looks.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse

from tempsup.core.frames import frame_index
from tempsup.errors import TempsupError
from tempsup.model.config import DEFAULTS, RunConfig, query_string

# Query values longer than this are refused outright (no field needs more).
MAX_VALUE_LEN = 40
# In the web app a warm start may only name a run in the job store, never a path.
RUN_KEY = re.compile(r"^[0-9a-f]{16}$")

_FIELDS = frozenset(f.name for f in dataclasses.fields(RunConfig))
# The view on top of the config (share link only): the seed shown, the frame, the feature.
VIEW_SEED, VIEW_FRAME, VIEW_FEATURE = "view_seed", "frame", "feature"


def feature_name(index: int) -> str:
    """The name of input feature `index` as the feature menu shows it: A, B, … Z, x26, …"""
    return chr(ord("A") + index) if index < 26 else f"x{index}"


def feature_index(text: str, n_inputs: int) -> int:
    """The 0-based feature a link names (`feature_name`, any case); TempsupError naming the
    features this config has otherwise."""
    for index in range(n_inputs):
        if text.strip().upper() == feature_name(index).upper():
            return index
    last = feature_name(n_inputs - 1)
    names = "A" if n_inputs == 1 else f"A … {last}"
    raise TempsupError(f"feature: expected one of {names}, got {text[:MAX_VALUE_LEN]!r}")


def parse_value(name: str, text: str) -> Any:
    """One query value to the field's type (`RunConfig.field_value`); TempsupError names
    field and value. A link may be crafted: long values are refused outright, and a warm
    start names only a run in the job store, never a path."""
    if len(text) > MAX_VALUE_LEN:
        raise TempsupError(f"{name}: value too long ({len(text)} characters)")
    value = RunConfig.field_value(name, text)
    if name == "warm_start" and value is not None and not RUN_KEY.match(value):
        raise TempsupError(f"warm_start: expected a 16-character run key, got {text!r}")
    return value


def names_a_config(search: str | None) -> bool:
    """Whether a query names at least one setting of a run (a bare page names none)."""
    query = search.lstrip("?") if isinstance(search, str) else ""
    return any(name in _FIELDS for name, _ in parse_qsl(query, keep_blank_values=True)[:64])


def config_from_query(search: str | None) -> tuple[RunConfig, list[str]]:
    """The config a query string describes, and messages for what was ignored."""
    values: dict[str, Any] = {}
    errors: list[str] = []
    query = search.lstrip("?") if isinstance(search, str) else ""
    for name, text in parse_qsl(query, keep_blank_values=True)[:64]:
        if name not in _FIELDS:
            continue  # view parameters (view_seed, frame) and unknown keys
        try:
            values[name] = parse_value(name, text)
        except TempsupError as exc:
            errors.append(str(exc))
    try:
        return RunConfig(**values), errors
    except TempsupError:
        pass
    # keep each field (or unit of fields) that is valid on its own, drop (and name) the rest
    config = DEFAULTS
    for unit in _fallback_units(values):
        try:
            config = config.replace(**{name: values[name] for name in unit})
        except TempsupError as exc:
            errors.append(str(exc))
    return config, errors


# A task and the fields that define it with it: each is refused alone (task=multi without
# its delays, ks without a task that has several), so they are applied as one.
TASK_FIELDS = ("task", "ks", "window")
# Fields that bound others go first (k < seq_len, snapshot_every <= steps, ks < seq_len).
BOUNDING_FIELDS = ("seq_len", "steps")


def _fallback_units(values: dict[str, Any]) -> list[tuple[str, ...]]:
    """The order in which an invalid link's fields are tried, each unit on its own: the
    bounding fields, then the task with its ks and window together, then every other."""
    first = [(name,) for name in BOUNDING_FIELDS if name in values]
    task = tuple(name for name in TASK_FIELDS if name in values)
    rest = [(name,) for name in values if name not in BOUNDING_FIELDS + TASK_FIELDS]
    return first + ([task] if task else []) + rest


query_from_config = (
    query_string  # the link of a config (tempsup.model.config, shared with the site)
)


def compare_href(left: RunConfig, right: RunConfig) -> str:
    """The Compare page's link for two configs (each side an explorer query)."""
    return "/compare?" + urlencode(
        {"left": query_from_config(left).lstrip("?"), "right": query_from_config(right).lstrip("?")}
    )


def view_from_query(
    search: str | None, config: RunConfig
) -> tuple[dict[str, Any] | None, list[str]]:
    """The view a share link asks for: {"key", "seed", "frame"} (frame 0-based, and
    "feature", 0-based, when the link names one), or None.

    `view_seed` must name one of the config's seeds, `frame` one of its frames
    (1 … config.n_snapshots) and `feature` one of its input features (A …);
    anything else is dropped with a message.
    """
    params = dict(parse_qsl(search.lstrip("?") if isinstance(search, str) else ""))
    limits = {VIEW_SEED: (0, config.seeds - 1), VIEW_FRAME: (1, config.n_snapshots)}
    values: dict[str, int | None] = {VIEW_SEED: None, VIEW_FRAME: None}
    errors = []
    for name, (lo, hi) in limits.items():
        text = params.get(name)
        if text is None:
            continue
        try:
            value = int(text[:MAX_VALUE_LEN])
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            got = text[:MAX_VALUE_LEN]
            errors.append(f"{name}: expected an integer in [{lo}, {hi}], got {got!r}")
        else:
            values[name] = value
    feature = None
    if params.get(VIEW_FEATURE) is not None:
        try:
            feature = feature_index(params[VIEW_FEATURE], config.inputs)
        except TempsupError as exc:
            errors.append(str(exc))
    if values[VIEW_SEED] is None and values[VIEW_FRAME] is None and feature is None:
        return None, errors
    frame = values[VIEW_FRAME]
    index = None if frame is None else frame_index(frame, config.n_snapshots, from_end=False)
    request = {"key": config.key, "seed": values[VIEW_SEED], "frame": index}
    return (request if feature is None else {**request, "feature": feature}), errors


# The phase page's query: its controls, which name the sweep it shows. Whole-number
# boxes and their limits as the page's boxes have them.
PHASE_NUMBERS = {"seeds": (1, 64), "steps": (1, 200_000), "hidden": (1, 16)}
PHASE_LISTS = {"sparsities": float, "k": int, "persistence": float}
# The persistences of a sweep that does not sweep them: the link leaves them out.
PHASE_NO_PERSISTENCE = (0.0,)


def phase_query(
    model: str,
    sparsities: Any,
    ks: Any,
    seeds: int,
    steps: int,
    hidden: int,
    persistences: Any = PHASE_NO_PERSISTENCE,
) -> str:
    """The phase page's link for a sweep: `?model=ssm&sparsities=0.1,0.9&k=3&seeds=…`, and
    `&persistence=0,0.5` for a sweep over (S, q) (a sweep at q = 0 only keeps the link it
    always had)."""
    lists = {"sparsities": sparsities, "k": ks}
    if tuple(float(q) for q in persistences) != PHASE_NO_PERSISTENCE:
        lists["persistence"] = persistences
    return "?" + urlencode(
        {
            "model": model,
            **{name: ",".join(str(v) for v in values) for name, values in lists.items()},
            "seeds": seeds,
            "steps": steps,
            "hidden": hidden,
        },
        safe=",",
    )


def phase_from_query(search: str | None) -> tuple[dict[str, Any], list[str]]:
    """The phase controls a query sets ({"model", "sparsities", "k", "persistence", "seeds",
    "steps", "hidden"}: lists as the boxes show them, "0.1, 0.5"), each only when present and
    valid, and a message for each value refused (field, expected, received)."""
    query = search.lstrip("?") if isinstance(search, str) else ""
    values: dict[str, Any] = {}
    errors: list[str] = []
    for name, text in parse_qsl(query, keep_blank_values=True)[:16]:
        text = text.strip()
        if name == "model":
            try:
                values[name] = RunConfig(model=RunConfig.field_value("model", text[:40])).model
            except TempsupError as exc:
                errors.append(str(exc))
        elif name in PHASE_LISTS:
            parts = [p.strip() for p in text[:400].replace(";", ",").split(",") if p.strip()]
            try:
                numbers = [PHASE_LISTS[name](p) for p in parts]
            except ValueError:
                numbers = []
            if not numbers:
                errors.append(f"{name}: expected comma-separated numbers, got {text[:80]!r}")
            else:
                values[name] = ", ".join(str(v) for v in numbers)
        elif name in PHASE_NUMBERS:
            lo, hi = PHASE_NUMBERS[name]
            try:
                number = int(text[:MAX_VALUE_LEN])
            except ValueError:
                number = None
            if number is None or not lo <= number <= hi:
                errors.append(
                    f"{name}: expected an integer in [{lo}, {hi}], got {text[:MAX_VALUE_LEN]!r}"
                )
            else:
                values[name] = number
    return values, errors


# The Compare page's scrubber position in its link: the percentage of training (0 … 100).
COMPARE_AT = "at"


def compare_at(search: str | None) -> tuple[int | None, list[str]]:
    """The percentage of training a /compare link opens on (`at`), or None; a message when
    the value is not an integer in [0, 100]."""
    params = dict(parse_qsl(search.lstrip("?") if isinstance(search, str) else ""))
    text = params.get(COMPARE_AT)
    if text is None:
        return None, []
    try:
        value = int(text[:MAX_VALUE_LEN])
    except ValueError:
        value = None
    if value is None or not 0 <= value <= 100:
        return None, [f"at: expected an integer in [0, 100], got {text[:MAX_VALUE_LEN]!r}"]
    return value, []


def public_link(href: Any) -> str | None:
    """`href` if someone else could open it; None for a page served from this machine only
    (localhost, a loopback or unspecified address): such a link is useless in a sent file."""
    if not isinstance(href, str) or len(href) > 4000:
        return None
    url = urlparse(href)
    host = (url.hostname or "").lower()
    local = host == "localhost" or host.endswith(".localhost")
    if url.scheme not in ("http", "https") or not host or local:
        return None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return href
    return None if address.is_loopback or address.is_unspecified else href
