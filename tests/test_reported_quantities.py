"""Every number a run reports, checked against an independent computation with a known answer.

`tempsup inspect`, `Run.summary()`, the app's panels and the sweeps' tables all read
ρ(W_h), kθ, ‖w_0‖, a_s, the interference-free counts, E[L] and its four terms from
`tempsup.io.describe` → `tempsup.theory.geometry.summary` and the run file's derived arrays
(`tempsup.io.run.derived`: `theory`, `relu_terms`, `expected_loss`); the presets read the
recalls from `tempsup.analysis.measures`. Each test below builds weights by hand so that the
answer is known without tempsup — a rotation by a known angle, a matrix with
eigenvalues of different moduli, a delay line — or is computed here from the
definitions in science.md by a different route: a forward pass of the network on an
impulse, exhaustive enumeration of binary input sequences, or a Monte Carlo sample whose
tolerance is a multiple of its own standard error. Then the same numbers are read off
the surfaces (`Run.summary()`, `tempsup inspect --json`, the eigen panel).

A check that only compares two tempsup functions with each other would pass a bug they
share; these do not (e.g. ρ as the *smallest* |λ| passed every fast test before).
"""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

import tempsup
from tempsup.analysis import measures as analysis
from tempsup.cli import main as cli_main
from tempsup.theory import closed_form as theory
from tempsup.theory import geometry
from tempsup.theory.expected_loss import SSM_REL_ERROR

Z = 4.0  # Monte Carlo tolerance in standard errors: a false alarm once in ~16,000 draws
F32 = 1e-6  # relative: a run file stores weights and derived numbers in float32


