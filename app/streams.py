"""What one web process keeps of the runs its pages watch, so a class costs one decode.

Thirty browsers watching the same job used to cost thirty decodes of every frame on every
poll (each poll read the job from frame 0 and rebuilt its figures). Here, per job key:

- `streamed_run`: the frames stored so far, decoded once per process. A poll reads only
  the frames this process has not seen (`queue.frames(key, start)`), and checks the last
  one it has against the store, so a job trained again under the same key starts over.
  A process reads a stream's new frames at most every `STREAM_TICK_S`: each new frame
  count costs the view's shared parts again (layouts, the loss history, their diff), so
  a class polling many times a second would otherwise pay them for every single frame.
- `finished_run`: a run that will not change any more (DONE, or CANCELLED with its frames
  kept), decoded once per process however many pages open it; bounded (least recently
  used first out), keyed by job key, state and frame count.
- `stream_patch`: what a poll sends a page that holds the view up to frame `cursor`: the
  new frames' traces and the changes to the parts every frame shares (`view.shared_parts`:
  axis ranges, the last frame, the loss history, which only grows and so is extended), as
  one `dash.Patch`. Per-frame traces and shared parts are computed once per process for
  each frame count, seed and feature; what a page is sent grows with the frames it lacks,
  not with the frames it has.

Only the app layer keeps these caches: the job store stays the one truth, and every entry
here is a pure function of what the store holds.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import numpy as np
from dash import Patch

from app.memo import LOCK as _LOCK
from app.memo import Memo
from app.view import (
    Drawn,
    lean_frames,
    shared_parts,
    status_lines,
    streaming_options,
    template_of,
)
from tempsup.io.run import ARRAYS, Run, leading_seed
from tempsup.jobs.record import JobState, JobStatus
from tempsup.model.config import RunConfig

FINISHED_KEEP = 8  # decoded finished runs kept per process (a class opens a few at a time)
STREAMS_KEEP = 16  # jobs whose streamed frames are kept per process
PARTS_KEEP = 24  # shared parts kept per stream and selection: pages lag a few polls at most
DIFFS_KEEP = 256  # patches kept per process: pages polling at once share them
LEADS_KEEP = 64  # seed menus of streaming runs: pages at one frame count share them
# A process reads a stream's new frames at most this often; polls in between get the
# frames it read last, and their next poll the rest. What a stream costs a process grows
# with the frame counts it draws (each redraws the shared parts), not with its frames: a
# class polling many times a second drew one count per frame. A page alone polls every
# POLL_MS (0.3 s) or slower, so it does not wait for the tick; a class shares each read.
STREAM_TICK_S = 0.25
# ... or a third of the period the pages poll at, if longer: a class of sixty polls every
# 1.5 s (app.jobfollow.poll_interval), and a frame is then at most 0.5 s old when a page
# gets it; each read of new frames redraws every frame's shared parts (a default run's 101
# frames streamed 5 at a time cost 64 ms to draw, 10 at a time 38 ms).
READS_PER_POLL = 3


class _Stream:
    """One job's frames as this process has read them, and what its pages were sent."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.frames: list[dict[str, np.ndarray]] = []
        self.run: Run | None = None  # the Run of all of `frames`, built once per count
        self.lock = threading.Lock()
        # per (seed, feature): each frame's moving traces per panel, status lines, steps
        self.traces: dict[tuple[int, int], dict[str, Any]] = {}
        self.parts: Memo = Memo(PARTS_KEEP)  # (seed, feature, n) -> shared_parts
        self.generation = 0  # a new one each time the job is found trained again
        self.read_at = -math.inf  # time.monotonic() of the last read of new frames

    def reset(self) -> None:
        self.frames, self.run, self.traces = [], None, {}
        self.parts.clear()
        self.generation += 1


_STREAMS: Memo = Memo(STREAMS_KEEP)
_FINISHED: Memo = Memo(FINISHED_KEEP)
_DIFFS: Memo = Memo(DIFFS_KEEP)
_LEADS: Memo = Memo(LEADS_KEEP)


