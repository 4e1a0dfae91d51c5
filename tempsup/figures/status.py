"""The status line under the player: one seed's numbers at one frame.

Every number on screen belongs to the frame shown, so the line is built per
frame, from the same quantities the panels draw: the measured loss of the
frame, how many seeds are near the best loss *at that frame*
(`tempsup.io.run.success_mask`), and ρ(W_h), the swept angle kθ and ‖w_0‖ from
the eigen panel's own computation (kθ and ‖w_0‖ in the canonical gauge),
rounded as that panel rounds them. A Run whose shape is not its module's (an imported
network read as a larger one, `Run.origin["shape"]`) says so on every line, as
`summary()["warnings"]` does. The app shows `status_lines(...)[frame]`
under the scrubber, and the HTML export prints the line of its last frame.
"""

from __future__ import annotations

import numpy as np

from tempsup.figures import eigen
from tempsup.figures._common import feature_name, fmt, select
from tempsup.figures.panel import frame_index, prepared
from tempsup.io.run import SUCCESS_FRACTION, Run, success_mask

# What "near the best loss" means, for a tooltip or a caption beside the line.
NEAR_BEST = (
    "a seed is near the best loss when it closes at least "
    f"{SUCCESS_FRACTION:.0%} of the gap between a silent network's loss (always output 0) "
    "and the best seed's loss at the same frame — relative to the best seed, not an "
    "absolute threshold"
)


def status_lines(run: Run, seed: int | None = None, feature: int = 0, start: int = 0) -> list[str]:
    """The status line of frames `start` … F-1 for one seed (None: the best) and feature."""
    sel = select(run, seed, feature)
    d = prepared(eigen, sel)  # the eigen panel's own data, computed once per view
    loss = np.asarray(run["loss"], dtype=float)  # (F, M)
    which = f" (feature {feature_name(sel.feature)})" if sel.config.inputs > 1 else ""
    first = frame_index(run, start)
    near_best = success_mask(sel.config, loss[first:]).sum(axis=-1)  # per frame, at once
    origin = getattr(run, "origin", None) or {}
    note = f" · note: {origin['shape']}" if origin.get("shape") else ""
    lines = []
    for f in range(first, run.n_frames):
        if np.isfinite(loss[f, sel.seed]):
            near = int(near_best[f - first])
            measured = (
                f"loss {loss[f, sel.seed]:.4g} · {near}/{loss.shape[1]} seeds near the best loss"
            )
        else:  # weights trained elsewhere (`tempsup.from_weights`) come without a loss
            measured = "no measured loss"
        lines.append(
            f"seed {sel.seed}: {measured} · "
            f"swept angle kθ{which} = {fmt(float(d['swept'][f]), 4)}° · "
            f"ρ(W_h) = {fmt(float(d['rho'][f]))} · ‖w_0‖ = {fmt(float(d['w0'][f]))} "
            "(kθ, ‖w_0‖: minimum-norm gauge)" + note
        )
    return lines


def status_line(run: Run, seed: int | None = None, frame: int = -1, feature: int = 0) -> str:
    """The status line of one frame (default: the last)."""
    return status_lines(run, seed, feature, frame_index(run, frame))[0]
