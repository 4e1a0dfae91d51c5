"""The tasks beyond one delay and inputs correlated in time (issue 43), as pure functions.

Tasks (`TASKS`). Time t is 0-based here as in `tempsup.model.data` (science.md's
t = 1..T is t + 1); an input of *age* s at step t is x_{t−s}.

- `recall`: y_t = x_{t−k}, one output per feature (today's task, `delayed_targets`).
- `multi`: several delays `ks` at once, one output per (delay, feature). Output
  order is delay-major: output o = i·N_x + j is feature j recalled `ks[i]` steps
  back (all features of the first delay, then all of the second, …).
- `sum`: y_t = Σ_{s=k}^{k+w−1} x_{t−s}, w = `window`, one output per feature
  (w = 1 is recall; with binary inputs it counts the events in the window).
- `cued`: a variable delay. Each step carries a cue: one of `ks` (the cued
  delays, the issue's `--delays`), drawn per step and per sequence uniformly and
  independently of everything else (`sample_cues`), shown to the model as a
  one-hot block of len(ks) input channels appended after the N_x features
  (`cued_inputs`). The target is y_t = x_{t−d_t}, d_t the cued delay, one
  output per feature; the cue channels are inputs, never targets.

The past before the sequence is silent. The recall target is y_t = x_{t−k} for
t >= k and 0 before — exactly what a silent past x_{t<0} = 0 gives, and what
the model assumes with h_0 = 0. Every task follows that one rule: a target is
its linear map applied to the inputs with x_{t<0} = 0, so a window that starts
before the sequence sums the inputs it has (the sum task counts the events that
happened), a cued delay older than t gives 0. The weights c_s of a linear task
are then the same at every step, and at step t only the ages s <= t enter —
the s < t (1-based) of the closed form, `tempsup.theory.tasks_loss`.

Inputs correlated in time (`persistent_inputs`): at t = 0 each feature is drawn
as `sample_inputs` draws it; at each later step, with probability q it repeats
its previous value (a silent input stays silent, an active one keeps its
value), otherwise it is drawn afresh. Each step's value is therefore the last
fresh draw, so the marginal law (sparsity S = 1 − p, magnitudes U) is today's
at every step, and x_t equals x_{t−d} with probability q^d (no fresh draw in
between) and is independent of it otherwise: Cov(x_t, x_{t−d}) = q^d Var(x),
corr = q^d. Features and sequences stay independent of each other.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from tempsup.errors import TempsupError
from tempsup.model.data import sample_values
from tempsup.model.task_shapes import (  # re-exported: the tasks' shapes, torch-free
    LINEAR_TASKS,
    TASK_NAMES,
    TASKS,
    _check_sizes,
    n_inputs,
    n_outputs,
    output_importance,
    target_weights,
    task_delays,
)

__all__ = [
    "LINEAR_TASKS",
    "TASKS",
    "TASK_NAMES",
    "cued_inputs",
    "n_inputs",
    "n_outputs",
    "output_importance",
    "persistent_inputs",
    "sample_cues",
    "target_weights",
    "targets",
    "task_delays",
]


def targets(
    task: str,
    x: torch.Tensor,
    ks: int | Sequence[int],
    window: int = 1,
    cues: torch.Tensor | None = None,
) -> torch.Tensor:
    """The targets of `task` for inputs x (M', T, N_x, B) (the layout of `sample_inputs`,
    features only, no cue channels): (M', T, n_out, B), in x's dtype.

    Linear tasks apply `target_weights` (recall equals `delayed_targets`). `cued` needs
    `cues` (T, B), the index into `ks` of each step's cued delay (`sample_cues`):
    y[:, t, j, b] = x[:, t − ks[cues[t, b]], j, b], zero when that is before the sequence.
    """
    if x.ndim != 4:
        raise TempsupError(f"x: expected inputs of shape (M, T, N_x, B), got {tuple(x.shape)}")
    _, seq_len, n_x, batch = x.shape
    delays = task_delays(task, ks, window)
    if task != "cued":
        if cues is not None:
            raise TempsupError(f"cues: only task 'cued' has cues, got some for {task!r}")
        c = torch.as_tensor(target_weights(task, delays, window, seq_len, n_x), dtype=x.dtype)
        y = x.new_zeros(x.shape[0], seq_len, c.shape[1], batch)
        for s in torch.nonzero(c.abs().sum(dim=(1, 2))).ravel().tolist():
            y[:, s:] += torch.einsum("oj,mtjb->mtob", c[s], x[:, : seq_len - s])
        return y
    if cues is None or tuple(cues.shape) != (seq_len, batch):
        got = None if cues is None else tuple(cues.shape)
        raise TempsupError(
            f"cues: expected cue indices of shape (T, B) = {(seq_len, batch)}, got {got}"
        )
    if cues.dtype.is_floating_point or bool(((cues < 0) | (cues >= len(delays))).any()):
        raise TempsupError(
            f"cues: expected integer indices into ks = {delays} (0..{len(delays) - 1})"
        )
    d = torch.tensor(delays)[cues.long()]  # (T, B): the cued delay of each step
    src = torch.arange(seq_len).view(-1, 1) - d  # (T, B): the step recalled
    valid = (src >= 0).view(1, seq_len, 1, batch)
    idx = src.clamp(min=0).view(1, seq_len, 1, batch).expand(x.shape[0], -1, n_x, -1)
    return torch.gather(x, 1, idx) * valid


# ---- the cued task's inputs -------------------------------------------------------------


def sample_cues(
    gen: torch.Generator, ks: int | Sequence[int], batch: int, seq_len: int
) -> torch.Tensor:
    """Cue indices (T, B): each step's delay, uniform over `ks`, independent across steps
    and sequences (shared by every model and feature, like the data)."""
    delays = task_delays("cued", ks)
    _check_sizes(seq_len, 1)
    return torch.randint(len(delays), (seq_len, batch), generator=gen)


def cued_inputs(x: torch.Tensor, cues: torch.Tensor, n_delays: int) -> torch.Tensor:
    """The cued task's model inputs (M', T, N_x + n_delays, B): the features, then the
    one-hot cue block (channel N_x + i is on when the step's cue is ks[i])."""
    onehot = torch.nn.functional.one_hot(cues.long(), n_delays)  # (T, B, n_d)
    block = onehot.permute(0, 2, 1).to(x.dtype).unsqueeze(0)  # (1, T, n_d, B)
    return torch.cat([x, block.expand(x.shape[0], -1, -1, -1)], dim=2)


# ---- inputs correlated in time ----------------------------------------------------------


def persistent_inputs(
    gen: torch.Generator,
    p: torch.Tensor,
    batch: int,
    seq_len: int,
    inputs: int,
    dist: str,
    q: float | torch.Tensor = 0.0,
) -> torch.Tensor:
    """Sparse inputs with persistence q: (M', T, N_x, B), the layout of `sample_inputs`.

    The fresh values are drawn exactly as `sample_inputs` draws them (U, then the gates'
    uniforms V, same shapes, same order, so common random numbers across models hold);
    then, only when some q > 0, one more uniform R per (t, feature, sequence) decides the
    repeats: x_t = x_{t−1} when R_t < q (t >= 1), else the fresh value. With q = 0
    nothing more is drawn: the result and the generator's state afterwards are exactly
    `sample_inputs`'. `q` is a float or (M,), one per model (M' = M when q or p differ
    across models). Marginal sparsity and law stay; corr(x_t, x_{t−d}) = q^d.
    """
    p = torch.as_tensor(p)
    if p.ndim != 1 or p.numel() == 0:
        raise TempsupError(
            f"p: expected one probability per model, shape (M,), got {tuple(p.shape)}"
        )
    q = torch.as_tensor(q, dtype=torch.float64)
    if q.ndim > 1 or (q.ndim == 1 and q.numel() not in (1, p.numel())):
        raise TempsupError(
            f"q: expected a float or one per model, shape ({p.numel()},), got {tuple(q.shape)}"
        )
    if not bool(((q >= 0) & (q < 1)).all()):
        raise TempsupError(f"q: expected a persistence in [0, 1), got {q.tolist()}")
    shape = (seq_len, inputs, batch)
    u = sample_values(gen, shape, dist)  # (T, N_x, B), as sample_inputs
    v = torch.rand(shape, generator=gen)
    shared_p = bool((p == p[0]).all())
    fresh = (
        (u * (v < p[0])).unsqueeze(0)
        if shared_p
        else u.unsqueeze(0) * (v.unsqueeze(0) < p.view(-1, 1, 1, 1))
    )
    if not bool((q > 0).any()):
        return fresh
    r = torch.rand(shape, generator=gen)
    qs = q.reshape(-1)
    qm = qs[:1] if bool((qs == qs[0]).all()) else qs  # (1,) or (M,)
    repeat = r.unsqueeze(0) < qm.view(-1, 1, 1, 1).to(r.dtype)  # (1 or M, T, N_x, B)
    repeat[:, 0] = False  # t = 0 is always a fresh draw
    steps = torch.arange(seq_len).view(1, -1, 1, 1)
    src = torch.where(repeat, 0, steps).cummax(dim=1).values  # the last fresh draw's step
    m = max(fresh.shape[0], src.shape[0])
    return torch.gather(fresh.expand(m, -1, -1, -1), 1, src.expand(m, -1, -1, -1))
