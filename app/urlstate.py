"""The config in the URL: query string ↔ `RunConfig`, strictly and safely.

A shared link is the whole state of a view, so `?model=rnn&k=3&sparsity=0.97`
must rebuild exactly that config, and the share link adds the view on top:
`view_seed` (the seed shown, 0-based as in the seed menu) and `frame` (1-based,
as the player's label counts). Parsing never raises past this module: a bad
value falls back to the default for that field and comes back as a message the
page shows beside the controls.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse

from tempsup.config import DEFAULTS, RunConfig, query_string
from tempsup.errors import TempsupError

# Query values longer than this are refused outright (no field needs more).
MAX_VALUE_LEN = 40
# In the web app a warm start may only name a run in the job store, never a path.
RUN_KEY = re.compile(r"^[0-9a-f]{16}$")

_FIELDS = frozenset(f.name for f in dataclasses.fields(RunConfig))
# The view on top of the config (share link only): the seed shown and the frame.
VIEW_SEED, VIEW_FRAME = "view_seed", "frame"


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
    # keep each field that is valid on its own, drop (and name) the rest; fields that
    # bound others go first (k < seq_len, snapshot_every <= steps)
    config = DEFAULTS
    for name in sorted(values, key=lambda n: n not in ("seq_len", "steps")):
        try:
            config = config.replace(**{name: values[name]})
        except TempsupError as exc:
            errors.append(str(exc))
    return config, errors


query_from_config = query_string  # the link of a config (tempsup.config, shared with the site)


def compare_href(left: RunConfig, right: RunConfig) -> str:
    """The Compare page's link for two configs (each side an explorer query)."""
    return "/compare?" + urlencode(
        {"left": query_from_config(left).lstrip("?"), "right": query_from_config(right).lstrip("?")}
    )


def view_from_query(
    search: str | None, config: RunConfig
) -> tuple[dict[str, Any] | None, list[str]]:
    """The view a share link asks for: {"key", "seed", "frame"} (frame 0-based), or None.

    `view_seed` must name one of the config's seeds and `frame` one of its
    frames (1 … config.n_snapshots); anything else is dropped with a message.
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
    if values[VIEW_SEED] is None and values[VIEW_FRAME] is None:
        return None, errors
    frame = values[VIEW_FRAME]
    index = None if frame is None else frame - 1
    return {"key": config.key, "seed": values[VIEW_SEED], "frame": index}, errors


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
