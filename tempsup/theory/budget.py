"""Which frames of a run get the loss terms and the expected loss: a cost model.

The exact terms of a ReLU readout pair every input slot with every other
(Q = T·N_x slots, Q²/2 pairs, each a forward pass for the ReLU RNN), and the
expected loss is a convolution (SSM) or a Monte Carlo estimate (ReLU RNN). For
the paper's scalar setting that is milliseconds per frame; for wide inputs and
hidden states it grows as N_x²·N_h² and would dwarf the training itself. So a
run gets them where they are affordable:

- a piece whose cost for one frame exceeds `FRAME_CAP_S` is not computed at
  all (its arrays hold NaN, and the panel says so);
- the rest is computed at as many evenly spread frames (always the first and
  the last) as fit in `FRACTION` of the training's estimated time, or at every
  frame when that costs less than `SMALL_S` in all; the other frames hold NaN.

Estimates are in seconds, from element-operation counts calibrated on the
default runs (`benchmarks/bench_terms.py` measures the real ratio); they only
need to be right within a factor of two. The linear model's closed form is
always computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tempsup.model.config import RunConfig, snapshot_steps
from tempsup.theory.expected_loss import GRID, MC_SEQUENCES

FRACTION = 0.3  # the derived arrays may take this fraction of the training's time
FRAME_CAP_S = 3.0  # no piece may take longer than this for one frame
SMALL_S = 5.0  # a run whose every frame costs less than this in all gets every frame
OP_S = 1.6e-9  # seconds per numpy element operation (measured on the default runs)
TRAIN_OP_S = 4e-9  # seconds per multiply-add of training (forward and backward: 3 per add)
NODES = 32  # quadrature nodes of a pair (tempsup.theory.relu_terms, homogeneous case)


@dataclass(frozen=True)
class Plan:
    """What `tempsup.io.run.derived` computes for a config, and why not the rest."""

    steps: frozenset[int] | None  # the snapshot steps that get them; None: every step
    terms: bool  # the four terms (and, for the ReLU RNN, its exact strata)
    expected: bool  # the expected loss
    note: str  # "" when everything is computed at every frame

    def covers(self, step: int) -> bool:
        """Whether the frame at optimizer step `step` gets the affordable pieces."""
        return self.steps is None or int(step) in self.steps


def frame_seconds(config: RunConfig) -> tuple[float, float]:
    """Estimated seconds per frame for (the terms, the expected loss)."""
    m, T, n_x, n_h = config.seeds, config.seq_len, config.inputs, config.state_size
    q = T * n_x
    if not config.relu_readout:
        return 0.0, 0.0
    if config.relu_hidden:  # forward passes for every pair; sequences through the network
        terms = m * T * T * n_x * n_x * NODES * n_h * (n_h + n_x)
        expected = 4 * m * MC_SEQUENCES * T * n_h * (n_h + n_x)
    else:  # closed-form pair tables; an FFT convolution on the grid
        terms = 40 * m * n_x * q * q
        expected = 12 * m * n_x * q * max(GRID, 8 * q)
    return OP_S * terms, OP_S * expected


def training_seconds(config: RunConfig) -> float:
    return TRAIN_OP_S * 3 * config.work


def plan(config: RunConfig) -> Plan:
    """The frames and pieces `derived` computes for `config` (see the module docstring)."""
    steps = snapshot_steps(config.steps, config.snapshot_every)
    t_terms, t_expected = frame_seconds(config)
    terms, expected = t_terms <= FRAME_CAP_S, t_expected <= FRAME_CAP_S
    per_frame = (t_terms if terms else 0.0) + (t_expected if expected else 0.0)
    n = len(steps)
    if per_frame * n > SMALL_S:
        n = min(n, max(2, math.floor(FRACTION * training_seconds(config) / per_frame)))
    picked = np.unique(np.linspace(0, len(steps) - 1, n).round().astype(int))
    notes = []
    slots = config.seq_len * config.inputs
    if not terms:
        notes.append(f"four terms not computed ({slots} input slots: too many pairs)")
    if not expected:
        notes.append("expected loss not computed (too costly at this size)")
    if (terms or expected) and len(picked) < len(steps):
        share = f"{100 * FRACTION:.0f} %"
        notes.append(
            f"computed at {len(picked)} of {len(steps)} frames (within {share} of training)"
        )
    chosen = None if len(picked) == len(steps) else frozenset(steps[i] for i in picked)
    return Plan(chosen, terms, expected, "; ".join(notes))
