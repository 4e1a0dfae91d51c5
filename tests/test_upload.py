"""Opening a run file or a state dict (`tempsup.io.upload`, the explorer's "Open a run file").

Fast, no browser: each accepted format gives the same Run as `from_torch` /
`from_weights` / `Run.from_bytes`; each refusal is one message naming what is wrong
(too large, not a known file, a pickle with objects, a missing array, a wrong shape,
NaN or inf); the content digest is stable; a stored run comes back and draws its four
panels; the explorer page opened at its link holds the whole run without training.
"""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import torch
from safetensors.numpy import save as safetensors_bytes

from tempsup.errors import TempsupError
from tempsup.figures.rnn import PANEL_SET, PANELS
from tempsup.io.imported import from_torch, from_weights
from tempsup.io.upload import (
    KEEP_S,
    MAX_BYTES,
    StateLaw,
    open_run,
    run_digest,
    store_run,
    stored_run,
)
from tempsup.jobs.disk import DiskStore
from tempsup.model.config import RunConfig

LAW = StateLaw(model="rnn", k=3, sparsity=0.9)


def torch_net(seed: int = 0) -> tuple[torch.nn.RNN, torch.nn.Linear]:
    torch.manual_seed(seed)
    return torch.nn.RNN(1, 3, nonlinearity="relu", bias=False), torch.nn.Linear(3, 1)


def state_dict(seed: int = 0, prefix: tuple[str, str] = ("rnn.", "readout.")) -> dict:
    rnn, readout = torch_net(seed)
    return {
        **{prefix[0] + k: v for k, v in rnn.state_dict().items()},
        **{prefix[1] + k: v for k, v in readout.state_dict().items()},
    }


def pt_bytes(obj: object) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def refusal(data: bytes, name: str, law: StateLaw = LAW) -> str:
    with pytest.raises(TempsupError) as info:
        open_run(data, name, law)
    return str(info.value)


# ---- accepted --------------------------------------------------------------------------


def test_a_pt_state_dict_is_read_as_from_torch_reads_the_modules() -> None:
    rnn, readout = torch_net()
    want = from_torch(rnn, readout, k=3, sparsity=0.9)
    run = open_run(pt_bytes(state_dict()), "net.pt", LAW)
    assert run.config == want.config
    assert run_digest(run) == run_digest(want)
    assert (run.config.k, run.config.hidden) == (4, 4)  # the rectified readout's exact form


@pytest.mark.parametrize(
    "prefix", [("", ""), ("rnn.", "fc."), ("cell.", "head.")], ids=["bare", "fc", "named"]
)
def test_any_unambiguous_module_names_are_read_alike(prefix: tuple[str, str]) -> None:
    if prefix == ("", ""):  # torch's own names, the RNN's and the Linear's in one dict
        rnn, readout = torch_net()
        state = {**rnn.state_dict(), **readout.state_dict()}
    else:
        state = state_dict(prefix=prefix)
    assert run_digest(open_run(pt_bytes(state), "n.pt", LAW)) == run_digest(
        open_run(pt_bytes(state_dict()), "n.pt", LAW)
    )


def test_safetensors_and_npz_state_dicts_give_the_same_run_as_pt() -> None:
    arrays = {k: v.numpy() for k, v in state_dict().items()}
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    want = run_digest(open_run(pt_bytes(state_dict()), "n.pt", LAW))
    assert run_digest(open_run(safetensors_bytes(arrays), "n.safetensors", LAW)) == want
    assert run_digest(open_run(buf.getvalue(), "n.npz", LAW)) == want


def test_tempsup_names_are_read_by_from_weights_with_the_law_given() -> None:
    arrays = {"W_x": np.array([[1.0], [0.0]]), "W_h": 0.8 * np.eye(2), "W_y": np.ones((2, 1))}
    law = StateLaw(model="ssm", k=2, sparsity=0.7, seq_len=12)
    run = open_run(safetensors_bytes(arrays), "w.safetensors", law)
    want = from_weights(*arrays.values(), model="ssm", k=2, sparsity=0.7, seq_len=12)
    assert run.config == want.config and run_digest(run) == run_digest(want)
    assert (run.config.model, run.config.k, run.config.sparsity) == ("ssm", 2, 0.7)


