"""Training the tied autoencoders: many models as one batch, yielding snapshots as it goes.

`train(configs)` trains every seed of every config together (one config is a
run; configs that differ only in `m` and `weight_decay` are a sweep) and
yields a `Snapshot` of all models every `snapshot_every` steps. The caller
may stop iterating at any frame: that is cancellation.

Recipe (the authors', science.md §2): AdamW, lr 1e-2 with the cosine schedule
stepped once per epoch down to 1e-9 (`BowsConfig.learning_rate`), weight decay 1
(decoupled, on W and b, as `torch.optim.AdamW(model.parameters())` does),
gradient clipping at norm 1.0, batch 256, 200 epochs. Two details make
batching exact: the weight decay is applied per model (p ← p·(1 − lr·wd_i),
then the Adam step, which is AdamW's update), and the gradient norm is
clipped per model (over that model's W and b), so models never influence each
other. Every model sees the same minibatches (one data set, one shuffle per
epoch, from `seed`). The loss is ‖x − x̂‖² summed over features, averaged over
the batch (`reduction` "sum"), or averaged over features too ("mean", torch's
MSELoss, the authors'). The linear and the ReLU model train in one batch (a
grid of both). Seeds, the batching rule, the schedule and the snapshot loop are
the RNNs' (`tempsup.training.schedule`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from tempsup.bows.config import BowsConfig
from tempsup.bows.data import Dataset, make_dataset
from tempsup.bows.model import BatchedTiedAE
from tempsup.core.memory import keep_freed_memory
from tempsup.errors import TempsupError
from tempsup.training import schedule as _training
from tempsup.training.schedule import model_seeds, optimizer_steps

# Fields that may differ between the configs of one batch (a sweep).
SWEEPABLE = ("m", "weight_decay", "model")


@dataclass(frozen=True)
class Snapshot:
    """All models after `step` optimizer steps (numpy, model axis first).

    `loss` is the mean training loss over the steps since the last snapshot
    (at step 0: the loss of the initial weights on the first minibatch).
    """

    step: int
    W: np.ndarray  # (M, m_max, d), rows ≥ m_i of model i are zero
    b: np.ndarray  # (M, d)
    loss: np.ndarray  # (M,)


def check_batchable(configs: Sequence[BowsConfig]) -> None:
    """Configs trained together may differ only in the SWEEPABLE fields."""
    _training.check_batchable(configs, SWEEPABLE)


def epoch_indices(gen: torch.Generator, n_data: int, n_samples: int) -> torch.Tensor:
    """n_samples indices into the data: whole shuffles of it, the last one cut short."""
    reps = -(-n_samples // n_data)
    return torch.cat([torch.randperm(n_data, generator=gen) for _ in range(reps)])[:n_samples]


def train(
    configs: BowsConfig | Sequence[BowsConfig],
    data: Dataset | None = None,
    init: dict[str, np.ndarray] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> Iterator[Snapshot]:
    """Train every seed of every config as one batch, yielding snapshots.

    Models are ordered config-major: model c·seeds + s is seed s of config c.
    `data` is the configs' data set (built from the first config if None).
    `init` = {"W": (M, m, d), "b": (M, d)} starts every model from given
    weights (a warm start). `on_step(step)` runs after every optimizer step.
    """
    configs = [configs] if isinstance(configs, BowsConfig) else list(configs)
    if not configs:
        raise TempsupError("train: expected at least one config, got none")
    check_batchable(configs)
    keep_freed_memory()  # every step reallocates the same tensors: keep them mapped
    cfg = configs[0]
    data = make_dataset(cfg) if data is None else data
    X = torch.from_numpy(np.ascontiguousarray(data.X, dtype=np.float32))  # (N, d)
    ms = [c.m for c in configs for _ in range(c.seeds)]
    if max(ms) > data.d:
        raise TempsupError(f"m: expected at most the data's {data.d} features, got {max(ms)}")
    relu = [c.relu for c in configs for _ in range(c.seeds)]
    model = BatchedTiedAE(data.d, ms, [s for c in configs for s in model_seeds(c)], relu, cfg.init)
    if init is not None:
        model.load_weights(init["W"], init["b"])
    wd = torch.tensor([c.weight_decay for c in configs for _ in range(c.seeds)])  # (M,)
    opt = _training.adam(model.parameters(), cfg.lr)
    gen = torch.Generator().manual_seed(cfg.seed + 7_919)
    batches = _minibatches(gen, X, cfg)
    first = next(batches)  # step 0's loss is measured on step 1's minibatch
    pending = [first]

    def step(i: int, _lr: float) -> torch.Tensor:
        lr = cfg.learning_rate(i)  # the config's schedule (the authors' is per epoch)
        for group in opt.param_groups:
            group["lr"] = lr
        xb = pending.pop() if pending else next(batches)  # (B, d)
        per_model = model.loss(xb, cfg.reduction)  # (M,)
        opt.zero_grad(set_to_none=True)
        per_model.sum().backward()
        with torch.no_grad():
            if cfg.grad_clip > 0:
                _clip_per_model(model, cfg.grad_clip)
            decay = 1.0 - lr * wd  # (M,) decoupled weight decay, per model
            model.W.mul_(decay.view(-1, 1, 1))
            model.b.mul_(decay.view(-1, 1))
        opt.step()
        return per_model

    with torch.no_grad():
        yield _snapshot(model, 0, model.loss(first, cfg.reduction))
    yield from optimizer_steps(
        opt, cfg, model.n_models, step, lambda i, loss: _snapshot(model, i, loss), on_step
    )


def _minibatches(gen: torch.Generator, X: torch.Tensor, cfg: BowsConfig) -> Iterator[torch.Tensor]:
    """Endless minibatches: per epoch n_samples shuffled rows, cut into batches of `batch`."""
    while True:
        idx = epoch_indices(gen, X.shape[0], cfg.n_samples)
        for start in range(0, cfg.n_samples, cfg.batch):
            yield X[idx[start : start + cfg.batch]]  # (B, d)


def _clip_per_model(model: BatchedTiedAE, max_norm: float) -> None:
    """Scale each model's gradient (W and b together) to norm ≤ max_norm."""
    gW, gb = model.W.grad, model.b.grad
    sq = torch.zeros(model.n_models)
    if gW is not None:
        sq += gW.pow(2).sum(dim=(1, 2))
    if gb is not None:
        sq += gb.pow(2).sum(dim=1)
    scale = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)  # (M,) as clip_grad_norm_
    if gW is not None:
        gW.mul_(scale.view(-1, 1, 1))
    if gb is not None:
        gb.mul_(scale.view(-1, 1))


def _snapshot(model: BatchedTiedAE, step: int, loss: torch.Tensor) -> Snapshot:
    state = model.state()
    return Snapshot(step, state["W"], state["b"], loss.detach().numpy().copy())
