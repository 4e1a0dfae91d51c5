"""Any recurrence s_t = F(s_{t-1}, x_t) seen as the paper's objects: its linearisation at rest.

The paper's lens (science.md §1) needs W_x, W_h and the feature directions w_s. For any
recurrence they are read off at the *silent state* s*, the state after `seq_len` silent
inputs (x = 0) from s_0 = 0 (where a sparse input finds the model):

    J_h = ∂F/∂s,  J_x = ∂F/∂x  at (s*, 0),   w_0 = J_x,  w_s = D_{w_{s-1}} F (s*, 0)

w_s is the impulse response at rest: the directional derivative of F along w_{s-1}, not
J_h^s J_x. The two agree for a smooth F; at a kink they differ, and the directional one
is what a lone non-negative input really does: for the paper's ReLU RNN (s* = 0, on the
kink) it is w_s = W_h ReLU(w_{s-1}), exactly `tempsup.theory.geometry.feature_directions`,
while J_h takes ReLU'(0) = 1 (the right derivative), so eig(J_h) = eig(W_h) as today.

Every derivative is a one-sided forward difference in float64 in the direction of the
perturbation, so piecewise-linear models come out exact (up to rounding) and smooth ones
within ~1e-7 of autograd (`EPS`). The perturbations sit on the batch axis B of one call
of F: a step takes state (M, S, B) and input (M, N_x, B) for M independent models.

Beside the silent response, `active_response` keeps what a real input of a given size
leaves (a finite difference), and `nonlinearity` says how far apart the two are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from tempsup.core.arrays import as_float, check_count
from tempsup.errors import TempsupError

# F(state (M, S, B), x (M, N_x, B)) -> next state (M, S, B), M independent models
Step = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

# Step of every forward difference, relative to max(1, ‖s*‖_∞) per model: the truncation
# error of a smooth F is ~EPS (relative), the round-off ~1e-16 / EPS = 1e-9.
EPS = 1e-7
# The silent run settled when one more silent step moves it by at most this, relative to
# max(1, ‖s*‖_∞): a run that diverges or oscillates moves by O(‖s*‖), while torch's GRU and
# LSTM cells at their default initialisation still creep by 1e-5..1e-4 after 20 steps.
SETTLE_TOL = 1e-3


@dataclass(frozen=True)
class Linearization:
    """A batch of M recurrences linearised at their silent states."""

    silent: np.ndarray  # s*  (M, S)
    J_h: np.ndarray  # ∂F/∂s at (s*, 0)  (M, S, S)
    J_x: np.ndarray  # ∂F/∂x at (s*, 0)  (M, S, N_x)
    directions: np.ndarray  # w_s (M, n, S, N_x), s = 0..n-1: the impulse response at rest
    settled: np.ndarray  # (M,) bool: ‖F(s*, 0) − s*‖ small, s* is a fixed point


def paper_step(W_x: np.ndarray, W_h: np.ndarray, relu_hidden: bool) -> Step:
    """The paper's recurrence F(s, x) = W_x x + W_h σ(s) (σ = ReLU for the rnn, identity for
    linear and ssm) as a step, for W_x (M, N_h, N_x) and W_h (M, N_h, N_h); the state is the
    pre-activation h_t of `tempsup.model.recurrences`."""
    W_x = as_float("W_x", W_x, min_ndim=3)
    W_h = as_float("W_h", W_h, min_ndim=3)
    if W_x.ndim != 3 or W_h.shape != (W_x.shape[0], W_x.shape[1], W_x.shape[1]):
        raise TempsupError(
            f"W_x, W_h: expected shapes (M, N_h, N_x) and (M, N_h, N_h), "
            f"got {W_x.shape} and {W_h.shape}"
        )
    w_x = torch.from_numpy(W_x.copy())
    w_h = torch.from_numpy(W_h.copy())

    def step(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.bmm(w_x, x) + torch.bmm(w_h, torch.relu(s) if relu_hidden else s)

    return step


def silent_state(
    step: Step,
    n_models: int,
    n_state: int,
    n_x: int,
    seq_len: int,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """s*: the state after `seq_len` silent inputs from s_0 = 0, (M, S)."""
    for name, count in (("n_models", n_models), ("n_state", n_state), ("n_x", n_x)):
        check_count(name, count, 1)
    check_count("seq_len", seq_len, 0)
    s = torch.zeros(n_models, n_state, 1, dtype=dtype)
    x = torch.zeros(n_models, n_x, 1, dtype=dtype)
    with torch.no_grad():
        for _ in range(seq_len):
            s = _call(step, s, x, n_models, n_state).to(dtype)
    return s[:, :, 0]


def linearize(
    step: Step, n_models: int, n_state: int, n_x: int, seq_len: int, n_ages: int
) -> Linearization:
    """J_h, J_x and the directions w_s (s < `n_ages`) of M recurrences at their silent states.

    Two kinds of calls of F, each with all perturbations on the batch axis: one for the
    S + N_x columns of the Jacobians and the settling check, then one per age for the
    N_x directions. Column 0 of every call is the unperturbed F(s*, 0), so each difference
    is taken against a baseline computed alongside it.
    """
    check_count("n_ages", n_ages, 1)
    silent = silent_state(step, n_models, n_state, n_x, seq_len)  # (M, S)
    m, s_dim = n_models, n_state
    scale = _scale(silent)  # (M,)
    h = EPS * scale  # (M,): the step of every difference, per model
    with torch.no_grad():
        # Jacobians: columns 1..S perturb the state by h e_j, columns S+1..S+N_x the input
        # by EPS e_j (the input is 0 at rest, so its scale is 1).
        n_cols = 1 + s_dim + n_x
        state = silent[:, :, None].expand(m, s_dim, n_cols).clone()
        state[:, :, 1 : 1 + s_dim] += h[:, None, None] * torch.eye(s_dim, dtype=torch.float64)
        x = torch.zeros(m, n_x, n_cols, dtype=torch.float64)
        x[:, :, 1 + s_dim :] = EPS * torch.eye(n_x, dtype=torch.float64)
        out = _call(step, state, x, m, s_dim)
        base = out[:, :, :1]  # F(s*, 0)
        J_h = (out[:, :, 1 : 1 + s_dim] - base) / h[:, None, None]
        J_x = (out[:, :, 1 + s_dim :] - base) / EPS
        moved = (base[:, :, 0] - silent).abs().amax(dim=1)
        settled = torch.isfinite(silent).all(dim=1) & (moved <= SETTLE_TOL * scale)
        # directions: w_s = (F(s* + t w_{s-1}, 0) − F(s*, 0)) / t, t·‖w_{s-1}‖_∞ = h
        ws = [J_x]
        silence = torch.zeros(m, n_x, 1 + n_x, dtype=torch.float64)
        for _ in range(1, n_ages):
            w = ws[-1]  # (M, S, N_x)
            size = w.abs().amax(dim=1, keepdim=True)  # (M, 1, N_x)
            t = torch.where(size > 0, h[:, None, None] / size, torch.ones_like(size))
            state = torch.cat([silent[:, :, None], silent[:, :, None] + t * w], dim=2)
            out = _call(step, state, silence, m, s_dim)
            ws.append((out[:, :, 1:] - out[:, :, :1]) / t)
    return Linearization(
        silent=silent.numpy(),
        J_h=J_h.numpy(),
        J_x=J_x.numpy(),
        directions=torch.stack(ws, dim=1).numpy(),
        settled=settled.numpy(),
    )


def active_response(
    step: Step, silent: np.ndarray, n_x: int, n_ages: int, value: float | np.ndarray
) -> np.ndarray:
    """What one real input leaves: (M, n, S, N_x), (s_age − s_silent_age) / value, ages 0..n-1.

    From s* (M, S), an input of size `value` on feature j at age 0 and silence after,
    against the silent run from the same s* (which moves on if s* is no fixed point). A
    finite difference, not an infinitesimal one: for a linear recurrence it equals the
    directions for any value, for a nonlinear one it departs from them as `value` grows.
    `value` is a number, one per model (M,), or one per model and feature (M, N_x).
    """
    silent = as_float("silent", silent, min_ndim=2)
    if silent.ndim != 2:
        raise TempsupError(f"silent: expected shape (M, S), got {silent.shape}")
    check_count("n_x", n_x, 1)
    check_count("n_ages", n_ages, 1)
    m, s_dim = silent.shape
    v = as_float("value", value, min_ndim=0)
    if v.ndim == 1:
        v = v[:, None]  # one per model
    try:
        v = np.broadcast_to(v, (m, n_x))
    except ValueError:
        raise TempsupError(
            f"value: expected a number, (M,) or (M, N_x) = ({m}, {n_x}), got shape {v.shape}"
        ) from None
    if not np.all(np.isfinite(v)) or np.any(v == 0):
        raise TempsupError("value: expected finite, non-zero input sizes")
    size = torch.from_numpy(np.array(v, dtype=np.float64))  # (M, N_x)
    with torch.no_grad():
        start = torch.from_numpy(silent.copy())[:, :, None]
        state = start.expand(m, s_dim, 1 + n_x).clone()  # column 0: the silent run
        x = torch.zeros(m, n_x, 1 + n_x, dtype=torch.float64)
        x[:, :, 1:] = torch.diag_embed(size)
        silence = torch.zeros_like(x)
        out = []
        for age in range(n_ages):
            state = _call(step, state, x if age == 0 else silence, m, s_dim)
            out.append((state[:, :, 1:] - state[:, :, :1]) / size[:, None, :])
    return torch.stack(out, dim=1).numpy()


def nonlinearity(
    directions: np.ndarray, active: np.ndarray, readout: np.ndarray | None = None
) -> np.ndarray:
    """How far the active response is from the silent one, (M,): 0 for a linear recurrence.

    ‖active − directions‖ / ‖directions‖ over all ages and features; with `readout`
    (M, S, N_x), of the readout kernels a_s = W_yᵀ w_s instead (what the loss sees, and
    free of the state's basis). A zero silent response gives 0 if the active one is zero
    too, else inf.
    """
    directions = as_float("directions", directions, min_ndim=4)
    active = as_float("active", active, min_ndim=4)
    if directions.shape != active.shape or directions.ndim != 4:
        raise TempsupError(
            f"directions, active: expected the same shape (M, n, S, N_x), "
            f"got {directions.shape} and {active.shape}"
        )
    if readout is not None:
        directions = readout_kernel(readout, directions)
        active = readout_kernel(readout, active)
    m = directions.shape[0]
    num = np.linalg.norm((active - directions).reshape(m, -1), axis=1)
    den = np.linalg.norm(directions.reshape(m, -1), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = num / den  # NaN stays NaN: a run that blew up has no meaningful distance
    zero = den == 0
    ratio[zero] = np.where(num[zero] == 0, 0.0, np.inf)
    return ratio


def readout_kernel(readout: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """a_s = W_yᵀ w_s, (M, n, N_x(i), N_x(j)): readout i's view of feature j at age s, for a
    readout (M, S, N_x) of the whole state and directions (M, n, S, N_x)."""
    readout = as_float("readout", readout, min_ndim=3)
    directions = as_float("directions", directions, min_ndim=4)
    if (
        readout.ndim != 3
        or directions.ndim != 4
        or readout.shape[:2] != (directions.shape[0], directions.shape[2])
    ):
        raise TempsupError(
            f"readout, directions: expected shapes (M, S, N_x) and (M, n, S, N_x), "
            f"got {readout.shape} and {directions.shape}"
        )
    return np.einsum("msi,mnsj->mnij", readout, directions)


def eigenvalues(J_h: np.ndarray) -> np.ndarray:
    """Eigenvalues of J_h (..., S, S), complex, (..., S), in `tempsup.theory.geometry`'s order:
    largest modulus first, the +imag one first in a conjugate pair. NaN for a non-finite J_h
    (a silent run that blew up), instead of numpy's error."""
    J_h = as_float("J_h", J_h, min_ndim=2)
    if J_h.shape[-1] != J_h.shape[-2]:
        raise TempsupError(f"J_h: expected a square (..., S, S) matrix, got {J_h.shape}")
    finite = np.isfinite(J_h).all(axis=(-1, -2))  # (...)
    lam = np.full(J_h.shape[:-1], np.nan, dtype=complex)
    lam[finite] = np.linalg.eigvals(J_h[finite])
    # round the modulus so that a conjugate pair ties exactly and the imaginary part decides
    order = np.lexsort((-lam.imag, -np.round(np.abs(lam), 12)), axis=-1)
    return np.take_along_axis(lam, order, axis=-1)


def _scale(silent: torch.Tensor) -> torch.Tensor:
    """max(1, ‖s*‖_∞) per model, (M,): the size of the state the differences are taken at."""
    return torch.clamp(silent.abs().amax(dim=1), min=1.0)


def _call(step: Step, state: torch.Tensor, x: torch.Tensor, m: int, s_dim: int) -> torch.Tensor:
    """F(state, x) in float64, its shape checked: a wrong step fails here, by name."""
    out = step(state, x)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (m, s_dim, state.shape[2]):
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise TempsupError(
            f"step: expected a next state of shape (M, S, B) = {(m, s_dim, state.shape[2])}, "
            f"got {got}"
        )
    return out.to(torch.float64)
