"""A network trained elsewhere, seen through tempsup's lens: weights in, `Run` out.

`from_weights` takes the paper's arrays (science.md §1) for one checkpoint or a
stack of them; `from_torch` reads a one-layer `torch.nn.RNN`, `GRU` or `LSTM`, or any
module with `step(h, x) -> h`, and its `torch.nn.Linear` readout. Either way the frames
are built by `tempsup.io.run.frame`, the code tempsup's own training uses, so feature
directions, projections a_s, eigenvalues, the canonical gauge, the interference-free
half-space and, from the data law the caller states (sparsity, value law, T), the
expected loss and its four terms are computed exactly as for a run trained here (one
truth).

What a Run made here cannot know is stated in its config: `seeds` = 1, `steps` = the
last checkpoint's step (checkpoints are numbered 1 … F unless given), the measured
`loss` is NaN unless given, and batch, lr and schedule keep tempsup's defaults without
describing the caller's training.

Mapping `torch.nn.RNN` to the paper's models. PyTorch computes
h_t = σ(W_ih x_t + W_hh h_{t−1} + b_ih + b_hh). Without a hidden bias (b_ih + b_hh = 0,
or bias=False) its pre-activation u_t = W_ih x_t + W_hh σ(u_{t−1}) is the paper's state:
W_x = W_ih, W_h = W_hh, and for σ = ReLU the paper's recurrence holds exactly, read
according to where the readout reads (`reads`):

- "preactivation": ŷ_t = ReLU(W_out u_t + b), the paper's ReLU RNN itself
  (W_y = W_outᵀ): the Run has the network's own N_h and k.
- "output" (what `readout(rnn(x)[0])` does): ŷ_t = ReLU(W_out ReLU(u_t) + b). No
  network of the paper's form with the same N_h and k computes this (its readout
  is linear in the current input, this one is not), but one with N_x more units and
  delay k + 1 does, exactly: the extra units hold z_t = W_out ReLU(u_{t−1}) and the
  readout reads them,

      W_x' = [W_ih; 0],  W_h' = [[W_hh, 0], [W_out, 0]],  W_y' = [0; I],  k' = k + 1,
      T' = T + 1,

  so that ŷ'_{t+1} = ŷ_t. Age s' of the Run is age s' − 1 of the torch network:
  a'_0 = 0 and a'_{s+1} = w_outᵀ ReLU(w_s), the readout of the rectified direction,
  which is where a lone input of age s reaches the readout (ReLU is positively
  homogeneous). The interference-free condition is therefore
  w_outᵀ ReLU(w_s) + b ≤ 0: in the RNN's own (rectified) state space the half-space
  {r ≥ 0 : w_outᵀ r + b ≤ 0}, in pre-activation space a union of orthant pieces that
  contains (for b ≤ 0) the whole negative orthant (there ReLU(w_s) = 0, and the input
  is lost). The extra first step of the Run (output ReLU(b), target 0) is taken out of
  the expected loss and of the mean-correction term, where tempsup books the bias. The
  Run's eigenvalues are those of W_hh and N_x zeros; its kθ and ‖w_s‖ are measured in
  the (N_h + N_x)-dimensional state.

Every other network is read through its linearisation at the silent state h* (the
state after T silent inputs from h = 0, `tempsup.model.linearize`), as tempsup's own
gated runs are (`tempsup.model.lens`): W_x = J_x, W_h = J_h there, W_y the readout of
the state, b_y = W_out h* + b (the readout at rest: a bias moves the silent state, so it
is handled, not refused), plus the lens arrays (silent, active, nonlinearity, settled).
As for a gated run, the expected loss and its four terms are the linearised model's, and
measured − E[L] is what the linear picture misses.

- A GRU or LSTM with `readout_relu` is tempsup's "gru" or "lstm" (the same equations,
  torch's layout: weight_ih_l0 → weight_ih, …; `readout(gru(x)[0])` reads h, what
  `tempsup.model.gated.observe` reads), its `net_*` parameters kept. Without
  `readout_relu` (tempsup's gated models predict ReLU(readout(h))) its linearisation is
  read as model "linear", with the LSTM's whole (h, c) as the state.
- An RNN with a hidden bias (ReLU), or any tanh RNN: F(h, x) = σ(W_ih x + b_ih + W_hh h
  + b_hh) with the readout reading h ("output"), or F(u, x) = W_ih x + b_ih + b_hh +
  W_hh σ(u) with the readout reading u ("preactivation"); model "ssm" with a ReLU
  readout, "linear" without.
- A module with `step(h, x) -> h` (h (B, S), x (B, N_x)), deep-copied in float64, its
  readout reading h (in_features = S): as the RNN, model "ssm" or "linear".

Refused, naming the field: num_layers > 1, bidirectional, proj_size, extra layers in a
state dict (`_l1`, `_reverse`), readout sizes other than (input_size, hidden_size),
checkpoints of different networks or shapes, a step that fails or returns another shape.
`Run.origin` says where the Run comes from: source, module, lens ("exact" or the
linearisation) and, when the Run's N_h, k or T are not the module's, why ("shape").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tempsup.errors import TempsupError
from tempsup.io.imported_torch import (
    Checkpoint,
    as_array,
    gated_lens,
    kind_of,
    lens_step,
    linearised_lens,
    read_checkpoint,
)
from tempsup.io.run import Run, frame
from tempsup.model.config import PAPER_MODELS, RunConfig
from tempsup.model.snapshot import Snapshot
from tempsup.theory.closed_form import input_moments
from tempsup.theory.geometry import feature_directions

READS = ("output", "preactivation")
# b_ih + b_hh smaller than this (relative to the weights) is round-off, not a hidden bias.
BIAS_RTOL = 1e-7
MAX_STEPS = 200_000  # RunConfig's largest `steps`: later checkpoints still keep their steps
WEIGHTS = ("W_x", "W_h", "W_y", "b_y")
LINEARISED = (
    "linearised at the silent state h* ({T} silent inputs from h = 0): W_x, W_h are the "
    "Jacobians there, and the expected loss and its terms are the linearised model's"
)


def from_weights(
    W_x: Any,
    W_h: Any,
    W_y: Any = None,
    b_y: Any = None,
    *,
    model: str,
    k: int,
    sparsity: float = 0.9,
    input_dist: str = "uniform",
    seq_len: int = 20,
    importance: float = 0.7,
    tied: bool = False,
    steps: Sequence[int] | None = None,
    loss: Any = None,
) -> Run:
    """A Run of the paper's `model` ("linear", "ssm" or "rnn") with the given weights.

    Layout as in a run file, ŷ_t = σ_y(W_yᵀ h_t + b_y): W_x (N_h, N_x), W_h (N_h, N_h),
    W_y (N_h, N_x), b_y (N_x,) — or with a leading checkpoint axis F for a trajectory,
    one frame each. For scalar input W_x and W_y may be vectors (N_h,). `tied`: W_y is
    W_{s=k} (pass None to have it computed). The data law (`sparsity`, `input_dist`,
    `seq_len`, `importance`) decides the expected loss and its terms. `steps`: the
    checkpoints' optimizer steps (default 1 … F; the last at least 1); `loss`: their
    measured losses (F,) if known (else NaN).
    """
    config_args = dict(
        model=model, k=k, sparsity=sparsity, input_dist=input_dist, seq_len=seq_len,
        importance=importance, tied=tied,
    )  # fmt: skip
    RunConfig(**config_args)  # the settings' own messages before the arrays' ones
    if model not in PAPER_MODELS:
        raise TempsupError(
            f"model: from_weights takes the paper's models ({', '.join(PAPER_MODELS)}), got "
            f"{model!r}: a gated model's weights are its parameters, not W_x and W_h"
        )
    weights = _frames(W_x, W_h, W_y, b_y, k=k, tied=tied, relu_hidden=model == "rnn")
    return _run(config_args, weights, b_y is not None, steps, loss, "from_weights")


def from_torch(
    rnn: Any,
    readout: Any,
    *,
    k: int,
    sparsity: float = 0.9,
    input_dist: str = "uniform",
    seq_len: int = 20,
    importance: float = 0.7,
    reads: str = "output",
    readout_relu: bool = True,
    nonlinearity: str | None = None,
    model: str | None = None,
    steps: Sequence[int] | None = None,
    loss: Any = None,
) -> Run:
    """A Run of a one-layer `torch.nn.RNN`, `GRU` or `LSTM`, or of any module with
    `step(h, x) -> h`, with its `torch.nn.Linear` readout.

    `rnn` and `readout` are modules or state dicts, or equal-length lists of them (one
    frame per checkpoint; a single readout serves every checkpoint); `batch_first` either
    way. `model` ("rnn", "gru", "lstm") names a state dict's network where its shapes do
    not (weight_ih_l0 has 1, 3 or 4 × hidden_size rows; a state dict missing a weight is
    an RNN's). `reads` (RNN only): "output" when the readout reads h_t = σ(u_t)
    (`readout(rnn(x)[0])`), "preactivation" when it reads u_t = W_ih x_t + W_hh h_{t−1}
    (+ biases). `readout_relu`: the prediction is ReLU(readout(·)), tempsup's GRU and LSTM
    (and required for the bias-free ReLU RNN, read exactly); without it a GRU, LSTM, tanh
    or biased RNN or step module is read as its linearisation with a linear readout (model
    "linear"). `nonlinearity` ("relu" or "tanh", RNN only) is needed only when no module
    says it. The data law, `steps` and `loss` as in `from_weights`. How each network is
    read: the module docstring; `run.origin` says it of the Run.
    """
    if reads not in READS:
        raise TempsupError(f"from_torch: reads must be one of {', '.join(READS)}, got {reads!r}")
    cells, heads = _checkpoints(rnn, readout)
    kinds = [kind_of(c, model, i) for i, c in enumerate(cells)]
    if len(set(kinds)) != 1:
        mix = ", ".join(f"{kind} at {i}" for i, kind in enumerate(kinds))
        raise TempsupError(
            f"from_torch: the checkpoints mix networks ({mix}); a trajectory is the "
            "checkpoints of one network"
        )
    kind = kinds[0]
    act = _activation(cells, nonlinearity, kind)
    if kind != "rnn" and reads != "output":
        raise TempsupError(
            f"from_torch: reads={reads!r} is for a torch.nn.RNN; the readout of a {kind} "
            "reads its h (reads='output')"
        )
    pairs = zip(cells, heads, strict=True)
    parts = [read_checkpoint(c, h, i, kind) for i, (c, h) in enumerate(pairs)]
    _same_shapes(parts)
    law = dict(
        k=k, sparsity=sparsity, input_dist=input_dist, seq_len=seq_len, importance=importance,
        tied=False,
    )  # fmt: skip
    origin = {"source": "from_torch", "module": parts[0].module}
    if kind == "rnn" and act == "relu" and not any(_hidden_bias(p) for p in parts):
        return _exact(parts, law, reads, readout_relu, steps, loss, origin)
    if kind in ("gru", "lstm") and readout_relu:
        return _gated(parts, law, steps, loss, origin)
    return _linearised(parts, law, act, reads, readout_relu, steps, loss, origin)


def rectified_readout(
    W_ih: np.ndarray, W_hh: np.ndarray, W_out: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paper-form ReLU RNN (delay k + 1) computing ReLU(W_out ReLU(u_t) + b) exactly.

    W_ih (..., N_h, N_x), W_hh (..., N_h, N_h), W_out (..., N_x, N_h) as in PyTorch.
    Returns W_x' (..., N_h + N_x, N_x), W_h' (..., N_h + N_x, N_h + N_x) and W_y'
    (..., N_h + N_x, N_x): the extra units read z_t = W_out ReLU(u_{t−1}) (module
    docstring).
    """
    n_h, n_x = W_ih.shape[-2:]
    lead = W_ih.shape[:-2]
    W_x = np.concatenate([W_ih, np.zeros(lead + (n_x, n_x))], axis=-2)
    top = np.concatenate([W_hh, np.zeros(lead + (n_h, n_x))], axis=-1)
    bottom = np.concatenate([W_out, np.zeros(lead + (n_x, n_x))], axis=-1)
    W_h = np.concatenate([top, bottom], axis=-2)
    W_y = np.broadcast_to(np.concatenate([np.zeros((n_h, n_x)), np.eye(n_x)]), W_x.shape).copy()
    return W_x, W_h, W_y


# ---- arrays in ---------------------------------------------------------------------


def _frames(
    W_x: Any, W_h: Any, W_y: Any, b_y: Any, *, k: int, tied: bool, relu_hidden: bool
) -> dict[str, np.ndarray]:
    """The weights as (F, 1, …) arrays (a frame axis and a seed axis), checked."""
    W_h = as_array("W_h", W_h)
    if W_h.ndim not in (2, 3) or W_h.shape[-1] != W_h.shape[-2]:
        raise TempsupError(
            f"W_h: expected a square (N_h, N_h) matrix or a stack (F, N_h, N_h), got {W_h.shape}"
        )
    single = W_h.ndim == 2
    W_h = W_h[None] if single else W_h
    n_f, n_h = W_h.shape[0], W_h.shape[-1]
    W_x = _matrix("W_x", W_x, single, n_f, n_h)
    n_x = W_x.shape[-1]
    W_k = feature_directions(W_x, W_h, k + 1, relu_hidden)[:, k] if tied else None
    if W_y is None:
        if W_k is None:
            raise TempsupError("W_y: required for a free readout (None only with tied=True)")
        W_y = W_k
    if W_y is not W_k:
        W_y = _matrix("W_y", W_y, single, n_f, n_h)
    if W_y.shape[-1] != n_x:
        raise TempsupError(
            f"W_y: expected {n_x} readout column(s), one per input (the task reproduces "
            f"the input), got shape {W_y.shape[-2:]}"
        )
    if W_k is not None and not np.allclose(
        W_y, W_k, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(W_k).max())
    ):
        raise TempsupError(
            "W_y: tied=True needs W_y = W_{s=k} (the direction of age k); pass None "
            "to have it computed, or tied=False for a free readout"
        )
    if b_y is None:
        b = np.zeros((n_f, n_x))
    else:
        b = as_array("b_y", b_y)
        want = (n_x,) if single else (n_f, n_x)
        if n_x == 1 and b.shape == want[:-1]:  # a scalar (or one per frame) for scalar input
            b = b[..., None]
        if b.shape != want:
            raise TempsupError(f"b_y: expected shape {want}, got {b.shape}")
        b = b.reshape(n_f, n_x)
    return {
        "W_x": W_x[:, None],
        "W_h": W_h[:, None],
        "W_y": W_y[:, None],
        "b_y": np.asarray(b, dtype=float)[:, None],
    }


