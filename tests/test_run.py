"""Runs as data and as files (tempsup.io.run): frames, shapes, the .npz round trip,
damaged or foreign files, and which seeds count as successes."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import numpy as np
import pytest

from tempsup.analysis.sweeps import train_runs
from tempsup.errors import TempsupError
from tempsup.io.run import (
    ARRAYS,
    DERIVED,
    SUCCESS_FRACTION,
    Run,
    batch_frames,
    derived,
    frame,
    split_snapshot,
    success_mask,
)
from tempsup.model.config import RunConfig, importance_weights
from tempsup.theory import budget, geometry
from tempsup.theory import closed_form as theory
from tempsup.training.trainer import Snapshot
from tests.helpers import simulate

TINY = RunConfig(steps=6, snapshot_every=2, batch=16, seeds=3)


@pytest.fixture(scope="module")
def run() -> Run:
    (r,) = train_runs([TINY])
    return r


def npz_bytes(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def file_arrays(r: Run) -> dict[str, np.ndarray]:
    return {**r.arrays, "config": np.asarray(r.config.to_json())}


def random_snapshot(m: int, n_h: int, n_x: int, seed: int = 0) -> Snapshot:
    rng = np.random.default_rng(seed)
    return Snapshot(
        step=7,
        W_x=rng.normal(size=(m, n_h, n_x)),
        W_h=0.4 * rng.normal(size=(m, n_h, n_h)),
        W_y=rng.normal(size=(m, n_h, n_x)),
        b_y=rng.normal(size=(m, n_x)) * 0.1,
        loss=rng.random(m),
    )


# ---- frames ------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
@pytest.mark.parametrize(("n_x", "bias"), [(1, False), (3, True)])
def test_frame_adds_terms_of_the_right_shape(model: str, n_x: int, bias: bool) -> None:
    config = RunConfig(model=model, inputs=n_x, hidden=2, bias=bias, tied=False, seeds=4)
    snap = random_snapshot(4, 2, n_x)
    f = frame(config, snap)
    assert set(f) == set(ARRAYS)
    assert f["terms"].shape == (4, 4)
    assert f["expected_loss"].shape == f["expected_loss_se"].shape == (4,)
    assert f["step"].shape == () and f["step"].dtype == np.int64 and int(f["step"]) == 7
    for name in ("W_x", "W_h", "W_y", "b_y", "loss", *DERIVED):
        assert f[name].dtype == np.float32
    np.testing.assert_allclose(f["W_h"], snap.W_h.astype(np.float32))
    assert np.all(f["expected_loss"] > 0)
    # only the ReLU RNN's expected loss is an estimate
    assert np.all(f["expected_loss_se"] > 0) == (model == "rnn")
    assert np.all(f["expected_loss_se"] < 0.05 * f["expected_loss"])


def with_bias(snap: Snapshot) -> Snapshot:
    """Two models' readout biases of either sign: a positive one makes even silent steps cost."""
    return replace(snap, b_y=np.array([[0.2, -0.1], [-0.05, 0.15]]))


