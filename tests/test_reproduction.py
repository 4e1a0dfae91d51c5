"""Reproduce the paper's headline geometry with the default recipe (science.md §1, §1b).

Slow: each test trains 16-64 models for 2000 steps (a few seconds each here, more on
a loaded machine). Training is deterministic for a given seed on one machine, so
the numbers quoted in the comments are what these exact runs gave when written
(torch 2.13 CPU, one thread).

No test picks a lucky base seed: the paper's protocol is best of n, and the two
headline tests train `SEEDS` seeds from the default base seed, enough that the
best one finds the optimum from any base seed (about 1 seed in 5 does, so all 32
miss it with probability 0.8^32 ≈ 1e-3), and then assert that more than one seed
found it, so the optimum is no single seed's luck either.
"""

from __future__ import annotations

import numpy as np
import pytest

from tempsup.analysis.measures import canonical, final_weights, is_regular_polygon, polygon
from tempsup.analysis.sweeps import train_runs
from tempsup.model.config import RunConfig
from tempsup.paper import presets as pr
from tempsup.paper.presets import four_terms, linear_any_sparsity, relu_rnn_dense, ssm_jump
from tempsup.theory import geometry

pytestmark = pytest.mark.slow

SEEDS = 32  # four best-of-8 draws of the default recipe in one run (module docstring)


def angle_gap(angle_deg: float, target_deg: float) -> float:
    """Distance between two angles in degrees, modulo 360, in [0, 180]."""
    return abs((angle_deg - target_deg + 180.0) % 360.0 - 180.0)


def spiral_seeds(W_h: np.ndarray, k: int) -> np.ndarray:
    """Per seed (W_h (M, 2, 2)): a complex pair strictly inside the unit circle with
    k·arg λ ≈ 90° (or its mirror, arg λ → 180° − arg λ), as asserted on the best seed."""
    lam = geometry.eigenvalues(W_h)[:, 0]
    theta = np.abs(np.degrees(np.angle(lam)))
    gap = np.minimum(
        [angle_gap(k * t, 90.0) for t in theta], [angle_gap(k * (180.0 - t), 90.0) for t in theta]
    )
    return (np.abs(lam.imag) > 0.1) & (np.abs(lam) > 0.5) & (np.abs(lam) < 0.95) & (gap < 20.0)


def test_linear_rnn_learns_a_spiral_sink() -> None:
    """N_h = 2, k = 3, T = 20, S = 0.9, 2000 steps, batch 512 (the defaults), SEEDS seeds.

    The default 8 seeds find the 30° optimum of §1b from most base seeds, not all:
    base seed 0's best of 8 is the real-eigenvalue minimum, base seeds 1-7 each have
    1-3 seeds at the optimum (13 of 64 models). With 32 seeds from base seed 0 the best
    (seed 25) is the optimum, and so were the best of 32 from base seeds 1, 2 and 3.
    Observed (best seed 25 of 32): λ = 0.700 ± 0.409i, |λ| = 0.810, arg λ = 30.3°
    (k·arg λ = 90.9°), a_0..a_5 = [-0.113, 0.159, 0.298, 0.312, 0.241, 0.132], then
    negative from s = 7 (min -0.089 at s = 9), positive again from s = 13: a damped
    oscillation; final measured loss 0.3683, exact expected loss 0.3678 (the same optimum
    as the best of 8 from base seed 1, seed 6: loss 0.3637 on its minibatches). The
    other seeds sit in the real-eigenvalue local minimum (λ ≈ -0.874, 0.865; loss
    0.3932) or the mirror solution (arg λ = 147.3°; loss 0.3953): 19 of 32 seeds at
    base seed 0 are spirals of either hand.
    """
    config = RunConfig(model="linear")
    assert (config.hidden, config.k, config.seq_len, config.seeds) == (2, 3, 20, 8)
    assert (config.steps, config.batch) == (2000, 512)
    (run,) = train_runs([config.replace(seeds=SEEDS)])
    assert spiral_seeds(run["W_h"][-1].astype(float), config.k).sum() >= 2
    w = run.weights()  # best seed, final frame
    k = config.k

    lam = geometry.eigenvalues(w["W_h"])
    assert abs(lam[0].imag) > 0.1, f"expected a complex-conjugate pair, got {lam}"
    assert lam[1] == pytest.approx(np.conj(lam[0]), abs=1e-6)
    assert 0.5 < abs(lam[0]) < 0.95, f"expected a sink strictly inside the unit circle, {lam}"

    theta = abs(np.degrees(np.angle(lam[0])))
    mirror = 180.0 - theta  # λ -> -conj(λ) gives the mirror solution (arg ≈ 148°)
    gap = min(angle_gap(k * theta, 90.0), angle_gap(k * mirror, 90.0))
    assert gap < 20.0, f"k·arg λ = {k * theta:.1f}° (arg λ = {theta:.1f}°), expected ≈ 90°"

    a = geometry.summary(w["W_x"], w["W_h"], w["W_y"], w["b_y"], k, False, n=config.seq_len)["a"]
    assert int(np.argmax(a)) == k, f"a_s peaks at s = {np.argmax(a)}, not k: {np.round(a, 3)}"
    assert a[k] > 0.2
    signs = np.sign(a[np.abs(a) > 1e-3])
    assert np.count_nonzero(np.diff(signs)) >= 2, f"no oscillation: {np.round(a, 3)}"
    # damped: the envelope shrinks like |λ|^s
    assert np.abs(a[10:]).max() < 0.5 * a[k]
    assert np.abs(a[15:]).max() < 0.25 * a[k]
    # the four-term expected loss is exact for the linear model: it tracks the measured loss
    assert run.final_loss[run.best] == pytest.approx(run["terms"][-1, run.best].sum(), rel=0.05)


