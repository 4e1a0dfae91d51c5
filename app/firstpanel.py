"""The first panel a page shows, known when its HTML is served (`app.delivery.first_paint`).

On a phone network the page's scripts take seconds to arrive; the figure of its first
panel comes inside the HTML instead, and is drawn as soon as plotly.js has arrived, before
Dash's own scripts. It is the figure the page itself draws first, for the URL opened:

- the explorer at a link of a finished run (trained here, shipped, or opened from a
  file: `?…&run=`): its directions panel at the link's seed, frame and feature, as
  `tempsup.figures.PANEL_SET.panel_figure` draws it (the page's scrubber opens on the
  same frame: `app.player.opening_frame`);
- the explorer with nothing trained to show yet (the start page before its example run
  exists): the empty panel the page shows while it waits;
- any other page, or a link with problems (the page's callbacks explain them): nothing.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any

from app import open_run, panels
from app.pages.explorer import kept_run
from app.player import opening_frame
from app.services import job_queue
from app.urlstate import config_from_query, view_from_query
from app.view import RNN, choose_seed
from tempsup.core.palette import empty_figure
from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.io.upload import stored_run
from tempsup.model.config import RunConfig

EXPLORER = "/"
PANEL = panels.PANELS[0]  # the explorer's first card: its feature directions
log = logging.getLogger("tempsup.app")


def first_panel(path: str, query: str) -> tuple[str, str] | None:
    """(title, figure JSON) of the first panel of the page at `path` and `query`, or None.
    Never raises: a page is served without its first panel rather than not at all."""
    if path != EXPLORER:
        return None
    try:
        figure = _explorer(query)
    except Exception:  # noqa: BLE001 - the page itself reports what went wrong
        log.exception("first panel of %s?%s", path, query)
        return None
    return None if figure is None else (PANEL.title, figure)


def _explorer(query: str) -> str | None:
    digest = open_run.link_digest(query)
    if digest is not None:  # a run opened from a file: shown if this server has it
        try:
            run = stored_run(job_queue().store, digest)
        except TempsupError:
            return None
        if run is None:
            return None
        request, _ = view_from_query(query, run.config)
        return _run_panel(run, request, run.config, digest)
    config, errors = config_from_query(query)
    request, view_errors = view_from_query(query, config)
    if errors or view_errors:
        return None
    try:
        queue = job_queue()
        run = kept_run(queue, config, queue.status(config.key))
    except TempsupError:  # the job store is unreachable: the page says so
        return None
    if run is None:
        return _waiting()
    return _run_panel(run, request, config, None)


def _run_panel(
    run: Run, request: dict[str, Any] | None, config: RunConfig, content: str | None
) -> str:
    """The directions panel of `run` as the explorer opens it for the link's view
    `request` (seed, frame, feature)."""
    seed = choose_seed(run, request.get("seed") if request else None)
    feature = request.get("feature", 0) if request else 0
    frame = opening_frame({"key": config.key, "n": run.n_frames}, request)
    return _figure(_RunKey(run, content), seed, frame, feature)


class _RunKey:
    """A run named by its config's key and frame count (or the digest of a run opened
    from a file): a finished run never changes, so its panel is drawn once per process."""

    def __init__(self, run: Run, content: str | None) -> None:
        self.run = run
        self.id = (run.config.key, run.n_frames, content)

    def __hash__(self) -> int:
        return hash(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _RunKey) and other.id == self.id


@lru_cache(maxsize=64)
def _figure(ref: _RunKey, seed: int, frame: int, feature: int) -> str:
    return RNN.panel_figure(PANEL.name, ref.run, seed, frame, feature).to_json()


@lru_cache(maxsize=1)
def _waiting() -> str:
    return empty_figure(panels.WAITING).to_json()