def sampled_loss(config: RunConfig, snap: Snapshot, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Plain sampling of the snapshot's network on the config's task: mean and its error (M,)."""
    loss = simulate(
        snap.W_x, snap.W_h, snap.W_y, config.p, config.input_dist, config.relu_hidden, n,
        seed=5, k=config.k, seq_len=config.seq_len, imp=np.asarray(importance_weights(config)),
        b=snap.b_y if config.bias else None, relu_readout=config.relu_readout,
    )  # fmt: skip
    return loss.mean(-1), loss.std(-1) / np.sqrt(n)


@pytest.mark.parametrize("model", ["ssm", "rnn"])
@pytest.mark.parametrize("n_x", [1, 2])
def test_frame_expected_loss_matches_an_independent_monte_carlo(model: str, n_x: int) -> None:
    """The frame's E[L] against plain sampling of the network (not the code that made it);
    with two inputs also the importance weights and a readout bias."""
    config = RunConfig(model=model, sparsity=0.8, hidden=2, inputs=n_x, tied=False, seeds=2)
    snap = random_snapshot(2, 2, n_x, seed=11)
    if n_x > 1:
        config, snap = config.replace(bias=True), with_bias(snap)
    f = frame(config, snap)
    mc, se = sampled_loss(config, snap, 40_000)
    assert np.all(np.abs(f["expected_loss"] - mc) < 4 * np.hypot(se, f["expected_loss_se"])), (
        f["expected_loss"], mc, se, f["expected_loss_se"],
    )  # fmt: skip


@pytest.mark.parametrize("model", ["ssm", "rnn"])
def test_frame_terms_of_a_relu_readout_sum_to_the_sampled_loss_when_sparse(model: str) -> None:
    """The four terms are exact to second order in p: at p = 0.01 (three inputs in one
    sequence: ~1 %) their sum is the loss of plain sampling, bias and importance included."""
    config = RunConfig(
        model=model, sparsity=0.99, hidden=2, inputs=2, bias=True, tied=False, seeds=2
    )
    snap = with_bias(random_snapshot(2, 2, 2, seed=11))
    terms = frame(config, snap)["terms"]
    mc, se = sampled_loss(config, snap, 80_000)
    assert np.all(np.abs(terms.sum(-1) - mc) < 4 * se), (terms.sum(-1), mc, se)


def test_frame_terms_use_the_sparsity_in_force_at_that_step() -> None:
    """A curriculum run's frame at step 0 uses the start sparsity, the last one the target."""
    config = RunConfig(model="linear", sparsity=0.9, curriculum=0.5, seeds=2, tied=False)
    snap = random_snapshot(2, 2, 1, seed=6)
    A = geometry.projections(snap.W_y, geometry.feature_directions(snap.W_x, snap.W_h, 20, False))
    for step, p in [(0, 0.5), (1, 0.5), (config.steps, 0.1), (config.steps // 4 + 1, 0.3)]:
        f = frame(config, Snapshot(step, snap.W_x, snap.W_h, snap.W_y, snap.b_y, snap.loss))
        want = theory.expected_loss(A, 3, p, 0.5, 1 / 3, 20)
        np.testing.assert_allclose(f["expected_loss"], want, rtol=1e-5)
        np.testing.assert_allclose(f["terms"].sum(-1), want, rtol=1e-5)


def test_old_run_files_get_their_derived_arrays_recomputed(run: Run) -> None:
    """A file written before `expected_loss` existed loads with every derived array fresh."""
    arrays = file_arrays(run)
    stale = {k: v for k, v in arrays.items() if k not in ("expected_loss", "expected_loss_se")}
    stale["terms"] = np.zeros_like(arrays["terms"])  # the old (first-order) terms
    loaded = Run.from_bytes(npz_bytes(**stale))
    for name in DERIVED:
        np.testing.assert_allclose(loaded[name], run[name], rtol=1e-5, atol=1e-7)
        assert loaded[name].dtype == np.float32, name  # as in a file written today


@pytest.mark.parametrize(
    ("model", "bias", "recomputed"),
    [("rnn", True, True), ("rnn", False, False), ("ssm", True, False)],
)
def test_files_of_an_older_derived_version_are_recomputed_where_they_differ(
    model: str, bias: bool, recomputed: bool
) -> None:
    """Version-1 files (no `derived_version`) of a ReLU RNN with a readout bias held an
    expected loss that double-counted the silent steps: they are recomputed on load; other
    runs' derived arrays were right and are read as stored."""
    from tempsup.io.run import DERIVED_VERSION

    config = RunConfig(model=model, bias=bias, seeds=2, steps=20, snapshot_every=10, batch=64)
    (r,) = train_runs([config])
    assert int(np.load(io.BytesIO(r.to_bytes()))["derived_version"]) == DERIVED_VERSION
    old = {**file_arrays(r), "expected_loss": np.full_like(r["expected_loss"], 123.0)}
    loaded = Run.from_bytes(npz_bytes(**old))
    if recomputed:
        np.testing.assert_allclose(loaded["expected_loss"], r["expected_loss"], rtol=1e-5)
    else:
        assert (loaded["expected_loss"] == 123.0).all()
    current = {**old, "derived_version": np.asarray(DERIVED_VERSION)}
    assert (Run.from_bytes(npz_bytes(**current))["expected_loss"] == 123.0).all()


def test_linear_terms_sum_to_the_exact_expected_loss() -> None:
    config = RunConfig(
        model="linear", sparsity=0.6, seeds=2, tied=False, bias=True, input_dist="exponential"
    )
    snap = random_snapshot(2, 2, 1, seed=3)
    terms = frame(config, snap)["terms"]
    A = geometry.projections(snap.W_y, geometry.feature_directions(snap.W_x, snap.W_h, 20, False))
    want = theory.expected_loss(A, 3, 0.4, 1.0, 2.0, 20, b_y=snap.b_y)
    np.testing.assert_allclose(terms.sum(-1), want, rtol=1e-5)


def test_bias_enters_terms_only_when_configured() -> None:
    snap = random_snapshot(2, 2, 1, seed=4)
    with_bias = frame(RunConfig(model="linear", seeds=2, tied=False, bias=True), snap)["terms"]
    without = frame(RunConfig(model="linear", seeds=2, tied=False, bias=False), snap)["terms"]
    assert not np.allclose(with_bias[:, 1], without[:, 1])  # the mean-correction term


def test_a_frame_the_budget_skips_holds_nan_of_the_documented_shapes() -> None:
    """A wide ReLU RNN gets its derived arrays at a few frames only (tempsup.theory.budget);
    the others hold NaN, as floats of the usual shapes, so a run still stacks them."""
    config = RunConfig(model="rnn", hidden=16, inputs=4, steps=2000, seeds=2, batch=64)
    step = 20  # not among the frames the budget picks (0, 180, 360, …)
    assert not budget.plan(config).covers(step)
    snap = random_snapshot(2, 16, 4)
    d = derived(config, step, snap.W_x, snap.W_h, snap.W_y, snap.b_y)
    assert set(d) == set(DERIVED)
    assert d["terms"].shape == (2, 4) and d["expected_loss"].shape == (2,)
    assert d["expected_loss_se"].shape == (2,)
    for name in DERIVED:
        assert d[name].dtype.kind == "f" and np.all(np.isnan(d[name])), name
    f = frame(config, Snapshot(step, snap.W_x, snap.W_h, snap.W_y, snap.b_y, snap.loss))
    assert set(f) == set(ARRAYS)


def test_a_relu_rnn_too_wide_for_the_terms_still_gets_its_expected_loss() -> None:
    """400 input slots: too many pairs for the four terms (NaN), but the expected loss is
    affordable, sampled without the terms' strata, and agrees with plain sampling."""
    config = RunConfig(
        model="rnn", hidden=18, inputs=4, seq_len=100, seeds=1, batch=16, steps=100,
        snapshot_every=50, tied=False,
    )  # fmt: skip
    todo = budget.plan(config)
    assert not todo.terms and todo.expected and todo.covers(0)
    snap = random_snapshot(1, 18, 4, seed=8)
    snap = replace(snap, step=0, W_x=0.3 * snap.W_x, W_h=0.3 * snap.W_h, W_y=0.3 * snap.W_y)
    f = frame(config, snap)
    assert np.all(np.isnan(f["terms"]))
    mc, se = sampled_loss(config, snap, 4_000)
    assert np.all(f["expected_loss_se"] > 0)
    assert np.all(np.abs(f["expected_loss"] - mc) < 4 * np.hypot(se, f["expected_loss_se"]))


def test_derived_arrays_of_stacked_frames_are_those_of_each_frame() -> None:
    """Weights may carry any leading axes (frames, seeds): each slice gets its own arrays."""
    config = RunConfig(model="linear", seeds=3, tied=False, bias=True)
    snaps = [random_snapshot(3, 2, 1, seed=s) for s in (1, 2)]
    names = ("W_x", "W_h", "W_y", "b_y")
    stacked = derived(config, 7, *(np.stack([getattr(s, n) for s in snaps]) for n in names))
    for f, snap in enumerate(snaps):
        alone = derived(config, 7, *(getattr(snap, n) for n in names))
        for name in DERIVED:
            assert stacked[name].shape == (2, *alone[name].shape), name
            np.testing.assert_allclose(stacked[name][f], alone[name], rtol=1e-12, err_msg=name)


def test_split_snapshot_gives_each_config_its_own_models() -> None:
    """Config-major model axis: config c owns the models after those of configs 0 … c-1."""
    configs = [RunConfig(seeds=2, sparsity=s) for s in (0.5, 0.7, 0.9)]
    snap = random_snapshot(6, 2, 1)
    parts = split_snapshot(snap, configs)
    assert len(parts) == 3
    for c, part in enumerate(parts):
        for name in ("W_x", "W_h", "W_y", "b_y", "loss"):
            np.testing.assert_array_equal(
                getattr(part, name), getattr(snap, name)[2 * c : 2 * c + 2]
            )
        assert part.step == snap.step


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_batch_frames_are_each_configs_own_frames(model: str) -> None:
    """A worker's batch: configs equal but for the base seed share one `derived` call,
    another sparsity gets its own; every config's frame is what `frame` gives it alone."""
    configs = [
        RunConfig(model=model, seeds=2, seed=1, sparsity=0.9, k=2),
        RunConfig(model=model, seeds=2, seed=2, sparsity=0.9, k=2),
        RunConfig(model=model, seeds=2, seed=3, sparsity=0.7, k=2),
        RunConfig(model=model, seeds=2, seed=4, sparsity=0.9, k=2),
    ]
    snap = random_snapshot(8, 2, 1, seed=5)
    got = batch_frames(configs, snap)
    for cfg, part, f in zip(configs, split_snapshot(snap, configs), got, strict=True):
        alone = frame(cfg, part)
        assert list(f) == list(alone)
        for name, value in alone.items():
            np.testing.assert_allclose(f[name], value, rtol=1e-6, err_msg=name)
    assert not np.allclose(got[0]["terms"], got[2]["terms"])  # each its own models and p


# ---- shapes: the seed axis is always there ------------------------------------------------


@pytest.mark.parametrize(("seeds", "n_h", "n_x"), [(1, 2, 1), (3, 3, 2)])
def test_documented_shapes(seeds: int, n_h: int, n_x: int) -> None:
    config = RunConfig(
        steps=5, snapshot_every=2, batch=8, seeds=seeds, hidden=n_h, inputs=n_x, seq_len=8
    )
    (r,) = train_runs([config])
    F = config.n_snapshots
    assert F == 4  # steps 0, 2, 4, 5
    expect = {
        "step": (F,),
        "W_x": (F, seeds, n_h, n_x),
        "W_h": (F, seeds, n_h, n_h),
        "W_y": (F, seeds, n_h, n_x),
        "b_y": (F, seeds, n_x),
        "loss": (F, seeds),
        "terms": (F, seeds, 4),
        "expected_loss": (F, seeds),
        "expected_loss_se": (F, seeds),
    }
    assert {k: r[k].shape for k in ARRAYS} == expect
    assert r["step"].tolist() == [0, 2, 4, 5]
    assert r.n_frames == F
    assert r.success.shape == (seeds,) and r.success.dtype == bool
    assert 0 <= r.best < seeds
    w = r.weights()
    assert w["W_h"].shape == (n_h, n_h) and w["b_y"].shape == (n_x,)
    # and the same shapes in the file
    with np.load(io.BytesIO(r.to_bytes()), allow_pickle=False) as npz:
        for k, shape in expect.items():
            assert npz[k].shape == shape
        assert npz["success"].shape == (seeds,)
        assert npz["best"].shape == ()
        assert npz["config"].shape == ()


def test_summary_of_the_best_seed(run: Run) -> None:
    s = run.summary()
    assert s["seed"] == run.best == int(np.argmin(run["loss"][-1]))
    assert s["loss"] == pytest.approx(float(run["loss"][-1].min()))
    assert s["expected_loss"] == pytest.approx(float(run["expected_loss"][-1, run.best]))
    assert s["seeds"] == 3 and 1 <= s["successes"] <= 3
    assert s["key"] == TINY.key
    for key in ("swept_angle_deg", "spectral_radius", "w0_norm"):
        assert np.isfinite(s[key])


SUMMARY_KEYS = {
    "key", "seed", "loss", "expected_loss", "expected_loss_se", "successes", "seeds",
    "swept_angle_deg", "spectral_radius", "w0_norm", "n_interference_free",
}  # fmt: skip


def interference_free_ages(W_x, W_h, W_y, b, k: int, relu_hidden: bool) -> int:
    """Ages s < k + 4, s ≠ k, at which a lone unit input leaves readout 0 silent: a_s + b <= 0."""
    w, count = W_x[:, 0], 0
    for s in range(k + 4):
        count += s != k and W_y[:, 0] @ w + b[0] <= 0
        w = W_h @ (np.maximum(w, 0) if relu_hidden else w)
    return count


def test_weights_and_summary_of_any_seed_are_that_seeds_final_frame() -> None:
    """A free readout with a bias in a ReLU RNN, three frames of random weights: the summary
    of seed s reads seed s at the last frame, for the measured and the derived numbers.
    The biases (+5: never silent, −5: always silent) set how many ages are interference-free."""
    config = RunConfig(
        model="rnn", seeds=3, tied=False, bias=True, steps=6, snapshot_every=3, sparsity=0.8
    )
    b_y = np.array([[5.0], [-5.0], [0.05]])
    snaps = [replace(random_snapshot(3, 2, 1, seed=20 + f), b_y=b_y) for f in range(3)]
    r = Run.from_frames(
        config, [frame(config, replace(snap, step=3 * f)) for f, snap in enumerate(snaps)]
    )
    se = r["expected_loss_se"]
    assert np.all(se > 0)
    for s in (0, 2):  # the frames tell apart (the silent seed 1 has one loss throughout)
        assert len(np.unique(se[:, s])) == 3 and len(np.unique(r["expected_loss"][:, s])) == 3
    for s in range(3):
        w = r.weights(seed=s)
        for name in ("W_x", "W_h", "W_y", "b_y"):
            np.testing.assert_array_equal(w[name], getattr(snaps[-1], name)[s].astype(np.float32))
        got = r.summary(seed=s)
        assert set(got) >= SUMMARY_KEYS  # and the rest of `tempsup inspect --json`
        assert got["seed"] == s and got["seeds"] == 3 and got["key"] == config.key
        assert got["loss"] == pytest.approx(float(snaps[-1].loss[s]), rel=1e-6)
        assert got["expected_loss"] == float(r["expected_loss"][-1, s])
        assert got["expected_loss_se"] == float(se[-1, s])
        radius = np.abs(np.linalg.eigvals(w["W_h"].astype(float))).max()
        assert got["spectral_radius"] == pytest.approx(radius, rel=1e-5)
        free = interference_free_ages(w["W_x"], w["W_h"], w["W_y"], w["b_y"], config.k, True)
        assert got["n_interference_free"] == free


def tied_canonical_w0_norm(W_x: np.ndarray, W_h: np.ndarray, k: int) -> float:
    """‖w_0‖ in the minimum-norm basis of a tied 2-D linear recurrence, by brute force.

    The tie allows the stretches G = ûûᵀ + √λ v̂v̂ᵀ (û along w_k, v̂ ⊥ û; science.md §1d);
    the canonical one minimises ‖G W_x‖² + ‖G W_h G⁻¹‖² over λ > 0 (grid, then a finer one).
    """
    u = np.linalg.matrix_power(W_h, k) @ W_x[:, 0]
    u /= np.linalg.norm(u)
    v = np.array([-u[1], u[0]])
    P, R = np.outer(u, u), np.outer(v, v)
    lo, hi = -6.0, 6.0
    for _ in range(3):
        lam = np.logspace(lo, hi, 2001)[:, None, None]
        G, G_inv = P + np.sqrt(lam) * R, P + R / np.sqrt(lam)
        cost = (np.linalg.norm(G @ W_x, axis=(1, 2)) ** 2
                + np.linalg.norm(G @ W_h @ G_inv, axis=(1, 2)) ** 2)  # fmt: skip
        best = int(np.argmin(cost))
        step = (hi - lo) / 2000
        lo, hi = lo + (best - 1) * step, lo + (best + 1) * step
    return float(np.linalg.norm(G[best] @ W_x))


def test_summary_of_a_tied_run_measures_w0_in_the_tied_gauge(run: Run) -> None:
    """The tied SSM's ‖w_0‖ is taken in the basis its tie admits, not the free readout's."""
    w = {n: v.astype(float) for n, v in run.weights().items()}
    want = tied_canonical_w0_norm(w["W_x"], w["W_h"], TINY.k)
    assert run.summary()["w0_norm"] == pytest.approx(want, rel=1e-4)


def test_from_frames_refuses_no_frames() -> None:
    with pytest.raises(TempsupError, match="no|at least one"):
        Run.from_frames(TINY, [])


# ---- the file round trip -----------------------------------------------------------------


def assert_same_run(a: Run, b: Run) -> None:
    assert a.config == b.config
    assert set(a.arrays) == set(b.arrays) == set(ARRAYS)
    for k in ARRAYS:
        assert a[k].dtype == b[k].dtype, k
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_bytes_round_trip(run: Run) -> None:
    assert_same_run(run, Run.from_bytes(run.to_bytes()))


def test_save_and_load(run: Run, tmp_path) -> None:
    path = run.save(tmp_path / "sub" / "run.npz")
    assert path.exists()
    assert_same_run(run, Run.load(path))
    assert_same_run(run, Run.load(str(path)))


def test_file_is_readable_without_tempsup(run: Run) -> None:
    """The README's snippet: plain numpy, no pickle."""
    with np.load(io.BytesIO(run.to_bytes()), allow_pickle=False) as npz:
        config = json.loads(str(npz["config"]))
        W_h = npz["W_h"][-1, int(npz["best"])]
        np.testing.assert_array_equal(npz["success"], run.success)
    assert RunConfig.from_dict(config) == run.config
    np.testing.assert_array_equal(W_h, run.weights()["W_h"])


# ---- damaged and foreign files: always TempsupError ------------------------------------------


def test_garbage_bytes(run: Run) -> None:
    good = run.to_bytes()
    for data in (b"", b"garbage", b"PK\x03\x04broken zip", good[: len(good) // 2], good[:100]):
        with pytest.raises(TempsupError, match="run file"):
            Run.from_bytes(data)


def test_plain_npy_is_not_a_run_file() -> None:
    buf = io.BytesIO()
    np.save(buf, np.zeros(3))
    with pytest.raises(TempsupError):
        Run.from_bytes(buf.getvalue())


@pytest.mark.parametrize("missing", [*(n for n in ARRAYS if n not in DERIVED), "config"])
def test_npz_missing_a_key(run: Run, missing: str) -> None:
    arrays = file_arrays(run)
    del arrays[missing]
    with pytest.raises(TempsupError, match=f"missing {missing}"):
        Run.from_bytes(npz_bytes(**arrays))


def test_npz_from_another_tool() -> None:
    with pytest.raises(TempsupError, match="not a tempsup run file"):
        Run.from_bytes(npz_bytes(weights=np.zeros((2, 2)), bias=np.zeros(2)))


@pytest.mark.parametrize(
    ("name", "reshape"),
    [
        ("W_h", lambda a: np.zeros(a.shape[:2] + (3, 3), np.float32)),  # hidden 3 vs config 2
        ("W_x", lambda a: a[:, :, :, 0]),  # dropped an axis
        ("W_y", lambda a: a[:-1]),  # one frame short
        ("b_y", lambda a: a[:, :2]),  # one seed short
        ("terms", lambda a: a[..., :3]),  # three terms
        ("expected_loss", lambda a: a[:, :1]),  # one seed
        ("step", lambda a: a[:, None]),
        ("loss", lambda a: a[:, 0]),  # no seed axis
        ("loss", lambda a: a[:0]),  # no frames
    ],
    ids=[
        "W_h-hidden",
        "W_x-ndim",
        "W_y-frames",
        "b_y-seeds",
        "terms-3",
        "expected-seeds",
        "step-2d",
        "loss-1d",
        "no-frames",
    ],
)
def test_npz_with_a_wrong_shape(run: Run, name: str, reshape) -> None:
    arrays = file_arrays(run)
    arrays[name] = reshape(arrays[name])
    with pytest.raises(TempsupError, match="run file"):  # the message names the source
        Run.from_bytes(npz_bytes(**arrays))


def test_npz_with_float_steps_is_refused(run: Run) -> None:
    """Steps count optimizer steps: a file with fractional ones is not a run file."""
    arrays = file_arrays(run)
    arrays["step"] = arrays["step"] + 0.5
    with pytest.raises(TempsupError, match="run file: step has dtype float"):
        Run.from_bytes(npz_bytes(**arrays))


def test_a_run_of_one_frame_round_trips_and_one_of_none_is_refused(run: Run) -> None:
    one = Run(run.config, {k: v[-1:] for k, v in run.arrays.items()})
    assert_same_run(one, Run.from_bytes(one.to_bytes()))
    arrays = {k: v[:0] for k, v in run.arrays.items()}
    with pytest.raises(TempsupError, match="run file: holds no frames"):
        Run.from_bytes(npz_bytes(**arrays, config=np.asarray(run.config.to_json())))


def test_npz_with_more_seeds_than_its_config(run: Run) -> None:
    """Every array consistent with each other, but 4 seeds where the config says 3."""
    arrays = file_arrays(run)
    for k in ("W_x", "W_h", "W_y", "b_y", "loss", *DERIVED):
        arrays[k] = np.concatenate([arrays[k], arrays[k][:, :1]], axis=1)
    with pytest.raises(TempsupError, match="seeds|shape"):
        Run.from_bytes(npz_bytes(**arrays))


@pytest.mark.parametrize(
    "array",
    [
        lambda a: a.astype(str),  # text where numbers belong
        lambda a: np.zeros(a.shape, dtype=[("x", "f4"), ("y", "f4")]),  # a record array
    ],
    ids=["str", "record"],
)
def test_npz_with_non_numeric_loss_is_refused_or_usable(run: Run, array) -> None:
    """A foreign file must either be refused with TempsupError or load into a Run
    whose every accessor works; never a numpy exception later."""
    arrays = file_arrays(run)
    arrays["loss"] = array(arrays["loss"])
    try:
        loaded = Run.from_bytes(npz_bytes(**arrays))
    except TempsupError:
        return
    loaded.summary()  # must not raise
    assert np.issubdtype(loaded.final_loss.dtype, np.floating)


def test_npz_with_pickled_objects_is_refused(run: Run) -> None:
    arrays = file_arrays(run)
    arrays["W_x"] = np.array([{"evil": 1}], dtype=object)
    with pytest.raises(TempsupError):
        Run.from_bytes(npz_bytes(**arrays))


@pytest.mark.parametrize(
    "config",
    [
        "{",  # not JSON
        "[1, 2]",  # JSON, not a mapping
        '{"k": 99}',  # an impossible config
        '{"bogus": 1}',  # an unknown field
        '{"sparsity": NaN}',
    ],
)
def test_npz_with_a_bad_config(run: Run, config: str) -> None:
    arrays = file_arrays(run)
    arrays["config"] = np.asarray(config)
    with pytest.raises(TempsupError, match="config"):
        Run.from_bytes(npz_bytes(**arrays))


@pytest.mark.parametrize("config", [np.asarray(5), np.asarray(["{}", "{}"]), np.asarray(b"{}")])
def test_npz_with_a_config_of_the_wrong_type(run: Run, config: np.ndarray) -> None:
    arrays = file_arrays(run)
    arrays["config"] = config
    try:
        loaded = Run.from_bytes(npz_bytes(**arrays))
    except TempsupError:
        return
    assert isinstance(loaded.config, RunConfig)


def test_load_missing_file_and_directory(tmp_path) -> None:
    with pytest.raises(TempsupError, match="cannot read"):
        Run.load(tmp_path / "nope.npz")
    with pytest.raises(TempsupError, match="cannot read"):
        Run.load(tmp_path)


def test_error_names_the_source(tmp_path) -> None:
    path = tmp_path / "broken.npz"
    path.write_bytes(b"nonsense")
    with pytest.raises(TempsupError, match="broken.npz"):
        Run.load(path)


# ---- success -------------------------------------------------------------------------------


def silent_loss(config: RunConfig) -> float:
    _, nu = theory.input_moments(config.input_dist)
    return float(theory.zero_output_loss(config.k, config.p, nu, config.seq_len))


def test_success_mask_semantics() -> None:
    config = RunConfig(model="rnn", sparsity=0.9)
    silent = silent_loss(config)  # 17 * 0.1 / 3
    assert silent == pytest.approx(17 * 0.1 / 3)
    best = 0.05
    threshold = best + (1 - SUCCESS_FRACTION) * (silent - best)
    final = np.array([silent, best, threshold, threshold + 1e-4, 0.95 * silent, silent * 1.01])
    np.testing.assert_array_equal(
        success_mask(config, final), [False, True, True, False, False, False]
    )


def test_all_dead_seeds_fail() -> None:
    config = RunConfig(model="rnn", sparsity=0.97, seeds=4)
    silent = silent_loss(config)
    assert not success_mask(config, np.full(4, silent)).any()
    # a lone seed that barely moved from the silent loss is no success either
    assert not success_mask(config, np.array([0.95 * silent])).any()


def test_a_lone_good_seed_succeeds() -> None:
    config = RunConfig(seeds=1)
    assert success_mask(config, np.array([0.1 * silent_loss(config)])).all()


def test_success_uses_importance_weights() -> None:
    config = RunConfig(model="rnn", inputs=3, importance=0.5, seeds=2)
    silent = silent_loss(config) * (1 + 0.5 + 0.25)  # Σ_i I_i
    # without the weights the silent loss would be 1.75x smaller and no seed would pass
    final = np.array([0.8 * silent, 0.75 * silent])
    np.testing.assert_array_equal(success_mask(config, final), [False, True])


def test_success_mask_of_every_frame_at_once_judges_each_frame_by_its_own_best() -> None:
    """(F, M) losses: each row against that row's best seed (the status line's count of
    seeds near the best at each frame), as the rows one at a time."""
    config = RunConfig(model="rnn", sparsity=0.9, seeds=3)
    silent = silent_loss(config)
    frames = np.array(
        [
            [silent, silent, silent],  # nobody learned yet
            [0.5 * silent, 0.52 * silent, 0.9 * silent],  # two near the best
            [0.05, 0.9 * silent, 0.06],  # the best moved: the second is far now
            [0.05, np.nan, 0.05],  # a seed without a loss is not near anything
        ]
    )
    want = [[False] * 3, [True, True, False], [True, False, True]]
    np.testing.assert_array_equal(success_mask(config, frames)[:3], want)
    for row, got in zip(frames, success_mask(config, frames), strict=True):
        np.testing.assert_array_equal(got, success_mask(config, row))


# ---- the canonical gauge stored with a finished job's run (`Run.with_gauge`) -----------


@pytest.mark.parametrize(
    "config",
    [TINY, replace(TINY, model="rnn", hidden=3, k=1), replace(TINY, inputs=2, tied=False)],
)
def test_a_stored_gauge_is_each_seeds_own_solve_bit_for_bit(config: RunConfig) -> None:
    """One batched solve of every frame and seed equals the solve of each seed's frames
    alone (what a web process did for the seed it showed): the stored gauge draws the same
    figures, and survives the run file."""
    from tempsup.theory import gauge

    (r,) = train_runs([config])
    stored = Run.from_bytes(r.with_gauge().to_bytes())
    for seed in range(config.seeds):
        alone = gauge.canonical(
            *(np.ascontiguousarray(r[n][:, seed]) for n in ("W_x", "W_h", "W_y", "b_y")),
            config.k, config.relu_hidden, config.tied,
        )  # fmt: skip
        held = stored.gauged(seed)
        assert held is not None
        for name in ("W_x", "W_h", "W_y", "b_y"):
            assert held[name].dtype == np.float64
            np.testing.assert_array_equal(held[name], alone[name])


def test_wide_hidden_states_store_no_gauge_and_a_damaged_one_is_dropped(run: Run) -> None:
    (wide,) = train_runs([replace(TINY, model="rnn", hidden=5)])
    assert wide.with_gauge().gauged(0) is None  # solved where drawn: seconds a frame at 40
    arrays = file_arrays(Run.from_bytes(run.with_gauge().to_bytes()))
    arrays["gauge_W_h"] = arrays["gauge_W_h"][:-1]  # one frame short
    damaged = Run.from_bytes(npz_bytes(**arrays))
    assert damaged.gauged(0) is None and "gauge_W_x" not in damaged.arrays


def test_panels_of_a_run_with_its_gauge_solve_nothing(run: Run, monkeypatch) -> None:
    from tempsup import figures
    from tempsup.theory import gauge

    stored = Run.from_bytes(run.with_gauge().to_bytes())
    want = {p: figures.all_frame_traces(p, run, 0) for p in figures.PANELS}

    def unsolved(*_args, **_kw):
        raise AssertionError("the gauge was solved again")

    monkeypatch.setattr(gauge, "canonical", unsolved)
    assert {p: figures.all_frame_traces(p, stored, 0) for p in figures.PANELS} == want


def test_a_finished_jobs_run_is_stored_with_its_gauge(run: Run) -> None:
    from tempsup.jobs.kinds import _run_result

    frames = [{k: v[i] for k, v in run.arrays.items() if k in ARRAYS} for i in range(run.n_frames)]
    assert _run_result(run.config, frames, []).gauged(1) is not None
