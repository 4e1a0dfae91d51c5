"""Gated and selective models end to end: trained by the trainer, seen through the lens
(their linearisation at the silent state), stored in a run file and drawn by the panels.

The lens is checked against an independent computation: for each frame, the run's W_x
and W_h (J_x and J_h) and its a_s against torch.autograd.functional.jacobian of the
model's own step at the silent state, recomputed here from the `net_*` parameters the
run file keeps; the eigenvalues `summary()` prints against those of that Jacobian.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.model import gated
from tempsup.model.config import GATED_MODELS, RunConfig
from tempsup.training.trainer import train

SMALL = dict(steps=40, snapshot_every=20, seeds=2, batch=64, seq_len=12, sparsity=0.9)


def trained(model: str, **kw) -> Run:
    cfg = RunConfig(model=model, **{**SMALL, **kw})
    from tempsup.io.run import batch_frames

    frames = [batch_frames([cfg], snap)[0] for snap in train(cfg)]
    return Run.from_frames(cfg, frames)


@pytest.fixture(scope="module", params=GATED_MODELS)
def run(request) -> Run:
    return trained(request.param)


def autograd_lens(run: Run, frame: int, seed: int) -> tuple[np.ndarray, ...]:
    """s*, J_h, J_x of one seed at one frame by autograd, from the run's net_ arrays."""
    cfg = run.config
    params = {
        n[4:]: torch.from_numpy(np.asarray(v[frame, seed : seed + 1], dtype=np.float64))
        for n, v in run.arrays.items()
        if n.startswith("net_") and n not in ("net_W_y", "net_b_y")
    }
    n_s = cfg.state_size

    def f(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return gated.step(cfg.model, params, s.view(1, n_s, 1), x.view(1, -1, 1)).view(n_s)

    s = torch.zeros(n_s, dtype=torch.float64)
    zero = torch.zeros(cfg.inputs, dtype=torch.float64)
    for _ in range(cfg.seq_len):
        s = f(s, zero)
    j_h, j_x = torch.autograd.functional.jacobian(f, (s, zero))
    return s.numpy(), j_h.numpy(), j_x.numpy()


def test_the_lens_is_the_autograd_linearisation_at_the_silent_state(run: Run) -> None:
    for frame in (0, -1):
        for seed in range(run.config.seeds):
            silent, j_h, j_x = autograd_lens(run, frame, seed)
            np.testing.assert_allclose(run["silent"][frame, seed], silent, atol=1e-5)
            np.testing.assert_allclose(run["W_h"][frame, seed], j_h, atol=1e-4)
            np.testing.assert_allclose(run["W_x"][frame, seed], j_x, atol=1e-4)


def test_summary_reads_the_lens(run: Run) -> None:
    cfg = run.config
    s = run.summary(seed=0)
    silent, j_h, j_x = autograd_lens(run, -1, 0)
    w_y = np.asarray(run["W_y"][-1, 0], dtype=float)
    a = [float(w_y[:, 0] @ np.linalg.matrix_power(j_h, t) @ j_x[:, 0]) for t in range(cfg.seq_len)]
    np.testing.assert_allclose(s["a"], a, atol=1e-4)
    lam = np.linalg.eigvals(j_h)
    got = np.array([complex(re, im) for re, im in s["eigenvalues"]])
    np.testing.assert_allclose(np.sort(np.abs(got)), np.sort(np.abs(lam)), atol=1e-4)
    lens = s["lens"]
    assert len(lens["a_active"]) == cfg.seq_len
    assert lens["nonlinearity"] is not None and lens["nonlinearity"] >= 0
    assert "silent state" in lens["linearised_at"]


def test_the_run_file_keeps_the_model_and_its_lens(run: Run, tmp_path) -> None:
    back = Run.load(run.save(tmp_path / "r.npz"))
    names = [n for n in run.arrays if n.startswith("net_")] + ["silent", "active", "nonlinearity"]
    assert len(names) > 5
    for n in names:
        np.testing.assert_array_equal(back[n], run[n])
    assert back.config == run.config
    n_s = run.config.state_size
    assert back["W_h"].shape[-2:] == (n_s, n_s)


def test_every_panel_draws_and_every_headline_is_short(run: Run, tmp_path) -> None:
    from tempsup.analysis.captions import HEADLINE_WORDS
    from tempsup.analysis.captions import words as word_count
    from tempsup.figures import rnn

    for panel in run.panels:
        fig = run.figure(panel)
        assert len(fig.data) > 0, panel
    assert len(run.animation().frames) == run.n_frames
    for panel, c in rnn.run_captions(run).items():
        assert word_count(c.headline) <= HEADLINE_WORDS, (run.config.model, panel, c.headline)
        assert not c.headline.startswith("Train to see"), (run.config.model, panel)
    page = run.export_html(tmp_path / "run.html").read_text()
    assert "linearised" in page and "Why?" in page


def test_the_loss_panel_names_what_the_linear_picture_misses(run: Run) -> None:
    from tempsup.analysis.captions import loss_curves

    names = [c.name for c in loss_curves(run.config)]
    assert any("linearised" in n for n in names), names
    assert any("misses" in n for n in names), names
    from tempsup.figures import rnn

    m = rnn.measured(run)
    head = rnn.run_captions(run)["loss"].headline
    assert "the linear picture misses" in head, head
    assert f"{m.loss - m.expected:+.3g}" in head, (head, m.loss, m.expected)
    proj = rnn.run_captions(run)["projections"].headline
    # the LRU is linear in its state and input: its active kernel is the silent one
    assert ("this memory is linear" in proj) == (run.config.model == "lru"), proj


def test_the_lru_needs_an_even_hidden_size() -> None:
    with pytest.raises(TempsupError, match="hidden"):
        RunConfig(model="lru", hidden=3)


def test_a_gated_model_learns_the_task() -> None:
    """A GRU at S = 0.9 lowers its loss by training (400 steps)."""
    run = trained("gru", steps=400, snapshot_every=100)
    first, last = run["loss"][0], run["loss"][-1]
    assert np.all(last < 0.8 * first), (first, last)


def test_the_tied_readout_is_the_direction_of_age_k(run: Run) -> None:
    """Tied (the default): the readout the model trained with, W_y := w_k (closed form for
    the LRU and the selective SSM, forward-mode products for the GRU and the LSTM), equals
    the lens's w_k = J_h^k J_x from the run's own finite-difference linearisation."""
    cfg = run.config
    assert cfg.tied
    for frame in (0, -1):
        w_k = np.linalg.matrix_power(run["W_h"][frame].astype(float), cfg.k) @ run["W_x"][frame]
        rows = slice(0, cfg.hidden)  # the LSTM's readout reads h, the first N_h rows
        np.testing.assert_allclose(run["net_W_y"][frame], w_k[:, rows], rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("model", ["gru", "lstm"])
def test_the_gates_jacobians_are_autograds(model: str) -> None:
    """`gate_jacobians` (the tied readout's closed form) equals autograd's Jacobian of
    `step` at a random state and x = 0, float64."""
    params = {n: v.double() for n, v in gated.init_params(model, 3, 2, [4, 5]).items()}
    n_s = gated.state_size(model, 3)
    s = torch.randn(2, n_s, dtype=torch.float64)
    j_h, j_x = gated.gate_jacobians(model, params, s)
    for m in range(2):
        one = {n: v[m : m + 1] for n, v in params.items()}

        def f(h, x, one=one):
            return gated.step(model, one, h.view(1, n_s, 1), x.view(1, 2, 1)).view(n_s)

        ref_h, ref_x = torch.autograd.functional.jacobian(f, (s[m], torch.zeros(2).double()))
        np.testing.assert_allclose(j_h[m].detach(), ref_h, atol=1e-12)
        np.testing.assert_allclose(j_x[m].detach(), ref_x, atol=1e-12)


def test_a_run_whose_shape_is_not_its_modules_says_so_in_summary_and_on_every_status_line(
    run: Run,
) -> None:
    from dataclasses import replace

    from tempsup.figures.status import status_lines

    note = "the Run has N_h = 4 for a module of hidden 3 (an example note)"
    assert not any(note in line for line in status_lines(run))
    noted = replace(run, origin={"source": "test", "shape": note})
    assert note in noted.summary()["warnings"]
    lines = status_lines(noted)
    assert len(lines) == run.n_frames and all(line.endswith(f"· note: {note}") for line in lines)
    again = Run.from_bytes(noted.to_bytes())  # the note travels in the run file
    assert again.origin == noted.origin and status_lines(again) == lines


def test_a_gated_runs_best_seed_is_its_lowest_measured_loss_not_its_linearisations() -> None:
    """The expected loss a gated frame carries is the linearised model's: a seed whose
    linearisation looks good may be the worst network (seen: a silent GRU ranked best)."""
    from tempsup.io.run import choose_best

    r = trained("gru", seeds=3)
    arrays = {n: v.copy() for n, v in r.arrays.items()}
    arrays["loss"][-1] = [0.5, 0.1, 0.3]
    arrays["expected_loss"][-1] = [0.01, 0.9, 0.9]  # the linearisation would pick seed 0
    best = choose_best(r.config, arrays)
    assert (best.seed, best.criterion) == (1, "measured")
