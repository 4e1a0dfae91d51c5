"""Feature geometry of a trained recurrent network: directions, projections, angles.

Implements science.md §1 "Feature directions" and the interference-free
half-space of §1 "ReLU readout, high sparsity". Everything here is pure numpy
on weight arrays, batched over any leading axes (snapshots, seeds, sweeps):

    W_x (..., N_h, N_x)   W_h (..., N_h, N_h)   W_y (..., N_h, N_x)   b_y (..., N_x)

An input that is s steps old sits on the feature direction W_s (..., N_h, N_x)
(column j for input feature j): W_s = W_h^s W_x for a linear recurrence, and the
exact impulse response w_0 = W_x, w_s = W_h ReLU(w_{s-1}) for the ReLU
recurrence with non-negative inputs. Readout i sees that input through the
projection A_s[i, j] = W_y[:, i] · W_s[:, j] (a_s for scalar input).

Gauge (science.md §1d, `tempsup.theory.gauge`). A change of hidden basis h -> G h
(W_x -> G W_x, W_h -> G W_h G^-1, W_y -> G^-T W_y) leaves the function
unchanged for any invertible G (for the ReLU recurrence, G a positive diagonal
scaling times a permutation); the tied readout W_y := W_{s=k} survives it iff
GᵀG W_k = W_k, which still leaves a stretch orthogonal to w_k besides rotations
and reflections. So the projections a_s, the eigenvalues of W_h (and what is
built from them: ρ(W_h), the interference-free counts) and the losses are
gauge-free, while norms and angles of w_s (‖w_s‖, ‖w_0‖, kθ) are not: `summary`
reports those in the canonical minimum-norm gauge of `tempsup.theory.gauge`
(`gauge.GAUGE_NAME`), so two runs that compute the same function report the
same numbers. `GAUGE_INVARIANT` and `GAUGE_DEPENDENT` sort the keys of
`summary` accordingly; the sign of kθ is the gauge's convention (kθ >= 0 for
N_h = 2 with a linear recurrence; for the ReLU RNN the sign its unit order gives,
which may be negative), not a property of the function.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tempsup.core.arrays import as_float, check_count
from tempsup.errors import TempsupError
from tempsup.theory import gauge

# Keys of `summary` that are functions of the network's function alone (a_s, eig(W_h)):
# the same in every hidden basis.
GAUGE_INVARIANT: tuple[str, ...] = (
    "a",
    "A",
    "spectral_radius",
    "eig_real",
    "eig_imag",
    "n_interference_free",
    "n_intermediate_free",
)
# Keys that depend on the hidden basis: `summary` reports them in the canonical gauge
# (tempsup.theory.gauge), the raw values of `norms` / `swept_angle` on training weights are not
# comparable across runs.
GAUGE_DEPENDENT: tuple[str, ...] = (
    "swept_angle_deg",
    "swept_angle_deg_features",
    "w0_norm",
    "w0_norm_features",
    "norms",
)

# A projection this small costs at most ~1e-18 per input: treat it as zero, not as interference.
FREE_ATOL = 1e-9


# ---- feature directions and projections ----------------------------------------


def feature_directions(W_x: np.ndarray, W_h: np.ndarray, n: int, relu_hidden: bool) -> np.ndarray:
    """Directions W_s (s = 0..n-1) on which an input of age s sits, shape (..., n, N_h, N_x).

    Linear recurrence: W_s = W_h^s W_x. ReLU recurrence: the impulse response
    w_0 = W_x, w_s = W_h ReLU(w_{s-1}), column by column; by positive
    homogeneity a lone input u >= 0 then sits exactly at u * w_s, which is what
    the sparse regime (one input in the window) sees.
    """
    W_x = as_float("W_x", W_x, min_ndim=2)
    W_h = as_float("W_h", W_h, min_ndim=2)
    _check_square("W_h", W_h)
    _check_dim("W_x", W_x, -2, "N_h", W_h.shape[-1], "W_h", "(..., N_h, N_x)")
    _check_lead("W_x and W_h", W_x.shape[:-2], W_h.shape[:-2])
    check_count("n", n, 1)
    w = np.broadcast_to(W_x, np.broadcast_shapes(W_x.shape[:-2], W_h.shape[:-2]) + W_x.shape[-2:])
    out = [w]
    for _ in range(1, n):
        prev = np.maximum(out[-1], 0.0) if relu_hidden else out[-1]
        out.append(W_h @ prev)  # (..., N_h, N_x)
    return np.stack(out, axis=-3)  # (..., n, N_h, N_x)


def projections(W_y: np.ndarray, W_s: np.ndarray) -> np.ndarray:
    """A[..., s, i, j] = W_y[..., :, i] · W_s[..., s, :, j]: readout i's view of feature j at age s.

    These are gauge invariant (unlike W_s itself), so they are the quantity to
    compare across runs. For scalar input A[..., s, 0, 0] is a_s.
    """
    W_y = as_float("W_y", W_y, min_ndim=2)
    W_s = as_float("W_s", W_s, min_ndim=3)
    _check_dim("W_y", W_y, -2, "N_h", W_s.shape[-2], "W_s", "(..., N_h, N_x)")
    _check_lead("W_y and W_s", W_y.shape[:-2], W_s.shape[:-3])
    return np.swapaxes(W_y, -1, -2)[..., None, :, :] @ W_s  # (..., n, N_x, N_x)


# ---- spectrum ----------------------------------------------------------------------


def eigenvalues(W_h: np.ndarray) -> np.ndarray:
    """Eigenvalues of W_h, complex, sorted by modulus (largest first), shape (..., N_h).

    Within a conjugate pair the one with positive imaginary part comes first, so
    arg(λ_0) is the per-step rotation angle of a spiral sink. Gauge invariant.
    """
    W_h = as_float("W_h", W_h, min_ndim=2)
    _check_square("W_h", W_h)
    lam = np.linalg.eigvals(W_h)  # (..., N_h)
    # Round the modulus so that a conjugate pair ties exactly and the imaginary part decides.
    order = np.lexsort((-lam.imag, -np.round(np.abs(lam), 12)), axis=-1)
    return np.take_along_axis(lam, order, axis=-1)


def spectral_radius(W_h: np.ndarray) -> np.ndarray:
    """ρ(W_h) = max |λ|, shape (...): the rate at which a linear recurrence forgets."""
    return radius(eigenvalues(W_h))


def radius(lam: np.ndarray) -> np.ndarray:
    """ρ = max |λ| of eigenvalues (..., N_h), shape (...): the one place ρ is computed
    (`spectral_radius`, `summary` and so `tempsup inspect`, the eigen panel, the sweeps)."""
    return np.abs(lam).max(axis=-1)


# ---- norms and angles (gauge dependent: measure them on `gauge.canonical` weights) -----


def norms(W_s: np.ndarray) -> np.ndarray:
    """‖w_s‖ per age and feature, shape (..., n, N_x)."""
    W_s = as_float("W_s", W_s, min_ndim=3)
    return np.linalg.norm(W_s, axis=-2)


def step_angles(W_s: np.ndarray) -> np.ndarray:
    """Angle from w_{s-1} to w_s for s = 1..n-1 and each feature column, radians, (..., n-1, N_x).

    For N_h = 2 it is signed (atan2(cross, dot), counter-clockwise positive) so
    that turns add up into a swept angle beyond 180°; otherwise it is the
    unsigned angle in [0, π]. A zero vector gives 0, never NaN.
    """
    W_s = as_float("W_s", W_s, min_ndim=3)
    u, v = W_s[..., :-1, :, :], W_s[..., 1:, :, :]  # (..., n-1, N_h, N_x)
    if W_s.shape[-2] == 2:
        cross = u[..., 0, :] * v[..., 1, :] - u[..., 1, :] * v[..., 0, :]
        dot = (u * v).sum(axis=-2)
        return np.arctan2(cross, dot)  # atan2(0, 0) = 0
    # Kahan's formula: accurate at small and near-π angles, and 0 for zero vectors.
    nu = np.linalg.norm(u, axis=-2, keepdims=True)
    nv = np.linalg.norm(v, axis=-2, keepdims=True)
    diff = np.linalg.norm(nv * u - nu * v, axis=-2)
    summ = np.linalg.norm(nv * u + nu * v, axis=-2)
    return 2.0 * np.arctan2(diff, summ)


def swept_angle(W_s: np.ndarray, k: int) -> np.ndarray:
    """Angle swept from w_0 to w_k in degrees, (..., N_x): the kθ of science.md §1.

    The cumulative sum of step angles, so it can exceed 180° (≈ 270° in the
    sparse SSM) and is negative for clockwise turns; unsigned sum for N_h ≠ 2.
    Gauge dependent: compare runs only on canonical weights (`tempsup.theory.gauge`),
    where the sign is the gauge's convention for a linear recurrence (>= 0 for N_h = 2);
    the ReLU RNN's gauge has no reflection, so there the unit order sets the sign.
    """
    W_s = as_float("W_s", W_s, min_ndim=3)
    check_count("k", k, 0)
    if W_s.shape[-3] < k + 1:
        raise TempsupError(
            f"W_s: expected at least k + 1 = {k + 1} directions to reach w_k, got {W_s.shape[-3]}"
        )
    steps = step_angles(W_s[..., : k + 1, :, :])  # (..., k, N_x)
    return np.degrees(steps.sum(axis=-2))


# ---- the interference-free half-space ---------------------------------------------


def interference_free(
    A: np.ndarray, b_y: np.ndarray | None = None, atol: float = FREE_ATOL
) -> np.ndarray:
    """True where readout i stays silent for a unit input on feature j of age s: A + b_i <= 0.

    Under a ReLU readout such an input costs nothing (science.md §1,
    "interference-free half-space"); by positive homogeneity the same holds for
    any input size u >= 0 when b_i = 0. `atol` counts round-off positives (an
    exactly orthogonal w_s gives a_s ~ 1e-16) as silent. Shape as A, (..., n, N_x, N_x).
    """
    A = as_float("A", A, min_ndim=3)
    if b_y is None:
        return np.less_equal(A, atol)
    b = as_float("b_y", b_y, min_ndim=1)
    _check_dim("b_y", b, -1, "N_x", A.shape[-2], "A", "(..., N_x)")
    _check_lead("A and b_y", A.shape[:-3], b.shape[:-1])
    return np.less_equal(A + b[..., None, :, None], atol)  # b_i belongs to readout i (axis -2)


def in_half_space(points: np.ndarray, w_y: np.ndarray, b: float | np.ndarray = 0.0) -> np.ndarray:
    """Whether hidden states (..., N_h) lie in {h : w_yᵀ h + b <= 0}, for drawing the region."""
    points = as_float("points", points, min_ndim=1)
    w_y = as_float("w_y", w_y, min_ndim=1)
    _check_dim("w_y", w_y, -1, "N_h", points.shape[-1], "points", "(..., N_h)")
    return (points * w_y).sum(axis=-1) + np.asarray(b, dtype=float) <= 0.0


# ---- one-call summary --------------------------------------------------------------


def summary(
    W_x: np.ndarray,
    W_h: np.ndarray,
    W_y: np.ndarray | None,
    b_y: np.ndarray | None,
    k: int,
    relu_hidden: bool,
    n: int | None = None,
    tied: bool | None = None,
    canonical: bool = True,
    gauged: Mapping[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """The numbers the paper's claims are stated in, for every model in the batch.

    `W_y=None` means the tied readout W_y := W_{s=k}. `n` defaults to k + 4:
    the k intermediate directions, the output one, and three old ones to see
    forgetting (science.md §1b quotes a_0..a_5 for k = 3). `tied` says whether
    a given `W_y` is the tied readout (default: only when `W_y` is None); it
    decides which changes of basis are admissible. With `canonical` (default)
    the gauge-dependent keys are measured in the canonical gauge
    (`tempsup.theory.gauge.canonical`); `canonical=False` measures the weights as
    given; `gauged` is that canonical representative ("W_x", "W_h" of `gauge.canonical`)
    when the caller already has it (the panels keep it per frame), so it is not solved
    again. Per-model scalars refer to feature 0 (the only one for scalar input):

    - "swept_angle_deg" (...): kθ from w_0 to w_k; "swept_angle_deg_features" (..., N_x)
    - "spectral_radius" (...), "eig_real", "eig_imag" (..., N_h), sorted by modulus
    - "w0_norm" (...): ‖w_0‖ (science.md: the sources may mean this or ρ by "radius");
      "w0_norm_features" (..., N_x)
    - "norms" (..., n): ‖w_s‖ of feature 0
    - "a" (..., n): A[s, 0, 0]; "A" (..., n, N_x, N_x): all projections
    - "n_interference_free" (...): ages s ≠ k (s < n) with a_s + b <= 0
    - "n_intermediate_free" (...): the same among s < k only (all k in the sparse RNN)

    `GAUGE_INVARIANT` lists the gauge-free keys, `GAUGE_DEPENDENT` the others.
    """
    check_count("k", k, 0)
    if n is None:
        n = k + 4
    check_count("n", n, k + 1, hint="n must exceed k so that w_k is included")
    if tied is None:
        tied = W_y is None
    W_s = feature_directions(W_x, W_h, n, relu_hidden)  # (..., n, N_h, N_x)
    if W_y is None:
        W_y = W_s[..., k, :, :]
    A = projections(W_y, W_s)  # (..., n, N_x, N_x), gauge-free: from the weights as given
    free = interference_free(A, b_y)[..., :, 0, 0]  # (..., n), target feature 0
    ages = np.arange(n)
    lam = eigenvalues(W_h)  # (..., N_h)
    if canonical:
        cw = gauge.canonical(W_x, W_h, W_y, b_y, k, relu_hidden, tied) if gauged is None else gauged
        W_s = feature_directions(cw["W_x"], cw["W_h"], n, relu_hidden)
    swept = swept_angle(W_s, k)  # (..., N_x)
    lead = A.shape[:-3]
    W_s = np.broadcast_to(W_s, lead + W_s.shape[-3:])
    lengths = norms(W_s)  # (..., n, N_x)
    return {
        "swept_angle_deg": np.broadcast_to(swept[..., 0], lead),
        "swept_angle_deg_features": np.broadcast_to(swept, lead + swept.shape[-1:]),
        "spectral_radius": np.broadcast_to(radius(lam), lead),
        "eig_real": np.broadcast_to(lam.real, lead + lam.shape[-1:]),
        "eig_imag": np.broadcast_to(lam.imag, lead + lam.shape[-1:]),
        "w0_norm": lengths[..., 0, 0],
        "w0_norm_features": lengths[..., 0, :],
        "norms": lengths[..., :, 0],
        "a": A[..., :, 0, 0],
        "A": A,
        "n_interference_free": (free & (ages != k)).sum(axis=-1),
        "n_intermediate_free": (free & (ages < k)).sum(axis=-1),
    }


# ---- input checks: each says what was expected and what was received ----------------
# (as_float and check_count, which tempsup.theory.closed_form uses too, are in tempsup.core.arrays)


def _check_square(name: str, M: np.ndarray) -> None:
    if M.shape[-1] != M.shape[-2]:
        raise TempsupError(f"{name}: expected a square (..., N_h, N_h) matrix, got {M.shape}")


def _check_lead(names: str, a: tuple[int, ...], b: tuple[int, ...]) -> None:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        raise TempsupError(
            f"{names}: expected leading (snapshot, seed, ...) axes that broadcast, got {a} and {b}"
        ) from None


def _check_dim(
    name: str, arr: np.ndarray, axis: int, dim: str, size: int, source: str, layout: str
) -> None:
    """`arr`'s axis `axis` (the dimension called `dim`) has the `size` read off `source`."""
    if arr.shape[axis] != size:
        raise TempsupError(
            f"{name}: expected shape {layout} with {dim} = {size} (from {source}), got {arr.shape}"
        )
