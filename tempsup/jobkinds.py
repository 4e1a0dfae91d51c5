"""Job kinds: what the queue can train, as a small open registry.

One queue, one worker loop and one status/limit/cancel/dedupe machinery serve
every kind of job; a `JobKind` says how to train one kind and how its frames
and result are stored (architecture.md, "Jobs"). Built in:

- "run": a `RunConfig` → `tempsup.run.frame`s → a `Run` (the explorer).
- "sweep": a `tempsup.sweep.SweepSpec` → per-snapshot summaries of every point
  (`SWEEP_FRAME_ARRAYS`, for a phase diagram that grows live) → a `SweepResult`
  (the table rows and the points' run keys). On finish, each point's `Run` is
  stored as a DONE run job of its own, so clicking a point opens it at once.
- "bows", "bows-sweep": reserved for the correlated-features lab (`tempsup.bows`),
  which registers both the first time either is asked for (see `PROVIDERS`).

A spec (the job's input) is an immutable object with `key` (a stable content
hash, the job id: identical specs share one job; include a kind tag so it
never equals another kind's key), `steps` (optimizer steps: the progress
bar), `work` (multiply-adds: the size limit) and `to_json()`. A result has
`to_bytes()`.

A worker trains a job as: `init = kind.warm_start(queue, spec)`; for each
`kept` frame of `kind.stream(spec, init, on_step)`: store
`kind.publish(spec, kept)` as the job's next frame (what clients read while
it runs); then `result = kind.result(spec, all_kept, all_published)`,
`kind.on_finish(queue, spec, result)`, and the queue stores `result.to_bytes()`.
A DONE job's frames are served from its result by `kind.frames_of`.

Registering a kind (e.g. in `tempsup/bows/jobs.py`, imported by
`get_kind("bows")` in a worker that has never seen one):

    from tempsup.jobkinds import JobKind, register_kind

    register_kind(JobKind(
        name="bows",
        spec_type=BowsConfig,
        spec_from_json=BowsConfig.from_json,
        stream=lambda cfg, init, on_step: bows_frames(cfg, init, on_step),
        result=lambda cfg, frames, published: BowsRun.from_frames(cfg, frames),
        load=lambda data: BowsRun.from_bytes(data),
        result_key=lambda run: run.config.key,
        frames_of=lambda run, start: run.frames(start),
        n_frames=lambda run: run.n_frames,
        frame_names=BOWS_ARRAYS,
    ))

then `queue.submit(BowsConfig(...))`, `queue.frames(key, cursor)` and
`queue.result(key)` work like for runs. This module imports no torch: web
processes poll without it; training code is imported inside the functions.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tempsup import run as _run_module
from tempsup.config import RunConfig
from tempsup.errors import TempsupError
from tempsup.sweep import SWEEP_FRAME_ARRAYS, SweepResult, SweepSpec

if TYPE_CHECKING:
    from tempsup.jobs import JobQueue
    from tempsup.run import Run

Frame = dict[str, np.ndarray]
OnStep = Callable[[int], None]

# The arrays of a run frame. tempsup.run imports no torch, so polling needs none.
RUN_ARRAYS = _run_module.ARRAYS


def _identity(_spec: Any, frame: Frame) -> Frame:
    return frame


@dataclass(frozen=True)
class JobKind:
    """How one kind of job is trained, published, stored and read back."""

    name: str  # stored with every job ("run", "sweep", ...)
    spec_type: type  # submit() picks the kind by isinstance
    spec_from_json: Callable[[str], Any]  # inverse of spec.to_json(); TempsupError if bad
    # (spec, warm-start weights or None, on_step(step)) -> frames kept by the worker
    stream: Callable[[Any, Any, OnStep | None], Iterator[Frame]]
    # (spec, kept frames, published frames) -> result with to_bytes()
    result: Callable[[Any, list[Frame], list[Frame]], Any]
    load: Callable[[bytes], Any]  # inverse of result.to_bytes(); TempsupError if damaged
    result_key: Callable[[Any], str]  # the key of the spec a result belongs to
    frames_of: Callable[[Any, int], list[Frame]]  # a DONE job's frames from `start`
    n_frames: Callable[[Any], int]
    frame_names: tuple[str, ...]  # arrays every published frame holds (checked on read)
    publish: Callable[[Any, Frame], Frame] = _identity  # kept frame -> what clients read
    warm_start: Callable[[JobQueue, Any], Any] | None = None  # (queue, spec) -> init
    on_finish: Callable[[JobQueue, Any, Any], None] | None = None  # (queue, spec, result)


_KINDS: dict[str, JobKind] = {}
# Kinds whose module registers them when imported; imported on first use by name.
PROVIDERS = {"bows": "tempsup.bows.jobs", "bows-sweep": "tempsup.bows.jobs"}


def register_kind(kind: JobKind) -> JobKind:
    """Add (or replace) a kind; returns it. Its name is what the queue stores."""
    if not isinstance(kind, JobKind):
        raise TempsupError(f"register_kind: expected a JobKind, got {type(kind).__name__}")
    for other in _KINDS.values():
        if other.name != kind.name and other.spec_type is kind.spec_type:
            raise TempsupError(
                f"register_kind: {kind.spec_type.__name__} is already the spec of kind "
                f"{other.name!r}; one spec type per kind"
            )
    _KINDS[kind.name] = kind
    return kind


def get_kind(name: str) -> JobKind:
    """The kind called `name`, importing its provider module if need be."""
    if name not in _KINDS and name in PROVIDERS:
        with contextlib.suppress(ImportError):
            importlib.import_module(PROVIDERS[name])
    if name not in _KINDS:
        raise TempsupError(
            f"job kind: expected one of {', '.join(kind_names())}, got {name!r} "
            "(is the module that registers it installed?)"
        )
    return _KINDS[name]


def kind_of(spec: Any) -> JobKind:
    """The kind whose spec type `spec` is; TempsupError for anything else.

    A spec whose class names a provided kind (`kind = "bows-sweep"`) loads its
    provider first, so submitting works without importing the kind's module."""
    tag = getattr(type(spec), "kind", None)
    if isinstance(tag, str) and tag in PROVIDERS and tag not in _KINDS:
        get_kind(tag)  # imports the provider, which registers the kind
    for kind in _KINDS.values():
        if isinstance(spec, kind.spec_type):
            return kind
    names = " or ".join(k.spec_type.__name__ for k in _KINDS.values())
    raise TempsupError(f"submit: expected a {names}, got {type(spec).__name__}")


