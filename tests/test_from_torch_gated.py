"""`from_torch` for the torch models people have (issue 42): nn.GRU, nn.LSTM, nn.RNN with
biases (relu, tanh) and any module with step(h, x) -> h, each with an nn.Linear readout.

The lens is checked against an independent computation: the float64 module itself
(torch's own nn.GRU / nn.LSTM / nn.RNN called on a length-1 sequence, or the module's
step), iterated on silent input from h = 0 to the silent state h*, its Jacobians J_h, J_x
there by `torch.autograd.functional.jacobian`, a_s = W_out J_h^s J_x and eig(J_h): the
Run's `summary()["a"]`, `["A_k"]` and `["eigenvalues"]` must equal them. Then each refusal
names its field, a silent network is said to store nothing, the Run says its origin, a
list of checkpoints is a trajectory and the Run survives its run file.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import pytest
import torch

from tempsup.errors import TempsupError
from tempsup.io.imported import from_torch
from tempsup.io.run import Run

K, T = 3, 12
LINEARISED = "linearised at the silent state"


class Cell(torch.nn.Module):
    """A custom cell with step(h, x) -> h: a leaky tanh unit with biases."""

    def __init__(self, n_x: int, n_h: int) -> None:
        super().__init__()
        self.hidden_size = n_h
        self.inp = torch.nn.Linear(n_x, n_h)
        self.rec = torch.nn.Linear(n_h, n_h)

    def step(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * h + 0.5 * torch.tanh(self.inp(x) + self.rec(h))


# ---- the independent computation: torch's own module, autograd ---------------------------


def own_step(module: torch.nn.Module) -> tuple[Callable, int, int, int]:
    """F(s, x) on flat float64 vectors by the module's own forward (a length-1 sequence of
    batch 1, the same layout for batch_first either way) or step; S, N_h, N_x."""
    m = copy.deepcopy(module).double()
    if hasattr(m, "step"):
        n_h = m.hidden_size
        n_x = m.inp.in_features
        return (lambda s, x: m.step(s[None], x[None])[0]), n_h, n_h, n_x
    n_h, n_x = m.hidden_size, m.input_size
    seq = lambda x: x.view(1, 1, n_x)  # noqa: E731
    if isinstance(m, torch.nn.LSTM):

        def f(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            h, c = s[:n_h].view(1, 1, n_h), s[n_h:].view(1, 1, n_h)
            _, (h, c) = m(seq(x), (h, c))
            return torch.cat([h.view(n_h), c.view(n_h)])

        return f, 2 * n_h, n_h, n_x
    return (lambda s, x: m(seq(x), s.view(1, 1, n_h))[1].view(n_h)), n_h, n_h, n_x


def autograd_lens(module: torch.nn.Module, head: torch.nn.Linear, seq_len: int = T):
    """a_s (T, N_x, N_x) = W_out J_h^s J_x and eig(J_h) at the silent state h*."""
    f, n_s, n_h, n_x = own_step(module)
    s = torch.zeros(n_s, dtype=torch.float64)
    zero = torch.zeros(n_x, dtype=torch.float64)
    with torch.no_grad():
        for _ in range(seq_len):
            s = f(s, zero)
    j_h, j_x = (j.numpy() for j in torch.autograd.functional.jacobian(f, (s, zero)))
    w_out = np.zeros((n_x, n_s))
    w_out[:, :n_h] = head.weight.detach().double().numpy()  # the LSTM's readout reads h
    a = [w_out @ np.linalg.matrix_power(j_h, t) @ j_x for t in range(seq_len)]
    return np.array(a), np.linalg.eigvals(j_h), j_h, j_x


def assert_lens_is_autograds(run: Run, module: torch.nn.Module, head: torch.nn.Linear) -> None:
    a, lam, j_h, j_x = autograd_lens(module, head)
    s = run.summary()
    scale = np.abs(a).max()
    np.testing.assert_allclose(s["a"], a[:, 0, 0], rtol=1e-6, atol=1e-6 * scale)
    np.testing.assert_allclose(s["A_k"], a[run.config.k], rtol=1e-6, atol=1e-6 * scale)
    got = np.array([complex(re, im) for re, im in s["eigenvalues"]])
    assert len(got) == len(lam)
    miss = max(np.abs(got - z).min() for z in lam)  # each eigenvalue found, order aside
    assert miss <= 1e-6 * max(1.0, np.abs(lam).max()), (got, lam)
    np.testing.assert_allclose(run["W_h"][-1, 0], j_h, atol=1e-6)
    np.testing.assert_allclose(run["W_x"][-1, 0], j_x, atol=1e-6)


def made(cls: type, n_x: int = 1, n_h: int = 3, seed: int = 0, **kw):
    """A module as torch builds it by default (biases on), after `torch.manual_seed`."""
    torch.manual_seed(seed)
    module = cls(n_x, n_h, **kw)
    return module, torch.nn.Linear(n_h, n_x)


# ---- the lens equals autograd's --------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "n_x", "kw", "model"),
    [
        (torch.nn.GRU, 1, {}, "gru"),
        (torch.nn.GRU, 2, {"batch_first": True}, "gru"),
        (torch.nn.LSTM, 1, {"batch_first": True}, "lstm"),
        (torch.nn.LSTM, 2, {}, "lstm"),
        (torch.nn.RNN, 1, {"nonlinearity": "relu"}, "ssm"),
        (torch.nn.RNN, 2, {"nonlinearity": "tanh", "batch_first": True}, "ssm"),
        (Cell, 1, {}, "ssm"),
    ],
    ids=["gru", "gru-2-batch-first", "lstm-batch-first", "lstm-2", "rnn-relu-bias",
         "rnn-tanh-bias", "step-module"],
)  # fmt: skip
def test_the_lens_is_autograds_linearisation_at_the_silent_state(cls, n_x, kw, model) -> None:
    module, head = made(cls, n_x, **kw)
    run = from_torch(module, head, k=K, seq_len=T)
    assert run.config.model == model and run.config.hidden == 3 and run.config.inputs == n_x
    assert (run.config.k, run.config.seq_len, run.config.seeds) == (K, T, 1)
    assert_lens_is_autograds(run, module, head)
    assert run.origin == {
        "source": "from_torch",
        "module": cls.__name__,
        "lens": run.origin["lens"],
    }  # no "shape": the Run has the module's N_h, k and T
    assert run.origin["lens"].startswith(LINEARISED)
    assert "the expected loss and its terms are the linearised model's" in run.origin["lens"]
    assert np.isfinite(run["expected_loss"]).all() and np.isfinite(run["terms"]).all()
    assert run.summary()["warnings"] == []
    if model != "ssm":  # tempsup's own gated model: the lens a trained one shows
        lens = run.summary()["lens"]  # settled or not: T = 12 is short for torch's init
        assert lens["linearised_at"].startswith("the silent state: 12 silent inputs")
        assert "net_weight_hh" in run.arrays
    # the readout at rest is the linearised model's bias: in force, so in the config
    assert run.config.bias and np.abs(run["b_y"]).max() > 0


def test_the_module_itself_is_not_changed() -> None:
    """A step module is read from a float64 copy: the caller's float32 weights stay."""
    cell, head = made(Cell)
    before = {n: t.clone() for n, t in cell.state_dict().items()}
    from_torch(cell, head, k=K, seq_len=T)
    assert all(t.dtype == torch.float32 for t in cell.state_dict().values())
    assert all(torch.equal(before[n], t) for n, t in cell.state_dict().items())


