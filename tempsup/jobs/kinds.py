"""Job kinds: what the queue can train, and how a spec from the web is checked.

One queue, one worker loop and one status/limit/cancel/dedupe machinery serve
every kind of job; a `JobKind` says how to train one kind and how its frames
and result are stored. The kinds:

- "run": a `RunConfig` → `tempsup.io.run.frame`s → a `Run` (the explorer).
- "sweep": a `tempsup.analysis.sweeps.SweepSpec` → per-snapshot summaries of every point
  (`SWEEP_FRAME_ARRAYS`, for a phase diagram that grows live) → a `SweepResult`
  (the table rows and the points' run keys). On finish, each point's `Run` is
  stored as a DONE run job of its own, so clicking a point opens it at once.
- "bows": a `tempsup.bows.config.BowsConfig` → `tempsup.bows.run.stream_frames`
  (frame 0 also carries the data statistics) → a `BowsRun` (the correlations lab).
- "bows-sweep": a `tempsup.bows.sweeps.BowsSweepSpec` (m × weight decay) as one
  batch, like "sweep"; each point is stored as a DONE "bows" job.

A spec (the job's input) is an immutable object with `key` (a stable content
hash, the job id: identical specs share one job; a kind tag keeps kinds
apart), `steps` (optimizer steps: the progress bar), `work` (multiply-adds:
the size limit) and `to_json()`. A result has `to_bytes()`.

A worker trains a job as: `inputs = kind.prepare(queue, spec)` (warm-start
weights of a finished job, the uploaded text a bows spec names by its
hash); for each `kept` frame of `kind.stream(spec, inputs, on_step)`: store
`kind.publish(spec, kept)` as the job's next frame; then `result =
kind.result(spec, all_kept, all_published)`, `kind.on_finish(queue, spec,
result)`, and the queue stores `result.to_bytes()`. A DONE job's frames are
served from its result by `kind.frames_of`.

Specs that come from the web are checked by `check_untrusted(spec)`: a spec
names server-side things only by content (a finished job's key, a stored
blob's sha256), never by a path or a URL. This module imports no torch: web
processes poll without it; training code is imported inside the functions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tempsup.analysis.sweeps import SweepResult, SweepSpec
from tempsup.bows import sweeps as bows_sweep
from tempsup.bows.config import BowsConfig
from tempsup.bows.sweeps import BowsSweepResult, BowsSweepSpec
from tempsup.errors import TempsupError
from tempsup.io.run import ARRAYS, Run
from tempsup.jobs.record import JobState
from tempsup.model.config import RunConfig, batch_key

Frame = dict[str, np.ndarray]
OnStep = Callable[[int], None]

# The arrays of a run frame. tempsup.io.run imports no torch, so polling needs none.
RUN_ARRAYS = ARRAYS
# The arrays every published bows frame holds (tempsup.bows.run.FRAME_ARRAYS; repeated
# so that this module imports no torch, tests check that the two agree).
BOWS_FRAME_ARRAYS = ("step", "W", "b", "loss", "r2_linear", "r2_model")
# A warm start named by a finished job's key (what a web client may ask for).
RUN_KEY = re.compile(r"^[0-9a-f]{16}$")


class Results(Protocol):
    """What a kind reads from and writes to the queue (a `tempsup.jobs.queue.BaseQueue`)."""

    def status(self, key: str) -> Any: ...
    def run(self, key: str) -> Any: ...
    def result(self, key: str) -> Any: ...
    def put_run(self, run: Any) -> None: ...
    def put_result(self, spec: Any, result: Any) -> None: ...
    def blob(self, digest: str) -> bytes | None: ...


def _identity(_spec: Any, frame: Frame) -> Frame:
    return frame


def _no_blobs(_spec: Any) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class JobKind:
    """How one kind of job is trained, published, stored, read back and checked."""

    name: str  # stored with every job ("run", "sweep", ...)
    spec_type: type  # submit() picks the kind by isinstance
    spec_from_json: Callable[[str], Any]  # inverse of spec.to_json(); TempsupError if bad
    # (spec, prepared inputs or None, on_step(step)) -> frames kept by the worker
    stream: Callable[[Any, Any, OnStep | None], Iterator[Frame]]
    # (spec, kept frames, published frames) -> result with to_bytes()
    result: Callable[[Any, list[Frame], list[Frame]], Any]
    load: Callable[[bytes], Any]  # inverse of result.to_bytes(); TempsupError if damaged
    result_key: Callable[[Any], str]  # the key of the spec a result belongs to
    frames_of: Callable[[Any, int], list[Frame]]  # a DONE job's frames from `start`
    n_frames: Callable[[Any], int]
    frame_names: tuple[str, ...]  # arrays every published frame holds (checked on read)
    publish: Callable[[Any, Frame], Frame] = _identity  # kept frame -> what clients read
    prepare: Callable[[Results, Any], Any] | None = None  # (queue, spec) -> stream inputs
    on_finish: Callable[[Results, Any, Any], None] | None = None  # (queue, spec, result)
    # what a spec from the web may not carry: raises TempsupError naming the field
    check_untrusted: Callable[[Any], None] = lambda _spec: None
    blobs: Callable[[Any], tuple[str, ...]] = _no_blobs  # sha256 digests the spec needs stored
    # keys of jobs this one starts from (a warm start): it is not claimed while they are active
    needs: Callable[[Any], tuple[str, ...]] = _no_blobs
    # Jobs whose batch keys are equal (not None) may train as one batch: a worker
    # claims them together (`BaseQueue.claim_batch`) and `stream_batch(specs, inputs,
    # on_step)` yields, per snapshot, one kept frame per spec, each equal to what
    # `stream` yields for that spec alone.
    batch_key: Callable[[Any], str | None] = lambda _spec: None
    stream_batch: Callable[[list[Any], list[Any], OnStep | None], Iterator[list[Frame]]] | None = (
        None
    )


_KINDS: dict[str, JobKind] = {}


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
    """The kind called `name`."""
    if name not in _KINDS:
        raise TempsupError(f"job kind: expected one of {', '.join(kind_names())}, got {name!r}")
    return _KINDS[name]


def kind_of(spec: Any) -> JobKind:
    """The kind whose spec type `spec` is; TempsupError for anything else."""
    for kind in _KINDS.values():
        if isinstance(spec, kind.spec_type):
            return kind
    names = " or ".join(k.spec_type.__name__ for k in _KINDS.values())
    raise TempsupError(f"submit: expected a {names}, got {type(spec).__name__}")


def kind_names() -> list[str]:
    return list(_KINDS)


# ---- warm starts ----------------------------------------------------------------------


def load_init(queue: Results, config_ref: str | None, hidden: int, inputs: int):
    """Warm-start weights: final weights of the best seed of a finished job
    (by key) or of a run file (by path); None without a warm start."""
    if config_ref is None:
        return None

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


def _base_warm_start(queue: Results, config: RunConfig):
    return load_init(queue, config.warm_start, config.hidden, config.inputs)


# ---- "run": a RunConfig trained into a Run --------------------------------------------


def _run_stream(config: RunConfig, init: Any, on_step: OnStep | None) -> Iterator[Frame]:
    from tempsup.io.run import frame
    from tempsup.training.trainer import train

    snapshots = train(config, init=init, on_step=on_step)
    try:
        for snap in snapshots:
            yield frame(config, snap)
    finally:
        snapshots.close()


def _run_stream_batch(
    configs: list[RunConfig], _inits: list[Any], on_step: OnStep | None
) -> Iterator[list[Frame]]:
    """Runs of one batch key (no warm starts) trained together, cut into their frames."""
    from tempsup.io.run import batch_frames
    from tempsup.training.trainer import train

    snapshots = train(configs, on_step=on_step)
    try:
        for snap in snapshots:
            yield batch_frames(configs, snap)
    finally:
        snapshots.close()


def _run_result(config: RunConfig, kept: list[Frame], _published: list[Frame]) -> Run:
    # stored with its canonical gauge: every web process that shows it reads it, none solves
    return Run.from_frames(config, kept).with_gauge()


def _run_load(data: bytes) -> Run:
    return Run.from_bytes(data, source="stored run")


def _run_frames(run: Run, start: int) -> list[Frame]:
    return [
        {name: np.array(run.arrays[name][i]) for name in run.arrays}
        for i in range(start, run.n_frames)
    ]


def run_kind(name: str, spec_type: Any, frame_names: tuple[str, ...], **fields: Any) -> JobKind:
    """A kind whose result is a run file of one config (`.config`, `.n_frames`, and
    `.frames(start)` unless `frames_of` is given), registered."""
    fields.setdefault("frames_of", lambda run, start: run.frames(start))
    return register_kind(JobKind(
        name=name, spec_type=spec_type, spec_from_json=spec_type.from_json,
        result_key=lambda run: run.config.key, n_frames=lambda run: run.n_frames,
        frame_names=frame_names, **fields,
    ))  # fmt: skip


def sweep_kind(name: str, spec_type: Any, result_type: Any, **fields: Any) -> JobKind:
    """A kind whose result is a sweep result (`tempsup.core.specs.SweepResultBase`: `.spec`,
    `.frames(start)`, `.n_frames`), its frames the result type's `frame_arrays`, registered."""
    source = f"stored {name.replace('-', ' ')}"
    return register_kind(JobKind(
        name=name, spec_type=spec_type, spec_from_json=spec_type.from_json,
        load=lambda data: result_type.from_bytes(data, source=source),
        result_key=lambda result: result.spec.key,
        frames_of=lambda result, start: result.frames(start),
        n_frames=lambda result: result.n_frames, frame_names=result_type.frame_arrays, **fields,
    ))  # fmt: skip