def test_the_law_of_a_state_dict_is_the_controls_one() -> None:
    config = RunConfig(model="rnn", k=5, sparsity=0.97, seq_len=25)
    law = StateLaw.of(config)
    assert (law.model, law.k, law.sparsity, law.seq_len) == ("rnn", 5, 0.97, 25)
    run = open_run(pt_bytes(state_dict()), "n.pt", law)
    assert (run.config.k, run.config.sparsity, run.config.seq_len) == (6, 0.97, 26)


def test_a_tempsup_run_file_is_read_whole() -> None:
    rnn, readout = torch_net()
    run = from_torch([rnn, rnn], readout, k=3, steps=[0, 10])
    back = open_run(run.to_bytes(), "run.npz", LAW)
    assert back.n_frames == 2 and run_digest(back) == run_digest(run)


# ---- refused ---------------------------------------------------------------------------


def test_nan_and_inf_are_refused_naming_the_array() -> None:
    state = state_dict()
    state["rnn.weight_hh_l0"] = state["rnn.weight_hh_l0"].clone()
    state["rnn.weight_hh_l0"][0, 1] = float("nan")
    assert (
        refusal(pt_bytes(state), "nan.pt") == "nan.pt: rnn.weight_hh_l0 holds NaN (1 of 9 entries)"
    )
    arrays = {"W_x": np.ones((2, 1)), "W_h": np.eye(2), "W_y": np.array([[np.inf], [0.0]])}
    assert "W_y holds inf" in refusal(safetensors_bytes(arrays), "inf.safetensors")


def test_a_run_file_with_nan_weights_is_refused() -> None:
    rnn, readout = torch_net()
    run = from_torch(rnn, readout, k=3)
    run.arrays["W_h"] = run.arrays["W_h"].copy()
    run.arrays["W_h"][0, 0, 0, 0] = np.nan
    assert "W_h holds NaN" in refusal(run.to_bytes(), "run.npz")


@pytest.mark.parametrize(
    ("key", "shape", "said"),
    [
        # from_torch's words: the shapes tell no RNN, GRU or LSTM; not an RNN's
        ("rnn.weight_hh_l0", (3, 4), "weight_ih_l0 has shape (3, 1) and weight_hh_l0 (3, 4)"),
        ("rnn.weight_hh_l0", (6, 3), "weight_hh_l0 (6, 3) are not (hidden, input) and"),
        ("readout.weight", (1, 5), "in_features must be the RNN's hidden_size 3, got weight"),
        ("readout.bias", (2,), "readout.bias has shape (2,), expected (1,)"),
    ],
)
def test_wrong_shapes_are_refused_naming_the_array_its_shape_and_the_one_expected(
    key: str, shape: tuple[int, ...], said: str
) -> None:
    state = state_dict()
    state[key] = torch.zeros(shape)
    assert said in refusal(pt_bytes(state), "shape.pt")


def test_wrong_tempsup_shapes_are_refused_naming_the_array() -> None:
    arrays = {"W_x": np.ones((2, 1)), "W_h": np.eye(2), "W_y": np.ones((2, 2))}
    message = refusal(safetensors_bytes(arrays), "w.safetensors")
    assert message.startswith("w.safetensors: W_y has shape (2, 2), expected (2, 1)")


class Gadget:  # a Python object a pickle would rebuild (and could run code while doing so)
    pass


@pytest.mark.parametrize(
    "data",
    [pt_bytes({"rnn.weight_ih_l0": torch.zeros(3, 1), "model": Gadget()}),
     pickle.dumps({"W_h": Gadget()})],
    ids=["torch.save", "pickle.dumps"],
)  # fmt: skip
def test_a_pickle_with_python_objects_is_refused_never_loaded(data: bytes) -> None:
    assert "a pickle with Python objects (never loaded" in refusal(data, "obj.pt")


def test_an_npz_with_object_arrays_is_refused() -> None:
    buf = io.BytesIO()
    np.savez(buf, W_h=np.array([Gadget()], dtype=object))
    assert "Python objects (never loaded" in refusal(buf.getvalue(), "obj.npz")


def test_a_file_above_the_limit_is_refused_saying_size_and_limit() -> None:
    message = refusal(b"\0" * (MAX_BYTES + 1), "big.pt")
    assert message == "big.pt: too large (20.0 MB); the explorer opens files of at most 20 MB"


