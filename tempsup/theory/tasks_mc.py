"""Monte Carlo expected loss with its standard error, for every task and persistence q.

Issue 43, part 3, where no closed form holds. Which number is used where:

- Linear readout, linear task (recall, multi, sum), any q: the exact closed form,
  `tempsup.theory.tasks_loss` (its tests check it against `monte_carlo_loss` here).
- ReLU readout, recall, q = 0: today's `tempsup.theory.expected_loss` (the SSM by
  convolution, the ReLU RNN by stratified Monte Carlo) and the second-order terms of
  `tempsup.theory.relu_terms`.
- ReLU readout on any other task or at q > 0, and every readout on `cued` (no fixed
  linear target): this module's Monte Carlo estimate, reported with its standard error.
  The second-order expansion of science.md §1c does not carry over as it stands: it
  weighs a pattern of active ages by p^{|A|} with independent magnitudes, which holds
  only for inputs independent in time; under persistence the gates form a Markov chain
  and a repeated input keeps its magnitude, so both the patterns' probabilities and
  their magnitudes' joint law change (an extension is possible, not done here).

The data are drawn by the training sampler itself (`tempsup.model.tasks.persistent_inputs`,
`sample_cues`, `targets`), in chunks from one fixed seed: the same sequences for every
model of a batch and every call (common random numbers), so two models' estimates are
compared on the same events. The loss of one sequence is Σ_t Σ_o I_o (y_{t,o} − ŷ_{t,o})²
(the training loss per sequence); the estimate is its mean over `sequences` independent
sequences and the standard error its sample standard deviation / √sequences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from tempsup.core.arrays import as_float, check_count
from tempsup.errors import TempsupError
from tempsup.model.tasks import (
    cued_inputs,
    n_inputs,
    n_outputs,
    persistent_inputs,
    sample_cues,
    targets,
    task_delays,
)

READOUTS = ("relu", "linear")
MC_SEED = 20_260_143  # fixed: common random numbers across calls
CHUNK = 2048  # sequences drawn at a time


def monte_carlo_loss(
    A: np.ndarray,
    task: str,
    ks: int | Sequence[int],
    p: float,
    dist: str,
    T: int,
    *,
    window: int = 1,
    q: float = 0.0,
    importance: np.ndarray | None = None,
    b_y: np.ndarray | None = None,
    readout: str = "relu",
    sequences: int = 8192,
    seed: int = MC_SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """(mean, se) of the loss of the readout ŷ_t = σ(Σ_{s<=t} A_s x_{t−s} + b), each (...).

    A (..., n, n_out, N_in), n >= T: the projections W_yᵀ W_s of a linear recurrence
    (the SSM with `readout` "relu", the linear RNN with "linear"), N_in the task's
    input channels (`n_inputs`: the cue block follows the N_x features for cued).
    For a network whose output is not a function of its projections (the ReLU RNN)
    use `monte_carlo_loss_of` with its forward pass.
    """
    if readout not in READOUTS:
        raise TempsupError(f"readout: expected one of {', '.join(READOUTS)}, got {readout!r}")
    A = as_float("A", A, min_ndim=3)
    check_count("T", T, 1)
    if A.shape[-3] < T:
        raise TempsupError(f"A: expected at least T = {T} ages, got shape {A.shape}")
    delays = task_delays(task, ks, window)
    n_x = A.shape[-1] - (len(delays) if task == "cued" else 0)
    if n_x < 1 or A.shape[-1] != n_inputs(task, delays, n_x):
        raise TempsupError(f"A: its last axis {A.shape[-1]} holds no input channels for {task!r}")
    if A.shape[-2] != n_outputs(task, delays, n_x):
        raise TempsupError(
            f"A: expected {n_outputs(task, delays, n_x)} outputs for task {task!r} with "
            f"N_x = {n_x}, got {A.shape[-2]} in shape {A.shape}"
        )
    A = A[..., :T, :, :]
    b = None if b_y is None else as_float("b_y", b_y, min_ndim=1)[..., None, :, None]

    def predict(x: np.ndarray) -> np.ndarray:  # x (T, N_in, B) -> (..., T, n_out, B)
        pre = np.zeros(A.shape[:-3] + (T, A.shape[-2], x.shape[-1]))
        for s in range(T):
            pre[..., s:, :, :] += np.einsum("...oj,tjb->...tob", A[..., s, :, :], x[: T - s])
        if b is not None:
            pre = pre + b
        return np.maximum(pre, 0.0) if readout == "relu" else pre

    return monte_carlo_loss_of(
        predict,
        task,
        delays,
        p,
        dist,
        T,
        n_x,
        window=window,
        q=q,
        importance=importance,
        sequences=sequences,
        seed=seed,
    )


def monte_carlo_loss_of(
    predict: Callable[[np.ndarray], np.ndarray],
    task: str,
    ks: int | Sequence[int],
    p: float,
    dist: str,
    T: int,
    n_x: int,
    *,
    window: int = 1,
    q: float = 0.0,
    importance: np.ndarray | None = None,
    sequences: int = 8192,
    seed: int = MC_SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """(mean, se) of any network's loss on `task`: `predict` maps the model inputs
    (T, N_in, B) float64 (the cue block after the N_x features for cued) to outputs
    (..., T, n_out, B); mean and se have its leading shape (...)."""
    delays = task_delays(task, ks, window)
    check_count("T", T, 1)
    check_count("n_x", n_x, 1)
    check_count("sequences", sequences, 2)
    if not 0.0 <= float(p) <= 1.0:
        raise TempsupError(f"p: expected a probability in [0, 1], got {p!r}")
    n_out = n_outputs(task, delays, n_x)
    imp = np.ones(n_out) if importance is None else as_float("importance", importance, 1)
    if imp.shape[-1] != n_out:
        raise TempsupError(f"importance: expected shape (..., {n_out}), got {imp.shape}")
    gen = torch.Generator().manual_seed(int(seed))
    total = total2 = 0.0
    done = 0
    while done < sequences:
        size = min(CHUNK, sequences - done)
        x = persistent_inputs(gen, torch.tensor([float(p)]), size, T, n_x, dist, q).double()
        if task == "cued":
            cues = sample_cues(gen, delays, size, T)
            y = targets(task, x, delays, cues=cues)
            x = cued_inputs(x, cues, len(delays))
        else:
            y = targets(task, x, delays, window)
        out = np.asarray(predict(x[0].numpy()), dtype=float)
        if out.ndim < 3 or out.shape[-3:] != (T, n_out, size):
            raise TempsupError(
                f"predict: expected outputs of shape (..., T, n_out, B) = (..., {T}, "
                f"{n_out}, {size}), got {out.shape}"
            )
        err2 = (out - y[0].numpy()) ** 2  # (..., T, n_out, B)
        per_seq = np.einsum("...tob,...o->...b", err2, imp)  # (..., B)
        total = total + per_seq.sum(axis=-1)
        total2 = total2 + (per_seq**2).sum(axis=-1)
        done += size
    mean = total / sequences
    var = np.maximum(total2 / sequences - mean**2, 0.0) * sequences / (sequences - 1)
    return mean, np.sqrt(var / sequences)
