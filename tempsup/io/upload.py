"""A run file or a state dict from elsewhere, checked and turned into a `Run` (no web code).

The explorer's "Open a run file" hands the bytes here (`open_run`). Accepted:

- a tempsup run file (.npz, `Run.to_bytes`): read by `Run.from_bytes`, which never
  unpickles;
- a state dict as a .safetensors file (read with `safetensors.numpy`: plain arrays, no
  pickle at all), an .npz archive of named arrays, or a torch `.pt` file (read with
  `torch.load(weights_only=True)` only: tensors in plain containers; anything else is
  refused, never loaded), in one of two layouts (docs/researchers/your-own-models.md,
  "Opening a run file in the explorer"):
  - tempsup's names `W_x` (N_h, N_x), `W_h` (N_h, N_h), `W_y` (N_h, N_x), optional
    `b_y` (N_x,), read by `tempsup.from_weights`;
  - a one-layer `torch.nn.RNN`, `GRU` or `LSTM` and a `torch.nn.Linear` readout:
    `rnn.weight_ih_l0` (G·N_h, N_x), `rnn.weight_hh_l0` (G·N_h, N_h), optional
    `rnn.bias_ih_l0` / `rnn.bias_hh_l0` (G·N_h,) with G = 1, 3, 4, `readout.weight`
    (N_x, N_h), optional `readout.bias` (N_x,) — any module names, or none
    (`weight_ih_l0`, …, `weight`, `bias`), as long as one name ends in `weight_ih_l0` and
    one other module has a `weight` — read by `tempsup.from_torch`, which tells the
    network from the shapes, checks them, and reads a GRU or LSTM as tempsup's "gru" or
    "lstm" and an RNN with a hidden bias through its linearisation (its docstring). Its
    refusals (two layers, a projection, wrong shapes) are said here in its words, named
    by the file; what it does not see (how the entries split into modules, entries of
    neither, the readout bias's size) is refused here.

A state dict carries no data law, so it is read with the one the caller gives
(`StateLaw`: in the explorer, its controls). Every refusal is one TempsupError naming the
file and what is wrong with it: too large (the size and the limit), not a file of a
known kind, a pickle with Python objects, a missing array, an array of the wrong shape
(its name, its shape and the one expected), NaN or inf (the array).

`run_digest` names a run by its content (its config and arrays), so the same network
opened twice, or by two people, is stored once under one key.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from tempsup.core.files import received
from tempsup.errors import TempsupError
from tempsup.io.imported import from_torch, from_weights
from tempsup.io.imported_torch import kind_of
from tempsup.io.run import Run
from tempsup.model.config import RunConfig

# The largest file accepted (bytes). A run file of the explorer's presets is well under
# 1 MB; this leaves room for long trajectories and larger networks, and bounds what one
# upload costs the server (memory while reading, space in the job store).
MAX_BYTES = 20_000_000
TEMPSUP_NAMES = ("W_x", "W_h", "W_y", "b_y")
# A torch RNN's, GRU's or LSTM's parameters (any layer, either direction, an LSTM's
# projection): all go to from_torch, which reads one layer, one direction and names the rest.
RNN_KEY = re.compile(r"(weight|bias)_(ih|hh|hr)_l\d+(_reverse)?")
TORCH_LAYOUT = (
    "a torch.nn.RNN, GRU or LSTM and nn.Linear: rnn.weight_ih_l0, rnn.weight_hh_l0, readout.weight"
)
DIGEST = re.compile(r"[0-9a-f]{64}")  # run_digest's form (a sha256)
KINDS = "a tempsup run file (.npz), or a state dict (.safetensors, .pt or .npz)"
PICKLE = (
    "a pickle with Python objects (never loaded: unpickling could run code); save the "
    "tensors only, e.g. torch.save(model.state_dict(), path) or safetensors"
)


@dataclass(frozen=True)
class StateLaw:
    """What a state dict does not say: the model, the delay k, the data law, and a torch
    RNN's nonlinearity.

    `model` is tempsup's model of arrays with tempsup's names. A torch RNN is read by
    `from_torch` with `nonlinearity`: "relu" is the paper's ReLU RNN (its prediction
    ReLU(readout(·))), read through its linearisation when it has a hidden bias; "tanh" is
    read as its linearisation, with the ReLU readout unless `model` is "linear". A GRU or
    LSTM has its own gates (`nonlinearity` is not used): tempsup's "gru" or "lstm", or
    its linearisation with a linear readout when `model` is "linear".
    """

    model: str = "rnn"
    k: int = 3
    sparsity: float = 0.9
    input_dist: str = "uniform"
    seq_len: int = 20
    importance: float = 0.7
    nonlinearity: str = "relu"

    @classmethod
    def of(cls, config: RunConfig, nonlinearity: str = "relu") -> StateLaw:
        """The law of a config (the explorer's controls)."""
        return cls(config.model, config.k, config.sparsity, config.input_dist,
                   config.seq_len, config.importance, nonlinearity)  # fmt: skip

    def words(self) -> str:
        return f"model {self.model}, k = {self.k}, sparsity {self.sparsity:g}"


def open_run(data: bytes, filename: str, law: StateLaw) -> Run:
    """The Run in `data` (a file named `filename`); TempsupError naming what is wrong."""
    name = _label(filename)
    if not isinstance(data, bytes):
        raise TempsupError(f"{name}: expected the file's bytes, got {type(data).__name__}")
    if len(data) > MAX_BYTES:
        raise TempsupError(too_large(name, len(data)))
    if not data:
        raise TempsupError(f"{name}: the file is empty; expected {KINDS}")
    if data.startswith(b"PK"):
        names = _zip_names(data)
        if any(n.endswith("data.pkl") for n in names):  # torch.save's zip format
            return _from_state(_torch_state(data, name), name, law)
        if "config.npy" in names:
            return _checked(Run.from_bytes(data, source=name), name)
        return _from_state(_npz_state(data, name), name, law)
    if _is_safetensors(data):
        return _from_state(_safetensors_state(data, name), name, law)
    if data.startswith(b"\x80"):  # a pickle: torch's legacy format, or anything at all
        return _from_state(_torch_state(data, name), name, law)
    raise TempsupError(
        f"{name}: not a file the explorer opens: expected {KINDS}, got {received(data)}"
    )


def too_large(name: str, size: int) -> str:
    """The refusal of a file above MAX_BYTES (the browser says the same before sending)."""
    return (
        f"{name}: too large ({size / 1e6:.1f} MB); the explorer opens files of at most "
        f"{MAX_BYTES / 1e6:.0f} MB"
    )


def run_digest(run: Run) -> str:
    """The sha256 of a run's content (config and arrays, not the archive's bytes, whose zip
    entries carry the time they were written): equal runs, equal digests."""
    digest = hashlib.sha256(run.config.to_json().encode())
    for key in sorted(run.arrays):
        arr = np.ascontiguousarray(run.arrays[key])
        digest.update(json.dumps([key, arr.dtype.str, list(arr.shape)]).encode())
        digest.update(arr.tobytes())
    return digest.hexdigest()


# ---- reading the bytes --------------------------------------------------------------


def _label(filename: Any) -> str:
    return str(filename)[:80] if isinstance(filename, str) and filename else "the file"


def _zip_names(data: bytes) -> list[str]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return []  # numpy's reader then says what the bytes are


def _is_safetensors(data: bytes) -> bool:
    """safetensors: an 8-byte little-endian header length, then a JSON header."""
    if len(data) < 10:
        return False
    size = int.from_bytes(data[:8], "little")
    return 2 <= size <= len(data) - 8 and data[8:9] == b"{"


def _safetensors_state(data: bytes, name: str) -> dict[str, np.ndarray]:
    from safetensors.numpy import load

    try:
        return load(data)
    except Exception as exc:  # a damaged header or an unknown dtype (bfloat16)
        raise TempsupError(f"{name}: a damaged or unreadable safetensors file ({exc})") from None


def _npz_state(data: bytes, name: str) -> dict[str, np.ndarray]:
    from tempsup.core.files import unpack

    where = "see “Your own models”, “Opening a run file in the explorer”"
    return unpack(data, name, f"{KINDS} ({where})")


def _torch_state(data: bytes, name: str) -> dict[str, Any]:
    """A `.pt` file's state dict through torch's weights-only unpickler (no Python objects:
    a file holding any is refused before anything in it runs). torch is imported here only,
    when such a file comes (the web process otherwise never loads it)."""
    import pickle
    import warnings

    import torch

    try:
        with warnings.catch_warnings():  # a pickle protocol torch does not write: refused anyway
            warnings.simplefilter("ignore")
            state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise TempsupError(f"{name}: {PICKLE}") from None
    except Exception:  # not torch's format: a plain pickle, or damaged
        kind = "a pickle" if data.startswith(b"\x80") else "a damaged torch file"
        raise TempsupError(
            f"{name}: {kind} torch cannot read as a state dict (never unpickled beyond "
            f"tensors); expected {KINDS}"
        ) from None
    if not isinstance(state, Mapping):
        raise TempsupError(
            f"{name}: holds a {type(state).__name__}, expected a state dict (names → "
            "tensors): save model.state_dict()"
        )
    return {str(k): v for k, v in state.items()}


# ---- a state dict to a Run ----------------------------------------------------------


def _from_state(state: Mapping[str, Any], name: str, law: StateLaw) -> Run:
    arrays = {key: _numeric(name, key, value) for key, value in state.items()}
    if not arrays:
        raise TempsupError(f"{name}: holds no arrays; expected {KINDS}")
    try:
        if "W_h" in arrays or "W_x" in arrays:
            return _from_tempsup_names(arrays, name, law)
        return _from_torch_names(arrays, name, law)
    except TempsupError as exc:
        text = str(exc).removeprefix("from_torch: ").removeprefix("from_weights: ")
        raise TempsupError(text if text.startswith(f"{name}: ") else f"{name}: {text}") from None


def _numeric(name: str, key: str, value: Any) -> np.ndarray:
    """An entry as a float array; refused when it is not numbers or holds NaN or inf."""
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().double().numpy()
    arr = np.asarray(value) if isinstance(value, (np.ndarray, list, tuple, float, int)) else None
    if arr is None or arr.dtype.kind not in "fiub":
        what = type(value).__name__ if arr is None else f"an array of {arr.dtype}"
        raise TempsupError(f"{name}: {key} is {what}, expected an array of numbers")
    arr = arr.astype(float)
    bad = ~np.isfinite(arr)
    if bad.any():
        kind = "NaN" if np.isnan(arr).any() else "inf"
        raise TempsupError(f"{name}: {key} holds {kind} ({int(bad.sum())} of {arr.size} entries)")
    return arr


def _need(arrays: Mapping[str, np.ndarray], name: str, keys: tuple[str, ...], layout: str) -> None:
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise TempsupError(
            f"{name}: missing {', '.join(missing)} ({layout}; found {_found(arrays)})"
        )


def _shape(name: str, key: str, arr: np.ndarray, want: tuple[int, ...], what: str) -> None:
    if arr.shape != want:
        raise TempsupError(f"{name}: {key} has shape {tuple(arr.shape)}, expected {want} ({what})")


def _from_tempsup_names(arrays: dict[str, np.ndarray], name: str, law: StateLaw) -> Run:
    _need(arrays, name, ("W_x", "W_h", "W_y"), "tempsup's layout: W_x, W_h, W_y, optional b_y")
    extra = sorted(set(arrays) - set(TEMPSUP_NAMES))
    if extra:
        raise TempsupError(f"{name}: unexpected {', '.join(extra)} beside W_x, W_h, W_y, b_y")
    W_h = arrays["W_h"]
    if W_h.ndim == 2:  # one checkpoint: name every shape against W_h and W_x
        n_h = W_h.shape[0]
        _shape(name, "W_h", W_h, (n_h, n_h), "N_h × N_h, square")
        W_x = arrays["W_x"]
        n_x = W_x.shape[1] if W_x.ndim == 2 else 1
        _shape(name, "W_x", W_x, (n_h, n_x) if W_x.ndim == 2 else (n_h,), f"N_h = {n_h} rows")
        W_y = arrays["W_y"]
        _shape(name, "W_y", W_y, (n_h, n_x) if W_y.ndim == 2 else (n_h,),
               f"N_h × N_x = {n_h} × {n_x}, like W_x")  # fmt: skip
        if "b_y" in arrays and arrays["b_y"].size != n_x:
            _shape(name, "b_y", arrays["b_y"], (n_x,), "one per input")
    return _checked(
        from_weights(
            arrays["W_x"], arrays["W_h"], arrays["W_y"], arrays.get("b_y"), model=law.model,
            k=law.k, sparsity=law.sparsity, input_dist=law.input_dist, seq_len=law.seq_len,
            importance=law.importance,
        ),
        name,
    )  # fmt: skip


def _from_torch_names(arrays: dict[str, np.ndarray], name: str, law: StateLaw) -> Run:
    """The recurrent module's and the readout's entries, split by their module names, read
    by `from_torch`, which checks their shapes and tells an RNN, GRU or LSTM from them."""
    rnn, head, (prefix, head_prefix) = _split_modules(arrays, name)
    if "bias" in head and head["weight"].ndim == 2:  # from_torch reshapes it, unchecked
        n_x = head["weight"].shape[0]
        _shape(name, head_prefix + "bias", head["bias"], (n_x,), "one per readout output")
    kind = kind_of(rnn, None, 0)
    run = from_torch(
        rnn, head, k=law.k, sparsity=law.sparsity, input_dist=law.input_dist,
        seq_len=law.seq_len, importance=law.importance,
        nonlinearity=law.nonlinearity if kind == "rnn" else None,
        readout_relu=law.model != "linear" or (kind == "rnn" and law.nonlinearity == "relu"),
    )  # fmt: skip
    return _checked(run, name)


def _split_modules(
    arrays: dict[str, np.ndarray], name: str
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], tuple[str, str]]:
    """The one recurrent module's entries and the one readout's, their module names taken
    off, and those names; refused naming the file when they are not one of each."""
    cells = [k for k in arrays if k.endswith("weight_ih_l0")]
    if len(cells) != 1:
        if cells:
            raise TempsupError(f"{name}: several RNNs ({', '.join(cells)}); expected one")
        raise TempsupError(
            f"{name}: missing the weights: expected tempsup's W_x, W_h, W_y or {TORCH_LAYOUT} "
            f"(found {_found(arrays)})"
        )
    prefix = cells[0].removesuffix("weight_ih_l0")
    rnn = {k.removeprefix(prefix): v for k, v in arrays.items()
           if k.startswith(prefix) and RNN_KEY.fullmatch(k.removeprefix(prefix))}  # fmt: skip
    _need(arrays, name, (prefix + "weight_hh_l0",), TORCH_LAYOUT)
    rest = {k: v for k, v in arrays.items() if k.removeprefix(prefix) not in rnn}
    heads = sorted({k.removesuffix("weight") for k in rest if k.endswith("weight")})
    if len(heads) != 1:
        if heads:
            names = ", ".join(h + "weight" for h in heads)
            raise TempsupError(f"{name}: several readouts ({names}); expected one nn.Linear")
        raise TempsupError(
            f"{name}: missing the readout's weight, e.g. readout.weight ({TORCH_LAYOUT})"
        )
    head_prefix = heads[0]
    head = {k.removeprefix(head_prefix): v for k, v in rest.items() if k.startswith(head_prefix)}
    extra = sorted(set(rest) - {head_prefix + k for k in ("weight", "bias")})
    if extra:
        raise TempsupError(
            f"{name}: unexpected {', '.join(extra)}: only one recurrent module (an nn.RNN, "
            "GRU or LSTM) and one Linear readout (weight, bias) are supported"
        )
    return rnn, head, (prefix, head_prefix)