@pytest.mark.parametrize(
    ("state", "said"),
    [
        ({"rnn.weight_ih_l0": torch.zeros(3, 1), "readout.weight": torch.zeros(1, 3)},
         "missing rnn.weight_hh_l0"),
        ({"rnn.weight_ih_l0": torch.zeros(3, 1), "rnn.weight_hh_l0": torch.zeros(3, 3)},
         "missing the readout's weight"),
        ({"W_x": torch.zeros(2, 1), "W_h": torch.zeros(2, 2)}, "missing W_y"),
        ({"foo": torch.zeros(2)}, "missing the weights"),
    ],
    ids=["hh", "readout", "W_y", "nothing"],
)  # fmt: skip
def test_missing_arrays_are_named(state: dict, said: str) -> None:
    assert said in refusal(pt_bytes(state), "part.pt")


def test_bytes_of_another_kind_say_what_they_are() -> None:
    message = refusal(b"name,value\nk,3\n", "table.csv")
    assert message.startswith("table.csv: not a file the explorer opens: expected a tempsup")
    assert "text (" in message
    assert "empty" in refusal(b"", "empty.pt")


class Net(torch.nn.Module):
    """A recurrent module and its readout in one module, saved as people save theirs."""

    def __init__(self, kind: str, seed: int = 0, **options: object) -> None:
        super().__init__()
        torch.manual_seed(seed)
        cls = {"rnn": torch.nn.RNN, "gru": torch.nn.GRU, "lstm": torch.nn.LSTM}[kind]
        self.rnn = cls(1, 3, batch_first=True, **options)
        self.readout = torch.nn.Linear(3, 1)


def test_an_rnn_with_a_hidden_bias_opens_read_through_its_linearisation() -> None:
    net = Net("rnn", nonlinearity="relu")  # torch's default: bias=True
    run = open_run(pt_bytes(net.state_dict()), "bias.pt", LAW)
    want = from_torch(net.rnn, net.readout, k=3, sparsity=0.9)
    assert run.config == want.config and run_digest(run) == run_digest(want)
    assert run.config.model == "ssm" and run.origin["lens"].startswith("linearised at")
    assert "silent" in run.arrays and "nonlinearity" in run.arrays


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_a_gru_or_lstm_state_dict_opens_as_that_model(kind: str) -> None:
    net = Net(kind)
    want = from_torch(net.rnn, net.readout, k=3, sparsity=0.9)
    run = open_run(pt_bytes(net.state_dict()), f"{kind}.pt", LAW)
    assert run.config == want.config and run_digest(run) == run_digest(want)
    assert (run.config.model, run.config.hidden, run.config.k) == (kind, 3, 3)
    assert run.origin["module"] == kind.upper()
    arrays = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    same = open_run(safetensors_bytes(arrays), f"{kind}.safetensors", LAW)
    assert run_digest(same) == run_digest(run)
    # the nonlinearity picked beside the box is an RNN's: a GRU or LSTM ignores it
    tanh = open_run(pt_bytes(net.state_dict()), f"{kind}.pt", StateLaw(nonlinearity="tanh"))
    assert run_digest(tanh) == run_digest(run)
    linear = open_run(pt_bytes(net.state_dict()), f"{kind}.pt", StateLaw(model="linear"))
    assert linear.config.model == "linear"  # its linearisation with a linear readout


def test_a_two_layer_gru_is_refused_in_from_torch_words_without_its_prefix() -> None:
    message = refusal(pt_bytes(Net("gru", num_layers=2).state_dict()), "deep.pt")
    assert message.startswith("deep.pt: found bias_hh_l1, bias_ih_l1, weight_hh_l1, weight_ih_l1")
    assert "only one-layer, one-directional RNNs" in message and "from_torch" not in message


def test_entries_of_neither_module_are_refused_naming_them() -> None:
    state = {**Net("gru").state_dict(), "norm.scale": torch.ones(3)}
    message = refusal(pt_bytes(state), "extra.pt")
    assert message.startswith("extra.pt: unexpected norm.scale: only one recurrent module")


# ---- kept by content -------------------------------------------------------------------


def test_the_digest_is_the_content_the_same_run_twice_one_key(tmp_path) -> None:
    first = open_run(pt_bytes(state_dict()), "a.pt", LAW)
    again = open_run(pt_bytes(state_dict()), "b.pt", LAW)
    other = open_run(pt_bytes(state_dict(seed=1)), "a.pt", LAW)
    assert run_digest(first) == run_digest(again) != run_digest(other)
    assert run_digest(first) == run_digest(open_run(first.to_bytes(), "x.npz", LAW))
    assert len(run_digest(first)) == 64
    store = DiskStore(tmp_path / "jobs")
    assert store_run(store, first) == store_run(store, again) == run_digest(first)