def test_ssm_phase_transition_with_sparsity() -> None:
    """SSM, tied readout, S = 0.3 and 0.9 in one batch of 2 x SEEDS seeds, base seed 0.

    Observed with 8 seeds (best seed of each point):
    - S = 0.3: seed 5, kθ = -107.7° (|kθ| ≈ 90°), λ = 0.686 ± 0.376i, ρ(W_h) = 0.782,
      ‖w_0‖ = 0.762, a_0..a_6 = [-0.133, 0.172, 0.317, 0.330, 0.259, 0.153, 0.052]
      (the linear solution), loss 1.364, 2/8 seeds succeeded.
    - S = 0.9: seed 7, kθ = +269.8°, λ = 0.001 ± 0.483i, ρ(W_h) = 0.483, ‖w_0‖ = 2.551,
      a_0..a_6 = [-0.010, -4.326, -0.002, 1.011, 0.002, -0.236, -0.001] (§1b: [0, -4.5,
      0, 1.01, 0, -0.23]), loss 0.0546, 1/8 seeds succeeded (the others end near ±90°
      or ±435° with loss 0.24-0.42); 5 of the 6 ages s ≠ k in 0..6 are interference-free.
    With 8 seeds base seeds 1 and 2 give the same picture (sparse: ±269.8°, ρ ≈ 0.48);
    base seed 3 misses the sparse solution (best kθ = 438°). With 32 seeds base seeds
    0, 1 and 3 all give dense 108.8°, sparse 269.8° (ρ 0.47-0.48), with 9, 10 and 6 of
    the 32 sparse seeds at ≈ 270°. A frame every 100 steps: only the final weights and
    the last quarter's losses are read.
    """
    base = RunConfig(model="ssm")
    assert (base.hidden, base.k, base.seq_len, base.seeds, base.tied) == (2, 3, 20, 8, True)
    base = base.replace(seeds=SEEDS, snapshot_every=100)
    dense, sparse = train_runs([base.replace(sparsity=0.3), base.replace(sparsity=0.9)])
    d, s = dense.summary(), sparse.summary()

    assert angle_gap(abs(d["swept_angle_deg"]), 90.0) < 30.0, d
    assert angle_gap(abs(s["swept_angle_deg"]), 270.0) < 30.0, s
    assert s["spectral_radius"] < d["spectral_radius"], (d, s)
    assert d["successes"] >= 1 and s["successes"] >= 1
    theta = np.abs(np.asarray(canonical(sparse)["swept_angle_deg"], dtype=float))
    assert (np.abs(theta - 270.0) < 30.0).sum() >= 2, np.round(theta)  # not one lucky seed

    # the sparse solution packs the other ages into the interference-free half-space
    w = sparse.weights()
    a = geometry.summary(w["W_x"], w["W_h"], w["W_y"], w["b_y"], 3, False)["a"]
    assert a[3] == pytest.approx(1.0, abs=0.1)  # a_k ≈ 1.01 (§1b)
    assert s["n_interference_free"] >= 4, np.round(a, 3)

    # the four second-order terms track the measured loss of the sparse SSM (science.md §1c:
    # 0.0534 vs 0.0533); the dense one needs third order and is not judged
    (terms,) = four_terms.check({"sparse": sparse, "dense": dense})
    assert terms.held, terms.measured


