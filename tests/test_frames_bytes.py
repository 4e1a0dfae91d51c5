"""A stored frame's bytes (tempsup.jobs.store): every array back exactly, damage refused.

Frames of running jobs are decoded on every poll, so they have a format of their own
(a JSON header and raw bytes); frames written by earlier versions (np.savez) still read.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from tempsup.errors import TempsupError
from tempsup.jobs.store import FRAME_MAGIC, frame_from_bytes, frame_to_bytes

NAMES = ("step", "W_h", "loss", "flags")


def a_frame() -> dict[str, np.ndarray]:
    gen = np.random.default_rng(3)
    return {
        "step": np.asarray(40, dtype=np.int64),  # 0-d stays 0-d
        "W_h": gen.standard_normal((8, 2, 2)).astype(np.float32).transpose(0, 2, 1),  # strided
        "loss": gen.standard_normal(8),  # float64
        "flags": np.zeros((0, 3), dtype=bool),  # empty
    }


def test_a_frame_comes_back_exactly() -> None:
    frame = a_frame()
    back = frame_from_bytes(frame_to_bytes(frame), NAMES)
    assert list(back) == list(NAMES)
    for name, value in frame.items():
        assert back[name].dtype == value.dtype and back[name].shape == value.shape, name
        np.testing.assert_array_equal(back[name], value)
    # decoded once per process and shared by every reader, so read-only: a reader that
    # wrote into it would change what every later reader sees
    with pytest.raises(ValueError, match="read-only"):
        back["W_h"][0, 0, 0] = 99.0
    again = frame_from_bytes(frame_to_bytes(frame), NAMES)
    assert again["W_h"] is back["W_h"]
    other = dict(frame, loss=frame["loss"] + 1.0)
    np.testing.assert_array_equal(
        frame_from_bytes(frame_to_bytes(other), NAMES)["loss"], other["loss"]
    )


def test_a_frame_written_by_np_savez_still_reads() -> None:
    buf = io.BytesIO()
    np.savez(buf, **a_frame())
    back = frame_from_bytes(buf.getvalue(), NAMES)
    np.testing.assert_array_equal(back["W_h"], a_frame()["W_h"])


def _with_header(header: object, body: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return FRAME_MAGIC + len(text).to_bytes(4, "little") + text + body


GOOD = frame_to_bytes(a_frame())


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "no frame header"),
        (b"garbage bytes", "no frame header"),
        (GOOD[:-3], "bytes missing"),
        (GOOD + b"\0", "bytes after"),
        (FRAME_MAGIC + (10**6).to_bytes(4, "little") + b"[]", "expected"),
        (_with_header([["x", "|O", [1]]], b"\0" * 8), "object"),
        (_with_header([["x", "<f4", [-1]]], b"\0" * 4), "shape"),
        (_with_header([["x", "<f4", [1.5]]], b"\0" * 4), "shape"),
        (_with_header([["x", "no such dtype", [1]]]), "expected"),
        (_with_header({"x": 1}), "expected"),
    ],
)
def test_damaged_frames_are_refused_with_a_reason(data: bytes, why: str) -> None:
    with pytest.raises(TempsupError, match="stored frame") as info:
        frame_from_bytes(data, ("x",))
    assert why in str(info.value)


def test_a_frame_without_a_needed_array_is_refused() -> None:
    with pytest.raises(TempsupError, match="missing W_x"):
        frame_from_bytes(GOOD, ("step", "W_x"))
