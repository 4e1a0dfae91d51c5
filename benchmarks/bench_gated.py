"""Gated models' training throughput: 64 GRUs (LSTMs) side by side against a plain loop.

The plain baseline is what one would write first: one model at a time, a Python loop
over time steps through `torch.nn.GRUCell` / `torch.nn.LSTMCell` (the same equations
as tempsup's `gru` / `lstm`), an `nn.Linear` readout under a ReLU, Adam. tempsup trains
the M models as one `tempsup.model.gated.GatedRNN` (every parameter with a leading
model axis) through `gated_loss` with the compiled time loop the trainer gives it
(`tempsup.training.fused.gated.loss`: loss and gradients in one call), also with a
free readout and Adam. Both are measured in this one process,
in turns (one call of each per round, the median of the rounds), and the script prints
model-steps per second and the ratio — compare ratios, not seconds, on a shared machine.

    python benchmarks/bench_gated.py [--steps 20] [--models 64] [--repeats 3]

Setting: N_h = 2, N_x = 1, k = 3, T = 20, batch 1024, S = 0.9, one torch thread, CPU
time of the process. Target (issue 42): ≥ 10× for both.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from tempsup.model.data import sample_inputs
from tempsup.model.gated import GatedRNN, gated_loss
from tempsup.training.fused import gated as fused_gated

N_H, N_X, K, T, BATCH, SPARSITY, LR = 2, 1, 3, 20, 1024, 0.9, 0.01


def batch_of_inputs(gen: torch.Generator) -> torch.Tensor:
    """(1, T, N_x, B): the task's inputs, shared by every model."""
    p = torch.tensor([1.0 - SPARSITY])
    return sample_inputs(gen, p, BATCH, T, N_X, "uniform")


def tempsup_trainer(model: str, n_models: int):
    net = GatedRNN(model, n_models, N_H, N_X, torch.full((n_models,), K), False, False,
                   list(range(n_models)), seq_len=T, fused_loss=fused_gated.loss)  # fmt: skip
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    weights = torch.ones(N_X)

    def run(x: torch.Tensor, steps: int) -> None:
        for _ in range(steps):
            loss = gated_loss(net, x, weights).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    return run


def plain_trainer(model: str, n_models: int):
    cell_type = nn.GRUCell if model == "gru" else nn.LSTMCell
    nets = []
    for m in range(n_models):
        torch.manual_seed(m)
        cell, head = cell_type(N_X, N_H), nn.Linear(N_H, N_X)
        opt = torch.optim.Adam([*cell.parameters(), *head.parameters()], lr=LR)
        nets.append((cell, head, opt))

    def run(x: torch.Tensor, steps: int) -> None:
        seq = x[0].permute(0, 2, 1)  # (T, B, N_x)
        target = torch.cat([seq.new_zeros(K, BATCH, N_X), seq[: T - K]])
        for _ in range(steps):
            for cell, head, opt in nets:
                h = seq.new_zeros(BATCH, N_H)
                state = h if model == "gru" else (h, h)
                loss = seq.new_zeros(())
                for t in range(T):
                    state = cell(seq[t], state)
                    out = state if model == "gru" else state[0]
                    loss = loss + ((torch.relu(head(out)) - target[t]) ** 2).sum() / BATCH
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps per call")
    parser.add_argument("--models", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3, help="rounds (the median is kept)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    x = batch_of_inputs(torch.Generator().manual_seed(0))
    print(f"{args.models} models, N_h = {N_H}, k = {K}, T = {T}, batch {BATCH}, S = {SPARSITY}, "
          f"{args.steps} steps a call, {args.repeats} rounds, 1 thread, CPU time")  # fmt: skip
    for model in ("gru", "lstm"):
        variants = {
            "plain per-step loop": plain_trainer(model, args.models),
            "tempsup batched": tempsup_trainer(model, args.models),
        }
        for run in variants.values():  # warm-up: allocator, autograd graph caches
            run(x, 1)
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.repeats):
            for name, run in variants.items():
                t0 = time.process_time()
                run(x, args.steps)
                times[name].append(time.process_time() - t0)
        med = {name: statistics.median(t) for name, t in times.items()}
        base = med["plain per-step loop"]
        for name, t in med.items():
            rate = args.models * args.steps / t
            print(f"{model:5s} {name:20s} {rate:10.0f} model-steps/s   {base / t:6.1f}×")


if __name__ == "__main__":
    main()