def test_a_biased_rnn_reading_its_preactivation_is_the_linearisation_in_u() -> None:
    """reads="preactivation" with a bias: the state is u = W_ih x + b + W_hh σ(u_prev), the
    readout reads u; at rest J_h = W_hh σ'(u*), J_x = W_ih."""
    rnn, head = made(torch.nn.RNN, nonlinearity="tanh")
    run = from_torch(rnn, head, k=K, seq_len=T, reads="preactivation")
    W_ih = rnn.weight_ih_l0.detach().double().numpy()
    W_hh = rnn.weight_hh_l0.detach().double().numpy()
    u = np.zeros(3)
    b = (rnn.bias_ih_l0 + rnn.bias_hh_l0).detach().double().numpy()
    for _ in range(T):
        u = b + W_hh @ np.tanh(u)
    np.testing.assert_allclose(run["W_h"][0, 0], W_hh / np.cosh(u) ** 2, atol=1e-6)
    np.testing.assert_allclose(run["W_x"][0, 0], W_ih, atol=1e-6)
    np.testing.assert_allclose(run["silent"][0, 0], u, atol=1e-6)


# ---- what the Run says of itself -------------------------------------------------------


def test_the_bias_free_relu_rnn_is_still_read_exactly_and_says_its_shape() -> None:
    from tempsup.figures import status_line

    torch.manual_seed(1)
    rnn = torch.nn.RNN(1, 3, nonlinearity="relu", bias=False)
    head = torch.nn.Linear(3, 1)
    run = from_torch(rnn, head, k=K, seq_len=T)
    assert run.config.model == "rnn" and run.origin["lens"] == "exact"
    assert (run.config.hidden, run.config.k, run.config.seq_len) == (4, K + 1, T + 1)
    shape = run.origin["shape"]
    assert shape.startswith("read as a 4-unit network with delay k + 1 = 4")
    assert shape in run.summary()["warnings"] and shape in status_line(run)
    pre = from_torch(rnn, head, k=K, seq_len=T, reads="preactivation")
    assert pre.origin == {"source": "from_torch", "module": "RNN", "lens": "exact"}