def _found(arrays: Mapping[str, Any]) -> str:
    return ", ".join(sorted(arrays)[:8]) + (" …" if len(arrays) > 8 else "")


def _checked(run: Run, name: str) -> Run:
    """A run whose weights are all finite (a run file can hold anything)."""
    for key in ("W_x", "W_h", "W_y", "b_y"):
        arr = np.asarray(run[key])
        bad = ~np.isfinite(arr)
        if bad.any():
            kind = "NaN" if np.isnan(arr).any() else "inf"
            raise TempsupError(
                f"{name}: {key} holds {kind} ({int(bad.sum())} of {arr.size} entries)"
            )
    return run


# ---- kept in the job store ------------------------------------------------------------

# How long an opened run stays on the server (its share link works that long): uploads
# are bounded in size (MAX_BYTES) and in time, like the class poll's entries.
KEEP_S = 30 * 24 * 3600


def stored_key(digest: str) -> str:
    """The job store's name for an opened run (beside the jobs' `run:{key}`)."""
    return f"opened:{digest}"


def store_run(store: Any, run: Run) -> str:
    """Keep `run` in the job store (`tempsup.jobs.store.Store`) for KEEP_S seconds under its
    content digest; return the digest. Opening the same run again renews it."""
    digest = run_digest(run)
    store.view().set(stored_key(digest), run.to_bytes(), expire=KEEP_S)
    return digest


def stored_run(store: Any, digest: str) -> Run | None:
    """The opened run `digest` names, or None (never stored, expired, or unreadable)."""
    if not isinstance(digest, str) or not DIGEST.fullmatch(digest):
        return None
    data = store.view().data(stored_key(digest))
    if data is None:
        return None
    try:
        return Run.from_bytes(data, source="opened run")
    except TempsupError:
        return None