def _stream(config: RunConfig) -> _Stream:
    stream = _STREAMS.get_or(config.key, lambda: _Stream(config))
    if stream.config != config:  # cannot happen for one key; a new entry if it ever did
        stream = _Stream(config)
        with _LOCK:
            _STREAMS[config.key] = stream
    return stream


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two frames of a run are one: every array of a run's frame (`ARRAYS`) equal
    (a finished job's frames also hold its canonical gauge, a streamed one's do not)."""
    return all(k in a and k in b and np.array_equal(a[k], b[k]) for k in ARRAYS)


def streamed_run(
    queue: Any, config: RunConfig, status: JobStatus, period_ms: float = 0.0
) -> Run | None:
    """The run of every frame the job has stored so far (None before the first), reading
    only the frames this process has not decoded yet, at most every `STREAM_TICK_S`, or
    every `READS_PER_POLL`-th of `period_ms` (the period the pages poll at) if longer (the
    first frames at once)."""
    tick = max(STREAM_TICK_S, period_ms / 1000.0 / READS_PER_POLL)
    stream = _stream(config)
    with stream.lock:
        have = len(stream.frames)
        if status.n_frames < have or status.state == JobState.QUEUED:
            stream.reset()  # trained again under the same key: start over
            have = 0
        now = time.monotonic()
        if status.n_frames > have and (have == 0 or now - stream.read_at >= tick):
            stream.read_at = now
            start = max(have - 1, 0)  # re-read the last frame held: is it still this job's?
            new = queue.frames(config.key, start)
            if have and (not new or not _same(new[0], stream.frames[-1])):
                stream.reset()
                new = queue.frames(config.key, 0)
            elif have:
                new = new[1:]
            if new:
                stream.frames.extend(new)
                stream.run = None
        if stream.frames and (stream.run is None or stream.run.n_frames != len(stream.frames)):
            stream.run = Run.from_frames(config, stream.frames)
        return stream.run


def finished_run(queue: Any, config: RunConfig, status: JobStatus | None) -> Run | None:
    """What a job that will not change any more leaves to show: the run of a DONE job, or
    the frames a CANCELLED one kept; None while it trains or when there is nothing.
    Decoded once per process (a cancelled run's last frame is checked against the store,
    so a job trained and cancelled again is read again)."""
    if status is None:
        return None
    if status.state == JobState.DONE:
        slot = (config.key, "done", status.n_frames)
        run = _FINISHED.get_or(slot, lambda: queue.run(config.key))
        if run is None:
            with _LOCK:
                _FINISHED.pop(slot, None)
        return run
    if status.state != JobState.CANCELLED or status.n_frames <= 0:
        return None
    slot = (config.key, "cancelled", status.n_frames)
    with _LOCK:
        held = _FINISHED.get(slot)
    if held is not None:
        last = queue.frames(config.key, held.n_frames - 1)
        if last and _same(last[0], {k: v[-1] for k, v in held.arrays.items()}):
            return _FINISHED.get_or(slot, lambda: held)
    frames = queue.frames(config.key, 0)
    run = Run.from_frames(config, frames) if frames else None
    if run is not None:
        _FINISHED.put(slot, run)
    return run


# ---- what a poll sends ------------------------------------------------------------------


def _selection(stream: _Stream, run: Run, seed: int, feature: int) -> dict[str, Any]:
    """Per-frame data of (seed, feature) for every frame of `run`, each frame computed once
    (with the run as it stood when the frame first arrived here, as a streaming page always
    drew it). Frames are lean: each moving trace keeps only what differs from the same trace
    of the stream's first frame (`template`, sent once with the shared parts; the browser
    merges a frame over it, assets/tempsup.js), so a poll carries what changed — mostly
    numbers, not the styles every frame repeats (about a quarter of the bytes), as JSON
    text made once (`app.view.packed`): each page's answer copies it.

    The template is the first frame drawn from the first frame alone, the same in every web
    process: a page keeps the template of the process that answered it first and merges
    the other's frames over it too. Drawn with the run as the process first read it, the
    two differed (the half-space's reach, the corner texts' place, which arrows are
    labelled), and a key a frame left out as its own process's template's showed the
    other's value."""
    sel = stream.traces.setdefault(
        (seed, feature), {"frames": {}, "template": {}, "summaries": [], "steps": [], "n": 0}
    )
    n = run.n_frames
    if sel["n"] < n:
        start = sel["n"]
        if not sel["template"]:
            sel["template"] = template_of(run, seed, feature)
        for panel, lean in lean_frames(run, seed, feature, start, sel["template"]).items():
            sel["frames"].setdefault(panel, []).extend(lean)
        sel["summaries"].extend(status_lines(run, seed, feature, start))
        sel["steps"].extend(int(s) for s in run["step"][start:])
        sel["n"] = n
    return sel