def rot(deg: float) -> np.ndarray:
    a = np.radians(deg)
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def orthogonal(n: int, seed: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def close(got: float, want: float, rel: float = F32, abs_: float = 1e-9) -> bool:
    return abs(got - want) <= rel * abs(want) + abs_


# ---- an independent forward pass: the paper's recurrence, written out ------------------


def _mix(W: np.ndarray, v: np.ndarray) -> np.ndarray:
    """W @ v for a small W (m, n) and v (n, B), one scaled row at a time: a threaded BLAS
    product of these shapes is slow on a busy machine, and N_h ≤ 3 here."""
    return np.stack([sum(W[i, j] * v[j] for j in range(W.shape[1])) for i in range(W.shape[0])])


def forward(net: dict, x: np.ndarray, last: bool = False) -> np.ndarray:
    """ŷ (B, T, N_x) for inputs x (B, T, N_x): h_t = W_x x_t + W_h σ_h(h_{t−1}), h_0 = 0,
    ŷ_t = σ_y(W_yᵀ h_t + b). `net`: W_x, W_h, W_y (2-D), b (N_x,), relu_h, relu_y.
    `last`: only ŷ_T, (B, N_x)."""
    B, T, _ = x.shape
    xt = np.moveaxis(x, 0, -1)  # (T, N_x, B)
    h = np.zeros((net["W_h"].shape[0], B))
    out = []
    for t in range(T):
        prev = np.maximum(h, 0.0) if net["relu_h"] else h
        h = _mix(net["W_x"], xt[t]) + _mix(net["W_h"], prev)
        if last and t < T - 1:
            continue
        z = _mix(net["W_y"].T, h) + net["b"][:, None]
        out.append(np.maximum(z, 0.0) if net["relu_y"] else z)
    return np.moveaxis(np.stack(out), -1, 0)[:, -1] if last else np.moveaxis(np.stack(out), -1, 0)


def losses(net: dict, x: np.ndarray, k: int) -> np.ndarray:
    """L = Σ_t Σ_i (y_t − ŷ_t)² per sequence, y_t = x_{t−k} (0 for the first k steps)."""
    y = np.zeros_like(x)
    y[:, k:] = x[:, : x.shape[1] - k]
    return ((y - forward(net, x)) ** 2).sum(axis=(1, 2))


def impulse(net: dict, n: int) -> np.ndarray:
    """The hidden state n steps after one unit input on each feature (n, N_h, N_x), by
    running the network (its pre-activation h_t, which a lone input reaches)."""
    n_h, n_x = net["W_x"].shape
    out = np.zeros((n, n_h, n_x))
    for j in range(n_x):
        h = net["W_x"][:, j].copy()
        for s in range(n):
            out[s, :, j] = h
            h = net["W_h"] @ (np.maximum(h, 0.0) if net["relu_h"] else h)
    return out


def net_of(model: str, W_x, W_h, W_y, b=None) -> dict:
    W_x = np.asarray(W_x, dtype=float).reshape(len(W_h), -1)
    W_y = np.asarray(W_y, dtype=float).reshape(len(W_h), -1)
    b = np.zeros(W_x.shape[1]) if b is None else np.atleast_1d(np.asarray(b, dtype=float))
    return {
        "W_x": W_x, "W_h": np.asarray(W_h, dtype=float), "W_y": W_y, "b": b,
        "relu_h": model == "rnn", "relu_y": model != "linear",
    }  # fmt: skip


# ---- the hand-made networks ------------------------------------------------------------

# Spiral sink, free readout w_y = w_0 = 1.5 u: W_h = 0.8 R(100°) is normal and
# w_x w_xᵀ = w_y w_yᵀ, so the weights already satisfy the minimum-norm balance (gauge.py
# (4)) and the canonical gauge only rotates them: kθ = 3 · 100° = 300° (beyond 180°:
# summed, not wrapped), ‖w_0‖ = 1.5, ρ = 0.8 and a_s = 1.5² · 0.8^s cos(100° s).
SPIRAL = dict(r=0.8, theta=100.0, c=1.5, k=3)
U = np.array([np.cos(0.3), np.sin(0.3)])


def spiral(theta: float = SPIRAL["theta"]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c, r = SPIRAL["c"], SPIRAL["r"]
    return c * U, r * rot(theta), c * U


def spiral_a(n: int, theta: float = SPIRAL["theta"]) -> np.ndarray:
    s = np.arange(n)
    return SPIRAL["c"] ** 2 * SPIRAL["r"] ** s * np.cos(np.radians(theta) * s)


# ReLU RNN, a delay line that forgets at once (science.md §1b's sparse solution, by hand):
# w_0 = e1, w_1 = e2, w_2 = e3 − e1 and then w_3 = W_h ReLU(e3 − e1) = W_h e3 = 0 (the
# hidden ReLU erases it; a linear recurrence would give −e2). Readout w_y = 0.5 e3 −
# 0.5 e1 − 2 e2: a = [−0.5, −2, 1, 0, 0, …], k = 2: both intermediate directions and
# every old one (exactly 0) are interference-free.
DELAY_W_x = np.array([1.0, 0.0, 0.0])
DELAY_W_h = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
DELAY_W_h[0, 1] = -1.0  # w_2 = W_h e2 = e3 − e1
DELAY_W_y = np.array([-0.5, -2.0, 0.5])
DELAY_A = np.array([-0.5, -2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
DELAY_K = 2

T_SMALL = 8  # 2^8 = 256 binary sequences: exhaustive enumeration is exact and cheap


def eigen_panel_numbers(run: tempsup.Run, feature: int = 0) -> tuple[float, float, float]:
    """ρ(W_h), kθ and ‖w_0‖ as the explorer's eigen panel prints them (`Run.figure`
    draws the panel as the app does) for input feature `feature`."""
    fig = run.figure("eigen", feature=feature)
    texts = [a.text for a in fig.layout.annotations or () if a.text]
    for trace in fig.data:
        t = getattr(trace, "text", None)
        texts += [t] if isinstance(t, str) else list(t or ())
    text = " ".join(map(str, texts))
    found = [
        re.search(pattern + r" = ([-+]?[\d.]+(?:e[-+]?\d+)?)", text)
        for pattern in (r"ρ\(W<sub>h</sub>\)", "kθ", "‖w<sub>0</sub>‖")
    ]
    assert all(found), f"the eigen panel's text lacks ρ, kθ or ‖w_0‖: {text!r}"
    rho, angle, w0 = (float(m.group(1)) for m in found)
    return rho, angle, w0


# ---- ρ(W_h) and the eigenvalues ---------------------------------------------------------


def _similar(eigen_block: np.ndarray, seed: int, normal: bool) -> np.ndarray:
    n = len(eigen_block)
    P = orthogonal(n, seed)
    if not normal:  # a skewed basis: W_h is then non-normal, ‖W_h‖₂ far above ρ
        P = P @ (np.eye(n) + np.triu(np.full((n, n), 1.5), 1))
    return P @ eigen_block @ np.linalg.inv(P)


RHO_CASES = {
    # W_h, its eigenvalues (known by construction)
    "normal: diag(0.9, −0.3) in a random orthogonal basis": (
        _similar(np.diag([0.9, -0.3]), 1, normal=True),
        [0.9, -0.3],
    ),
    "non-normal: diag(−0.3, 0.9) in a skewed basis": (
        _similar(np.diag([-0.3, 0.9]), 2, normal=False),
        [0.9, -0.3],
    ),
    "non-normal triangular: ‖W_h‖₂ ≈ 4 but ρ = 0.7": (
        np.array([[0.2, 4.0], [0.0, -0.7]]),
        [-0.7, 0.2],
    ),
    "3×3: a complex pair of modulus 0.5 inside a real −0.8": (
        _similar(
            np.block([[0.5 * rot(40.0), np.zeros((2, 1))], [np.zeros((1, 2)), -0.8 * np.eye(1)]]),
            3,
            normal=False,
        ),
        [-0.8, 0.5 * np.exp(1j * np.radians(40.0)), 0.5 * np.exp(-1j * np.radians(40.0))],
    ),
}


@pytest.mark.parametrize("case", RHO_CASES)
def test_spectral_radius_is_the_largest_modulus(case: str) -> None:
    W_h, lam = RHO_CASES[case]
    rho = max(abs(z) for z in lam)  # the known answer
    n_h = len(W_h)
    W_x = np.ones((n_h, 1))
    W_y = np.linspace(1.0, -0.5, n_h)[:, None]
    assert float(geometry.spectral_radius(W_h)) == pytest.approx(rho, rel=1e-9)
    for model in ("linear", "ssm", "rnn"):  # ρ is the same number whatever the recurrence
        geo = geometry.summary(W_x, W_h, W_y, None, 1, model == "rnn")
        assert float(geo["spectral_radius"]) == pytest.approx(rho, rel=1e-9), model
    # sorted by modulus, the pair's +imaginary one first: what `inspect` lists
    want = sorted(lam, key=lambda z: (-round(abs(z), 9), -z.imag))
    np.testing.assert_allclose(geometry.eigenvalues(W_h), want, atol=1e-9)
    # batched: a stack of two models keeps each its own ρ
    both = geometry.summary(
        np.stack([W_x, W_x]), np.stack([W_h, 0.5 * W_h]), np.stack([W_y, W_y]), None, 1, False
    )
    np.testing.assert_allclose(both["spectral_radius"], [rho, 0.5 * rho], rtol=1e-9)
    # the surface: a run made from these weights reports the same
    run = tempsup.from_weights(W_x, W_h, W_y, model="linear", k=1, seq_len=6)
    s = run.summary()
    assert s["spectral_radius"] == pytest.approx(rho, rel=1e-5)  # float32 weights
    np.testing.assert_allclose([complex(*z) for z in s["eigenvalues"]], want, atol=1e-5)
    assert eigen_panel_numbers(run)[0] == pytest.approx(rho, rel=1e-3)  # printed to 3 digits


# ---- kθ and ‖w_0‖ (canonical gauge), a_s and the norms -----------------------------------

# model, W_x, W_h, W_y (None: tied), k, the known kθ (degrees) and ‖w_0‖
KTHETA_CASES = {
    "linear spiral, free readout: 3 × 100° = 300°": ("linear", *spiral(), SPIRAL["k"], 300.0, 1.5),
    "SSM spiral, free readout: 300°": ("ssm", *spiral(), SPIRAL["k"], 300.0, 1.5),
    # clockwise turns: the gauge's reflection makes kθ ≥ 0 (N_h = 2, linear recurrence)
    "linear, clockwise −40°: 3 × 40° = 120°": ("linear", *spiral(-40.0), 3, 120.0, 1.5),
    # tied readout w_y = w_2 = −0.64 w_0 (kθ = 180°): w_0 ∥ w_k, so the stretch orthogonal
    # to w_k that the tie admits cannot shorten w_0, and a rotation W_h is balanced
    "linear, tied, 2 × 90° = 180°": ("linear", 1.5 * U, 0.8 * rot(90.0), None, 2, 180.0, 1.5),
    # ReLU RNN, tied: w_0 = 2(cos 70°, sin 70°) turns by −30° a step and stays in the
    # positive quadrant (the hidden ReLU is the identity on it): w_2 at 10°. Every unit of
    # w_k is nonzero, so the tie admits no rescaling; the units are already sorted by
    # readout weight (w_2's first entry is larger): the weights are canonical as given,
    # kθ = −60° (the ReLU RNN's gauge has no reflection) and ‖w_0‖ = 2.
    "ReLU RNN, tied, 2 × −30° = −60°": (
        "rnn",
        2.0 * np.array([np.cos(np.radians(70.0)), np.sin(np.radians(70.0))]),
        rot(-30.0),
        None,
        2,
        -60.0,
        2.0,
    ),
}


@pytest.mark.parametrize("case", KTHETA_CASES)
def test_swept_angle_w0_norm_and_kernel(case: str) -> None:
    model, W_x, W_h, W_y, k, ktheta, w0 = KTHETA_CASES[case]
    tied = W_y is None
    net = net_of(model, W_x, W_h, np.zeros_like(W_x))
    resp = impulse(net, k + 4)[:, :, 0]  # (k + 4, N_h): w_s by running the network
    w_y = resp[k] if tied else np.asarray(W_y, dtype=float)
    a = resp @ w_y  # a_s = w_yᵀ w_s
    norms = np.linalg.norm(resp, axis=1)
    if model != "rnn":
        assert norms[0] == pytest.approx(w0)  # the case's ‖w_0‖ is that of the given weights
    geo = geometry.summary(
        W_x[:, None], W_h, None if tied else W_y[:, None], None, k, model == "rnn", tied=tied
    )
    assert float(geo["swept_angle_deg"]) == pytest.approx(ktheta, abs=1e-6)
    assert float(geo["w0_norm"]) == pytest.approx(w0, rel=1e-9)
    np.testing.assert_allclose(geo["a"], a, rtol=1e-9, atol=1e-12)
    run = tempsup.from_weights(W_x, W_h, W_y, model=model, k=k, tied=tied, seq_len=k + 4)
    s = run.summary()
    assert s["swept_angle_deg"] == pytest.approx(ktheta, abs=1e-4)  # float32 weights
    assert s["w0_norm"] == pytest.approx(w0, rel=1e-5)
    np.testing.assert_allclose(s["a"], a, rtol=1e-5, atol=1e-6)
    if model == "linear" and not tied:  # a rotation: ‖w_s‖ = ‖w_0‖ r^s in any orthogonal basis
        np.testing.assert_allclose(s["norms"], norms, rtol=1e-5)
    if model == "rnn":  # the canonical basis is the given one up to unit order: same norms
        np.testing.assert_allclose(s["norms"], norms, rtol=1e-5)
    _, angle, w0_shown = eigen_panel_numbers(run)  # printed to 4 and 3 significant digits
    assert angle == pytest.approx(ktheta, rel=1e-4)
    assert w0_shown == pytest.approx(w0, rel=1e-3)


def test_gauge_dependent_numbers_come_back_from_any_change_of_basis() -> None:
    """The spiral seen in a skewed basis (same function) reports the same kθ, ‖w_0‖ and
    ‖w_s‖: the reported numbers are the canonical gauge's, not the raw weights'."""
    W_x, W_h, W_y = spiral()
    G = np.array([[2.0, 0.7], [-0.4, 0.6]])  # invertible, far from orthogonal
    Gi = np.linalg.inv(G)
    moved = (G @ W_x, G @ W_h @ Gi, Gi.T @ W_y)
    raw = geometry.summary(*(m[..., None] if m.ndim == 1 else m for m in moved), None, 3, False,
                           canonical=False)  # fmt: skip
    assert abs(float(raw["w0_norm"]) - 1.5) > 0.1  # the raw weights would say otherwise
    s = tempsup.from_weights(*moved, model="ssm", k=SPIRAL["k"], seq_len=8).summary()
    assert s["swept_angle_deg"] == pytest.approx(300.0, abs=1e-3)
    assert s["w0_norm"] == pytest.approx(1.5, rel=1e-5)
    np.testing.assert_allclose(s["norms"], 1.5 * 0.8 ** np.arange(7), rtol=1e-5)
    np.testing.assert_allclose(s["a"], spiral_a(8), rtol=1e-5, atol=1e-6)
    assert s["spectral_radius"] == pytest.approx(0.8, rel=1e-5)


def test_the_eigen_panel_of_each_feature_prints_the_summarys_numbers() -> None:
    """Two features turned by different angles (W_x = [w, R(40°)w], one rotation W_h =
    0.8 R(100°), W_y = W_x): kθ = 300° for both, ‖w_0‖ = 1.5 and 1 in any orthogonal basis
    (the canonical one is one: the rotation and the identity balance are kept). The panel
    of each feature prints them, and feature 0's are `Run.summary()`'s (one computation)."""
    w, W_h, _ = spiral()
    v = rot(40.0) @ w / SPIRAL["c"]
    W_x = np.stack([w, v], axis=-1)  # (2, 2)
    run = tempsup.from_weights(W_x, W_h, W_x, model="linear", k=SPIRAL["k"], seq_len=8)
    s = run.summary()
    want = {0: (0.8, 300.0, 1.5), 1: (0.8, 300.0, 1.0)}
    for f, (rho, angle, w0) in want.items():
        shown = eigen_panel_numbers(run, feature=f)
        np.testing.assert_allclose(shown, (rho, angle, w0), rtol=1e-3, err_msg=f"feature {f}")
        assert s["swept_angle_deg_features"][f] == pytest.approx(angle, abs=1e-3)
    assert eigen_panel_numbers(run) == pytest.approx(
        (s["spectral_radius"], s["swept_angle_deg"], s["w0_norm"]), rel=1e-3
    )


def test_projections_of_vector_input_by_hand() -> None:
    """A_k = W_yᵀ W_k for vector input, W_k from running the network on each feature."""
    rng = np.random.default_rng(7)
    W_x, W_h, W_y = rng.normal(size=(3, 2)), 0.6 * orthogonal(3, 8), rng.normal(size=(3, 2))
    W_h[0, 2] += 1.0  # non-normal
    k = 2
    for model in ("linear", "rnn"):
        W_k = impulse(net_of(model, W_x, W_h, W_y), k + 1)[k]
        s = tempsup.from_weights(W_x, W_h, W_y, model=model, k=k, seq_len=5).summary()
        np.testing.assert_allclose(s["A_k"], W_y.T @ W_k, rtol=1e-5, atol=1e-6)
        # "a" is readout 0's view of feature 0 at every age s < T
        want = [W_y[:, 0] @ w[:, 0] for w in impulse(net_of(model, W_x, W_h, W_y), 5)]
        np.testing.assert_allclose(s["a"], want, rtol=1e-5, atol=1e-6)


# ---- the interference-free half-space ---------------------------------------------------


def _free_counts(a: np.ndarray, k: int, b: float = 0.0) -> tuple[int, int]:
    """Ages s ≠ k (s < k + 4) with a_s + b ≤ 0, and those among s < k: counted by hand."""
    ages = [s for s in range(k + 4) if s != k and a[s] + b <= 0.0]
    return len(ages), sum(1 for s in ages if s < k)


def test_interference_free_counts_by_hand() -> None:
    # the spiral: a ∝ cos(100° s) = [+, −, −, (+ target), +, −, −]: ages 1, 2, 5, 6 are free
    a = spiral_a(8)
    assert _free_counts(a, 3) == (4, 2)
    # a bias −0.75 also silences age 4 (a_4 = 0.706), not age 0 (a_0 = 2.25)
    assert _free_counts(a, 3, -0.75) == (5, 2)
    # the delay line: ages 0, 1 (negative) and 3, 4, 5 (exactly 0: silent, hence free)
    assert _free_counts(DELAY_A, DELAY_K) == (5, 2)
    cases = [
        ("ssm", spiral(), None, SPIRAL["k"], (4, 2)),
        ("ssm", spiral(), -0.75, SPIRAL["k"], (5, 2)),
        ("rnn", (DELAY_W_x, DELAY_W_h, DELAY_W_y), None, DELAY_K, (5, 2)),
    ]
    for model, (W_x, W_h, W_y), b, k, want in cases:
        geo = geometry.summary(W_x[:, None], W_h, W_y[:, None],
                               None if b is None else np.array([b]), k, model == "rnn")  # fmt: skip
        assert (int(geo["n_interference_free"]), int(geo["n_intermediate_free"])) == want
        s = tempsup.from_weights(W_x, W_h, W_y, b, model=model, k=k, seq_len=T_SMALL).summary()
        assert (s["n_interference_free"], s["n_intermediate_free"]) == want, (model, b)


def test_half_space_membership_by_hand() -> None:
    """{h : w_yᵀh + b ≤ 0} with w_y = (1, 2), b = −1: the boundary belongs to it."""
    pts = np.array([[1.0, 0.0], [0.0, 1.0], [-3.0, 1.0], [0.5, 0.25], [0.0, 0.0], [2.0, -0.4]])
    want = [True, False, True, True, True, False]  # 0, 1, −2, 0, −1, 0.2
    assert geometry.in_half_space(pts, np.array([1.0, 2.0]), -1.0).tolist() == want
    A = np.array([[[1.0]], [[-2.0]], [[0.0]], [[1e-12]], [[0.3]]])  # (n, 1, 1)
    assert geometry.interference_free(A)[:, 0, 0].tolist() == [False, True, True, True, False]
    free = geometry.interference_free(A, np.array([-0.5]))[:, 0, 0].tolist()
    assert free == [False, True, True, True, True]


# ---- recall (vector task) -----------------------------------------------------------------


def test_lone_input_recall_and_kept_set_by_hand() -> None:
    """Independent units with gains g: a lone unit input on feature j reaches readout j
    after k steps as y_j g_j^k (+ b_j), rectified: recall = (1, 0.9, 0), kept "AB"."""
    g = np.array([1.0, 0.9, 0.5])
    k = 2
    W_x, W_h, W_y = np.eye(3), np.diag(g), np.diag([1.0, 1.0 / 0.81, 1.0])
    b = np.array([0.0, -0.1, -0.5])
    net = net_of("rnn", W_x, W_h, W_y, b)
    x = np.zeros((3, k + 1, 3))
    x[[0, 1, 2], 0, [0, 1, 2]] = 1.0  # sequence j: a unit input on feature j at t = 1
    want = forward(net, x)[[0, 1, 2], k, [0, 1, 2]]  # readout j at t = k + 1
    np.testing.assert_allclose(want, [1.0, 0.9, 0.0], atol=1e-12)
    run = tempsup.from_weights(W_x, W_h, W_y, b, model="rnn", k=k, seq_len=6)
    rec = analysis.recall(run)
    np.testing.assert_allclose(rec, [want], rtol=1e-5, atol=1e-6)
    assert analysis.kept_set(rec[0]) == "AB"
    # a linear readout is not rectified: feature C's gain is −0.25
    lin = tempsup.from_weights(W_x, W_h, W_y, b, model="linear", k=k, seq_len=6)
    np.testing.assert_allclose(analysis.recall(lin), [[1.0, 0.9, -0.25]], rtol=1e-5, atol=1e-6)


def test_task_recall_of_a_scaled_delay_line_is_exact() -> None:
    """A shift register (N_h = k + 1) read out with gain γ outputs exactly γ·x_{t−k} and
    nothing else, so 1 − Σ(y − ŷ)²/Σy² = 1 − (1 − γ)² on any sample."""
    k, gamma = 3, 0.8
    W_h = np.eye(k + 1, k=-1)  # e_i → e_{i+1}, the last one falls off
    W_x, W_y = np.eye(k + 1)[0], gamma * np.eye(k + 1)[k]
    for model in ("linear", "rnn"):
        run = tempsup.from_weights(W_x, W_h, W_y, model=model, k=k, seq_len=10, sparsity=0.5)
        rec = analysis.task_recall(run, n_seq=256)
        assert float(rec[0, 0]) == pytest.approx(1.0 - (1.0 - gamma) ** 2, rel=1e-5), model


# ---- E[L] and the four terms --------------------------------------------------------------


def _enumerate(T: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Every binary input sequence (2^T, T, 1) and its probability under Bernoulli(p)."""
    x = np.array(list(itertools.product([0.0, 1.0], repeat=T)))
    prob = p ** x.sum(1) * (1 - p) ** (T - x.sum(1))
    return x[..., None], prob


def _linear_parts(a: np.ndarray, x: np.ndarray, k: int, b: float = 0.0) -> np.ndarray:
    """The squared error of the linear RNN split per sequence (B, 4) into the parts whose
    expectations are the four terms: e_t = Σ_s a_s x_{t−s} − x_{t−k} + b, and
    e² = (a_k − 1)²x_k² [task] + Σ_{s≠k} a_s² x_s² [projection]
       − 2 x_k Σ_{s≠k} a_s x_s + 2b e_{b=0} + b² [mean correction]
       + Σ_{s≠s'} a_s a_s' x_s x_s' [composition],   x_s := x_{t−s}, s < t."""
    B, T, _ = x.shape
    parts = np.zeros((B, 4))
    for t in range(T):  # 0-based step t sees ages s = 0..t
        xs = x[:, t::-1, 0]  # (B, t + 1): x_{t−s}
        aa = a[: t + 1]
        lin = xs @ aa  # Σ_s a_s x_s
        sq = xs**2 @ aa**2
        xk = xs[:, k] if t >= k else np.zeros(B)
        ak = aa[k] if t >= k else 0.0
        parts[:, 0] += (ak - 1.0) ** 2 * xk**2 if t >= k else 0.0
        parts[:, 2] += sq - ak**2 * xk**2
        parts[:, 1] += -2.0 * xk * (lin - ak * xk)
        parts[:, 3] += lin**2 - sq
        e = lin - xk
        parts[:, 1] += 2.0 * b * e + b * b
    return parts


@pytest.mark.parametrize("bias", [None, -0.2])
def test_linear_terms_and_expected_loss_by_enumeration(bias: float | None) -> None:
    """Binary inputs (U = 1), T = 8, p = 0.3: E[L] and each term are sums over all 256
    input sequences of their parts of the squared error (`_linear_parts`), exactly."""
    W_x, W_h, W_y = spiral()
    k, T, S = SPIRAL["k"], T_SMALL, 0.7
    a = spiral_a(T)
    x, prob = _enumerate(T, 1 - S)
    want = prob @ _linear_parts(a, x, k, 0.0 if bias is None else bias)
    net = net_of("linear", W_x, W_h, W_y, bias)
    assert prob @ losses(net, x, k) == pytest.approx(want.sum(), rel=1e-12)  # parts add up
    got = theory.loss_terms(a[:, None, None], k, 1 - S, 1.0, 1.0, T,
                            b_y=None if bias is None else np.array([bias]))  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    run = tempsup.from_weights(W_x, W_h, W_y, bias, model="linear", k=k, sparsity=S,
                               input_dist="constant", seq_len=T)  # fmt: skip
    s = run.summary()
    np.testing.assert_allclose(list(s["terms"].values()), want, rtol=1e-5, atol=1e-6)
    assert s["expected_loss"] == pytest.approx(want.sum(), rel=1e-5)
    assert s["terms_sum"] == pytest.approx(want.sum(), rel=1e-5)


def test_linear_terms_by_monte_carlo_with_uniform_inputs() -> None:
    """U ~ uniform[0, 1]: the terms need ν = E[U²] = 1/3 (not Var U = 1/12); each is the
    mean of its part of the squared error over 40,000 sampled sequences, within Z standard
    errors."""
    W_x, W_h, W_y = spiral()
    k, T, S = SPIRAL["k"], T_SMALL, 0.5
    rng = np.random.default_rng(11)
    n = 40_000
    x = (rng.random((n, T, 1)) < 1 - S) * rng.random((n, T, 1))
    parts = _linear_parts(spiral_a(T), x, k)
    mean, se = parts.mean(0), parts.std(0, ddof=1) / np.sqrt(n)
    s = tempsup.from_weights(W_x, W_h, W_y, model="linear", k=k, sparsity=S, seq_len=T).summary()
    got = np.array(list(s["terms"].values()))
    assert np.all(np.abs(got - mean) <= Z * se), (got, mean, se)
    total = parts.sum(1)
    assert abs(s["expected_loss"] - total.mean()) <= Z * total.std(ddof=1) / np.sqrt(n)


# -- ReLU readouts: the terms of science.md §1c from their definition (ℓ of sets of ages)


def _yhat(net: dict, sets: list[tuple[int, ...]], mags: list[list[np.ndarray]]) -> np.ndarray:
    """ŷ at a step when exactly the inputs of the ages in `sets[i]` are active with the
    magnitudes `mags[i]` (each (n,)), all others silent: forward passes, (len(sets), n)."""
    n = max([len(m) for ms in mags for m in ms] + [1])
    out = np.zeros((len(sets), n))
    by_len: dict[int, list[int]] = {}  # one forward pass per sequence length max(ages) + 1
    for i, ages in enumerate(sets):
        by_len.setdefault(max(ages, default=0) + 1, []).append(i)
    for L, rows in by_len.items():
        x = np.zeros((len(rows), n, L, 1))
        for r, i in enumerate(rows):
            for s, u in zip(sets[i], mags[i], strict=True):
                x[r, :, L - 1 - s, 0] = u
        out[rows] = forward(net, x.reshape(-1, L, 1), last=True)[:, 0].reshape(len(rows), n)
    return out


def _relu_terms(net: dict, k: int, p: float, T: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per sample (n, 4): task, mean correction, projection, composition as science.md
    §1c defines them (no bias), u and v the magnitudes of the (newer, older) pair's inputs;
    the target's magnitude is u wherever it is one of the pair. Their means are the terms."""
    ages = range(T)
    others = [s for s in ages if s != k]
    pairs = list(itertools.combinations(ages, 2))  # (newer s1, older s2)
    y1 = _yhat(net, [(s,) for s in ages], [[u]] * T)  # (T, n), magnitude u
    y1v = _yhat(net, [(s,) for s in ages], [[v]] * T)  # magnitude v
    yk = _yhat(net, [(k, s) for s in others], [[u, v]] * len(others))  # the target and s
    y2 = _yhat(net, pairs, [[u, v]] * len(pairs))
    n_ = lambda s: T - s  # noqa: E731  n(A) = T − max A
    task = p * n_(k) * (u - y1[k]) ** 2
    proj = p * sum(n_(s) * y1[s] ** 2 for s in others)
    mean = -2 * p**2 * sum(n_(max(s, k)) * u * (yk[i] - y1[k]) for i, s in enumerate(others))
    comp = p**2 * sum(
        n_(s2) * (y2[i] ** 2 - y1[s1] ** 2 - y1v[s2] ** 2) for i, (s1, s2) in enumerate(pairs)
    )
    return np.stack(np.broadcast_arrays(task, mean, proj, comp), axis=-1)


def _order2_with_bias(net: dict, k: int, p: float, T: int) -> float:
    """Σ_{|A| ≤ 2} p^{|A|} n(A) Δ(A) for binary inputs, bias included (ℓ(∅) = ReLU(b)²):
    what the four terms add up to when a bias is present."""
    one = np.ones(1)

    def ell(ages: tuple[int, ...]) -> float:
        y = 1.0 if k in ages else 0.0
        return float((y - _yhat(net, [ages], [[one] * len(ages)])[0, 0]) ** 2)

    e0 = ell(())
    d1 = {s: ell((s,)) - e0 for s in range(T)}
    total = T * e0 + p * sum((T - s) * d1[s] for s in range(T))
    for s1, s2 in itertools.combinations(range(T), 2):
        total += p**2 * (T - s2) * (ell((s1, s2)) - d1[s1] - d1[s2] - e0)
    return total


# A ReLU RNN whose hidden ReLU matters (w_2 = (−1.05, 0.775) is cut to (0, 0.775)) and
# whose kernel has both signs and a_k ≠ 1: a = [−0.04, 1.3, 1.35, 0.775, 0.39, …], k = 2.
RECT = (np.array([1.0, 0.3]), np.array([[0.5, -1.0], [1.0, 0.5]]), np.array([-0.4, 1.2]))

RELU_NETS = {
    "SSM spiral": ("ssm", spiral(), SPIRAL["k"]),
    "ReLU RNN, rectified spiral": ("rnn", RECT, 2),
    "ReLU RNN delay line": ("rnn", (DELAY_W_x, DELAY_W_h, DELAY_W_y), DELAY_K),
}


@pytest.mark.parametrize("case", RELU_NETS)
def test_relu_terms_and_expected_loss_by_enumeration(case: str) -> None:
    """Binary inputs, T = 8, p = 0.3: the terms from their definition (forward passes of
    every set of at most two inputs) and E[L] over all 256 sequences, exactly. The run's
    E[L] is within the convolution's documented error (SSM) or Z of its own standard
    errors (ReLU RNN, Monte Carlo)."""
    model, (W_x, W_h, W_y), k = RELU_NETS[case]
    T, S = T_SMALL, 0.7
    net = net_of(model, W_x, W_h, W_y)
    terms = _relu_terms(net, k, 1 - S, T, np.ones(1), np.ones(1))[0]
    x, prob = _enumerate(T, 1 - S)
    exact = float(prob @ losses(net, x, k))
    s = tempsup.from_weights(W_x, W_h, W_y, model=model, k=k, sparsity=S,
                             input_dist="constant", seq_len=T).summary()  # fmt: skip
    np.testing.assert_allclose(list(s["terms"].values()), terms, rtol=1e-5, atol=1e-6)
    if model == "ssm":
        assert s["expected_loss_se"] == 0.0
        assert s["expected_loss"] == pytest.approx(exact, rel=SSM_REL_ERROR)
    else:
        assert s["expected_loss_se"] > 0.0
        assert abs(s["expected_loss"] - exact) <= Z * s["expected_loss_se"] + F32 * exact


@pytest.mark.parametrize("case", RELU_NETS)
def test_relu_terms_with_a_bias_book_it_under_the_mean_correction(case: str) -> None:
    """With a readout bias the task, projection and composition terms are those of the
    network without it, and the four add up to the whole second-order expansion with it."""
    model, (W_x, W_h, W_y), k = RELU_NETS[case]
    T, S, b = T_SMALL, 0.7, -0.3
    plain = _relu_terms(net_of(model, W_x, W_h, W_y), k, 1 - S, T, np.ones(1), np.ones(1))[0]
    order2 = _order2_with_bias(net_of(model, W_x, W_h, W_y, b), k, 1 - S, T)
    s = tempsup.from_weights(W_x, W_h, W_y, b, model=model, k=k, sparsity=S,
                             input_dist="constant", seq_len=T).summary()  # fmt: skip
    got = np.array(list(s["terms"].values()))
    np.testing.assert_allclose(got[[0, 2, 3]], plain[[0, 2, 3]], rtol=1e-5, atol=1e-6)
    assert got.sum() == pytest.approx(order2, rel=1e-5)
    assert abs(order2 - plain.sum()) > 0.1  # the bias does change the mean correction


@pytest.mark.parametrize("case", RELU_NETS)
def test_relu_terms_and_expected_loss_by_monte_carlo_with_uniform_inputs(case: str) -> None:
    """U ~ uniform[0, 1] (the default law): terms and E[L] against Monte Carlo of their
    definitions, within Z standard errors (the ReLU RNN's pair integrals are a quadrature
    whose documented accuracy is 5e-4 relative: added to its tolerance)."""
    model, (W_x, W_h, W_y), k = RELU_NETS[case]
    T, S = 6, 0.7
    net = net_of(model, W_x, W_h, W_y)
    rng = np.random.default_rng(5)
    n = 20_000
    per = _relu_terms(net, k, 1 - S, T, rng.random(n), rng.random(n))
    mean, se = per.mean(0), per.std(0, ddof=1) / np.sqrt(n)
    x = (rng.random((n, T, 1)) < 1 - S) * rng.random((n, T, 1))
    L = losses(net, x, k)
    s = tempsup.from_weights(W_x, W_h, W_y, model=model, k=k, sparsity=S, seq_len=T).summary()
    got = np.array(list(s["terms"].values()))
    quad = 5e-4 if model == "rnn" else F32  # relative accuracy of the method under test
    assert np.all(np.abs(got - mean) <= Z * se + quad * np.abs(mean) + 1e-9), (got, mean, se)
    err = np.hypot(L.std(ddof=1) / np.sqrt(n), s["expected_loss_se"])
    method = SSM_REL_ERROR if model == "ssm" else F32
    assert abs(s["expected_loss"] - L.mean()) <= Z * err + method * L.mean()


# ---- end to end: the surfaces read the numbers checked above -----------------------------


def test_inspect_json_and_the_eigen_panel_report_the_independent_values(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One constructed run (the SSM spiral, bias −0.75, binary inputs): `tempsup inspect
    --json` on its saved file and the eigen panel print ρ, kθ, ‖w_0‖, a_s, the counts, E[L]
    and the terms computed here."""
    W_x, W_h, W_y = spiral()
    k, T, S, b = SPIRAL["k"], T_SMALL, 0.7, -0.75
    net = net_of("ssm", W_x, W_h, W_y, b)
    x, prob = _enumerate(T, 1 - S)
    exact = float(prob @ losses(net, x, k))
    run = tempsup.from_weights(W_x, W_h, W_y, b, model="ssm", k=k, sparsity=S,
                               input_dist="constant", seq_len=T, loss=[1.25])  # fmt: skip
    path = run.save(tmp_path / "spiral.npz") or tmp_path / "spiral.npz"
    assert cli_main(["inspect", str(path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["spectral_radius"] == pytest.approx(0.8, rel=1e-5)
    assert d["swept_angle_deg"] == pytest.approx(300.0, abs=1e-3)
    assert d["w0_norm"] == pytest.approx(1.5, rel=1e-5)
    np.testing.assert_allclose(d["a"], spiral_a(T), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d["norms"], 1.5 * 0.8 ** np.arange(k + 4), rtol=1e-5)
    assert (d["n_interference_free"], d["n_intermediate_free"]) == _free_counts(spiral_a(T), k, b)
    assert d["expected_loss"] == pytest.approx(exact, rel=SSM_REL_ERROR)
    assert d["loss"] == pytest.approx(1.25)
    assert d["terms_sum"] == pytest.approx(sum(d["terms"].values()), rel=1e-6)
    lam = [complex(*z) for z in d["eigenvalues"]]
    np.testing.assert_allclose(lam, 0.8 * np.exp(1j * np.radians([100.0, -100.0])), atol=1e-6)
    rho, angle, w0 = eigen_panel_numbers(run)  # the explorer's eigen panel
    assert rho == pytest.approx(0.8, rel=1e-3)  # printed to 3 (kθ: 4) significant digits
    assert angle == pytest.approx(300.0, rel=1e-4)
    assert w0 == pytest.approx(1.5, rel=1e-3)
