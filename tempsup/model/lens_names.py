"""The names of a gated model's lens arrays in a frame and a run file, torch-free (readers
of runs import this, not `tempsup.model.lens`, which needs torch)."""

from collections.abc import Mapping
from typing import Any

# Arrays a gated model's frame carries beside W_x, W_h, W_y, b_y (leading axes F, M):
# silent (S,) the state at rest, active (T, S, N_x) the response to one input of the law's
# mean value, nonlinearity () how far that is from the silent response, settled () 1 when
# the silent run reached a fixed point.
LENS_ARRAYS = ("silent", "active", "nonlinearity", "settled")
# the model's own parameters, its readout (net_W_y) and readout bias (net_b_y)
NET_PREFIX = "net_"


def carries_lens(arrays: Mapping[str, Any]) -> bool:
    """Whether a run's arrays hold a lens: a gated run's, and also a network `from_torch`
    read through its linearisation (model ssm or linear). What is reported is decided by
    this, not by the model's name, so both are shown alike."""
    return all(name in arrays for name in LENS_ARRAYS)