def test_a_stored_run_comes_back_and_draws_its_four_panels(tmp_path) -> None:
    store = DiskStore(tmp_path / "jobs")
    run = open_run(pt_bytes(state_dict()), "n.pt", LAW)
    digest = store_run(store, run)
    back = stored_run(store, digest)
    assert back is not None and run_digest(back) == digest
    for panel in PANELS:
        figure = PANEL_SET.panel_figure(panel, back, 0, -1, 0)
        assert figure.data, panel
    assert stored_run(store, "0" * 64) is None
    assert stored_run(store, "../run:abc") is None
    assert KEEP_S == 30 * 24 * 3600


def test_a_tanh_rnn_is_read_linearised_with_the_nonlinearity_picked() -> None:
    torch.manual_seed(0)
    rnn, readout = torch.nn.RNN(1, 3, bias=False), torch.nn.Linear(3, 1)
    state = {**{f"rnn.{k}": v for k, v in rnn.state_dict().items()},
             **{f"readout.{k}": v for k, v in readout.state_dict().items()}}  # fmt: skip
    for model, want in (("ssm", True), ("rnn", True), ("linear", False)):
        law = StateLaw(model=model, k=3, nonlinearity="tanh")
        run = open_run(pt_bytes(state), "tanh.pt", law)
        same = from_torch(rnn, readout, k=3, nonlinearity="tanh", readout_relu=want)
        assert run.config == same.config and run_digest(run) == run_digest(same), model


# ---- the explorer's side (no browser) ---------------------------------------------------


@pytest.fixture
def app_store(tmp_path, monkeypatch):
    from app import services

    monkeypatch.setenv("TEMPSUP_CACHE", str(tmp_path / "jobs"))
    services.job_queue.cache_clear()
    yield services.job_queue()
    services.job_queue.cache_clear()


def test_the_explorer_opens_the_file_at_its_link_and_shows_it_without_training(app_store):
    from base64 import b64encode

    from app import open_run as page_part
    from app.pages import explorer

    data = "data:application/octet-stream;base64," + b64encode(pt_bytes(state_dict())).decode()
    store = {"config": RunConfig(model="rnn", k=3).to_dict()}
    href, message = page_part.open_file(data, "net.pt", store, "relu")
    assert message == "" and href.startswith("/?model=rnn&")
    digest = href.split("run=")[1]
    run = stored_run(app_store.store, digest)
    assert run is not None and run.config.k == 4
    config, stores, request = page_part.page(href[1:] + "&frame=1&view_seed=0")
    assert config == run.config and request == {"key": config.key, "seed": 0, "frame": 0}
    assert stores["job"]["opened"] == digest and stores["view"]["n"] == 1
    assert all(stores["view"]["frames"][p] for p in PANELS)
    assert app_store.status(config.key) is None  # nothing was queued or trained
    explorer.layout(href[1:])  # the page itself builds
    # a bad file: the page stays, the message says why
    nan = state_dict()
    nan["readout.bias"] = torch.tensor([float("inf")])
    bad = "data:;base64," + b64encode(pt_bytes(nan)).decode()
    assert page_part.open_file(bad, "inf.pt", store, "relu")[1] == (
        "inf.pt: readout.bias holds inf (1 of 1 entries)"
    )
    # a link to a run this server does not have: a message, no training
    config, stores, _ = page_part.page(f"model=rnn&k=3&run={'0' * 64}")
    assert "no longer has" in stores["view"]["message"] and stores["job"]["state"] == "none"


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_the_explorer_opens_a_gated_state_dict_at_its_models_link(app_store, kind: str):
    from base64 import b64encode

    from app import open_run as page_part
    from app.pages import explorer

    data = "data:;base64," + b64encode(pt_bytes(Net(kind).state_dict())).decode()
    store = {"config": RunConfig(model="rnn", k=3).to_dict()}
    href, message = page_part.open_file(data, f"{kind}.pt", store, "relu")
    assert message == "" and href.startswith(f"/?model={kind}&")
    config, stores, _ = page_part.page(href[1:])
    assert config.model == kind and all(stores["view"]["frames"][p] for p in PANELS)
    explorer.layout(href[1:])
