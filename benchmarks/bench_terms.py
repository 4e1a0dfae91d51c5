"""What the loss terms and the expected loss cost on top of training a default run.

Every frame a worker publishes carries the four loss terms and the expected
loss (`tempsup.io.run.derived`): the closed form for the linear RNN, the
second-order terms plus a convolution for the SSM, the terms plus a stratified
Monte Carlo estimate for the ReLU RNN. This script trains each model's default
explorer run once (the snapshots only: what the trainer costs), then computes
the derived arrays of every one of its frames, in the same process, and prints
the ratio. The target: at most 15 % on top of training.

    python benchmarks/bench_terms.py [--models ssm,rnn,linear] [--steps 2000] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

import torch

from tempsup.io.run import derived
from tempsup.model.config import RunConfig
from tempsup.training.trainer import train

# The explorer's default per model (its sparsity is the model's preset setting).
DEFAULT_SPARSITY = {"linear": 0.9, "ssm": 0.9, "rnn": 0.97}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="ssm,rnn,linear")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"{'model':7} {'frames':>6} {'train s':>8} {'terms s':>8} {'ms/frame':>9} {'+ %':>6}")
    for model in args.models.split(","):
        cfg = RunConfig(model=model, sparsity=DEFAULT_SPARSITY[model], steps=args.steps)
        t0 = time.perf_counter()
        snaps = list(train(cfg))
        t_train = time.perf_counter() - t0
        t0 = time.perf_counter()
        for s in snaps:
            derived(cfg, s.step, s.W_x, s.W_h, s.W_y, s.b_y)
        t_terms = time.perf_counter() - t0
        print(
            f"{model:7} {len(snaps):6d} {t_train:8.2f} {t_terms:8.2f} "
            f"{1e3 * t_terms / len(snaps):9.1f} {100 * t_terms / t_train:6.1f}"
        )


if __name__ == "__main__":
    main()
