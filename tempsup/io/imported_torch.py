"""Torch modules read for `tempsup.io.imported.from_torch`: which network a checkpoint is,
its parameters checked and named, and the lens of a network that is not read exactly
(its linearisation at the silent state, `tempsup.model.linearize`).

A checkpoint is a `torch.nn.RNN`, `GRU` or `LSTM` (one layer, one direction), its state
dict, or any module offering `step(h, x) -> h`, each with an `nn.Linear` readout.
Parameters keep torch's layout with the `_l0` dropped (weight_ih (G·N_h, N_x), weight_hh
(G·N_h, N_h), bias_ih, bias_hh (G·N_h,), zeros without a bias; G = 1, 3, 4 for RNN, GRU,
LSTM), which is `tempsup.model.gated`'s layout for one model.

Torch is imported inside the functions that need it: importing this module (as reading a
plain state dict of arrays does) costs no torch.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tempsup.errors import TempsupError

if TYPE_CHECKING:
    from tempsup.model.linearize import Step

GATES = {"rnn": 1, "gru": 3, "lstm": 4}
TORCH_NAMES = {"rnn": "RNN", "gru": "GRU", "lstm": "LSTM"}
KINDS = tuple(GATES)
PARAMS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint read from torch, float64 numpy throughout."""

    kind: str  # rnn, gru, lstm, or step (a module with step(h, x) -> h)
    module: str  # the torch class name (of the module, or the one a state dict is from)
    W_out: np.ndarray  # (N_x, S): the readout's weight, S = hidden_size (the state, for step)
    b_out: np.ndarray  # (N_x,): its bias, zeros without one
    bias: bool  # the readout has a bias
    params: dict[str, np.ndarray] = field(default_factory=dict)  # PARAMS, not for step
    cell: Any = None  # step: a float64 deep copy of the module

    @property
    def n_h(self) -> int:
        return int(self.W_out.shape[1])

    @property
    def n_x(self) -> int:
        return int(self.W_out.shape[0])

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """What two checkpoints of one network share: every parameter's shape."""
        out = {n + "_l0": v.shape for n, v in self.params.items()}
        return out | {"readout weight": self.W_out.shape}


# ---- arrays ----------------------------------------------------------------------------


def as_array(name: str, x: Any) -> np.ndarray:
    """`x` as a finite float array, refused by `name` otherwise."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TempsupError(f"{name}: expected a numeric array, got {type(x).__name__}") from None
    bad = ~np.isfinite(arr)
    if bad.any():
        kind = "NaN" if np.isnan(arr).any() else "inf"
        raise TempsupError(f"{name}: holds {kind} ({int(bad.sum())} of {arr.size} entries)")
    return arr


def as_numpy(name: str, value: Any) -> np.ndarray:
    """A tensor or array as a checked float64 array."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().double().numpy()
    return as_array(name, value)


def at(index: int) -> str:
    return f" (checkpoint {index})" if index else ""


# ---- which network ---------------------------------------------------------------------


def kind_of(cell: Any, model: str | None, index: int) -> str:
    """rnn, gru, lstm or step: from the module's class, or a state dict's `model` / shapes."""
    if model is not None and model not in KINDS:
        raise TempsupError(f"from_torch: model must be one of {', '.join(KINDS)}, got {model!r}")
    if isinstance(cell, Mapping):
        return model or _kind_of_state(cell, index)
    found = _kind_of_module(cell, index)
    if model is not None and found != model:
        raise TempsupError(
            f"from_torch: model={model!r} but the recurrent module{at(index)} is a "
            f"{type(cell).__name__}"
        )
    return found


def _kind_of_module(cell: Any, index: int) -> str:
    import torch

    for kind, cls in (("rnn", torch.nn.RNN), ("gru", torch.nn.GRU), ("lstm", torch.nn.LSTM)):
        if isinstance(cell, cls):
            return kind
    if callable(getattr(cell, "step", None)):
        return "step"
    raise TempsupError(
        f"from_torch: the recurrent module{at(index)} must be a torch.nn.RNN, GRU or LSTM "
        f"(or its state dict), or a module with step(h, x) -> h, got {type(cell).__name__}"
    )


