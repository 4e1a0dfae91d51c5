"""The compiled time loop (tempsup.training.fused) against PyTorch's (tempsup.training.losses),
and its fallback.

Same loss and gradients to rounding for the three models, tied and free
readout, with and without bias, N_h up to 100, N_x up to 75, shared or
per-model inputs, several delays; and where the library cannot be built the
loss runs PyTorch's loop and one log line says so.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest
import torch

from tempsup.model.data import sample_inputs
from tempsup.model.recurrences import BatchedRNN
from tempsup.training import fused, losses

needs_library = pytest.mark.skipif(fused.LIBRARY is None, reason="no compiled time loop here")


def both_paths(model, ks, ps, hidden, inputs, tied, bias, dtype, batch=45, seq_len=12):
    net = BatchedRNN(
        model, len(ks), hidden, inputs, torch.tensor(ks), tied, bias, list(range(len(ks)))
    )
    net = net.to(dtype)
    if bias:
        with torch.no_grad():
            net.b_y.normal_(0, 0.3, generator=torch.Generator().manual_seed(9))
    p = torch.tensor(ps, dtype=dtype)
    x = sample_inputs(torch.Generator().manual_seed(5), p, batch, seq_len, inputs, "uniform")
    x = x.to(dtype)
    w = torch.tensor([0.7**i for i in range(inputs)], dtype=dtype)
    coef = torch.arange(1, len(ks) + 1, dtype=dtype)  # each model's loss reaches its own weights
    params = list(net.parameters())
    out = []
    for lib in (fused.LIBRARY, None):
        saved, fused.LIBRARY = fused.LIBRARY, lib
        try:
            loss = losses.recurrent_loss(net, x, w)
        finally:
            fused.LIBRARY = saved
        out.append((loss, torch.autograd.grad((loss * coef).sum(), params)))
    return out


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).abs().max() / b.abs().max()).item()


# N_h = 1 … 4 with N_x = 1 take the loop that keeps its state in registers (`tile_reg`),
# the others the general one; a batch of 45 ends in a part-filled tile and vector
SHAPES = [(1, 1), (2, 1), (3, 1), (4, 1), (4, 3), (5, 1), (7, 2)]
RUNS = [([3], [0.1]), ([3, 3, 3, 3], [0.1] * 4), ([1, 3, 3, 0], [0.3, 0.3, 0.1, 0.3])]


@needs_library
@pytest.mark.parametrize(
    ("model", "tied", "bias"), list(itertools.product(["rnn", "ssm", "linear"], [1, 0], [0, 1]))
)
def test_the_compiled_loop_equals_pytorchs_in_float64(model, tied, bias) -> None:
    for (hidden, inputs), (ks, ps) in itertools.product(SHAPES, RUNS):
        (lf, gf), (lr, gr) = both_paths(model, ks, ps, hidden, inputs, tied, bias, torch.float64)
        errs = [rel(lf, lr)] + [rel(a, b) for a, b in zip(gf, gr, strict=True)]
        assert max(errs) < 1e-11, (hidden, inputs, ks, errs)


@needs_library
@pytest.mark.parametrize(("hidden", "inputs", "batch"), [(2, 1, 512), (10, 3, 37), (100, 75, 20)])
def test_the_compiled_loop_equals_pytorchs_in_float32(hidden, inputs, batch) -> None:
    # the training precision, N_h = 100 and a batch that is not a whole number of tiles
    (lf, gf), (lr, gr) = both_paths(
        "rnn", [2, 3, 3], [0.1, 0.1, 0.2], hidden, inputs, True, True, torch.float32, batch, 20
    )
    errs = [rel(lf, lr)] + [rel(a, b) for a, b in zip(gf, gr, strict=True)]
    assert max(errs) < 2e-6, errs


@needs_library
def test_training_takes_the_compiled_loop(monkeypatch) -> None:
    calls = []
    real = fused.recurrent_loss
    monkeypatch.setattr(fused, "recurrent_loss", lambda *a: calls.append(1) or real(*a))
    net = BatchedRNN("rnn", 2, 2, 1, torch.tensor([3, 3]), True, False, [0, 1])
    x = sample_inputs(torch.Generator().manual_seed(1), torch.full((2,), 0.1), 16, 8, 1, "uniform")
    losses.sampled_loss(net, x, torch.full((2,), 0.1), torch.ones(1))
    assert calls == [1]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "OMP_NUM_THREADS": "1", **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


CHECK = (
    "from tempsup.training import fused; from tempsup.model.config import RunConfig; "
    "from tempsup.training.trainer import train; print('library', fused.LIBRARY is not None); "
    "snaps = list(train(RunConfig(model='rnn', steps=4, snapshot_every=4))); "
    "print('loss', float(snaps[-1].loss.mean()))"
)


def test_without_a_compiler_the_loss_falls_back_and_says_so_once(tmp_path) -> None:
    # a fresh cache and a compiler that does not exist: nothing to load, nothing to build
    done = run_python(
        CHECK, CC=str(tmp_path / "no-such-cc"), XDG_CACHE_HOME=str(tmp_path), TEMPSUP_FUSED=""
    )
    assert done.returncode == 0, done.stderr
    assert "library False" in done.stdout
    said = [ln for ln in done.stderr.splitlines() if "compiled time loop is not available" in ln]
    assert len(said) == 1 and "no C compiler found" in said[0], done.stderr
    forced = run_python(CHECK, TEMPSUP_FUSED="0")
    assert "library False" in forced.stdout and "not available" not in forced.stderr
    # both processes trained the same four steps: the same loss to float rounding
    loss = float(done.stdout.split("loss ")[1])
    assert abs(loss - float(forced.stdout.split("loss ")[1])) <= 1e-6 * abs(loss)
