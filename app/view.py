"""What the browser holds for one run: per-frame figure data, built from frames.

The view store is plain JSON: the layout of each panel (fixed while
scrubbing) and, per panel, each frame's traces (as JSON text, `packed`). Streaming appends the
new frames' traces with `dash.Patch`; scrubbing picks a frame client-side.
Built through a `PanelSet` (`tempsup.figures.panel`): the RNN explorer's panels by
default, the correlations lab's for `lab_view`. Pure functions, no Dash: tested without
a server.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import orjson
from plotly.io.json import to_json_plotly

from app.memo import Memo
from tempsup import figures
from tempsup.bows import figures as bows_figures
from tempsup.figures.panel import PanelSet
from tempsup.io.run import Run, percent, recent_loss

RNN = figures.PANEL_SET


def choose_seed(run: Run, requested: int | None) -> int:
    """The requested seed if it exists, else the best one (`Run.best_seed`)."""
    n_seeds = run["loss"].shape[1]
    if isinstance(requested, int) and 0 <= requested < n_seeds:
        return requested
    return run.best


def seed_options(run: Run, picked: int | None = None) -> list[dict[str, Any]]:
    """Dropdown options of a finished run: every seed with its final loss, successes
    ticked; the label of the best says why it is best (`Run.best_seed`), seeds it cannot
    be told apart from say so, and a seed the user picked says that."""
    success = run.success
    choice = run.best_seed
    options = []
    for s, loss in enumerate(run.final_loss):
        mark = "✓" if success[s] else "✗"
        if s == choice.seed:
            tie = f"; tied with {', '.join(map(str, choice.tied))}" if choice.tied else ""
            why = f" — best ({choice.reason}{tie})"
        elif s in choice.tied:
            why = f" — tied with best (within {percent(choice.gap)})"
        else:
            why = ""
        if s == picked and s != choice.seed:
            why += " — your pick"
        # weights trained elsewhere (`tempsup.from_weights`) come without a measured loss
        measured = f"loss {loss:.4g} {mark}" if np.isfinite(loss) else "no measured loss"
        options.append({"label": f"seed {s}{why}: {measured}", "value": s})
    return options


def streaming_options(run: Run, shown: int, picked: bool = False) -> list[dict[str, Any]]:
    """Dropdown options while a job streams: every seed with its recent loss
    (`tempsup.io.run.recent_loss`); the one shown says why: it leads now, or it is the
    user's pick."""
    recent = recent_loss(run["loss"])
    options = []
    for s, loss in enumerate(recent):
        why = ""
        if s == shown:
            why = " — your pick" if picked else " — leading now (lowest recent loss)"
        options.append({"label": f"seed {s}{why}: recent loss {loss:.4g}", "value": s})
    return options


def empty_view(message: str, figs: PanelSet = RNN) -> dict[str, Any]:
    """The store before a run shows: `figs`'s panels (default the RNN explorer's), no frames."""
    return {
        "key": None,
        "seed": None,
        "feature": 0,
        "n": 0,
        "steps": [],
        "message": message,
        "layouts": {},
        "base": {},
        "moving": {},
        "frames": {p: [] for p in figs.names},
        "summaries": [],
    }


def frame_data(
    run: Any, seed: int, feature: int, start: int, figs: PanelSet = RNN, lean: bool = False
) -> dict[str, list[Any]]:
    """Per panel, per frame from `start`: only the traces that move with the frame.

    The rest (e.g. the loss history) lives once in `base`; the browser splices
    the moving traces in at the indices of `moving` (assets/tempsup.js). With
    `lean` (a finished run, whose base is final), a moving trace keeps only the
    keys that differ from the base's: the browser merges it over the base.
    """
    out = {}
    for p in figs.names:
        moving = figs.moving_traces(p, run, seed, feature)
        base = figs.frame_traces(p, run, seed, -1, feature) if lean else None
        frames = figs.all_frame_traces(p, run, seed, feature, start)
        out[p] = [
            [delta(traces[i], base[i]) if base else traces[i] for i in moving] for traces in frames
        ]
    return out


def packed(traces: list[dict[str, Any]]) -> str:
    """One frame's moving traces of one panel as JSON text, encoded once where it is made.

    A class's pages are sent the same frames: as text, each answer copies them instead of
    encoding their thousands of numbers again (half the web tier's work in the classroom
    benchmark was JSON and frame drawing); assets/tempsup.js parses a frame as it draws it.
    Numbers are already plain (`tempsup.figures._common.rnd`: NaN is None): orjson writes
    them (a fifth of the json module's time; NaN, if any, as null, as Plotly's encoder
    does); anything it does not know goes through Plotly's encoder, as Dash would have
    sent it."""
    try:
        return orjson.dumps(traces).decode()
    except TypeError:
        return to_json_plotly(traces)