def _kind_of_state(state: Mapping[str, Any], index: int) -> str:
    """A state dict's model from weight_ih_l0's rows per weight_hh_l0's column (G·N_h / N_h);
    "rnn" when either is missing (the missing weight is named later, as before GRUs)."""
    if "weight_hr_l0" in state:
        raise TempsupError(
            f"from_torch: found weight_hr_l0{at(index)}: an LSTM with proj_size > 0 is not "
            "supported (its readout would read the projection, not h)"
        )
    w_ih, w_hh = state.get("weight_ih_l0"), state.get("weight_hh_l0")
    if w_ih is None or w_hh is None:
        return "rnn"
    rows, cols = np.shape(w_ih)[:1], np.shape(w_hh)[1:2]
    for kind, g in GATES.items():
        if rows and cols and cols[0] and rows[0] == g * cols[0]:
            return kind
    raise TempsupError(
        f"from_torch: cannot tell the state dict's model{at(index)}: weight_ih_l0 has shape "
        f"{tuple(np.shape(w_ih))} and weight_hh_l0 {tuple(np.shape(w_hh))}, but an RNN, GRU "
        "or LSTM has 1, 3 or 4 × hidden_size rows in both (hidden_size: weight_hh_l0's "
        "columns); pass model="
    )


# ---- reading one checkpoint ------------------------------------------------------------


def read_checkpoint(cell: Any, head: Any, index: int, kind: str) -> Checkpoint:
    """One checkpoint's parameters and readout, every shape checked."""
    if kind == "step":
        return _step_checkpoint(cell, head, index)
    state = cell if isinstance(cell, Mapping) else _module_state(cell, index)
    name = TORCH_NAMES[kind]
    params = _params(state, kind, index)
    n_h, n_x = params["weight_hh"].shape[1], params["weight_ih"].shape[1]
    W_out, b_out, bias = readout(head, n_h, n_x, index, f"the {name}'s")
    module = name if isinstance(cell, Mapping) else type(cell).__name__
    return Checkpoint(kind, module, W_out, b_out, bias, params)


def _module_state(cell: Any, index: int) -> Mapping[str, Any]:
    """A recurrent module's state dict, after refusing what one layer cannot hold."""
    layers = getattr(cell, "num_layers", 1)
    if layers != 1:
        raise TempsupError(
            f"from_torch: num_layers={layers}{at(index)}; only one-layer RNNs are supported"
        )
    if getattr(cell, "bidirectional", False):
        raise TempsupError(
            f"from_torch: bidirectional=True{at(index)}; only one-directional RNNs are "
            "supported (the task is causal)"
        )
    if getattr(cell, "proj_size", 0):
        raise TempsupError(
            f"from_torch: proj_size={cell.proj_size}{at(index)} is not supported (the "
            "readout would read the projection, not h)"
        )
    return cell.state_dict()


def _params(state: Mapping[str, Any], kind: str, index: int) -> dict[str, np.ndarray]:
    """weight_ih, weight_hh, bias_ih, bias_hh of layer 0 (zero biases when absent), checked."""
    extra = sorted(n for n in state if "_l0" not in n or n.endswith("_reverse"))
    if extra:
        raise TempsupError(
            f"from_torch: found {', '.join(extra)}{at(index)}; only one-layer, one-directional "
            "RNNs (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0) are supported"
        )
    if "weight_hr_l0" in state:
        _kind_of_state(state, index)  # its refusal names proj_size
    name, g = TORCH_NAMES[kind], GATES[kind]
    for need in ("weight_ih_l0", "weight_hh_l0"):
        if need not in state:
            raise TempsupError(f"from_torch: the {name}'s state has no {need}{at(index)}")
    W_ih = as_numpy("weight_ih_l0", state["weight_ih_l0"])
    W_hh = as_numpy("weight_hh_l0", state["weight_hh_l0"])
    n_h = W_hh.shape[1] if W_hh.ndim == 2 else 0
    if W_ih.ndim != 2 or W_hh.shape != (g * n_h, n_h) or W_ih.shape[0] != g * n_h or not n_h:
        rows = "hidden" if g == 1 else f"{g}·hidden"
        raise TempsupError(
            f"from_torch: weight_ih_l0 {W_ih.shape} and weight_hh_l0 {W_hh.shape}{at(index)} "
            f"are not ({rows}, input) and ({rows}, hidden), as a {name}'s are"
        )
    out = {"weight_ih": W_ih, "weight_hh": W_hh}
    for n in ("bias_ih", "bias_hh"):
        raw = state.get(n + "_l0")
        b = np.zeros(g * n_h) if raw is None else as_numpy(n + "_l0", raw)
        if b.shape != (g * n_h,):
            raise TempsupError(
                f"from_torch: {n}_l0 has shape {b.shape}{at(index)}, expected ({g * n_h},)"
            )
        out[n] = b
    return out


