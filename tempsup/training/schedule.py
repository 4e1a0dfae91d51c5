"""The batched-training bookkeeping both labs share: seeds, batching rule, schedule, snapshots.

`tempsup.training.trainer` (the RNNs) and `tempsup.bows.trainer` (the tied autoencoders)
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
from torch.optim.adam import adam as functional_adam  # what torch.optim.Adam.step calls

from tempsup.errors import TempsupError
from tempsup.model.config import snapshot_steps

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


class Adam:
    """Adam over a handful of parameter tensors: torch's own update (the functional form
    that `torch.optim.Adam` calls, fused into one kernel where torch has it: CPU, torch
    >= 2.4), without the optimizer object's per-step bookkeeping (hooks, profiler
    records, grouping by device), which cost 0.11 ms a step, as much as a small model's
    whole loss. The same state and the same arithmetic: equal to `torch.optim.Adam`
    bit for bit (tests/test_train.py). `param_groups[0]["lr"]` is the rate of the next
    step, as in torch's optimizers."""

    def __init__(self, params: Iterable[torch.Tensor], lr: float) -> None:
        self.params = list(params)
        self.param_groups = [{"params": self.params, "lr": lr}]
        self.exp_avgs = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sqs = [torch.zeros_like(p) for p in self.params]
        self.steps = [torch.zeros((), dtype=torch.float32) for _ in self.params]
        self.fused = _FUSED_ADAM

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        have = [i for i, p in enumerate(self.params) if p.grad is not None]
        functional_adam(
            [self.params[i] for i in have],
            [self.params[i].grad for i in have],
            [self.exp_avgs[i] for i in have],
            [self.exp_avg_sqs[i] for i in have],
            [],
            [self.steps[i] for i in have],
            foreach=False if self.fused else None,
            fused=self.fused,
            amsgrad=False,
            beta1=0.9,
            beta2=0.999,
            lr=self.param_groups[0]["lr"],
            weight_decay=0.0,
            eps=1e-8,
            maximize=False,
        )


def _fused_adam_available() -> bool:
    """Whether this torch has the fused Adam kernel on the CPU (torch >= 2.4).

    Asked of the functional update itself: building a `torch.optim.Adam` to find out
    imports torch's compiler stack (torch._dynamo), about 1.2 s of every command's start.
    """
    zero = [torch.zeros(1) for _ in range(4)]
    try:
        functional_adam(
            zero[:1], zero[1:2], zero[2:3], zero[3:], [], [torch.zeros(())], foreach=False,
            fused=True, amsgrad=False, beta1=0.9, beta2=0.999, lr=0.0, weight_decay=0.0,
            eps=1e-8, maximize=False,
        )  # fmt: skip
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


_FUSED_ADAM = _fused_adam_available()


def adam(params: Iterable[torch.Tensor], lr: float) -> Adam:
    """The optimizer both trainers use: `Adam` (torch's update, fused where it can be)."""
    return Adam(params, lr)


def scheduled_lr(lr: float, schedule: str, step: int, steps: int) -> float:
    """Learning rate of optimizer step `step` (1 … steps): constant, or cosine decay to 0."""
    if schedule == "cosine":
        return lr * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / steps))
    return lr


def optimizer_steps(
    opt: Adam,
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