def _parts(stream: _Stream, run: Run, seed: int, feature: int) -> dict[str, Any]:
    """The shared parts of the stream's view now, with the template its lean frames are
    merged over (the first frame's moving traces: it never changes in a stream)."""
    template = stream.traces[(seed, feature)]["template"]
    return stream.parts.get_or((seed, feature, run.n_frames),
                               lambda: {**shared_parts(run, seed, feature),
                                        "template": template})  # fmt: skip


def _parts_at(stream: _Stream, run: Run, seed: int, feature: int, cursor: int) -> dict[str, Any]:
    """The shared parts a page holding frames 0 … cursor-1 of `run` has: computed here from
    those frames when this process never drew that count. A page's cursor is the frame count of
    whichever web process answered it last, and the processes read a stream at their own
    moments: without this, every poll that crossed to the other process was sent the parts
    whole (about 25 kB of a default job's 35 kB poll) instead of what changed."""
    return _parts(stream, run.first_frames(cursor), seed, feature)


def stream_patch(
    config: RunConfig, run: Run, seed: int, feature: int, cursor: int
) -> dict[str, Any]:
    """The view store's change for a page that holds frames 0 … cursor-1 of this stream for
    `seed` and `feature` (cursor 0: an empty view): the frames from `cursor` on, and the
    shared parts' changes since then. The run must be `streamed_run`'s. Pages at the same
    cursor get the same answer (read-only once made: Dash only serializes it).

    A `dash.Patch` in its JSON form (`Patch.to_plotly_json`, what Dash sends for one), made
    once for every page at that cursor rather than at each answer's encoding."""
    stream = _stream(config)
    slot = (config.key, stream.generation, seed, feature, cursor, run.n_frames)
    return _DIFFS.get_or(slot, lambda: _patch(stream, run, seed, feature, cursor).to_plotly_json())


def _patch(stream: _Stream, run: Run, seed: int, feature: int, cursor: int) -> Patch:
    n = run.n_frames
    with stream.lock:
        sel = _selection(stream, run, seed, feature)
        new = _parts(stream, run, seed, feature)
        old = _parts_at(stream, run, seed, feature, cursor) if 0 < cursor < n else None
        frames = {p: traces[cursor:n] for p, traces in sel["frames"].items()}
        summaries, steps = sel["summaries"][cursor:n], sel["steps"][cursor:n]
    view = Patch()
    if cursor == 0:
        view["key"] = stream.config.key
        view["seed"] = seed
        view["feature"] = feature
    for panel, traces in frames.items():
        view["frames"][panel].extend(traces)
    view["summaries"].extend(summaries)
    view["steps"].extend(steps)
    view["n"] = n
    if old is None:  # a page with no frames yet: the parts whole
        for name, value in new.items():
            view[name] = value
    else:
        for path, op, value in json_diff(old, new):
            apply(view, path, op, value)
    return view


def drawing(run: Run, seed: int, feature: int) -> tuple[Drawn | None, dict[str, Any] | None]:
    """What this process drew of `run`'s job while it streamed, for `seed` and `feature`,
    if the frames it read are the run's first ones (a job trained again under the same key
    is not): the frames drawn ("template", "frames", "summaries", their number "n") and,
    if it read every frame, the shared parts of them all; (None, None) otherwise. A
    finished view whose panels are `causal` takes them (`app.view.full_view`): the frames
    a page watched stream in are the finished run's, and are not drawn again."""
    with _LOCK:
        stream = _STREAMS.get(run.config.key)
    if stream is None or stream.config != run.config:
        return None, None
    with stream.lock:
        have = len(stream.frames)
        sel = stream.traces.get((seed, feature))
        if not have or sel is None or not sel["n"] or have > run.n_frames:
            return None, None
        if not _same(stream.frames[-1], {k: v[have - 1] for k, v in run.arrays.items()}):
            return None, None
        n = sel["n"]
        drawn = {
            "template": sel["template"],
            "frames": {p: traces[:n] for p, traces in sel["frames"].items()},
            "summaries": sel["summaries"][:n],
            "n": n,
        }
        with _LOCK:
            parts = stream.parts.get((seed, feature, run.n_frames))
    return drawn, parts