def unpacked(frame: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A frame (or a panel's base) of a view store as traces (`packed` text, or traces as
    they were)."""
    return json.loads(frame) if isinstance(frame, str) else frame


def status_lines(run: Any, seed: int, feature: int, start: int, figs: PanelSet = RNN) -> list[str]:
    """The line under the player for frames `start` … F-1: every number is the frame's own."""
    return figs.status_lines(run, seed, feature, start)


def delta(trace: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """The keys of `trace` that differ from `base` (all of it if it lacks one of base's):
    merged over `base`, every key of `trace` has its value again."""
    if not base.keys() <= trace.keys():
        return trace
    return {k: v for k, v in trace.items() if base.get(k) != v}


def shared_parts(run: Any, seed: int, feature: int, figs: PanelSet = RNN) -> dict[str, Any]:
    """What every frame shares: layouts, the full traces of the last frame, moving indices.

    Re-sent on every poll while training (axis ranges and the loss history grow).
    What differs per frame (`frame_data`, `status_lines`) is appended instead. Where the
    panel set writes captions with a run's numbers (`PanelSet.run_captions`), their
    headlines too, by panel: the page shows them under the panels (`app.panels`); the
    explanations are the config's, which the page has already.
    """
    parts: dict[str, Any] = {
        "layouts": {p: figs.panel_layout(p, run, seed, feature) for p in figs.names},
        "base": {p: figs.frame_traces(p, run, seed, -1, feature) for p in figs.names},
        "moving": {p: figs.moving_traces(p, run, seed, feature) for p in figs.names},
    }
    if figs.run_captions is not None:
        words = figs.run_captions(run, seed, feature)
        parts["captions"] = {p: c.headline for p, c in words.items()}
    return parts


def stream_view(run: Any, seed: int, feature: int = 0, figs: PanelSet = RNN) -> dict[str, Any]:
    """The whole store for the frames a job has streamed so far, for one seed: what the
    page switches to when another seed takes the lead (`tempsup.io.run.leading_seed`). Not
    lean and not cached: the run is still growing."""
    return _view(run, seed, feature, figs, lean=False)


def template_of(run: Any, seed: int, feature: int, figs: PanelSet = RNN) -> dict[str, Any]:
    """Each panel's moving traces of the first frame, drawn from the first frame alone: what
    the frames of a stream (and of a finished run whose panels are `causal`) are sent as
    differences from (`lean_frames`). The same in every web process and at every moment."""
    return _first(frame_data(run.first_frames(1), seed, feature, 0, figs))


def _first(drawn: dict[str, list[Any]]) -> dict[str, Any]:
    """Each panel's first frame of `frame_data`'s frames."""
    return {p: traces[0] if traces else [] for p, traces in drawn.items()}


def lean_frames(
    run: Any, seed: int, feature: int, start: int, template: dict[str, Any], figs: PanelSet = RNN
) -> dict[str, list[str]]:
    """Frames start … F-1 per panel, each moving trace as what differs from the same trace
    of `template` (the browser merges it over it, assets/tempsup.js), as JSON text made
    once (`packed`): mostly numbers, not the styles every frame repeats."""
    return as_lean(frame_data(run, seed, feature, start, figs), template)


def as_lean(drawn: dict[str, list[Any]], template: dict[str, Any]) -> dict[str, list[str]]:
    """`frame_data`'s frames as `lean_frames` sends them: differences from `template`."""
    out = {}
    for panel, traces in drawn.items():
        tpl = template.get(panel) or []
        out[panel] = [
            packed([delta(t, tpl[j]) if j < len(tpl) else t for j, t in enumerate(f)])
            for f in traces
        ]
    return out


Drawn = dict[str, Any]  # frames 0 … n-1 drawn already: "template", "frames", "summaries", "n"


def _view(
    run: Any,
    seed: int,
    feature: int,
    figs: PanelSet,
    lean: bool,
    drawn: Drawn | None = None,
    parts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every frame of one seed and the parts the frames share: the page's whole store.

    `lean` (a finished run's, cached by `full_view`): the frames keep only what differs
    from the base, and the base, which never changes, is JSON text like the frames. A class
    whose job ends is each sent this store (their polls differ, so their answers are not
    shared): as numbers the base was half of encoding each answer (0.8 ms of a default
    run's 1.6 ms), as text it is copied. A stream's base stays plain: its polls send the
    changes to it (`app.streams`).

    When every panel is `causal` for the run's config (`PanelSet.causal`), a finished run's
    frames are what its stream's were: sent as differences from the first frame
    (`template_of`, `lean_frames`), and what a stream drew already (`drawn`, its shared
    parts `parts`, both of this run's frames) is taken, not drawn again: when a job ends,
    its view costs the frames that came after the stream's last read."""
    if lean and figs.causal(run.config):
        return _causal_view(run, seed, feature, figs, drawn, parts)
    parts = shared_parts(run, seed, feature, figs)
    if lean:
        parts["base"] = {p: packed(traces) for p, traces in parts["base"].items()}
    return {
        "key": run.config.key,
        "seed": seed,
        "feature": feature,
        "n": run.n_frames,
        "steps": [int(s) for s in np.asarray(run["step"])],
        "message": "",
        "frames": {
            p: [packed(f) for f in frames]
            for p, frames in frame_data(run, seed, feature, 0, figs, lean=lean).items()
        },
        "summaries": status_lines(run, seed, feature, 0, figs),
        **parts,
    }


def _causal_view(
    run: Any,
    seed: int,
    feature: int,
    figs: PanelSet,
    drawn: Drawn | None,
    parts: dict[str, Any] | None,
) -> dict[str, Any]:
    """`_view` of a finished run whose panels draw each frame from the frames up to it: the
    frames `drawn` has (its first `n`), then the others, as differences from the template."""
    n = run.n_frames
    if drawn is not None and not 0 < drawn["n"] <= n:
        drawn = None
    if drawn is None:  # the first frame drawn with the run is the one drawn alone: causal
        whole = frame_data(run, seed, feature, 0, figs)
        template = _first(whole)
        frames, summaries = as_lean(whole, template), status_lines(run, seed, feature, 0, figs)
    else:
        template, have = drawn["template"], drawn["n"]
        frames = {p: list(drawn["frames"][p]) for p in figs.names}
        summaries = list(drawn["summaries"])
        if have < n:
            for p, more in lean_frames(run, seed, feature, have, template, figs).items():
                frames[p] += more
            summaries += status_lines(run, seed, feature, have, figs)
    shared = dict(parts) if parts is not None else shared_parts(run, seed, feature, figs)
    shared["base"] = {p: packed(traces) for p, traces in shared["base"].items()}
    return {
        "key": run.config.key,
        "seed": seed,
        "feature": feature,
        "n": n,
        "steps": [int(s) for s in np.asarray(run["step"])],
        "message": "",
        "frames": frames,
        "summaries": summaries,
        **shared,
        "template": template,
    }


FULL_VIEWS_KEEP = 32  # whole stores of finished runs kept per process (a class opens a few)
_FULL_VIEWS = Memo(FULL_VIEWS_KEEP)


def full_view(
    run: Any,
    seed: int,
    feature: int = 0,
    figs: PanelSet = RNN,
    content: str | None = None,
    wait: bool = True,
    streamed: Any = None,
) -> dict[str, Any]:
    """The whole store for a finished (or cancelled) run, cached: a shared link opened by
    a whole class, or a job a class watched end, is computed once per web process, by the
    first of the pages that ask at once (`app.memo`). A finished run never changes: its
    key and its number of frames are its content (a cancelled run keeps fewer frames than
    the same config trained to the end). A run not trained here (opened from a file) is
    named by `content`, its digest: its config's key is not its content. With `wait`
    False, a request that finds another page's request drawing it gets `app.memo.PENDING`
    at once (a streaming page keeps its frames and asks again). `streamed()`, if given,
    returns what this process drew of the run while it streamed (`app.streams.drawing`):
    (frames drawn, shared parts), either None."""

    def make() -> dict[str, Any]:
        drawn, parts = streamed() if streamed is not None else (None, None)
        return _view(run, seed, feature, figs, lean=True, drawn=drawn, parts=parts)

    slot = (run.config.key, run.n_frames, content, seed, feature, figs)
    return _FULL_VIEWS.get_or(slot, make, wait)


def lab_view(run: Any, seed: int) -> dict[str, Any]:
    """The store for a correlated-features lab run (`tempsup.bows.figures`)."""
    return full_view(run, seed, 0, bows_figures.PANEL_SET)
