"""`Snapshot`: every model's weights at one moment of training, as numpy arrays.

Its own module so that readers of runs (the web app, figures, the job queue)
never import torch: only the trainer produces snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass

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