RUN = run_kind(
    "run",
    RunConfig,
    RUN_ARRAYS,
    stream=_run_stream,
    result=_run_result,
    load=_run_load,
    frames_of=_run_frames,
    prepare=_base_warm_start,
    check_untrusted=lambda config: _check_warm_start(config.warm_start),
    needs=lambda config: _needs(config.warm_start),
    batch_key=batch_key,
    stream_batch=_run_stream_batch,
)


# ---- "sweep": every point of a SweepSpec as one batch ---------------------------------


def _sweep_stream(spec: SweepSpec, init: Any, on_step: OnStep | None) -> Iterator[Frame]:
    from tempsup.analysis.sweeps import stream_sweep

    return stream_sweep(spec, init, on_step)


def _sweep_publish(spec: SweepSpec, kept: Frame) -> Frame:
    from tempsup.analysis.sweeps import sweep_frame

    return sweep_frame(spec, kept)


def _sweep_result(spec: SweepSpec, kept: list[Frame], published: list[Frame]) -> SweepResult:
    from tempsup.analysis.sweeps import sweep_result

    return sweep_result(spec, kept, published)


def _store_points(queue: Results, spec: SweepSpec, result: SweepResult) -> None:
    """Each point's Run becomes a DONE run job, unless a readable one exists
    (a shared link must keep replaying the run it was made from)."""
    for run in result.runs or []:
        if queue.run(run.config.key) is None:
            queue.put_run(run)


