"""Runs read through their linearisation that are not gated (`from_torch` of a biased or
tanh nn.RNN, or a step module: model ssm or linear with the lens arrays) report their
lens as a gated run does: `summary()["lens"]`, `tempsup inspect`'s lines, the projections
panel's active kernel and the captions' nonlinearity; the explorer's captions, status and
panels read them without error. A run without lens arrays (the exact ReLU RNN) reports none.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tempsup.figures.rnn import PANEL_SET, PANELS, measured, run_captions
from tempsup.figures.status import status_lines
from tempsup.io.describe import lines
from tempsup.io.imported import from_torch
from tempsup.io.run import Run
from tempsup.model.lens_names import carries_lens


class Leaky(torch.nn.Module):
    """A step module: h' = tanh(a h + x + c), one unit, its own bias."""

    def step(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(0.6 * h + x + 0.2)


def biased_rnn(nonlinearity: str = "relu", readout_relu: bool = True) -> Run:
    torch.manual_seed(0)
    rnn = torch.nn.RNN(1, 3, nonlinearity=nonlinearity)  # torch's default: bias=True
    readout = torch.nn.Linear(3, 1)
    return from_torch(rnn, readout, k=3, seq_len=12, readout_relu=readout_relu)


def leaky() -> Run:
    torch.manual_seed(0)
    return from_torch(Leaky(), torch.nn.Linear(1, 1), k=2, seq_len=10)


def exact() -> Run:
    torch.manual_seed(0)
    rnn = torch.nn.RNN(1, 3, nonlinearity="relu", bias=False)
    return from_torch(rnn, torch.nn.Linear(3, 1), k=3, seq_len=12)


ACTIVE = "one real input (active response)"  # the projections panel's active kernel


def trace_names(run: Run) -> list[str]:
    return [t.name for t in PANEL_SET.panel_figure("projections", run, 0, -1, 0).data]


RUNS = {
    "relu-bias": (biased_rnn, "ssm"),
    "tanh-linear": (lambda: biased_rnn("tanh", readout_relu=False), "linear"),
    "step": (leaky, "ssm"),
}


@pytest.fixture(params=list(RUNS), scope="module")
def linearised(request: pytest.FixtureRequest) -> tuple[Run, str]:
    make, model = RUNS[request.param]
    return make(), model


def test_a_linearised_run_reports_its_lens_as_a_gated_run_does(linearised) -> None:
    run, model = linearised
    assert run.config.model == model and not run.config.gated and carries_lens(run.arrays)
    lens = run.summary()["lens"]
    assert lens["linearised_at"].startswith(f"the silent state: {run.config.seq_len} silent")
    assert lens["nonlinearity"] == pytest.approx(float(run["nonlinearity"][-1, 0]))
    assert np.allclose(lens["silent_state"], run["silent"][-1, 0], atol=1e-6)
    assert isinstance(lens["settled"], bool) and len(lens["a_active"]) == run.config.seq_len
    text = "\n".join(lines(run.summary()))
    assert "linearised at the silent state" in text and "nonlinearity (active vs silent" in text


def test_the_explorers_captions_status_and_panels_read_a_linearised_run(linearised) -> None:
    run, _ = linearised
    assert math.isfinite(measured(run).nonlinearity)
    captions = run_captions(run)
    assert set(captions) == set(PANELS) and all(c.headline for c in captions.values())
    assert "real input" in captions["projections"].headline  # its nonlinearity, as a GRU's
    assert status_lines(run)
    for panel in PANELS:
        assert PANEL_SET.panel_figure(panel, run, 0, -1, 0).data, panel
    assert ACTIVE in trace_names(run) and ACTIVE not in trace_names(exact())


def test_a_run_without_lens_arrays_reports_no_lens() -> None:
    run = exact()
    assert run.origin["lens"] == "exact" and not carries_lens(run.arrays)
    assert "lens" not in run.summary() and math.isnan(measured(run).nonlinearity)
    assert not any(line.startswith("linearised at") for line in lines(run.summary()))
