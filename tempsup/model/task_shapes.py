"""The tasks' shapes and linear targets (issue 43), torch-free: what a config checks.

`tempsup.model.config` validates a run's task with these, and every reader of runs
(the web, `tempsup inspect`) imports the config without torch; the sampling and the
targets as tensors live in `tempsup.model.tasks`, which re-exports these names. The
tasks, their output order and the silent past are described there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tempsup.errors import TempsupError

TASKS = ("recall", "multi", "sum", "cued")
LINEAR_TASKS = ("recall", "multi", "sum")
TASK_NAMES = {
    "recall": "recall the input k steps back",
    "multi": "recall several delays at once",
    "sum": "sum of the inputs over a window of the past",
    "cued": "recall the delay the cue names (a variable delay)",
}


# ---- the tasks' shapes ------------------------------------------------------------------


def task_delays(task: str, ks: int | Sequence[int], window: int = 1) -> tuple[int, ...]:
    """The delays of `task` as a tuple, checked: one k for recall and sum, one or more
    distinct ones for multi and cued; `window` >= 1 (only sum uses more than 1)."""
    _check_task(task)
    delays = (ks,) if isinstance(ks, (int, np.integer)) and not isinstance(ks, bool) else ks
    try:
        delays = tuple(delays)
    except TypeError:
        raise TempsupError(f"ks: expected a delay or a sequence of delays, got {ks!r}") from None
    for d in delays:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise TempsupError(f"ks: expected delays that are integers >= 0, got {ks!r}")
    delays = tuple(int(d) for d in delays)
    if not delays:
        raise TempsupError(f"ks: expected at least one delay for task {task!r}, got none")
    if task in ("recall", "sum") and len(delays) != 1:
        raise TempsupError(
            f"ks: task {task!r} has one delay k, got {delays} (several delays: task 'multi')"
        )
    if len(set(delays)) != len(delays):
        raise TempsupError(f"ks: expected distinct delays, got {delays}")
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise TempsupError(f"window: expected an integer >= 1, got {window!r}")
    if window != 1 and task != "sum":
        raise TempsupError(f"window: only task 'sum' has a window, got {window} for {task!r}")
    return delays


def n_outputs(task: str, ks: int | Sequence[int], n_x: int) -> int:
    """Outputs of `task` for N_x features: len(ks)·N_x for multi, N_x otherwise."""
    delays = task_delays(task, ks)
    return len(delays) * n_x if task == "multi" else n_x


def n_inputs(task: str, ks: int | Sequence[int], n_x: int) -> int:
    """Input channels the model sees: N_x, plus the len(ks) cue channels for cued."""
    delays = task_delays(task, ks)
    return n_x + len(delays) if task == "cued" else n_x


def output_importance(
    task: str, ks: int | Sequence[int], importance: Sequence[float]
) -> np.ndarray:
    """Per-output weights I_o from the per-feature ones (`importance_weights`): output o
    of multi weighs as its feature j = o mod N_x; the cue channels have no output."""
    imp = np.asarray(importance, dtype=float).ravel()
    delays = task_delays(task, ks)
    return np.tile(imp, len(delays)) if task == "multi" else imp


# ---- linear targets: their weights ------------------------------------------------------


def target_weights(
    task: str, ks: int | Sequence[int], window: int, T: int, n_x: int = 1
) -> np.ndarray:
    """c[s, o, j]: the weight of the input of age s and feature j in output o, (T, n_out, N_x).

    The target of a linear task at step t is y_{t,o} = Σ_{s<=t} Σ_j c[s, o, j] x_{t−s, j}
    (the past before the sequence silent: module docstring), for recall c[s, j, j] = [s = k],
    for multi c[s, i·N_x + j, j] = [s = ks[i]], for sum c[s, j, j] = [k <= s < k + w].
    A cued target has none: it raises.
    """
    delays = task_delays(task, ks, window)
    if task == "cued":
        raise TempsupError(
            "task: a cued target is not a fixed linear function of the past (the cue picks "
            "the delay d_t at every step, so y_t = x_{t−d_t} has no weights c_s); compute it "
            "with targets('cued', x, ks, cues=...) and its loss by Monte Carlo "
            "(tempsup.theory.tasks_mc)"
        )
    _check_sizes(T, n_x)
    oldest = max(delays) + window - 1
    if oldest >= T:
        what = f"k + window − 1 = {oldest}" if task == "sum" else f"delay {oldest}"
        raise TempsupError(f"ks: {what} must be smaller than T = {T} (it never enters)")
    eye = np.eye(n_x)
    if task == "multi":
        c = np.zeros((T, len(delays) * n_x, n_x))
        for i, d in enumerate(delays):
            c[d, i * n_x : (i + 1) * n_x] = eye
        return c
    c = np.zeros((T, n_x, n_x))
    c[delays[0] : delays[0] + window] = eye
    return c


# ---- checks -----------------------------------------------------------------------------


def _check_task(task: object) -> None:
    if task not in TASKS:
        raise TempsupError(f"task: expected one of {', '.join(TASKS)}, got {task!r}")


def _check_sizes(T: object, n_x: object) -> None:
    for name, value in (("T", T), ("n_x", n_x)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise TempsupError(f"{name}: expected an integer >= 1, got {value!r}")
