"""The "bows" job kind: the correlated-features lab on the shared job queue.

`tempsup.jobkinds.get_kind("bows")` imports this module, which registers the
kind: a `BowsConfig` is trained by `tempsup.bows.run.stream_frames` (frame 0
also carries the data statistics, STATIC_ARRAYS) into a `BowsRun`. Then
`queue.submit(BowsConfig(...))`, `queue.frames(key, cursor)` and
`queue.result(key)` work as for RNN runs. Imports no torch: web processes
that only poll or read results never load it (training imports it lazily).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tempsup.bows.config import BowsConfig
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
