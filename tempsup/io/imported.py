"""A network trained elsewhere, seen through tempsup's lens: weights in, `Run` out.

`from_weights` takes the paper's arrays (science.md §1) for one checkpoint or a
stack of them; `from_torch` reads a one-layer `torch.nn.RNN` and its
`torch.nn.Linear` readout. Either way the frames are built by `tempsup.io.run.frame`,
the code tempsup's own training uses, so feature directions, projections a_s,
eigenvalues, the canonical gauge, the interference-free half-space and, from the
data law the caller states (sparsity, value law, T), the expected loss and its four
terms are computed exactly as for a run trained here (one truth).

What a Run made here cannot know is stated in its config: `seeds` = 1, `steps` = the
last checkpoint's step (checkpoints are numbered 1 … F unless given), the measured
`loss` is NaN unless given, and batch, lr and schedule keep tempsup's defaults without
describing the caller's training.

Mapping `torch.nn.RNN` to the paper's models. PyTorch computes
h_t = σ(W_ih x_t + W_hh h_{t−1} + b_ih + b_hh). Its pre-activation
u_t = W_ih x_t + W_hh σ(u_{t−1}) (without hidden bias) is the paper's state:
W_x = W_ih, W_h = W_hh, and for σ = ReLU the paper's recurrence holds exactly.
The paper has no hidden bias, so a nonzero b_ih + b_hh is refused. Where the readout
reads (`reads`):

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

For σ = tanh the network is not one of the paper's models: the Run is its
linearisation at h = 0 (tanh(u) ≈ u for small inputs; model "ssm" with a ReLU
readout, "linear" without), so directions, projections, eigenvalues, ρ, kθ and the
half-space are those of small inputs, while the expected loss and its terms (closed
forms of the ReLU and linear models) do not apply and are NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tempsup.errors import TempsupError
from tempsup.io.run import Run, frame
from tempsup.model.config import PAPER_MODELS, RunConfig
from tempsup.model.snapshot import Snapshot
from tempsup.theory.geometry import feature_directions

READS = ("output", "preactivation")
# b_ih + b_hh smaller than this (relative to the weights) is round-off, not a hidden bias.
BIAS_RTOL = 1e-7
MAX_STEPS = 200_000  # RunConfig's largest `steps`: later checkpoints still keep their steps


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
    steps: Sequence[int] | None = None,
    loss: Any = None,
) -> Run:
    """A Run of a `torch.nn.RNN` (one layer, ReLU or tanh) with a `torch.nn.Linear` readout.

    `rnn` and `readout` are modules or state dicts, or equal-length lists of them (one
    frame per checkpoint; a single readout serves every checkpoint). `reads`: "output"
    when the readout reads the RNN's output h_t = σ(u_t) (`readout(rnn(x)[0])`),
    "preactivation" when it reads u_t = W_ih x_t + W_hh h_{t−1} (the paper's ReLU RNN;
    see the module docstring for both mappings). `readout_relu`: the prediction is
    ReLU(readout(·)), as in the paper's ReLU models (required for a ReLU RNN).
    `nonlinearity` ("relu" or "tanh") is needed only when no module says it. The data
    law, `steps` and `loss` as in `from_weights`.
    """
    if reads not in READS:
        raise TempsupError(f"from_torch: reads must be one of {', '.join(READS)}, got {reads!r}")
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
    for i, cell in enumerate(cells):
        if not isinstance(cell, Mapping):
            _state(cell, f"the recurrent module{_at(i)}", ("RNN",))
    kinds = {_nonlinearity(c) for c in cells} - {None}
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
    if act == "relu" and not readout_relu:
        raise TempsupError(
            "from_torch: a ReLU RNN with a linear readout is none of the paper's models "
            "(its ReLU RNN predicts ReLU(readout(h))); train with the ReLU readout"
        )
    parts = [_torch_weights(c, h, i) for i, (c, h) in enumerate(zip(cells, heads, strict=True))]
    W_ih, W_hh, W_out, b_out = (np.stack(a) for a in zip(*parts, strict=True))
    bias = any(_has_bias(h) for h in heads)
    W_x, W_h, W_y = W_ih, W_hh, np.swapaxes(W_out, -1, -2)
    if act == "tanh":
        model, valid = ("ssm" if readout_relu else "linear"), False
    else:
        model, valid = "rnn", True
    config_args = dict(
        model=model, k=k, sparsity=sparsity, input_dist=input_dist, seq_len=seq_len,
        importance=importance, tied=False,
    )  # fmt: skip
    RunConfig(**config_args)
    offset = 0.0
    if act == "relu" and reads == "output":
        W_x, W_h, W_y = rectified_readout(W_ih, W_hh, W_out)
        config_args.update(k=k + 1, seq_len=seq_len + 1)
        # the Run's extra first step: output ReLU(b) against target 0, per frame
        imp = importance ** np.arange(W_out.shape[-2])
        offset = (imp * np.maximum(b_out, 0.0) ** 2).sum(-1) if bias else 0.0
    weights = _frames(W_x, W_h, W_y, b_out if bias else None, k=k, tied=False, relu_hidden=True)
    return _run(config_args, weights, bias, steps, loss, "from_torch", valid, offset)


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
    W_h = _array("W_h", W_h)
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
        b = _array("b_y", b_y)
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


def _array(name: str, x: Any) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TempsupError(f"{name}: expected a numeric array, got {type(x).__name__}") from None
    bad = ~np.isfinite(arr)
    if bad.any():
        kind = "NaN" if np.isnan(arr).any() else "inf"
        raise TempsupError(f"{name}: holds {kind} ({int(bad.sum())} of {arr.size} entries)")
    return arr


def _matrix(name: str, x: Any, single: bool, n_f: int, n_h: int) -> np.ndarray:
    """`x` as (F, N_h, N_x); a vector (N_h,) — or (F, N_h) in a stack — is scalar input."""
    arr = _array(name, x)
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
    valid: bool = True,
    offset: Any = 0.0,
) -> Run:
    """The Run of these frames, each built by `tempsup.io.run.frame` like a trained run's."""
    n_f, n_h, n_x = w["W_x"].shape[0], w["W_x"].shape[-2], w["W_x"].shape[-1]
    marks = _steps(steps, n_f, caller)
    losses = np.full(n_f, np.nan) if loss is None else _array("loss", loss).reshape(-1)
    if losses.shape != (n_f,):
        raise TempsupError(f"loss: expected one value per frame ({n_f}), got {np.shape(loss)}")
    last = min(max(marks[-1], 1), MAX_STEPS)
    config = RunConfig(
        **config_args, hidden=n_h, inputs=n_x, seeds=1, bias=bias, steps=last,
        snapshot_every=max(1, last // max(n_f - 1, 1)),
    )  # fmt: skip
    offsets = np.broadcast_to(np.asarray(offset, dtype=float), (n_f,))
    frames = []
    for f in range(n_f):
        snap = Snapshot(
            marks[f], w["W_x"][f], w["W_h"][f], w["W_y"][f], w["b_y"][f], losses[f : f + 1]
        )
        arrays = frame(config, snap)
        if not valid:
            for name in ("terms", "expected_loss", "expected_loss_se"):
                arrays[name] = np.full_like(arrays[name], np.nan)
        elif offsets[f]:
            arrays["expected_loss"] = arrays["expected_loss"] - np.float32(offsets[f])
            arrays["terms"][..., 1] -= np.float32(offsets[f])
        frames.append(arrays)
    return Run.from_frames(config, frames)


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


# ---- torch in ----------------------------------------------------------------------


def _at(index: int) -> str:
    return f" (checkpoint {index})" if index else ""


def _nonlinearity(cell: Any) -> str | None:
    return getattr(cell, "nonlinearity", None) if not isinstance(cell, Mapping) else None


def _has_bias(head: Any) -> bool:
    state = head if isinstance(head, Mapping) else _state(head, "readout", ("Linear",))
    return state.get("bias") is not None


def _state(module: Any, role: str, types: tuple[str, ...]) -> Mapping[str, Any]:
    """A module's state dict, after checking it is of a supported type."""
    name = type(module).__name__
    if name not in types or not hasattr(module, "state_dict"):
        want = " or ".join(f"torch.nn.{t}" for t in types)
        raise TempsupError(f"from_torch: {role} must be a {want} (or its state dict), got {name}")
    return module.state_dict()


def _numpy(name: str, value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().double().numpy()
    return _array(name, value)


def _torch_weights(
    cell: Any, head: Any, index: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """W_ih (N_h, N_x), W_hh, W_out (N_x, N_h), b_out (N_x,) of one checkpoint, checked."""
    at = _at(index)
    if not isinstance(cell, Mapping):
        state = _state(cell, "the recurrent module", ("RNN",))
        layers = getattr(cell, "num_layers", 1)
        if layers != 1:
            raise TempsupError(
                f"from_torch: num_layers={layers}{at}; only one-layer RNNs are supported"
            )
        if getattr(cell, "bidirectional", False):
            raise TempsupError(
                f"from_torch: bidirectional=True{at}; only one-directional RNNs are supported "
                "(the task is causal)"
            )
        if getattr(cell, "proj_size", 0):
            raise TempsupError(f"from_torch: proj_size={cell.proj_size}{at} is not supported")
    else:
        state = cell
    extra = sorted(n for n in state if "_l0" not in n or n.endswith("_reverse"))
    if extra:
        raise TempsupError(
            f"from_torch: found {', '.join(extra)}{at}; only one-layer, one-directional "
            "RNNs (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0) are supported"
        )
    for need in ("weight_ih_l0", "weight_hh_l0"):
        if need not in state:
            raise TempsupError(f"from_torch: the RNN's state has no {need}{at}")
    W_ih = _numpy("weight_ih_l0", state["weight_ih_l0"])
    W_hh = _numpy("weight_hh_l0", state["weight_hh_l0"])
    n_h, n_x = W_ih.shape if W_ih.ndim == 2 else (0, 0)
    if W_ih.ndim != 2 or W_hh.shape != (n_h, n_h):
        raise TempsupError(
            f"from_torch: weight_ih_l0 {W_ih.shape} and weight_hh_l0 {W_hh.shape}{at} are not "
            "(hidden, input) and (hidden, hidden)"
        )
    b = sum(
        (_numpy(n, state[n]) for n in ("bias_ih_l0", "bias_hh_l0") if state.get(n) is not None),
        np.zeros(n_h),
    )
    scale = max(np.abs(W_ih).max(), np.abs(W_hh).max(), 1.0)
    if np.abs(b).max() > BIAS_RTOL * scale:
        raise TempsupError(
            f"from_torch: the RNN's hidden bias b_ih + b_hh is nonzero{at} (max |b| = "
            f"{np.abs(b).max():.3g}); the paper's recurrence h_t = W_x x_t + W_h σ(h_t−1) has "
            "none, so it cannot be read exactly: train with bias=False (a readout bias is fine)"
        )
    head_state = head if isinstance(head, Mapping) else _state(head, "readout", ("Linear",))
    if "weight" not in head_state:
        raise TempsupError(f"from_torch: the readout's state has no weight{at}")
    W_out = _numpy("readout weight", head_state["weight"])
    if W_out.ndim != 2 or W_out.shape[1] != n_h:
        raise TempsupError(
            f"from_torch: the readout's in_features must be the RNN's hidden_size {n_h}, "
            f"got weight of shape {W_out.shape}{at}"
        )
    if W_out.shape[0] != n_x:
        raise TempsupError(
            f"from_torch: the readout's out_features must be the RNN's input_size {n_x} "
            f"(the task reproduces the input), got {W_out.shape[0]}{at}"
        )
    raw = head_state.get("bias")
    b_out = np.zeros(n_x) if raw is None else _numpy("readout bias", raw).reshape(n_x)
    return W_ih, W_hh, W_out, b_out