def readout(
    head: Any, n_in: int, n_x: int | None, index: int, owner: str, size: str = "hidden_size"
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The readout's weight (N_x, n_in), bias (N_x,) (zeros without one) and whether it has
    one, refused naming `owner`'s `size` (in_features) or input_size (out_features);
    `n_x` None: any out_features (a step module's input size is the readout's)."""
    state = head if isinstance(head, Mapping) else _linear_state(head)
    if "weight" not in state:
        raise TempsupError(f"from_torch: the readout's state has no weight{at(index)}")
    W_out = as_numpy("readout weight", state["weight"])
    if W_out.ndim != 2 or W_out.shape[1] != n_in:
        raise TempsupError(
            f"from_torch: the readout's in_features must be {owner} {size} {n_in}, got weight of "
            f"shape {W_out.shape}{at(index)}"
        )
    n_x = W_out.shape[0] if n_x is None else n_x
    if W_out.shape[0] != n_x or not n_x:
        raise TempsupError(
            f"from_torch: the readout's out_features must be {owner} input_size {n_x} "
            f"(the task reproduces the input), got {W_out.shape[0]}{at(index)}"
        )
    raw = state.get("bias")
    b_out = np.zeros(n_x) if raw is None else as_numpy("readout bias", raw).reshape(n_x)
    return W_out, b_out, raw is not None


def has_bias(head: Any) -> bool:
    return (head if isinstance(head, Mapping) else _linear_state(head)).get("bias") is not None


def _linear_state(head: Any) -> Mapping[str, Any]:
    name = type(head).__name__
    if name != "Linear" or not hasattr(head, "state_dict"):
        raise TempsupError(
            f"from_torch: readout must be a torch.nn.Linear (or its state dict), got {name}"
        )
    return head.state_dict()


def _step_checkpoint(cell: Any, head: Any, index: int) -> Checkpoint:
    """A module with step(h, x) -> h: its state size is the readout's in_features (and its
    own hidden_size or state_size, if it says one), its input size the out_features."""
    name = type(cell).__name__
    state = head if isinstance(head, Mapping) else _linear_state(head)
    n_in = int(np.shape(state.get("weight", np.zeros((0, 0))))[-1])
    own = getattr(cell, "state_size", getattr(cell, "hidden_size", None))
    n_s = own if isinstance(own, int) else n_in
    W_out, b_out, bias = readout(head, n_s, None, index, f"{name}'s", "state size")
    n_x = W_out.shape[0]
    size = getattr(cell, "input_size", n_x)
    if isinstance(size, int) and size != n_x:
        raise TempsupError(
            f"from_torch: the readout's out_features must be {name}'s input_size {size} (the "
            f"task reproduces the input), got {n_x}{at(index)}"
        )
    module = copy.deepcopy(cell)
    for method in ("double", "eval"):
        if callable(getattr(module, method, None)):
            getattr(module, method)()
    ck = Checkpoint("step", name, W_out, b_out, bias, cell=module)
    _probe(ck, index)
    return ck


def _probe(ck: Checkpoint, index: int) -> None:
    """One call of step at rest: a step that fails or returns another shape is refused here."""
    import torch

    h = torch.zeros(1, ck.n_h, dtype=torch.float64)
    x = torch.zeros(1, ck.n_x, dtype=torch.float64)
    call = f"{ck.module}.step(h, x) for h {tuple(h.shape)}, x {tuple(x.shape)}{at(index)}"
    try:
        with torch.no_grad():
            out = ck.cell.step(h, x)
    except Exception as exc:  # the module's own error, named with the call
        raise TempsupError(f"from_torch: {call} failed: {exc}") from exc
    got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
    if got != tuple(h.shape):
        raise TempsupError(
            f"from_torch: {call} must return the next state, shape (B, S) = "
            f"{tuple(h.shape)} (S: the readout's in_features), got {got}"
        )


# ---- the lens of a network read through its linearisation -----------------------------


def lens_step(ck: Checkpoint, nonlinearity: str, reads: str) -> tuple[Step, int, np.ndarray]:
    """F(s, x) of one checkpoint as a `linearize.Step` (state (1, S, B), x (1, N_x, B)),
    float64; the state size S and the readout of the whole state (S, N_x).

    RNN, reads "output": s = h, F = σ(W_ih x + b_ih + W_hh h + b_hh), the readout reads h;
    reads "preactivation": s = u, F = W_ih x + b_ih + b_hh + W_hh σ(u), the readout reads u.
    GRU and LSTM: `tempsup.model.gated.step` (torch's equations), the readout reads h.
    """
    import torch

    from tempsup.model import gated

    W_y = ck.W_out.T.copy()  # (N_h, N_x)
    if ck.kind == "step":
        return _module_step(ck.cell), ck.n_h, W_y
    p = {n: torch.from_numpy(v.copy())[None] for n, v in ck.params.items()}
    if ck.kind in gated.GATES:
        n_s = gated.state_size(ck.kind, ck.n_h)
        lifted = np.concatenate([W_y, np.zeros((n_s - ck.n_h, ck.n_x))])  # the LSTM's c: unread

        def gated_step(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
            return gated.step(ck.kind, p, s, x)

        return gated_step, n_s, lifted
    sigma = torch.relu if nonlinearity == "relu" else torch.tanh
    w_ih, w_hh = p["weight_ih"], p["weight_hh"]
    b = (p["bias_ih"] + p["bias_hh"])[..., None]

    def rnn_step(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        if reads == "preactivation":
            return w_ih @ x + b + w_hh @ sigma(s)
        return sigma(w_ih @ x + b + w_hh @ s)

    return rnn_step, ck.n_h, W_y


def _module_step(module: Any) -> Step:
    """A module's step(h (B, S), x (B, N_x)) as a `linearize.Step` of one model."""

    def step(s: Any, x: Any) -> Any:
        return module.step(s[0].T, x[0].T).T[None]

    return step


def linearised_lens(
    step: Step, n_state: int, W_y: np.ndarray, b_out: np.ndarray, seq_len: int, value: float
) -> dict[str, np.ndarray]:
    """The lens of one recurrence at its silent state s*, as a gated run's frame carries it
    (`tempsup.model.lens`), each array with a seed axis of 1: W_x = J_x, W_h = J_h, W_y the
    readout of the state, b_y = W_yᵀ s* + b (the readout at rest, the linearised model's
    bias), the silent state, the active response to one input of size `value`, its distance
    from the silent one and whether the silent run settled."""
    from tempsup.model import linearize

    n_x = W_y.shape[1]
    lin = linearize.linearize(step, 1, n_state, n_x, seq_len, seq_len)
    active = linearize.active_response(step, lin.silent, n_x, seq_len, value)
    w_y = W_y[None]
    return {
        "W_x": lin.J_x,
        "W_h": lin.J_h,
        "W_y": w_y,
        "b_y": lin.silent @ W_y + b_out[None],
        "silent": lin.silent,
        "active": active,
        "nonlinearity": linearize.nonlinearity(lin.directions, active, w_y),
        "settled": lin.settled.astype(np.float32),
    }


def gated_lens(ck: Checkpoint, seq_len: int, value: float) -> dict[str, np.ndarray]:
    """A GRU's or LSTM's lens exactly as a trained gated run's (`tempsup.model.lens`), its
    `net_*` parameters included, with a seed axis of 1."""
    import torch

    from tempsup.model.lens import lens_arrays

    params = {n: torch.from_numpy(v.copy())[None] for n, v in ck.params.items()}
    W_y = torch.from_numpy(ck.W_out.T.copy())[None]
    bias = torch.from_numpy(ck.b_out.copy())[None]
    return lens_arrays(ck.kind, params, W_y, bias, ck.n_h, seq_len, value)
