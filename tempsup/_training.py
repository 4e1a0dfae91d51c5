"""The batched-training bookkeeping both labs share: seeds, batching rule, schedule, snapshots.

`tempsup.trainer` (the RNNs) and `tempsup.bows.trainer` (the tied autoencoders)
train every seed of every config as one batch of models and yield snapshots
as they go. They differ in the model, the data and what one optimizer step
does (the bows lab clips gradients and decays weights per model); they share
what makes a run reproducible and a sweep equal to its runs trained one by
one: each model's init seed, the rule that only the sweepable fields may
differ within a batch, the cosine schedule, and the snapshot loop that
averages the loss over the steps since the last snapshot.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

import torch

from tempsup.config import snapshot_steps
from tempsup.errors import TempsupError

S = TypeVar("S")


def model_seeds(config: Any) -> list[int]:
    """Init seed of each of a run's models: the same in a run and in a sweep."""
    return [config.seed * 1000 + s for s in range(config.seeds)]


def check_batchable(configs: Sequence[Any], sweepable: Sequence[str]) -> None:
    """Configs trained together may differ only in the `sweepable` fields."""
    base = configs[0].to_dict()
    for cfg in configs[1:]:
        for name, value in cfg.to_dict().items():
            if name not in sweepable and value != base[name]:
                raise TempsupError(
                    f"sweep: every point must share {name!r} (got {base[name]!r} and {value!r}); "
                    f"only {', '.join(sweepable)} may vary within one batch"
                )


def adam(params: Iterable[torch.Tensor], lr: float) -> torch.optim.Optimizer:
    """Adam, fused into one kernel per step where torch has it (CPU: torch >= 2.4).

    The single-tensor loop costs ~0.2 ms a step in per-op overhead, as much as a
    small model's whole loss; the fused update is the same formula (equal to
    the loop's to a float's last bit or two).
    """
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, fused=True)
    except (RuntimeError, TypeError, ValueError):  # older torch: no fused CPU Adam
        return torch.optim.Adam(params, lr=lr)


def scheduled_lr(lr: float, schedule: str, step: int, steps: int) -> float:
    """Learning rate of optimizer step `step` (1 … steps): constant, or cosine decay to 0."""
    if schedule == "cosine":
        return lr * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / steps))
    return lr


def optimizer_steps(
    opt: torch.optim.Optimizer,
    config: Any,
    n_models: int,
    step: Callable[[int, float], torch.Tensor],
    snapshot: Callable[[int, torch.Tensor], S],
    on_step: Callable[[int], None] | None = None,
) -> Iterator[S]:
    """Optimizer steps 1 … config.steps, yielding snapshots; the caller yields step 0's.

    Each step sets the scheduled learning rate on `opt`, runs `step(i, lr)` (one
    optimizer step, returning the per-model loss (M,)) and calls `on_step(i)`;
    after the config's snapshot steps it yields `snapshot(i, loss)` with the
    mean per-model loss (M,) over the steps since the last snapshot.
    """
    marks = set(snapshot_steps(config.steps, config.snapshot_every))
    loss_sum = torch.zeros(n_models)
    since = 0
    for i in range(1, config.steps + 1):
        lr = scheduled_lr(config.lr, config.schedule, i, config.steps)
        for group in opt.param_groups:
            group["lr"] = lr
        loss_sum += step(i, lr).detach()
        since += 1
        if on_step is not None:
            on_step(i)
        if i in marks:
            yield snapshot(i, loss_sum / since)
            loss_sum.zero_()
            since = 0