def _matrix(name: str, x: Any, single: bool, n_f: int, n_h: int) -> np.ndarray:
    """`x` as (F, N_h, N_x); a vector (N_h,) — or (F, N_h) in a stack — is scalar input."""
    arr = as_array(name, x)
    if arr.ndim == (1 if single else 2):
        arr = arr[..., None]
    if single:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[:2] != (n_f, n_h):
        layout = f"(N_h, N_x) with N_h = {n_h}" if single else f"(F, N_h, N_x) = ({n_f}, {n_h}, …)"
        raise TempsupError(f"{name}: expected shape {layout} (from W_h), got {np.shape(x)}")
    return arr


def _run(
    config_args: dict[str, Any],
    w: dict[str, np.ndarray],
    bias: bool,
    steps: Sequence[int] | None,
    loss: Any,
    caller: str,
    offset: Any = 0.0,
    origin: dict[str, str] | None = None,
    hidden: int | None = None,
) -> Run:
    """The Run of these frames, each built by `tempsup.io.run.frame` like a trained run's.

    `w`: W_x, W_h, W_y, b_y as (F, 1, …) and any lens arrays beside them (a snapshot's
    `extra`); `offset` (per frame) comes off the expected loss and the mean-correction term;
    `hidden`: the config's N_h when it is not the state's width (the LSTM's (h, c))."""
    n_f, n_h, n_x = w["W_x"].shape[0], w["W_x"].shape[-2], w["W_x"].shape[-1]
    marks = _steps(steps, n_f, caller)
    losses = np.full(n_f, np.nan) if loss is None else as_array("loss", loss).reshape(-1)
    if losses.shape != (n_f,):
        raise TempsupError(f"loss: expected one value per frame ({n_f}), got {np.shape(loss)}")
    last = min(max(marks[-1], 1), MAX_STEPS)
    config = RunConfig(
        **config_args, hidden=hidden or n_h, inputs=n_x, seeds=1, bias=bias, steps=last,
        snapshot_every=max(1, last // max(n_f - 1, 1)),
    )  # fmt: skip
    offsets = np.broadcast_to(np.asarray(offset, dtype=float), (n_f,))
    frames = []
    for f in range(n_f):
        extra = {n: v[f] for n, v in w.items() if n not in WEIGHTS}
        snap = Snapshot(marks[f], *(w[n][f] for n in WEIGHTS), losses[f : f + 1], extra)
        arrays = frame(config, snap)
        if offsets[f]:
            arrays["expected_loss"] = arrays["expected_loss"] - np.float32(offsets[f])
            arrays["terms"][..., 1] -= np.float32(offsets[f])
        frames.append(arrays)
    run = Run.from_frames(config, frames)
    run.origin = origin
    return run


def _steps(steps: Sequence[int] | None, n_f: int, caller: str) -> list[int]:
    if steps is None:  # numbered from 1, as frames are on every surface
        return list(range(1, n_f + 1))
    marks = list(steps)
    if len(marks) != n_f or any(isinstance(s, bool) or int(s) != s or s < 0 for s in marks):
        raise TempsupError(
            f"{caller}: steps must be {n_f} non-negative integers (one per checkpoint), "
            f"got {steps!r}"
        )
    if any(b < a for a, b in zip(marks, marks[1:], strict=False)):
        raise TempsupError(f"{caller}: steps must not decrease, got {marks}")
    if marks[-1] < 1:  # a run's config has at least one step; ending before it reads as stopped
        raise TempsupError(f"{caller}: the last checkpoint's step must be at least 1, got 0")
    return [int(s) for s in marks]


# ---- torch in (the modules themselves: `tempsup.io.imported_torch`) ------------------------


def _checkpoints(rnn: Any, readout: Any) -> tuple[list[Any], list[Any]]:
    """The recurrent checkpoints and one readout each."""
    cells = list(rnn) if isinstance(rnn, (list, tuple)) else [rnn]
    heads = list(readout) if isinstance(readout, (list, tuple)) else [readout]
    if not cells:
        raise TempsupError("from_torch: expected at least one RNN checkpoint, got none")
    if len(heads) == 1:
        heads = heads * len(cells)
    if len(heads) != len(cells):
        raise TempsupError(
            f"from_torch: {len(cells)} RNN checkpoints but {len(heads)} readouts "
            "(give one readout per checkpoint, or a single one for all)"
        )
    return cells, heads


def _activation(cells: list[Any], nonlinearity: str | None, kind: str) -> str:
    """An RNN's σ, the same in every checkpoint ("" for the other networks: their own)."""
    if kind != "rnn":
        if nonlinearity is not None:
            raise TempsupError(
                f"from_torch: nonlinearity is a torch.nn.RNN's setting; a {kind} has its own "
                f"gates (got nonlinearity={nonlinearity!r})"
            )
        return ""
    kinds = {c.nonlinearity for c in cells if not isinstance(c, Mapping)}
    if nonlinearity is not None:
        kinds.add(nonlinearity)
    if len(kinds) != 1:
        found = ", ".join(sorted(kinds)) or "none"
        raise TempsupError(
            f"from_torch: the checkpoints' nonlinearity must be one of relu, tanh (give "
            f"nonlinearity= with state dicts), found {found}"
        )
    (act,) = kinds
    if act not in ("relu", "tanh"):
        raise TempsupError(f"from_torch: nonlinearity must be relu or tanh, got {act!r}")
    return act


def _hidden_bias(ck: Checkpoint) -> bool:
    """Whether b_ih + b_hh is more than round-off (relative to the weights)."""
    b = ck.params["bias_ih"] + ck.params["bias_hh"]
    scale = max(np.abs(ck.params["weight_ih"]).max(), np.abs(ck.params["weight_hh"]).max(), 1.0)
    return bool(np.abs(b).max() > BIAS_RTOL * scale)


def _same_shapes(parts: list[Checkpoint]) -> None:
    first = parts[0].shapes
    for i, ck in enumerate(parts[1:], 1):
        for name, shape in first.items():
            if ck.shapes.get(name) != shape:
                raise TempsupError(
                    f"from_torch: checkpoint {i}'s {name} has shape {ck.shapes.get(name)}, "
                    f"checkpoint 0's {shape}: a trajectory is the checkpoints of one network"
                )


def _config(model: str, law: dict[str, Any]) -> dict[str, Any]:
    """The Run's config fields for `model` under the caller's data law, checked first (the
    settings' own messages before the arrays' ones)."""
    config_args = dict(model=model, **law)
    RunConfig(**config_args)
    return config_args


def _exact(
    parts: list[Checkpoint],
    law: dict[str, Any],
    reads: str,
    readout_relu: bool,
    steps: Sequence[int] | None,
    loss: Any,
    origin: dict[str, str],
) -> Run:
    """The bias-free ReLU RNN as the paper's ReLU RNN, exactly (module docstring)."""
    if not readout_relu:
        raise TempsupError(
            "from_torch: a ReLU RNN with a linear readout is none of the paper's models "
            "(its ReLU RNN predicts ReLU(readout(h))); train with the ReLU readout"
        )
    W_ih = np.stack([ck.params["weight_ih"] for ck in parts])
    W_hh = np.stack([ck.params["weight_hh"] for ck in parts])
    W_out = np.stack([ck.W_out for ck in parts])
    b_out = np.stack([ck.b_out for ck in parts])
    bias = any(ck.bias for ck in parts)
    config_args = _config("rnn", law)
    W_x, W_h, W_y = W_ih, W_hh, np.swapaxes(W_out, -1, -2)
    offset: Any = 0.0
    if reads == "output":
        k, T, (n_x, n_h) = law["k"], law["seq_len"], W_out.shape[-2:]
        W_x, W_h, W_y = rectified_readout(W_ih, W_hh, W_out)
        config_args.update(k=k + 1, seq_len=T + 1)
        # the Run's extra first step: output ReLU(b) against target 0, per frame
        imp = law["importance"] ** np.arange(n_x)
        offset = (imp * np.maximum(b_out, 0.0) ** 2).sum(-1) if bias else 0.0
        origin["shape"] = (
            f"read as a {n_h + n_x}-unit network with delay k + 1 = {k + 1} and T + 1 = "
            f"{T + 1}: the readout of ReLU(h) needs {n_x} extra unit{'s' * (n_x > 1)} (one "
            f"per output), so age s here is age s − 1 of the {n_h}-unit RNN"
        )
    b_y = b_out if bias else None
    weights = _frames(W_x, W_h, W_y, b_y, k=law["k"], tied=False, relu_hidden=True)
    origin["lens"] = "exact"
    return _run(config_args, weights, bias, steps, loss, "from_torch", offset, origin)


def _gated(
    parts: list[Checkpoint],
    law: dict[str, Any],
    steps: Sequence[int] | None,
    loss: Any,
    origin: dict[str, str],
) -> Run:
    """A GRU or LSTM as tempsup's model of that name: its lens, as a trained one's."""
    config_args = _config(parts[0].kind, law)
    value = input_moments(law["input_dist"])[0]  # the active input, as the trainer's
    w = _stacked([gated_lens(ck, law["seq_len"], value) for ck in parts])
    origin["lens"] = LINEARISED.format(T=law["seq_len"])
    bias = any(ck.bias for ck in parts)
    return _run(config_args, w, bias, steps, loss, "from_torch", 0.0, origin, parts[0].n_h)


def _linearised(
    parts: list[Checkpoint],
    law: dict[str, Any],
    act: str,
    reads: str,
    readout_relu: bool,
    steps: Sequence[int] | None,
    loss: Any,
    origin: dict[str, str],
) -> Run:
    """A network that is none of the paper's models as its linearisation at the silent
    state: model "ssm" (ReLU readout) or "linear", W_x = J_x, W_h = J_h, b_y the readout
    at rest, and the lens arrays a gated run carries."""
    config_args = _config("ssm" if readout_relu else "linear", law)
    value = input_moments(law["input_dist"])[0]
    frames = []
    for ck in parts:
        step, n_s, W_y = lens_step(ck, act, reads)
        frames.append(linearised_lens(step, n_s, W_y, ck.b_out, law["seq_len"], value))
    w = _stacked(frames)
    # the readout at rest is the linearised model's bias: in force even without the readout's
    bias = any(ck.bias for ck in parts) or bool(np.any(w["b_y"] != 0))
    origin["lens"] = LINEARISED.format(T=law["seq_len"])
    if n_s != parts[0].n_h:
        origin["shape"] = (
            f"read as a {n_s}-unit network: the LSTM's state is (h, c), {parts[0].n_h} units "
            "each, and its linearisation mixes them (the readout reads h)"
        )
    return _run(config_args, w, bias, steps, loss, "from_torch", 0.0, origin)


def _stacked(frames: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per-checkpoint arrays (seed axis 1) stacked on a leading frame axis."""
    return {n: np.stack([f[n] for f in frames]) for n in frames[0]}
