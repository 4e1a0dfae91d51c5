"""Presets as data, and their checks on hand-built runs (fast: no real training).

Hand-built networks have known answers: a rotation by 30° is the linear spiral
sink for k = 3, a rotation by 90° with shrinkage is the sparse SSM solution,
and ReLU shift registers (hidden unit i feeds unit i + 1) carry an input for
exactly as many steps as they are long, so their W_yᵀW_s are identity blocks
at s = k and zero elsewhere.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tempsup.analysis import measures as analysis
from tempsup.errors import TempsupError
from tempsup.io.run import Run, frame
from tempsup.jobs import JobQueue
from tempsup.jobs.record import JobState
from tempsup.model.config import RunConfig
from tempsup.paper import presets as pr
from tempsup.paper.presets import (
    four_terms,
    large,
    linear_any_sparsity,
    loss_dynamics,
    relu_rnn_dense,
    relu_rnn_sharp_forgetting,
    spiral_sink,
    ssm_dense_vs_sparse,
    ssm_jump,
    vector_all_or_none,
    vector_diagonal,
)
from tempsup.paper.reproduce import batches, fill_cache
from tempsup.theory import geometry
from tempsup.training.trainer import Snapshot
from tests.helpers import rot

NAMES = [
    "spiral-sink",
    "linear-any-sparsity",
    "loss-dynamics",
    "ssm-dense-vs-sparse",
    "ssm-jump",
    "relu-rnn-sharp-forgetting",
    "relu-rnn-dense",
    "four-terms",
    "vector-all-or-none",
    "vector-diagonal",
    "large",
    "gated-packing",
    "lru-jump",
    "selective-gating",
    "persistence-transition",
    "relu-rnn-persistence",
    "sum-window",
    "cued-capacity",
]
APP_MAX_WORK = 2e12  # the public demo's default TEMPSUP_MAX_WORK: presets must stay retrainable


# ---- presets as data ------------------------------------------------------------------------


@pytest.mark.parametrize("quick", [False, True])
def test_presets_in_gallery_order_with_valid_configs(quick: bool) -> None:
    items = pr.presets(quick)
    assert [p.name for p in items] == NAMES
    for p in items:
        assert p.title and p.claim.endswith(".") and p.recipe
        assert len(p.configs) == len(p.labels) >= 1
        assert p.main in p.labels and p.main_key in p.keys
        for cfg in p.configs:
            again = RunConfig.from_json(cfg.to_json())  # validates every field again
            assert again == cfg and again.key == cfg.key
            assert cfg.work <= APP_MAX_WORK, (p.name, cfg.work)
        json.dumps(p.to_dict())  # what a web page receives


def test_keys_are_stable_and_quick_differs_from_full() -> None:
    first = [p.keys for p in pr.presets()]
    assert first == [p.keys for p in pr.presets()]  # rebuilt: same keys
    full = {c.key for c in pr.preset_configs()}
    quick = {c.key for c in pr.preset_configs(quick=True)}
    assert len(full) == len(pr.preset_configs()) and not full & quick


@pytest.mark.parametrize("quick", [False, True])
def test_warm_starts_reference_earlier_runs_by_key(quick: bool) -> None:
    configs = pr.preset_configs(quick)
    seen: set[str] = set()
    warm = 0
    for cfg in configs:
        if cfg.warm_start is not None:
            warm += 1
            assert cfg.warm_start in seen, f"{cfg.key} starts from {cfg.warm_start}, not yet listed"
            src = next(c for c in configs if c.key == cfg.warm_start)
            assert (src.hidden, src.inputs) == (cfg.hidden, cfg.inputs)
        seen.add(cfg.key)
    assert warm == 2  # the free readout (from the tied RNN) and the large RNN (from its SSM)
    every = {c.key for p in pr.presets(quick) for c in p.configs}
    assert every == seen


def test_preset_lookup_and_errors() -> None:
    assert pr.preset("large", quick=True).config("rnn").hidden == 20
    assert pr.preset("large").config("rnn").hidden == 100
    with pytest.raises(TempsupError, match="expected one of spiral-sink"):
        pr.preset("nope")
    p = pr.preset("ssm-dense-vs-sparse")
    with pytest.raises(TempsupError, match="expected 2 runs"):
        p.check([])
    with pytest.raises(TempsupError, match="no run for 'dense'"):
        p.check({})


def test_batches_group_sweepable_configs_after_their_warm_start_source() -> None:
    groups = batches(pr.preset_configs())
    sizes: dict[tuple[str, int, int], int] = {}
    for g in groups:  # the first group of each shape (the issue 43 presets come last)
        sizes.setdefault((g[0].model, g[0].hidden, g[0].inputs), len(g))
    assert sizes[("rnn", 2, 5)] == 5  # k = 0..4: one batch
    assert sizes[("ssm", 2, 1)] == 10  # the jump sweep, with dense and sparse: one batch
    assert sizes[("linear", 2, 1)] == 5  # every sparsity with the spiral sink: one batch
    assert sizes[("lru", 2, 1)] == 10  # the LRU on the jump sweep's grid: one batch
    assert sizes[("gru", 3, 1)] == sizes[("lstm", 2, 1)] == sizes[("selective", 2, 1)] == 2
    # the paper's 10, one per gated model and width, and issue 43's: one per persistence q
    # (3 + 3), per (model, window) of the sum (6) and per (model, N_h) of the cued task (3)
    assert len(groups) == 16 + 15
    position = {c.key: i for i, g in enumerate(groups) for c in g}
    for g in groups:
        for cfg in g:
            if cfg.warm_start:
                assert position[cfg.warm_start] < position[cfg.key]


# ---- helpers on arrays -------------------------------------------------------------------------


def test_staircase_counts_drops_separated_by_plateaus() -> None:
    steps = np.arange(0, 400, 10)
    smooth = np.exp(-steps / 50.0)
    two = 1.0 / (1 + np.exp((steps - 100) / 8.0)) + 1.0 / (1 + np.exp((steps - 250) / 8.0))
    assert analysis.staircase(smooth, steps)["drops"] == 1
    out = analysis.staircase(two, steps)
    assert out["drops"] == 2 and out["drop_steps"][0] < 150 < out["drop_steps"][1]
    assert out["plateau_depth"] < 0.1
    assert analysis.staircase(np.ones(10), np.arange(10))["drops"] == 0


def test_kept_means_recall_near_one() -> None:
    rec = np.array([1.0, 0.85, 1.15, 2.0, 0.5, 0.1])
    assert analysis.is_kept(rec).tolist() == [True, True, True, False, False, False]
    assert analysis.kept_set(rec) == "ABC" and analysis.kept_set(np.zeros(3)) == "-"


# ---- hand-built runs ---------------------------------------------------------------------------


def build_run(cfg: RunConfig, W_x, W_h, W_y=None, loss=None, steps=None) -> Run:
    """A run whose frames hold the given weights for every seed (two frames by default).

    W_* are per-seed arrays (M, ...), or per frame (F, M, ...) when `steps` lists
    the frames' steps; W_y None = the tied readout W_k. The measured loss
    defaults to the expected loss the frame computes (the four-term sum where
    the run has no `expected_loss`).
    """
    steps = [0, cfg.steps] if steps is None else list(steps)
    W_x, W_h = np.asarray(W_x, float), np.asarray(W_h, float)
    if W_x.ndim == 3:  # one set of weights for every frame
        W_x = np.stack([W_x] * len(steps))
        W_h = np.stack([W_h] * len(steps))
        W_y = None if W_y is None else np.stack([np.asarray(W_y, float)] * len(steps))
    if W_y is None:
        W_y = geometry.feature_directions(W_x, W_h, cfg.k + 1, cfg.relu_hidden)[:, :, cfg.k]
    m = W_x.shape[1]
    b_y = np.zeros((m, cfg.inputs))
    frames = [
        frame(cfg, Snapshot(step, W_x[f], W_h[f], np.asarray(W_y[f], float), b_y, np.zeros(m)))
        for f, step in enumerate(steps)
    ]
    run = Run.from_frames(cfg, frames)
    expected = run.arrays.get("expected_loss")
    expected = run["terms"].sum(axis=-1) if expected is None else expected
    loss = expected if loss is None else np.broadcast_to(np.asarray(loss, float), expected.shape)
    run.arrays["loss"] = np.array(loss, dtype=np.float32)
    return run


def shift_register(n_h: int, n_x: int, lengths: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """ReLU shift registers: feature j enters a chain of lengths[j] units; (W_x, W_h)."""
    W_x, W_h = np.zeros((n_h, n_x)), np.zeros((n_h, n_h))
    unit = 0
    for j, n in enumerate(lengths):
        if n == 0:
            continue
        W_x[unit, j] = 1.0
        for i in range(unit, unit + n - 1):
            W_h[i + 1, i] = 1.0
        unit += n
    assert unit <= n_h
    return W_x, W_h


def test_spiral_sink_check_on_rotations() -> None:
    cfg = pr.preset("spiral-sink").configs[0].replace(seeds=3)
    # seed 0: the 90° spiral sink; seed 1: the mirror solution (3 × 150°); seed 2: real
    # eigenvalues (the other local minimum of science.md §1b)
    W_h = np.stack([0.8 * rot(30), 0.8 * rot(150), np.diag([0.87, -0.87])])
    W_x = np.ones((3, 2, 1)) * np.array([[1.0], [0.3]])
    run = build_run(cfg, W_x, W_h)
    res = spiral_sink.check({"linear": run})
    assert len(res) == 4
    sink, osc, terms, stairs = res
    assert sink.successes == 1 and sink.seeds == 3
    assert sink.measured["k_arg_lambda_deg_per_seed"] == [90.0, 450.0, 0.0]
    assert sink.held == (run.best == 0)  # judged on the seed with the lowest loss
    assert terms.successes == 3 and terms.held  # the measured loss is the expected one
    assert not stairs.held  # two frames make no staircase
    # a measured loss 20 % above the closed form is refused
    off = build_run(cfg, W_x, W_h, loss=1.2 * run["terms"][-1].sum(-1))
    assert spiral_sink.check({"linear": off})[2].successes == 0
    json.dumps([r.to_dict() for r in res])


def ssm_runs(dense_deg: float = -36.0) -> tuple[Run, Run]:
    base = pr.preset("ssm-dense-vs-sparse").configs[0].replace(seeds=1)
    # sparse: rotate 90° per step, shrink 0.48: w_0..w_3 sweep 270° and a = [0, -, 0, 1]
    g = 0.48
    sparse = build_run(base.replace(sparsity=0.9), [[[1 / g**3], [0.0]]], [g * rot(90)])
    dense = build_run(base, [[[1 / 0.78**3], [0.0]]], [0.78 * rot(dense_deg)])
    return dense, sparse


def test_ssm_check_on_the_two_regimes() -> None:
    dense, sparse = ssm_runs()
    res = ssm_dense_vs_sparse.check({"dense": dense, "sparse": sparse})
    assert [r.held for r in res] == [True] * 5, [r.to_dict() for r in res]
    # kθ is read in the canonical (minimum-norm) gauge: the dense rotation by −36° per step
    # (raw −108°) has its minimum-norm basis at 124.5° (sign: the gauge's kθ ≥ 0 convention)
    assert res[0].measured["k_theta_deg"] == pytest.approx(124.5, abs=0.1)
    assert res[1].measured["k_theta_deg"] == pytest.approx(270.0, abs=0.1)
    assert res[4].measured["dense_all_free"] is False
    # the dense solution in the sparse slot: the sparse claims fail
    res = ssm_dense_vs_sparse.check({"dense": dense, "sparse": dense})
    assert not res[1].held and not res[2].held and not res[3].held and not res[4].held


def test_relu_check_on_a_shift_register_and_a_dead_network() -> None:
    p = pr.preset("relu-rnn-sharp-forgetting")
    tied = p.config("tied").replace(hidden=4, seeds=2)
    W_x, W_h = shift_register(4, 1, [4])  # exactly k + 1 = 4 steps, then gone
    run = build_run(tied, np.stack([W_x, 0 * W_x]), np.stack([W_h, W_h]))
    free = build_run(
        p.config("free readout").replace(hidden=4, seeds=1), [W_x], [W_h], [W_h @ W_h @ W_h @ W_x]
    )
    linear = build_run(p.config("linear").replace(seeds=1), [[[1.0], [0.3]]], [0.8 * rot(30)])
    res = relu_rnn_sharp_forgetting.check({"tied": run, "free readout": free, "linear": linear})
    assert [r.held for r in res] == [True, True, True]
    assert res[0].successes == 1 and res[0].measured["dead_seeds"] == 1  # dead seeds fail
    assert res[1].measured["relu_max_after_k_over_a_k"] == 0.0
    assert res[1].measured["linear_max_after_k_over_a_k"] > 0.5
    # the linear run in the ReLU slot forgets smoothly: not sharp
    res = relu_rnn_sharp_forgetting.check({"tied": linear, "free readout": free, "linear": linear})
    assert not res[1].held


def all_or_none_runs(partial: bool = False) -> dict[str, Run]:
    p = pr.preset("vector-all-or-none")
    # kept features per k: 5, 3, 3, 2, 1 features, each k + 1 units long
    kept = {0: 5, 1: 3, 2: 3, 3: 2, 4: 1}
    runs = {}
    for label, cfg in zip(p.labels, p.configs, strict=True):
        cfg = cfg.replace(hidden=15, seeds=1)
        lengths = [cfg.k + 1] * kept[cfg.k] + [0] * (5 - kept[cfg.k])
        W_x, W_h = shift_register(15, 5, lengths)
        if partial and cfg.k == 2:
            W_x[:, 2] *= np.sqrt(0.5)  # feature C recalled at gain 0.5: neither kept nor dropped
        runs[label] = build_run(cfg, [W_x], [W_h])
    return runs


def test_all_or_none_check_on_shift_registers() -> None:
    res = vector_all_or_none.check(all_or_none_runs())  # N_h = 15: no pentagon claim
    assert [r.held for r in res] == [True] * 5, [r.to_dict() for r in res]
    clean, prefix, fewer, a_kept, only_a = res
    assert prefix.measured == {"k=0": "ABCDE", "k=1": "ABC", "k=2": "ABC", "k=3": "AB", "k=4": "A"}
    assert clean.seeds == 4  # k = 1..4: all or none is the claim under memory demand
    assert fewer.measured["represented_best"] == [5, 3, 3, 2, 1]
    assert a_kept.measured["k=4"] == pytest.approx(1.0)
    assert only_a.measured["largest_k_with_a_lesser_feature"] == 3
    res = vector_all_or_none.check(all_or_none_runs(partial=True))
    assert not res[0].held and res[0].successes == 3
    assert res[0].measured["k=2"]["recall"][2] == pytest.approx(0.5)
    # A lost at k = 4 (and nothing kept): the A claim and the "only A" claim fail
    runs = all_or_none_runs()
    cfg = runs["k=4"].config
    runs["k=4"] = build_run(cfg, [np.zeros((15, 5))], [np.zeros((15, 15))])
    res = vector_all_or_none.check(runs)
    assert not res[3].held and not res[4].held and res[4].measured["kept"] == "-"


def polygon_run(W_x: np.ndarray) -> Run:
    cfg = pr.preset("vector-all-or-none").config("k=0").replace(seeds=1)
    return build_run(cfg, [W_x], [np.zeros((2, 2))])  # k = 0: the readout is W_x itself


def test_pentagon_at_k_zero() -> None:
    angles = np.radians(72.0 * np.arange(5) + 10.0)
    pentagon = 0.92 * np.stack([np.cos(angles), np.sin(angles)])  # (2, 5)
    poly = analysis.polygon(pentagon)
    np.testing.assert_allclose(poly["gaps"], 72.0)
    assert analysis.is_regular_polygon(pentagon)
    runs = all_or_none_runs()
    runs["k=0"] = polygon_run(pentagon)
    res = vector_all_or_none.check(runs)
    assert len(res) == 6 and res[0].held, res[0].to_dict()
    assert res[0].measured["gaps_deg"] == [72.0] * 5 and res[0].measured["norm_ratio"] == 1.0
    # what N_h = 2 finds with importance 0.7^i: a square of A–D and a short E
    sq = np.radians([0.0, 90.0, 180.0, 270.0, 30.0])
    square = np.stack([np.cos(sq), np.sin(sq)]) * np.array([1, 1, 1, 1, 0.05])
    runs["k=0"] = polygon_run(square)
    res = vector_all_or_none.check(runs)
    assert not res[0].held and res[0].measured["gaps_deg"] == [30.0, 60.0, 90.0, 90.0, 90.0]
    # equal angles but one short side: not similar norms
    assert not analysis.is_regular_polygon(pentagon * np.array([1, 1, 1, 1, 0.5]))
    with pytest.raises(TempsupError, match="N_h = 2"):
        analysis.polygon(np.zeros((3, 5)))


def test_recall_on_task_inputs_of_a_perfect_register() -> None:
    runs = all_or_none_runs()
    rec = analysis.task_recall(runs["k=3"], n_seq=256)
    np.testing.assert_allclose(rec[0, :2], 1.0, atol=1e-9)  # kept, no other input interferes
    np.testing.assert_allclose(rec[0, 2:], 0.0, atol=1e-9)  # dropped: the output stays silent


def test_diagonal_and_large_checks_on_shift_registers() -> None:
    p = pr.preset("vector-diagonal")
    runs = {}
    for label, cfg in zip(p.labels, p.configs, strict=True):
        n = cfg.hidden // 3  # features that fit as 3-unit registers: 0, 1, 3
        W_x, W_h = shift_register(cfg.hidden, 10, [3] * n + [0] * (10 - n))
        runs[label] = build_run(cfg.replace(seeds=1), [W_x], [W_h])
    res = vector_diagonal.check(runs)
    # N_h = 2 holds no 3-step register: nothing on its diagonal, so claim 1 fails there
    assert [r.held for r in res] == [False, True, True]
    assert res[2].measured["on_diagonal_best"] == [0, 1, 3]
    cfg = pr.preset("large", quick=True).config("rnn").replace(seeds=1)
    W_x, W_h = shift_register(20, 15, [3] * 6 + [0] * 9)
    res = large.check({"rnn": build_run(cfg, [W_x], [W_h])})
    assert [r.held for r in res] == [True, True]
    assert res[0].measured["on_diagonal"] == 6


# ---- the claims across runs ----------------------------------------------------------------


def test_linear_any_sparsity_on_rotations() -> None:
    p = pr.preset("linear-any-sparsity")
    W_x = [[[1.0], [0.3]]]

    def runs(deg: dict[str, float]) -> dict[str, Run]:
        return {
            lab: build_run(p.config(lab).replace(seeds=1), W_x, [0.8 * rot(deg.get(lab, 30))])
            for lab in p.labels
        }

    (res,) = linear_any_sparsity.check(runs({"S=0.1": 28.0, "S=0.97": 32.0}))
    assert res.held and res.successes == 5, res.to_dict()
    assert res.measured["arg_lambda_deg"] == [28.0, 30.0, 30.0, 30.0, 32.0]
    assert res.measured["arg_spread_deg"] == 4.0 and res.measured["abs_spread"] == 0.0
    (res,) = linear_any_sparsity.check(runs({"S=0.1": 24.0, "S=0.97": 33.0}))  # 9° apart
    assert not res.held and all(res.measured["spiral_sink"])  # every one a sink, not the same
    (res,) = linear_any_sparsity.check(runs({"S=0.5": 50.0}))  # k·arg λ = 150°: not a sink
    assert not res.held and res.measured["spiral_sink"] == [True, True, False, True, True]


def test_jump_reads_dense_then_sparse() -> None:
    assert ssm_jump.jump([0.3, 0.4, 0.5, 0.6], "ddss") == {
        "between": [0.4, 0.5], "location": 0.45, "width": 0.1,
    }  # fmt: skip
    assert ssm_jump.jump([0.3, 0.4, 0.5, 0.6], "dd.s") is None  # an intermediate angle
    assert ssm_jump.jump([0.3, 0.4, 0.5, 0.6], "dsds") is None
    assert ssm_jump.jump([0.3, 0.4, 0.5, 0.6], "dddd") is None
    assert analysis.basin(np.array([-108.0, 270.0, -265.0, 180.0, 435.0])).tolist() == [
        "d", "s", "s", ".", ".",
    ]  # fmt: skip


def test_ssm_jump_on_the_two_solutions() -> None:
    p = pr.preset("ssm-jump")
    dense_w = ([[[1 / 0.78**3], [0.0]]], [0.78 * rot(-36)])  # kθ = −108°
    sparse_w = ([[[1 / 0.48**3], [0.0]]], [0.48 * rot(90)])  # kθ = 270°

    def runs(first_sparse: float, odd: float | None = None) -> dict[str, Run]:
        out = {}
        for lab in p.labels:
            cfg = p.config(lab).replace(seeds=1)
            w = sparse_w if cfg.sparsity >= first_sparse else dense_w
            if cfg.sparsity == odd:
                w = ([[[1.0], [0.0]]], [0.8 * rot(60)])  # kθ = 180°: neither
            out[lab] = build_run(cfg, *w)
        return out

    (res,) = ssm_jump.check(runs(0.5))
    assert res.held and res.successes == 1, res.to_dict()
    assert res.measured["jump_best"] == {"between": [0.45, 0.5], "location": 0.475, "width": 0.05}
    assert res.measured["jump_deg"] == pytest.approx(145.0, abs=1)  # canonical gauge
    assert res.measured["intermediates_packed_best"][-1] is True
    (res,) = ssm_jump.check(runs(0.5, odd=0.5))  # a gradual turn through 180°
    assert not res.held and res.measured["jump_best"] is None
    assert res.measured["regime_best"] == "ddd.ssssss"
    (res,) = ssm_jump.check(runs(0.5, odd=0.45))  # d…d . s…s: through an intermediate
    assert not res.held  # an intermediate point is not a jump


def test_relu_dense_on_a_rotation() -> None:
    p = pr.preset("relu-rnn-dense")
    cfg, lin_cfg = p.config("rnn").replace(seeds=1), p.config("linear").replace(seeds=1)
    W_x = [[[1.0], [0.3]]]
    rnn = build_run(cfg, W_x, [0.9 * rot(30)])  # a_s peaks at s = k = 3
    (res,) = relu_rnn_dense.check({"rnn": rnn, "linear": rnn})
    assert res.held and res.measured["k_arg_lambda_deg"] == 90.0
    # the same weights without the hidden ReLU: the kernels differ by more than KERNEL_GAP
    (res,) = relu_rnn_dense.check({"rnn": rnn, "linear": build_run(lin_cfg, W_x, [0.9 * rot(30)])})
    assert not res.held and res.measured["max_kernel_gap"] > relu_rnn_dense.KERNEL_GAP
    real = build_run(cfg, W_x, [np.diag([0.9, 0.5])])  # real eigenvalues: no spiral
    (res,) = relu_rnn_dense.check({"rnn": real, "linear": real})
    assert not res.held and res.successes == 0


def test_terms_track_on_closed_form_losses() -> None:
    p = pr.preset("four-terms")
    W_x = [[[1 / 0.48**3], [0.0]]]
    runs = {
        lab: build_run(p.config(lab).replace(seeds=1), W_x, [0.48 * rot(90)])
        for lab in p.labels
        if not lab.startswith("rnn")  # the ReLU RNN's expected loss is a Monte Carlo estimate
    }
    res = four_terms.check(runs)
    assert [r.held for r in res] == [True, True, True]
    off = {lab: build_run(run.config, W_x, [0.48 * rot(90)], loss=1.3 * run["loss"][-1])
           for lab, run in runs.items()}  # fmt: skip
    res = four_terms.check(off)
    assert not any(r.held for r in res) and res[0].measured["gap_expected_loss"] > 0.2
    dense = runs["ssm S=0.9"].config.replace(sparsity=0.3)
    assert four_terms.check({"dense": build_run(dense, W_x, [0.48 * rot(90)])}) == []


def dynamics_run(aligned: bool) -> Run:
    """Frames of a linear run: init, (aligned: W_h = 0.8·I, every w_s ∥ w_x), then the sink."""
    cfg = pr.preset("loss-dynamics").configs[0].replace(seeds=1, steps=100, snapshot_every=10)
    steps = list(range(0, 101, 10))
    angle = [60.0] + ([0.0] * 3 + list(np.linspace(5, 30, 7)) if aligned else [30.0] * 10)
    W_x = np.array([[[[1.0], [0.3]]]] * len(steps))
    W_h = np.array([[0.8 * rot(a)] for a in angle])
    return build_run(cfg, W_x, W_h, steps=steps)


def test_loss_dynamics_align_then_separate() -> None:
    run = dynamics_run(aligned=True)
    align, separate = loss_dynamics.check({"linear": run})
    assert align.held and align.measured["step"] in (10, 20, 30), align.to_dict()
    assert align.measured["min_cos_w_s_w_y"] == pytest.approx(1.0)
    settle = separate.measured["settle_steps_s_0_to_k"]
    assert len(settle) == 4 and separate.measured["frame_interval"] == 10
    assert separate.held == (np.diff(settle) >= -10).all()
    never = dynamics_run(aligned=False)  # rotates from the start: a_0 < 0 at every frame
    align, separate = loss_dynamics.check({"linear": never})
    assert not align.held and not separate.held and align.measured["step"] is None


def test_settle_steps() -> None:
    steps = np.arange(0, 60, 10)
    a = np.array([[0, 0], [1, 0], [1, 0.5], [1, 1], [1, 1], [1, 1]], float)
    assert analysis.settle_steps(a, steps).tolist() == [10, 30]
    assert analysis.settle_steps(np.ones((4, 2)), steps[:4]).tolist() == [0, 0]


# ---- filling a job store ----------------------------------------------------------------------


def tiny_configs() -> list[RunConfig]:
    base = RunConfig(model="rnn", steps=4, snapshot_every=2, batch=8, seeds=2, seq_len=8)
    src = base.replace(sparsity=0.5)
    return [src, base.replace(k=2), base.replace(tied=False, warm_start=src.key)]


def test_fill_cache_stores_missing_runs_once(tmp_path: Path, monkeypatch) -> None:
    import tempsup.paper.reproduce as rp

    torch.set_num_threads(1)
    configs = tiny_configs()
    monkeypatch.setattr(rp, "preset_configs", lambda quick=False: configs)
    queue = JobQueue(tmp_path / "jobs")
    seen = []
    assert fill_cache(queue, on_progress=lambda msg, f: seen.append(f)) == [c.key for c in configs]
    assert seen and seen[-1] == pytest.approx(1.0)
    for cfg in configs:
        assert queue.status(cfg.key).state == JobState.DONE
        assert queue.run(cfg.key).config == cfg
    assert fill_cache(queue) == []
    # a warm start whose source is already stored is resolved from the store
    queue2 = JobQueue(tmp_path / "jobs2")
    queue2.put_run(queue.run(configs[0].key))
    assert fill_cache(queue2) == [configs[1].key, configs[2].key]


def test_cli_presets_list_json(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tempsup.cli", "presets", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)
    assert [p["name"] for p in items] == NAMES
    assert items[0]["runs"][0]["key"] == pr.presets()[0].keys[0]


def test_cli_reproduce_and_fill_in_process(tmp_path: Path, monkeypatch, capsys) -> None:
    """The CLI glue on a tiny stand-in preset (the real ones are tests/test_reproduce.py)."""
    import tempsup.paper.reproduce as rp
    from tempsup.cli import main

    configs = tiny_configs()

    def checker(runs: dict[str, Run]) -> list[pr.ClaimResult]:
        loss = runs["a"].final_loss
        ok = int(np.isfinite(loss).sum())
        return [pr.ClaimResult("the loss is finite", {"min": float(loss.min())}, ok, 2, True)]

    tiny = pr.Preset(
        name="tiny", title="Tiny", claim="A stand-in.", configs=tuple(configs),
        labels=("a", "b", "c"), recipe=("four steps",), main="a", checker=checker,
    )  # fmt: skip
    monkeypatch.setattr(rp, "preset_configs", lambda quick=False: configs)
    monkeypatch.setattr(rp, "presets", lambda quick=False: [tiny])
    assert main(["reproduce", "--quick", "--quiet", "--out-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "tiny: held (2/2 seeds): the loss is finite" in out and "1 of 1 claims held" in out
    text = (tmp_path / "r" / "report.md").read_text()
    assert "## Tiny" in text and "Seeds satisfying it: **2 of 2**" in text
    assert (tmp_path / "r" / "tiny.html").is_file()
    assert main(["presets", "fill", "--quiet", "--cache", str(tmp_path / "jobs")]) == 0
    assert "stored 3 preset run(s)" in capsys.readouterr().out
