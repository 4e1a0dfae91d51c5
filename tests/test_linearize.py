"""Tests for tempsup.model.linearize: the paper's models come out as tempsup computes them
today, torch's gated cells as autograd says, and a blown-up silent run is flagged, not fatal."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tempsup.errors import TempsupError
from tempsup.model import linearize as lz
from tempsup.theory import geometry

F64 = torch.float64


def random_weights(m: int, n_h: int, n_x: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    W_x = rng.normal(size=(m, n_h, n_x))
    W_h = rng.normal(size=(m, n_h, n_h)) * (0.9 / np.sqrt(n_h))
    return W_x, W_h


def cell_step(cells: list[torch.nn.Module], lstm: bool = False) -> lz.Step:
    """Model m is `cells[m]`, fed (B, N_x) inputs; an LSTM's state is cat(h, c)."""

    def step(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        out = []
        for cell, sm, xm in zip(cells, s, x, strict=True):
            st, xt = sm.T, xm.T  # (B, S), (B, N_x)
            if lstm:
                hidden = st.shape[1] // 2
                h, c = cell(xt, (st[:, :hidden].contiguous(), st[:, hidden:].contiguous()))
                out.append(torch.cat([h, c], dim=1).T)
            else:
                out.append(cell(xt, st).T)
        return torch.stack(out)

    return step


def make_cells(kind: str, m: int, seed: int) -> tuple[lz.Step, int]:
    torch.manual_seed(seed)
    if kind == "gru":
        cells = [torch.nn.GRUCell(1, 3).double() for _ in range(m)]
    elif kind == "lstm":
        cells = [torch.nn.LSTMCell(1, 3).double() for _ in range(m)]
    else:
        cells = [torch.nn.RNNCell(1, 3, nonlinearity="relu").double() for _ in range(m)]
    return cell_step(cells, lstm=kind == "lstm"), 6 if kind == "lstm" else 3


def autograd_jacobians(step: lz.Step, silent: np.ndarray, n_x: int, m: int):
    """J_h, J_x of model m at its silent state, by autograd through a B = 1 call."""
    s0 = torch.from_numpy(silent[m : m + 1])  # (1, S)
    n_models = silent.shape[0]

    def f(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        state = torch.from_numpy(silent).clone()[:, :, None]
        state = torch.cat([state[:m], s[None, :, None], state[m + 1 :]])
        inp = torch.zeros(n_models, n_x, 1, dtype=F64)
        inp = torch.cat([inp[:m], x[None, :, None], inp[m + 1 :]])
        return step(state, inp)[m, :, 0]

    zeros = torch.zeros(n_x, dtype=F64)
    J_h = torch.autograd.functional.jacobian(lambda s: f(s, zeros), s0[0])
    J_x = torch.autograd.functional.jacobian(lambda x: f(s0[0], x), zeros)
    return J_h.numpy(), J_x.numpy()


# ---- the paper's three models: exactly today's numbers ------------------------------


@pytest.mark.parametrize("relu_hidden", [False, True])
@pytest.mark.parametrize("m, n_h, n_x", [(1, 2, 1), (3, 4, 2), (2, 5, 3)])
def test_paper_models_reproduce_geometry(relu_hidden: bool, m: int, n_h: int, n_x: int) -> None:
    W_x, W_h = random_weights(m, n_h, n_x, seed=10 * n_h + n_x)
    n = 12
    lin = lz.linearize(lz.paper_step(W_x, W_h, relu_hidden), m, n_h, n_x, seq_len=20, n_ages=n)
    want = geometry.feature_directions(W_x, W_h, n, relu_hidden)
    assert lin.directions.shape == want.shape == (m, n, n_h, n_x)
    scale = np.abs(want).max(axis=(2, 3), keepdims=True)  # per model and age
    np.testing.assert_allclose(lin.directions, want, rtol=1e-9, atol=1e-9 * scale.max())
    np.testing.assert_array_equal(lin.silent, 0.0)  # the ReLU RNN's on its kink
    assert lin.settled.all()
    np.testing.assert_allclose(lin.J_h, W_h, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lin.J_x, W_x, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        lz.eigenvalues(lin.J_h), geometry.eigenvalues(W_h), rtol=1e-9, atol=1e-12
    )


def test_relu_directions_are_directional_not_jacobian_powers() -> None:
    """At the kink the impulse response is W_h ReLU(w), which J_h^s J_x (= W_h^s W_x) is not."""
    W_x = np.array([[[1.0], [-1.0]]])
    W_h = np.array([[[0.5, 0.3], [-0.2, 0.4]]])
    lin = lz.linearize(lz.paper_step(W_x, W_h, True), 1, 2, 1, seq_len=5, n_ages=3)
    np.testing.assert_allclose(lin.directions[0, 1, :, 0], [0.5, -0.2], rtol=1e-12)
    assert not np.allclose(lin.directions[0, 1], W_h[0] @ W_x[0])


def test_eigenvalue_order_matches_geometry() -> None:
    rng = np.random.default_rng(3)
    J = rng.normal(size=(20, 4, 4))
    np.testing.assert_array_equal(lz.eigenvalues(J), geometry.eigenvalues(J))
    rot = np.array([[0.0, -0.8], [0.8, 0.0]])
    lam = lz.eigenvalues(rot)
    assert lam.shape == (2,) and lam[0].imag > 0


# ---- torch's cells: the linearisation autograd gives at the silent state ------------


@pytest.mark.parametrize("kind", ["gru", "lstm", "relu_rnn"])
def test_torch_cells_match_autograd(kind: str) -> None:
    m, n_x, seq_len, n = 2, 1, 20, 10
    step, n_state = make_cells(kind, m, seed=7)
    lin = lz.linearize(step, m, n_state, n_x, seq_len, n)
    # the silent state: the cell run 20 steps on zeros from 0
    with torch.no_grad():
        s = torch.zeros(m, n_state, 1, dtype=F64)
        for _ in range(seq_len):
            s = step(s, torch.zeros(m, n_x, 1, dtype=F64))
    np.testing.assert_allclose(lin.silent, s[:, :, 0].numpy(), rtol=0, atol=1e-14)
    assert np.abs(lin.silent).max() > 1e-3  # a biased cell rests away from 0 (and the kink)
    for i in range(m):
        J_h, J_x = autograd_jacobians(step, lin.silent, n_x, i)
        np.testing.assert_allclose(lin.J_h[i], J_h, rtol=0, atol=1e-6)
        np.testing.assert_allclose(lin.J_x[i], J_x, rtol=0, atol=1e-6)
        powers = [J_x]
        for _ in range(n - 1):
            powers.append(J_h @ powers[-1])
        np.testing.assert_allclose(lin.directions[i], np.stack(powers), rtol=0, atol=1e-6)
    assert lin.settled.all()


# ---- the active response and how nonlinear the memory is ----------------------------


@pytest.mark.parametrize("value", [1.0, 0.3, -2.5, 40.0])
def test_active_response_of_a_linear_model_is_the_directions(value: float) -> None:
    W_x, W_h = random_weights(3, 4, 2, seed=5)
    step = lz.paper_step(W_x, W_h, relu_hidden=False)
    lin = lz.linearize(step, 3, 4, 2, seq_len=10, n_ages=8)
    active = lz.active_response(step, lin.silent, 2, 8, value)
    np.testing.assert_allclose(active, lin.directions, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lz.nonlinearity(lin.directions, active), 0.0, atol=1e-9)
    readout = np.random.default_rng(0).normal(size=(3, 4, 2))
    np.testing.assert_allclose(lz.nonlinearity(lin.directions, active, readout), 0.0, atol=1e-9)


def test_active_response_of_a_relu_rnn() -> None:
    """On the kink a non-negative input is linear (positive homogeneity), a negative one not."""
    W_x, W_h = random_weights(2, 4, 1, seed=8)
    step = lz.paper_step(W_x, W_h, relu_hidden=True)
    lin = lz.linearize(step, 2, 4, 1, seq_len=10, n_ages=8)
    active = lz.active_response(step, lin.silent, 1, 8, np.array([0.5, 3.0]))  # per model
    np.testing.assert_allclose(active, lin.directions, rtol=1e-9, atol=1e-12)
    negative = lz.active_response(step, lin.silent, 1, 8, -1.0)
    assert (lz.nonlinearity(lin.directions, negative) > 1e-3).all()


def test_gru_memory_is_nonlinear_at_value_one() -> None:
    step, n_state = make_cells("gru", 2, seed=1)
    lin = lz.linearize(step, 2, n_state, 1, seq_len=20, n_ages=10)
    active = lz.active_response(step, lin.silent, 1, 10, 1.0)
    assert active.shape == lin.directions.shape
    assert (lz.nonlinearity(lin.directions, active) > 1e-3).all()
    # a small input is close to linear: the difference shrinks with the value
    small = lz.active_response(step, lin.silent, 1, 10, 1e-4)
    assert (lz.nonlinearity(lin.directions, small) < 1e-3).all()


def test_readout_kernel() -> None:
    rng = np.random.default_rng(2)
    W_y, W_s = rng.normal(size=(3, 4, 2)), rng.normal(size=(3, 5, 4, 2))
    a = lz.readout_kernel(W_y, W_s)
    assert a.shape == (3, 5, 2, 2)
    np.testing.assert_allclose(a, geometry.projections(W_y, W_s))


def test_nonlinearity_of_a_zero_response() -> None:
    zero = np.zeros((2, 3, 4, 1))
    other = zero.copy()
    other[1, 0, 0, 0] = 1.0
    np.testing.assert_array_equal(lz.nonlinearity(zero, other), [0.0, np.inf])


# ---- a silent run that does not settle ---------------------------------------------


def diverging_step(bias: float) -> lz.Step:
    """A linear recurrence with eigenvalue −1.5 and a constant drive: it oscillates ever wider."""
    W_h = torch.tensor([[[-1.5, 0.0], [0.0, 0.5]]], dtype=F64)
    W_x = torch.tensor([[[1.0], [1.0]]], dtype=F64)

    def step(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.bmm(W_h, s) + torch.bmm(W_x, x) + bias

    return step


def test_an_unsettled_silent_run_is_flagged() -> None:
    lin = lz.linearize(diverging_step(0.3), 1, 2, 1, seq_len=20, n_ages=5)
    assert not lin.settled[0]
    np.testing.assert_allclose(lin.J_h[0], [[-1.5, 0.0], [0.0, 0.5]], atol=1e-6)
    np.testing.assert_allclose(lz.eigenvalues(lin.J_h)[0], [-1.5, 0.5], atol=1e-6)
    # without the bias the same model rests at 0: settled
    assert lz.linearize(diverging_step(0.0), 1, 2, 1, seq_len=20, n_ages=5).settled.all()


def test_a_blown_up_silent_run_gives_nan_not_an_error() -> None:
    with np.errstate(all="raise"):  # no numpy warning on the way either
        lin = lz.linearize(diverging_step(0.3), 1, 2, 1, seq_len=3000, n_ages=5)
        assert not lin.settled[0]
        assert not np.isfinite(lin.silent).all()
        lam = lz.eigenvalues(lin.J_h)
        assert lam.shape == (1, 2) and np.isnan(lam).all()
        active = lz.active_response(diverging_step(0.3), lin.silent, 1, 5, 1.0)
        assert np.isnan(lz.nonlinearity(lin.directions, active)).all()


# ---- a wrong step or argument says what was expected --------------------------------


def test_bad_inputs_raise_tempsup_errors() -> None:
    W_x, W_h = random_weights(1, 3, 1, seed=0)
    step = lz.paper_step(W_x, W_h, relu_hidden=False)
    with pytest.raises(TempsupError, match="step: expected a next state"):
        lz.linearize(lambda s, x: step(s, x)[:, :2], 1, 3, 1, seq_len=2, n_ages=3)
    with pytest.raises(TempsupError, match="n_ages"):
        lz.linearize(step, 1, 3, 1, seq_len=2, n_ages=0)
    with pytest.raises(TempsupError, match="non-zero"):
        lz.active_response(step, np.zeros((1, 3)), 1, 3, 0.0)
    with pytest.raises(TempsupError, match="W_x, W_h"):
        lz.paper_step(W_x, W_h[:, :2], relu_hidden=True)
