"""Training throughput: tempsup's batched trainer against a plain PyTorch loop.

The plain baseline is what one would write first: one model at a time, a
Python loop over time steps, h of shape (B, N_h), Adam. tempsup trains M
models as one tensor program, each model by its fastest exact loss path
(`tempsup.training.losses`). Both are measured side by side in this one process, in
turns (one call of every variant per round, the median of the rounds), and
the script prints model-steps per second and the ratio to the baseline —
compare ratios, not seconds, on a shared machine.

    python benchmarks/bench_train.py [--steps 200] [--models 64] [--repeats 3]

Setting: N_h = 2, k = 3, T = 20, batch 1024, S = 0.9, tied readout; then a
single default run (the explorer's: SSM, 8 seeds, batch 512, a frame every 20
steps) against the plain loop at its batch. Times are the process's CPU time
by default (`--clock cpu`, robust when other jobs share the cores; with one
torch thread it equals the wall time of an idle machine); `--clock wall` for
several threads.

Targets (issue 12, one thread, 64 models): linear ≥ 150×, SSM ≥ 60×, ReLU RNN
≥ 30×, the single run ≥ 3×; issue 25: ReLU RNN ≥ 60× by the compiled time loop
(`tempsup.training.fused`). The ReLU RNN's rows add "torch loop, M=64": the same training
with the compiled loop switched off (PyTorch's time loop, the fallback where no
C compiler builds it), measured in the same turns.
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import torch
from torch import nn

from tempsup.model.config import RunConfig
from tempsup.training import fused
from tempsup.training.trainer import train


def plain_train(model: str, steps: int, cfg: RunConfig, seed: int = 0) -> None:
    """The baseline: one model, a per-time-step loop, nothing batched."""
    g = torch.Generator().manual_seed(seed)
    w_x = nn.Parameter(torch.randn(cfg.hidden, 1, generator=g))
    w_h = nn.Parameter(torch.randn(cfg.hidden, cfg.hidden, generator=g) * 0.5 / cfg.hidden**0.5)
    opt = torch.optim.Adam([w_x, w_h], lr=cfg.lr)
    relu_h, relu_y = model == "rnn", model in ("ssm", "rnn")
    for _ in range(steps):
        u = torch.rand(cfg.batch, cfg.seq_len, 1, generator=g)
        x = u * (torch.rand(cfg.batch, cfg.seq_len, 1, generator=g) < cfg.p)
        w = w_x  # tied readout: W_y = w_k (impulse response)
        for _ in range(cfg.k):
            w = w_h @ (torch.relu(w) if relu_h else w)
        h = torch.zeros(cfg.batch, cfg.hidden)
        loss = torch.zeros(())
        for t in range(cfg.seq_len):
            h = x[:, t] @ w_x.T + (torch.relu(h) if relu_h else h) @ w_h.T
            y_hat = h @ w
            if relu_y:
                y_hat = torch.relu(y_hat)
            target = x[:, t - cfg.k] if t >= cfg.k else torch.zeros_like(y_hat)
            loss = loss + ((y_hat - target) ** 2).sum() / cfg.batch
        opt.zero_grad()
        loss.backward()
        opt.step()


def tempsup_train(model: str, steps: int, cfg: RunConfig, n_models: int) -> None:
    run_cfg = cfg.replace(model=model, steps=steps, seeds=n_models, snapshot_every=steps)
    for _ in train(run_cfg):
        pass


def without_fused(fn) -> None:
    """Run `fn` with the compiled time loop switched off: PyTorch's loop, the fallback."""
    saved, fused.LIBRARY = fused.LIBRARY, None
    try:
        fn()
    finally:
        fused.LIBRARY = saved


def measure(fns: dict, repeats: int, clock=time.process_time) -> dict:
    """Median seconds of `repeats` calls of each of `fns` (by name), taken in turns —
    one call of each per round — so that a slow spell of a shared machine falls on
    every variant alike rather than on whichever ran then."""
    times: dict = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--models", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", default="1", help="comma-separated torch thread counts")
    parser.add_argument("--model-types", default="linear,ssm,rnn")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    cfg = RunConfig(hidden=2, k=3, seq_len=20, batch=1024, sparsity=0.9)
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        tempsup_train("linear", 5, cfg, 2)  # warm up torch's kernels
        plain_train("linear", 5, cfg)
        print(f"\nN_h=2 k=3 T=20 batch=1024, {args.steps} steps, torch threads={threads}")
        print(f"{'model':7} {'variant':20} {'model-steps/s':>14} {'x plain':>8}")
        bench_models(args, cfg, clock)
        bench_default_run(args, clock)


def bench_models(args: argparse.Namespace, cfg: RunConfig, clock) -> None:
    for model in args.model_types.split(","):
        plain_steps = max(20, args.steps // 4)  # the baseline is slow; fewer steps suffice
        runs = {
            "plain loop, M=1": (plain_steps, partial(plain_train, model, plain_steps, cfg)),
            "tempsup, M=1": (args.steps, partial(tempsup_train, model, args.steps, cfg, 1)),
            f"tempsup, M={args.models}": (
                args.steps * args.models,
                partial(tempsup_train, model, args.steps, cfg, args.models),
            ),
        }
        if model == "rnn" and fused.LIBRARY is not None:
            runs[f"torch loop, M={args.models}"] = (
                args.steps * args.models,
                partial(without_fused, runs[f"tempsup, M={args.models}"][1]),
            )
        seconds = measure({name: fn for name, (_, fn) in runs.items()}, args.repeats, clock)
        rates = {name: n / seconds[name] for name, (n, _) in runs.items()}
        base = rates["plain loop, M=1"]
        for name, rate in rates.items():
            print(f"{model:7} {name:20} {rate:14.0f} {rate / base:8.2f}")


def bench_default_run(args: argparse.Namespace, clock) -> None:
    """The explorer's default run (frames every 20 steps) against the plain loop."""
    cfg = RunConfig().replace(steps=args.steps)
    plain_steps = max(20, args.steps // 4)

    def run() -> None:
        for _ in train(cfg):
            pass

    seconds = measure(
        {"plain": partial(plain_train, cfg.model, plain_steps, cfg), "run": run},
        args.repeats,
        clock,
    )
    plain = plain_steps / seconds["plain"]
    rate = cfg.steps * cfg.seeds / seconds["run"]
    print(
        f"default run ({cfg.model}, {cfg.seeds} seeds, batch {cfg.batch}, a frame every "
        f"{cfg.snapshot_every} steps): {rate:.0f} model-steps/s, plain loop {plain:.0f}, "
        f"{rate / plain:.2f}x"
    )


if __name__ == "__main__":
    main()