def test_an_lstm_with_a_linear_readout_is_its_linearisation_on_h_and_c() -> None:
    """readout_relu=False: tempsup's gated models predict ReLU(readout(h)), so the LSTM is
    read as its linearisation with a linear readout, on the whole state (h, c), and says so."""
    lstm, head = made(torch.nn.LSTM)
    run = from_torch(lstm, head, k=K, seq_len=T, readout_relu=False)
    assert run.config.model == "linear" and run.config.hidden == 6
    assert_lens_is_autograds(run, lstm, head)
    assert run.origin["shape"].startswith("read as a 6-unit network: the LSTM's state is (h, c)")
    assert run.origin["shape"] in run.summary()["warnings"]
    gru, head = made(torch.nn.GRU)
    assert from_torch(gru, head, k=K, seq_len=T, readout_relu=False).config.model == "linear"


@pytest.mark.parametrize("cls", [torch.nn.GRU, Cell])
def test_a_network_whose_readout_sees_nothing_is_said_to_store_nothing(cls) -> None:
    module, head = made(cls)
    with torch.no_grad():
        head.weight.zero_()
    warnings = from_torch(module, head, k=K, seq_len=T).summary()["warnings"]
    assert len(warnings) == 1 and warnings[0].startswith("this network stores nothing")


# ---- checkpoints, state dicts, the run file --------------------------------------------


def test_a_list_of_state_dicts_is_a_trajectory_its_model_read_from_the_shapes() -> None:
    gru, head = made(torch.nn.GRU, n_x=2)
    states = []
    for scale in (0.5, 1.0):
        with torch.no_grad():
            states.append({n: scale * t.clone() for n, t in gru.state_dict().items()})
    run = from_torch(states, head.state_dict(), k=K, seq_len=T, steps=[10, 20])
    assert run.config.model == "gru" and run.n_frames == 2 and run["step"].tolist() == [10, 20]
    assert run.origin["module"] == "GRU"
    assert not np.allclose(run["W_h"][0], run["W_h"][1])
    np.testing.assert_array_equal(run["W_h"][1], from_torch(gru, head, k=K, seq_len=T)["W_h"][0])
    lstm, head = made(torch.nn.LSTM)
    assert from_torch(lstm.state_dict(), head, k=K, seq_len=T).config.model == "lstm"
    assert from_torch(lstm.state_dict(), head, k=K, seq_len=T, model="lstm").n_frames == 1


@pytest.mark.parametrize("cls", [torch.nn.GRU, torch.nn.LSTM, torch.nn.RNN, Cell])
def test_the_run_round_trips_through_its_file(cls) -> None:
    module, head = made(cls)
    run = from_torch(module, head, k=K, seq_len=T)
    back = Run.from_bytes(run.to_bytes())
    assert back.config == run.config and back.origin == run.origin
    for name, value in run.arrays.items():
        assert np.array_equal(back[name], value, equal_nan=True), name
    assert back.summary()["a"] == run.summary()["a"]