def finish_patch(view: dict[str, Any], cursor: int) -> dict[str, Any]:
    """What turns a page's streamed store, holding frames 0 … cursor-1 of the same seed and
    feature, into the finished `view` (`app.view.full_view`) when every panel is `causal`:
    its frames were the finished run's (the same text, merged over the same template), so
    it is sent the frames after them and the parts every frame shares, not the whole run
    again (a class of sixty was sent 200 kB each when the teacher's job ended). In its JSON
    form, as `stream_patch`; pages at the same cursor share it."""
    slot = (view["key"], "finished", view["n"], view["seed"], view["feature"], cursor)
    return _DIFFS.get_or(slot, lambda: _finish(view, cursor))


def _finish(view: dict[str, Any], cursor: int) -> dict[str, Any]:
    patch = Patch()
    for panel, frames in view["frames"].items():
        patch["frames"][panel].extend(frames[cursor:])
    patch["summaries"].extend(view["summaries"][cursor:])
    patch["steps"].extend(view["steps"][cursor:])
    patch["n"] = view["n"]
    for name in ("layouts", "base", "moving", "template", "message", "captions"):
        if name in view:  # the headlines: a panel set that writes them (`shared_parts`)
            patch[name] = view[name]
    return patch.to_plotly_json()


def stream_whole(config: RunConfig, run: Run, seed: int, feature: int) -> dict[str, Any]:
    """The whole view store of this stream for `seed` and `feature` (what a page switches
    to when another seed takes the lead), from the same per-frame data as the patches."""
    stream = _stream(config)
    with stream.lock:
        sel = _selection(stream, run, seed, feature)
        n = run.n_frames
        view = {
            "key": config.key,
            "seed": seed,
            "feature": feature,
            "n": n,
            "steps": sel["steps"][:n],
            "message": "",
            "frames": {p: traces[:n] for p, traces in sel["frames"].items()},
            "summaries": sel["summaries"][:n],
        }
        return {**view, **_parts(stream, run, seed, feature)}


def stream_seed(run: Run, shown: int | None, picked: int | None) -> tuple[int, list[Any]]:
    """The seed a streaming page shows (`picked`, the user's, else the one leading now:
    `tempsup.io.run.leading_seed`, `shown` being the one on screen) and the seed menu's
    options; once per streamed run, frame count and seed on screen."""

    def make() -> tuple[Run, int, list[Any]]:
        seed = picked if picked is not None else leading_seed(run["loss"], shown)
        return run, seed, streaming_options(run, seed, picked is not None)

    slot = (run.config.key, id(run), run.n_frames, shown, picked)
    _, seed, options = _LEADS.get_or(slot, make)  # the run is held: its id is not reused
    return seed, options


Op = tuple[tuple[Any, ...], str, Any]  # (location, "assign" | "extend" | "delete", value)


def json_diff(old: Any, new: Any, path: tuple[Any, ...] = ()) -> list[Op]:
    """Operations that turn JSON `old` into `new`: dicts key by key, lists of equal length
    item by item, a list that only grew extended, anything else assigned whole."""
    if type(old) is not type(new):
        return [(path, "assign", new)]
    if isinstance(new, dict):
        ops: list[Op] = [((*path, k), "delete", None) for k in old.keys() - new.keys()]
        for k, v in new.items():
            ops += json_diff(old[k], v, (*path, k)) if k in old else [((*path, k), "assign", v)]
        return ops
    if isinstance(new, list):
        if len(old) == len(new):
            if old == new:
                return []
            if all(isinstance(v, (dict, list)) for v in new):
                return [op for i, (a, b) in enumerate(zip(old, new, strict=True))
                        for op in json_diff(a, b, (*path, i))]  # fmt: skip
            return [(path, "assign", new)]
        if len(old) < len(new) and new[: len(old)] == old:
            return [(path, "extend", new[len(old) :])]
        return [(path, "assign", new)]
    return [] if old == new else [(path, "assign", new)]


def apply(patch: Patch, path: tuple[Any, ...], op: str, value: Any) -> None:
    """One `json_diff` operation added to a `dash.Patch` (at the store's root: `path` is
    never empty for a view)."""
    loc = patch
    for part in path[:-1]:
        loc = loc[part]
    if op == "extend":
        loc[path[-1]].extend(value)
    elif op == "delete":
        del loc[path[-1]]
    else:
        loc[path[-1]] = value


def clear() -> None:
    """Forget everything (tests that reuse keys across stores)."""
    with _LOCK:
        _STREAMS.clear()
        _FINISHED.clear()
        _DIFFS.clear()
        _LEADS.clear()
