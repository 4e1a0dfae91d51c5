"""The "bows" and "bows-sweep" job kinds: the correlated-features lab on the shared job queue.

`tempsup.jobkinds.get_kind("bows")` (or "bows-sweep") imports this module,
which registers both kinds:

- "bows": a `BowsConfig` is trained by `tempsup.bows.run.stream_frames`
  (frame 0 also carries the data statistics, STATIC_ARRAYS) into a `BowsRun`.
- "bows-sweep": a `tempsup.bows.sweep.BowsSweepSpec` (the sweep over m and
  weight decay) trains every point as one batch; its frames are per-point
  summaries (`SWEEP_FRAME_ARRAYS`), its result a `BowsSweepResult`, and on
  finish each point's `BowsRun` is stored as a DONE "bows" job of its own.

Then `queue.submit(spec)`, `queue.frames(key, cursor)` and `queue.result(key)`
work as for RNN runs and sweeps. Imports no torch: web processes that only
poll or read results never load it (training imports it lazily).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tempsup.bows import sweep
from tempsup.bows.config import BowsConfig
from tempsup.bows.sweep import SWEEP_FRAME_ARRAYS, BowsSweepResult, BowsSweepSpec
from tempsup.jobkinds import JobKind, register_kind

# The arrays every published frame holds (tempsup.bows.run.FRAME_ARRAYS; repeated
# so that this module imports no torch, tests check that the two agree).
BOWS_FRAME_ARRAYS = ("step", "W", "b", "loss", "r2_linear", "r2_model")

Frame = dict[str, np.ndarray]


def _stream(config: BowsConfig, init: Any, on_step: Any) -> Iterator[Frame]:
    from tempsup.bows.run import stream_frames

    return stream_frames(config, init, on_step)


def _result(config: BowsConfig, kept: list[Frame], _published: list[Frame]) -> Any:
    from tempsup.bows.run import BowsRun

    return BowsRun.from_frames(config, kept)


def _load(data: bytes) -> Any:
    from tempsup.bows.run import BowsRun

    return BowsRun.from_bytes(data, source="stored bows run")


BOWS = register_kind(
    JobKind(
        name="bows",
        spec_type=BowsConfig,
        spec_from_json=BowsConfig.from_json,
        stream=_stream,
        result=_result,
        load=_load,
        result_key=lambda run: run.config.key,
        frames_of=lambda run, start: run.frames(start),
        n_frames=lambda run: run.n_frames,
        frame_names=BOWS_FRAME_ARRAYS,
    )
)


# ---- "bows-sweep": every (weight decay, m) point as one batch ---------------------------

BOWS_SWEEP = register_kind(
    JobKind(
        name=BowsSweepSpec.kind,
        spec_type=BowsSweepSpec,
        spec_from_json=BowsSweepSpec.from_json,
        stream=sweep.stream_sweep,
        result=sweep.sweep_result,
        load=lambda data: BowsSweepResult.from_bytes(data, source="stored bows sweep"),
        result_key=lambda result: result.spec.key,
        frames_of=lambda result, start: result.frames(start),
        n_frames=lambda result: result.n_frames,
        frame_names=SWEEP_FRAME_ARRAYS,
        publish=sweep.sweep_frame,
        on_finish=sweep.store_points,
    )
)