# ---- refusals, each naming its field -----------------------------------------------------


def step_of(fn: Callable) -> torch.nn.Module:
    cell = Cell(1, 3)
    cell.step = fn  # type: ignore[method-assign]
    return cell


def bad_shape_step(h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return h[:, :2]


def failing_step(h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    raise RuntimeError("no")


REFUSED = [
    (lambda: torch.nn.GRU(1, 3, num_layers=2), {}, "num_layers=2"),
    (lambda: torch.nn.LSTM(1, 3, bidirectional=True), {}, "bidirectional=True"),
    (lambda: torch.nn.LSTM(1, 3, proj_size=2), {}, "proj_size=2"),
    (lambda: torch.nn.LSTM(1, 3, proj_size=2).state_dict(), {}, "weight_hr_l0.*proj_size"),
    (lambda: torch.nn.GRU(1, 3, num_layers=2).state_dict(), {}, "found bias_hh_l1"),
    (lambda: torch.nn.GRU(1, 3, bidirectional=True).state_dict(), {}, "weight_hh_l0_reverse"),
    (lambda: torch.nn.GRU(1, 3), {"head": torch.nn.Linear(4, 1)},
     "in_features must be the GRU's hidden_size 3"),
    (lambda: torch.nn.LSTM(1, 3), {"head": torch.nn.Linear(3, 2)},
     "out_features must be the LSTM's input_size 1"),
    (lambda: [torch.nn.GRU(1, 3), torch.nn.LSTM(1, 3)], {}, "mix networks \\(gru at 0, lstm at 1"),
    (lambda: [torch.nn.GRU(1, 3), torch.nn.GRU(1, 3, bias=False).state_dict() | {
        "weight_hh_l0": torch.zeros(9, 3), "weight_ih_l0": torch.zeros(9, 2)}],
     {"head": [torch.nn.Linear(3, 1), torch.nn.Linear(3, 2)]},
     "checkpoint 1's weight_ih_l0 has shape \\(9, 2\\), checkpoint 0's \\(9, 1\\)"),
    (lambda: {"weight_ih_l0": torch.zeros(6, 1), "weight_hh_l0": torch.zeros(6, 3)}, {},
     "cannot tell the state dict's model.*pass model="),
    (lambda: torch.nn.GRU(1, 3).state_dict(), {"model": "lstm"},
     "weight_ih_l0 \\(9, 1\\) and weight_hh_l0 \\(9, 3\\) are not \\(4·hidden"),
    (lambda: torch.nn.GRU(1, 3), {"model": "lstm"}, "model='lstm' but the recurrent module"),
    (lambda: torch.nn.GRU(1, 3), {"model": "cnn"}, "model must be one of rnn, gru, lstm"),
    (lambda: torch.nn.GRU(1, 3), {"reads": "preactivation"}, "reads='preactivation' is for"),
    (lambda: torch.nn.GRU(1, 3), {"nonlinearity": "tanh"}, "nonlinearity is a torch.nn.RNN's"),
    (lambda: torch.nn.Linear(1, 3), {}, "or a module with step\\(h, x\\) -> h, got Linear"),
    (lambda: step_of(bad_shape_step), {}, "must return the next state.*got \\(1, 2\\)"),
    (lambda: step_of(failing_step), {}, "Cell.step\\(h, x\\) for h \\(1, 3\\).*failed: no"),
    (lambda: Cell(1, 3), {"head": torch.nn.Linear(2, 1)},
     "in_features must be Cell's state size 3"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "change", "message"), REFUSED)
def test_what_cannot_be_read_is_refused_naming_the_field(make, change, message) -> None:
    torch.manual_seed(0)
    change = dict(change)
    head = change.pop("head", torch.nn.Linear(3, 1))
    with pytest.raises(TempsupError, match="^from_torch: .*" + message):
        from_torch(make(), head, k=K, seq_len=T, **change)