# ---- the claims added with the sweeps (issue 9 part 4): the presets' own checkers ----------


def test_linear_rnn_finds_the_same_sink_at_any_sparsity() -> None:
    """The linear-any-sparsity recipe at its two ends, S = 0.1 and 0.97 (16 seeds each).

    Observed when written: best seeds arg λ = 27.4° and 31.2°, |λ| = 0.767 and 0.818,
    k·arg λ = 82° and 94° (4 and 1 of 16 seeds at the sink).
    """
    p = pr.preset("linear-any-sparsity")
    labels = ("S=0.1", "S=0.97")
    runs = dict(zip(labels, train_runs([p.config(lab) for lab in labels]), strict=True))
    (res,) = linear_any_sparsity.check(runs)
    assert res.held, res.measured
    assert res.measured["arg_spread_deg"] <= 8.0 and res.measured["abs_spread"] <= 0.1


def test_ssm_kernel_angle_jumps_between_s_0_4_and_0_5() -> None:
    """The ssm-jump recipe around its jump: S = 0.4, 0.45, 0.5 (16 seeds each).

    Observed when written (S = 0.4, 0.5 of the full sweep): best kθ = −109° then 271°,
    the lowest loss of the 270° seeds falls below the dense seeds' between them (1.70 vs
    1.33 at S = 0.4, 1.21 vs 1.25 at S = 0.5); each seed stays in its own basin.
    """
    p = pr.preset("ssm-jump")
    labels = ("S=0.4", "S=0.45", "S=0.5")
    runs = dict(zip(labels, train_runs([p.config(lab) for lab in labels]), strict=True))
    (res,) = ssm_jump.check(runs)
    assert res.held, res.measured
    assert res.measured["regime_best"][0] == "d" and res.measured["regime_best"][-1] == "s"


def test_dense_relu_rnn_finds_approximately_the_spiral_sink() -> None:
    """ReLU RNN at S = 0.3 (16 seeds) against the linear RNN at S = 0.3.

    Observed when written: λ = 0.723 ± 0.422i, k·arg λ = 90.8°, kθ = −97°,
    a_0..a_6 = [−0.15, 0.15, 0.32, 0.35, 0.28, 0.16, 0.10], within 0.045 of the
    linear kernel; 11 of 16 seeds die (a = 0).
    """
    p = pr.preset("relu-rnn-dense")
    rnn, linear = train_runs([p.config("rnn")])[0], train_runs([p.config("linear")])[0]
    (res,) = relu_rnn_dense.check({"rnn": rnn, "linear": linear})
    assert res.held, res.measured
    assert 70 <= res.measured["k_arg_lambda_deg"] <= 110


def test_five_features_sit_on_a_pentagon_at_k_0() -> None:
    """The vector preset at k = 0: N_h = 2, importance 0.9^i, S = 0.97, 8 seeds.

    Observed when written: best seed gaps 59°, 65°, 77°, 78°, 81°, norms 0.77–0.97;
    4 of 8 seeds pentagons, the others a square with a short fifth feature or lopsided.
    """
    (run,) = train_runs([pr.preset("vector-all-or-none").config("k=0")])
    W_x = final_weights(run)["W_x"]
    assert is_regular_polygon(W_x)[run.best], polygon(W_x[run.best])
