"""`Snapshot`: every model's weights at one moment of training, as numpy arrays.

Its own module so that readers of runs (the web app, figures, the job queue)
never import torch: only the trainer produces snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Snapshot:
    """All models' weights after `step` optimizer steps (numpy, model axis first).

    `loss` is the mean measured training loss over the steps since the last
    snapshot (at step 0: the loss of the initial weights on one batch).
    """

    step: int
    W_x: np.ndarray  # (M, N_h, N_x)
    W_h: np.ndarray  # (M, N_h, N_h)
    W_y: np.ndarray  # (M, N_h, N_x) effective readout (W_{s=k} when tied)
    b_y: np.ndarray  # (M, N_x)
    loss: np.ndarray  # (M,)
    # a gated model's lens beside its linearised W's (tempsup.model.lens), model axis first
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def select(self, rows: slice) -> Snapshot:
        """The snapshot of models `rows` (a config's seeds in a batch)."""
        return Snapshot(
            self.step, self.W_x[rows], self.W_h[rows], self.W_y[rows], self.b_y[rows],
            self.loss[rows], {n: v[rows] for n, v in self.extra.items()},
        )  # fmt: skip
