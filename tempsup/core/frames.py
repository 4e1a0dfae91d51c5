"""One frame numbering for every surface: frames count from 1, as the app's player shows them.

A run stores its frames 0-based (axis 0 of its arrays); people read and type
them 1-based. The app's player label, the share link's `frame`, `tempsup
inspect --frame`, the HTML export's slider and the static site's all name the
frame at index 40 of a 101-frame run "frame 41 of 101 (step 800)". These
functions are the only translation between the two, so no surface can drift.
"""

from __future__ import annotations

from typing import Any

from tempsup.errors import TempsupError


def frame_number(index: int, n: int) -> int:
    """The 1-based number of the frame at 0-based `index` (negative: from the end) of `n`."""
    return int(index) % n + 1


def frame_index(number: Any, n: int, from_end: bool = True) -> int:
    """The 0-based index of frame `number` (1 … n; with `from_end`, -1 … -n count from the
    last). Anything else is a TempsupError that names the valid range."""
    ok = isinstance(number, int) and not isinstance(number, bool) and n > 0
    ok = ok and (1 <= number <= n or (from_end and -n <= number <= -1))
    if not ok:
        back = f" (or -1 … -{n} from the last)" if from_end else ""
        raise TempsupError(f"frame: expected an integer in 1 … {n}{back}, got {number!r}")
    return number - 1 if number > 0 else number % n


def frame_label(index: int, n: int, step: int) -> str:
    """The label of the frame at 0-based `index` of `n`, trained `step` steps:
    "frame 41 of 101 (step 800)"."""
    return f"frame {frame_number(index, n)} of {n} (step {int(step)})"


def stop_note(last_step: int, steps: int) -> str | None:
    """What a run whose last frame is short of its config's steps says of it: "stopped at
    step 1060 of 2000 (cancelled)"; None for a run trained to the end."""
    if int(last_step) >= int(steps):
        return None
    return f"stopped at step {int(last_step)} of {int(steps)} (cancelled)"


__all__ = ["frame_index", "frame_label", "frame_number", "stop_note"]