SWEEP = sweep_kind(
    "sweep",
    SweepSpec,
    SweepResult,
    stream=_sweep_stream,
    result=_sweep_result,
    publish=_sweep_publish,
    prepare=lambda queue, spec: _base_warm_start(queue, spec.base),
    check_untrusted=lambda spec: _check_warm_start(spec.base.warm_start),
    needs=lambda spec: _needs(spec.base.warm_start),
    on_finish=_store_points,
)


def _needs(ref: Any) -> tuple[str, ...]:
    return (ref,) if isinstance(ref, str) and RUN_KEY.match(ref) else ()


def _check_warm_start(ref: Any) -> None:
    if ref is not None and not (isinstance(ref, str) and RUN_KEY.match(ref)):
        raise TempsupError(
            "warm_start: expected the 16-character key of a finished run (this "
            f"server does not read files), got {str(ref)[:80]!r}"
        )


# ---- "bows": the correlated-features lab -----------------------------------------------


def text_digest(data: bytes) -> str:
    """The name of an uploaded text in the store and in a bows spec: its sha256."""
    return hashlib.sha256(data).hexdigest()


def _text_of(queue: Results, config: BowsConfig) -> str | None:
    """The text a "text" config names by its sha256, read from the job store."""
    if config.text_sha256 is None:
        return None
    data = queue.blob(config.text_sha256)
    if data is None or text_digest(data) != config.text_sha256:
        raise TempsupError(
            f"text_sha256: the job store holds no text {config.text_sha256[:16]}…; upload it again"
        )
    return data.decode("utf-8", errors="replace")


def _bows_blobs(config: BowsConfig) -> tuple[str, ...]:
    return () if config.text_sha256 is None else (config.text_sha256,)


def _bows_stream(config: BowsConfig, text: str | None, on_step: OnStep | None) -> Iterator[Frame]:
    from tempsup.bows.run import stream_frames

    return stream_frames(config, None, on_step, text=text)


def _bows_result(config: BowsConfig, kept: list[Frame], _published: list[Frame]) -> Any:
    from tempsup.bows.run import BowsRun

    return BowsRun.from_frames(config, kept)


def _bows_load(data: bytes) -> Any:
    from tempsup.bows.run import BowsRun

    return BowsRun.from_bytes(data, source="stored bows run")


BOWS = run_kind(
    "bows",
    BowsConfig,
    BOWS_FRAME_ARRAYS,
    stream=_bows_stream,
    result=_bows_result,
    load=_bows_load,
    prepare=_text_of,
    blobs=_bows_blobs,
)


def _bows_sweep_stream(
    spec: BowsSweepSpec, text: str | None, on_step: OnStep | None
) -> Iterator[Frame]:
    return bows_sweep.stream_sweep(spec, None, on_step, text=text)


BOWS_SWEEP = sweep_kind(
    BowsSweepSpec.kind,
    BowsSweepSpec,
    BowsSweepResult,
    stream=_bows_sweep_stream,
    result=bows_sweep.sweep_result,
    publish=bows_sweep.sweep_frame,
    prepare=lambda queue, spec: _text_of(queue, spec.base),
    on_finish=bows_sweep.store_points,
    blobs=lambda spec: _bows_blobs(spec.base),
)


def check_untrusted(spec: Any) -> Any:
    """`spec` if a web client may submit it: a known kind whose fields name server-side
    things only by content (job keys, blob digests); TempsupError naming the field."""
    kind = kind_of(spec)
    kind.check_untrusted(spec)
    return spec
