"""The training loop: many models as one batch, yielding snapshots as it goes.

`train(configs)` trains every seed of every config together (one config is a
run; several configs that differ only in sparsity and k are a sweep; a
worker's batch of runs may also differ in base seed, each base seed drawing
its own data stream, so a run is the same in any batch) and yields a
`Snapshot` of all models' weights every `snapshot_every` steps. The
caller decides what to do with frames (write a run file, stream them to a
browser) and may stop iterating at any frame: that is cancellation.

Recipe (science.md §1b, measured on the paper's setting): Adam, lr 1e-2 with
cosine decay to 0, batch 512, W_x ~ N(0, 1), W_h ~ N(0, 0.25/N_h), tied
readout, best of 8 seeds. The loss is L = Σ_t Σ_i I_i (y_t,i − ŷ_t,i)²,
averaged over the batch, summed over models (`tempsup.training.losses` computes it by
the fastest exact path of each model); with `objective="expected"` it is the
expected loss instead (exact for the linear model, to second order in p for
the SSM), and no batches are drawn.
Seeds, the batching rule, the schedule and the snapshot loop are shared with
the bows lab (`tempsup.training.schedule`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import torch

from tempsup.core.memory import keep_freed_memory
from tempsup.errors import TempsupError
from tempsup.model import tasks
from tempsup.model.config import (
    BATCHABLE,
    SWEEPABLE,
    RunConfig,
    curriculum_progress,
    importance_weights,
)
from tempsup.model.data import sample_inputs
from tempsup.model.gated import GatedRNN, gated_loss
from tempsup.model.lens import lens_arrays
from tempsup.model.recurrences import BatchedRNN
from tempsup.model.snapshot import Snapshot
from tempsup.theory.closed_form import input_moments
from tempsup.training import schedule as _training
from tempsup.training.fused import gated as fused_gated
from tempsup.training.losses import expected_loss, sampled_loss, task_loss
from tempsup.training.schedule import model_seeds, optimizer_steps

__all__ = ["BATCHABLE", "SWEEPABLE", "check_batchable", "train"]

# Relative size of the noise added to warm-started seeds after the first.
WARM_START_NOISE = 0.05


def check_batchable(configs: Sequence[RunConfig]) -> None:
    """Configs trained together may differ only in the BATCHABLE fields."""
    _training.check_batchable(configs, BATCHABLE)


def train(
    configs: RunConfig | Sequence[RunConfig],
    init: dict[str, np.ndarray] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> Iterator[Snapshot]:
    """Train every seed of every config as one batch, yielding snapshots.

    Models are ordered config-major: model c * seeds + s is seed s of config c.
    `init` (a warm start) gives weights for every model. `on_step(step)` is
    called after every optimizer step (progress bars); keep it cheap.
    """
    configs = [configs] if isinstance(configs, RunConfig) else list(configs)
    if not configs:
        raise TempsupError("train: expected at least one config, got none")
    check_batchable(configs)
    keep_freed_memory()  # every step reallocates megabytes: keep them mapped (tempsup.core.memory)
    cfg = configs[0]
    seeds = [s for c in configs for s in model_seeds(c)]
    n_models = len(seeds)
    k = torch.tensor([c.k for c in configs for _ in range(c.seeds)])  # (M,)
    shape = (cfg.model, n_models, cfg.hidden, cfg.n_in, k, cfg.tied, cfg.bias, seeds)
    outputs = None if cfg.task == "recall" else cfg.n_out  # recall: today's shapes
    if cfg.gated:  # the GRU/LSTM loss by the compiled loop where it applies
        model = GatedRNN(*shape, seq_len=cfg.seq_len, outputs=outputs, fused_loss=fused_gated.loss)
    else:
        model = BatchedRNN(*shape, outputs=outputs)
    if init is not None:
        exact = [s == 0 for c in configs for s in range(c.seeds)]  # seed 0 of each config
        model.load_weights(
            {n: torch.as_tensor(np.asarray(v), dtype=torch.float32) for n, v in init.items()},
            WARM_START_NOISE,
            seeds,
            exact,
        )
    target_p = torch.tensor([c.p for c in configs for _ in range(c.seeds)])  # (M,)
    start_p = torch.tensor(
        [
            1.0 - (c.curriculum if c.curriculum is not None else c.sparsity)
            for c in configs
            for _ in range(c.seeds)
        ]
    )
    weights = torch.tensor(importance_weights(cfg))  # (N_x,)
    if cfg.task != "recall":  # one weight per output (multi: each delay's copy of I_i)
        weights = torch.tensor(tasks.output_importance(cfg.task, cfg.delays, weights.tolist()))
    # one data stream per base seed: a run sees the same batches in any batch of runs
    base_seeds = sorted({c.seed for c in configs})
    gens = [torch.Generator().manual_seed(s + 7_919) for s in base_seeds]
    stream = torch.tensor([base_seeds.index(c.seed) for c in configs for _ in range(c.seeds)])
    members = [torch.nonzero(stream == s).squeeze(1) for s in range(len(gens))]  # per stream
    opt = _training.adam(model.parameters(), cfg.lr)
    mean_input, _ = input_moments(cfg.input_dist)

    def loss_of(
        x: torch.Tensor, p: torch.Tensor, y: torch.Tensor | None, stream: torch.Tensor | None
    ) -> torch.Tensor:  # recall (y None): the fastest exact path of each model
        if cfg.gated:
            return gated_loss(model, x, weights, y)
        if y is not None:
            return task_loss(model, x, y, weights)
        streams = () if stream is None else (stream,)  # one stream: sampled_loss's 4 arguments
        return sampled_loss(model, x, p, weights, *streams)

    def snapshot(i: int, loss: torch.Tensor) -> Snapshot:
        if cfg.gated:
            return _gated_snapshot(model, cfg, mean_input, i, loss)
        return _snapshot(model, i, loss)

    def batch_loss(p: torch.Tensor) -> torch.Tensor:
        if cfg.objective == "expected":  # no batch: E[L] itself, noise-free
            return expected_loss(model, p, weights, cfg.seq_len, cfg.input_dist)
        if len(gens) == 1:
            return loss_of(*task_batch(gens[0], p, cfg), None)  # (M,)
        x = p.new_empty(n_models, cfg.seq_len, cfg.n_in, cfg.batch)
        y = (
            None
            if cfg.task == "recall"
            else p.new_empty(n_models, cfg.seq_len, cfg.n_out, cfg.batch)
        )
        for gen, idx in zip(gens, members, strict=True):
            xs, _, ys = task_batch(gen, p[idx], cfg)
            x[idx] = xs  # (1 or M_s, ...) broadcast to the stream's models
            if y is not None:
                y[idx] = ys
        return loss_of(x, p, y, stream)  # (M,)

    def step(i: int, lr: float) -> torch.Tensor:  # lr: set on `opt` by optimizer_steps
        frac = curriculum_progress(cfg.steps, i)  # = RunConfig.p_at(i), for every model at once
        per_model = batch_loss(start_p + (target_p - start_p) * frac)  # (M,)
        opt.zero_grad(set_to_none=True)
        per_model.sum().backward()
        opt.step()
        return per_model

    with torch.no_grad():
        yield snapshot(0, batch_loss(start_p))
    yield from optimizer_steps(opt, cfg, n_models, step, snapshot, on_step)


def task_batch(
    gen: torch.Generator, p: torch.Tensor, cfg: RunConfig
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """One batch of `cfg`'s task from the stream `gen`: (model inputs, p, targets).

    Inputs (1 or M, T, n_in, B): `sample_inputs` at persistence 0, so today's runs draw
    today's numbers, else `tasks.persistent_inputs`; a cued task's cue channels after the
    features (its cues drawn after the inputs). Targets (1 or M, T, n_out, B), or None for
    recall, whose loss paths build x_{t−k} themselves.
    """
    args = (gen, p, cfg.batch, cfg.seq_len, cfg.inputs, cfg.input_dist)
    x = tasks.persistent_inputs(*args, cfg.persistence) if cfg.persistence else sample_inputs(*args)
    if cfg.task == "recall":
        return x, p, None
    if cfg.task != "cued":
        return x, p, tasks.targets(cfg.task, x, cfg.delays, cfg.window)
    cues = tasks.sample_cues(gen, cfg.delays, cfg.batch, cfg.seq_len)
    y = tasks.targets("cued", x, cfg.delays, cues=cues)
    return tasks.cued_inputs(x, cues, len(cfg.delays)), p, y


def _gated_snapshot(
    model: GatedRNN, cfg: RunConfig, mean_input: float, step: int, loss: torch.Tensor
) -> Snapshot:
    """The lens of every model (`tempsup.model.lens`): J_x, J_h, the lifted readout and
    the bias at rest as W_x, W_h, W_y, b_y; the rest of the lens and the model in `extra`."""
    arrays = lens_arrays(
        cfg.model, model.params(), model.readout(), model.bias(), cfg.hidden, cfg.seq_len,
        mean_input,
    )  # fmt: skip
    weights = {n: arrays.pop(n) for n in ("W_x", "W_h", "W_y", "b_y")}
    return Snapshot(step=step, **weights, loss=loss.detach().numpy().copy(), extra=arrays)


def _snapshot(model: BatchedRNN, step: int, loss: torch.Tensor) -> Snapshot:
    state = model.state()
    return Snapshot(
        step=step,
        W_x=state["W_x"].numpy(),
        W_h=state["W_h"].numpy(),
        W_y=state["W_y"].numpy(),
        b_y=state["b_y"].numpy(),
        loss=loss.detach().numpy().copy(),
    )