def kind_names() -> list[str]:
    return list(_KINDS)


# ---- warm starts ----------------------------------------------------------------------


def load_init(queue: JobQueue, config_ref: str | None, hidden: int, inputs: int):
    """Warm-start weights: final weights of the best seed of a finished job
    (by key) or of a run file (by path); None without a warm start."""
    if config_ref is None:
        return None
    from tempsup.jobs import JobState
    from tempsup.run import Run

    status = queue.status(config_ref)
    if status is not None:
        if status.state != JobState.DONE:
            raise TempsupError(
                f"warm_start: expected a finished run, but run {config_ref} is "
                f"{status.state.value}; train it first"
            )
        run = queue.run(config_ref)
        if run is None:
            raise TempsupError(
                f"warm_start: the stored result of run {config_ref} is unreadable; train it again"
            )
    elif Path(config_ref).is_file():
        run = Run.load(config_ref)
    else:
        raise TempsupError(
            f"warm_start: expected a finished run key or a run file path, got {config_ref!r} "
            "(no such job or file)"
        )
    got = (run.config.hidden, run.config.inputs)
    if got != (hidden, inputs):
        raise TempsupError(
            f"warm_start: expected a run with hidden={hidden}, inputs={inputs}, "
            f"got hidden={got[0]}, inputs={got[1]} from {config_ref}"
        )
    return run.weights(-1)


def _base_warm_start(queue: JobQueue, config: RunConfig):
    return load_init(queue, config.warm_start, config.hidden, config.inputs)


# ---- "run": a RunConfig trained into a Run --------------------------------------------


def _run_stream(config: RunConfig, init: Any, on_step: OnStep | None) -> Iterator[Frame]:
    from tempsup.run import frame
    from tempsup.train import train

    snapshots = train(config, init=init, on_step=on_step)
    try:
        for snap in snapshots:
            yield frame(config, snap)
    finally:
        snapshots.close()


def _run_result(config: RunConfig, kept: list[Frame], _published: list[Frame]) -> Run:
    from tempsup.run import Run

    return Run.from_frames(config, kept)


def _run_load(data: bytes) -> Run:
    from tempsup.run import Run

    return Run.from_bytes(data, source="stored run")


def _run_frames(run: Run, start: int) -> list[Frame]:
    return [
        {name: np.array(run.arrays[name][i]) for name in run.arrays}
        for i in range(start, run.n_frames)
    ]


RUN = register_kind(
    JobKind(
        name="run",
        spec_type=RunConfig,
        spec_from_json=RunConfig.from_json,
        stream=_run_stream,
        result=_run_result,
        load=_run_load,
        result_key=lambda run: run.config.key,
        frames_of=_run_frames,
        n_frames=lambda run: run.n_frames,
        frame_names=RUN_ARRAYS,
        warm_start=lambda queue, config: _base_warm_start(queue, config),
    )
)


# ---- "sweep": every point of a SweepSpec as one batch ---------------------------------


def _sweep_stream(spec: SweepSpec, init: Any, on_step: OnStep | None) -> Iterator[Frame]:
    from tempsup.sweep import stream_sweep

    return stream_sweep(spec, init, on_step)


def _sweep_publish(spec: SweepSpec, kept: Frame) -> Frame:
    from tempsup.sweep import sweep_frame

    return sweep_frame(spec, kept)


def _sweep_result(spec: SweepSpec, kept: list[Frame], published: list[Frame]) -> SweepResult:
    from tempsup.sweep import sweep_result

    return sweep_result(spec, kept, published)


def _store_points(queue: JobQueue, spec: SweepSpec, result: SweepResult) -> None:
    """Each point's Run becomes a DONE run job, unless a readable one exists
    (a shared link must keep replaying the run it was made from)."""
    for run in result.runs or []:
        if queue.run(run.config.key) is None:
            queue.put_run(run)


SWEEP = register_kind(
    JobKind(
        name="sweep",
        spec_type=SweepSpec,
        spec_from_json=SweepSpec.from_json,
        stream=_sweep_stream,
        result=_sweep_result,
        load=lambda data: SweepResult.from_bytes(data, source="stored sweep"),
        result_key=lambda result: result.spec.key,
        frames_of=lambda result, start: result.frames(start),
        n_frames=lambda result: result.n_frames,
        frame_names=SWEEP_FRAME_ARRAYS,
        publish=_sweep_publish,
        warm_start=lambda queue, spec: _base_warm_start(queue, spec.base),
        on_finish=_store_points,
    )
)
