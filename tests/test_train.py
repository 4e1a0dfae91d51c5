"""The training loop (tempsup.training.trainer): learning, reproducibility, snapshots, batching,
warm start, curriculum, cancellation and the sweep's batchability check."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tempsup.errors import TempsupError
from tempsup.io.run import split_snapshot
from tempsup.model.config import RunConfig
from tempsup.training import trainer as train_module
from tempsup.training.schedule import Adam, optimizer_steps, scheduled_lr
from tempsup.training.trainer import Snapshot, check_batchable, model_seeds, train
from tests.helpers import simulate

ARRAYS = ("W_x", "W_h", "W_y", "b_y", "loss")
# small and fast: a few tenths of a second per run
SMALL = RunConfig(steps=60, snapshot_every=20, seeds=2, batch=64, seq_len=12)


def run_all(configs, **kwargs) -> list[Snapshot]:
    return list(train(configs, **kwargs))


def assert_snapshots_equal(a: list[Snapshot], b: list[Snapshot], atol: float = 0.0) -> None:
    assert [s.step for s in a] == [s.step for s in b]
    for sa, sb in zip(a, b, strict=True):
        for name in ARRAYS:
            np.testing.assert_allclose(
                getattr(sa, name),
                getattr(sb, name),
                rtol=0,
                atol=atol,
                err_msg=f"{name} at step {sa.step}",
            )


# ---- learning -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "sparsity"), [("linear", 0.5), ("ssm", 0.5), ("ssm", 0.9), ("rnn", 0.5)]
)
def test_loss_falls(model: str, sparsity: float) -> None:
    config = RunConfig(
        model=model, sparsity=sparsity, steps=200, snapshot_every=50, seeds=2, batch=128
    )
    snaps = run_all(config)
    first, last = snaps[0].loss, snaps[-1].loss
    assert first.shape == last.shape == (2,)
    assert np.all(np.isfinite(last))
    if model == "rnn":
        # ReLU RNN seeds may die (science.md §1b: "the rest die"); here seed 0 goes silent
        # (2.67 -> 2.83, the zero-output loss) while seed 1 learns (2.67 -> 1.63)
        assert last.min() < 0.8 * first.min(), (first, last)
    else:
        assert np.all(last < 0.8 * first), (first, last)


def test_free_readout_and_bias_learn_too() -> None:
    config = SMALL.replace(
        model="linear", tied=False, bias=True, steps=200, snapshot_every=100, sparsity=0.5
    )
    snaps = run_all(config)
    assert np.all(snaps[-1].loss < 0.8 * snaps[0].loss)
    assert np.any(snaps[-1].b_y != 0)  # the bias is trained
    assert not np.array_equal(snaps[-1].W_y, snaps[0].W_y)


def test_vector_input_learns() -> None:
    config = SMALL.replace(
        model="rnn", inputs=3, hidden=4, sparsity=0.8, steps=200, snapshot_every=100
    )
    snaps = run_all(config)
    assert snaps[0].W_x.shape == (2, 4, 3) and snaps[0].b_y.shape == (2, 3)
    assert np.all(snaps[-1].loss < 0.9 * snaps[0].loss)


@pytest.mark.parametrize(("model", "inputs"), [("linear", 2), ("ssm", 2), ("rnn", 1), ("rnn", 3)])
def test_snapshot_loss_is_the_weighted_squared_error_of_the_model(model: str, inputs: int) -> None:
    """Step 0's loss is Σ_t Σ_i I_i (y − σ_y(z))² over one batch: compared with plain
    sampling of the snapshot's network (tests.helpers.simulate), with the model's readout
    and importance weights I_i = 0.5**i, it agrees to within sampling error."""
    config = RunConfig(
        model=model, inputs=inputs, hidden=3, importance=0.5, sparsity=0.6, batch=8192,
        steps=1, snapshot_every=1, seeds=2,
    )  # fmt: skip
    snap = next(iter(train(config)))
    imp = 0.5 ** np.arange(inputs)
    L = simulate(
        snap.W_x, snap.W_h, snap.W_y, config.p, "uniform", model == "rnn", 100_000, seed=2,
        k=config.k, seq_len=config.seq_len, imp=imp, relu_readout=model != "linear",
    )  # fmt: skip
    se = L.std(-1) * np.sqrt(1 / config.batch + 1 / L.shape[-1])  # both are sample means
    assert np.all(np.abs(snap.loss - L.mean(-1)) < 5 * se), (snap.loss, L.mean(-1), se)


# ---- reproducibility -----------------------------------------------------------------


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_same_config_same_snapshots(model: str) -> None:
    config = SMALL.replace(model=model)
    assert_snapshots_equal(run_all(config), run_all(config))


def test_different_seed_differs() -> None:
    a, b = run_all(SMALL), run_all(SMALL.replace(seed=1))
    assert not np.array_equal(a[0].W_h, b[0].W_h)  # init
    assert not np.array_equal(a[-1].loss, b[-1].loss)
    # and the seeds within one run differ from each other
    assert not np.array_equal(a[0].W_x[0], a[0].W_x[1])


def test_model_seeds() -> None:
    assert model_seeds(RunConfig(seed=3, seeds=4)) == [3000, 3001, 3002, 3003]
    # seeds of different base seeds never collide (seeds <= 256 < 1000)
    a, b = model_seeds(RunConfig(seed=0, seeds=256)), model_seeds(RunConfig(seed=1, seeds=256))
    assert not set(a) & set(b)


# ---- snapshots -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "every", "marks"),
    [(50, 20, [0, 20, 40, 50]), (40, 20, [0, 20, 40]), (3, 1, [0, 1, 2, 3])],
)
def test_snapshots_at_the_right_steps(steps: int, every: int, marks: list[int]) -> None:
    config = SMALL.replace(steps=steps, snapshot_every=every, seeds=3, hidden=3, inputs=2)
    snaps = run_all(config)
    assert [s.step for s in snaps] == marks
    assert len(snaps) == config.n_snapshots
    for s in snaps:
        assert s.W_x.shape == (3, 3, 2) and s.W_h.shape == (3, 3, 3)
        assert s.W_y.shape == (3, 3, 2) and s.b_y.shape == (3, 2) and s.loss.shape == (3,)
        assert all(isinstance(getattr(s, n), np.ndarray) for n in ARRAYS)


def test_on_step_sees_every_step_in_order() -> None:
    seen: list[int] = []
    run_all(SMALL, on_step=seen.append)
    assert seen == list(range(1, SMALL.steps + 1))


def test_tied_snapshot_readout_is_w_k() -> None:
    (snap,) = run_all(SMALL.replace(steps=1, snapshot_every=1, k=2))[-1:]
    W_k = snap.W_h @ snap.W_h @ snap.W_x
    np.testing.assert_allclose(snap.W_y, W_k, rtol=1e-5, atol=1e-6)


# ---- the learning-rate schedule ------------------------------------------------------------


def test_cosine_schedule_at_chosen_steps() -> None:
    """lr·½(1 + cos(π(i−1)/steps)) at optimizer step i = 1 … steps (science.md §1b)."""
    lr, steps = 0.01, 100
    assert scheduled_lr(lr, "cosine", 1, steps) == pytest.approx(0.01, rel=1e-12)
    assert scheduled_lr(lr, "cosine", 26, steps) == pytest.approx(0.01 * (2 + 2**0.5) / 4)
    assert scheduled_lr(lr, "cosine", 51, steps) == pytest.approx(0.005, rel=1e-12)
    assert scheduled_lr(lr, "cosine", 76, steps) == pytest.approx(0.01 * (2 - 2**0.5) / 4)
    assert scheduled_lr(lr, "cosine", 100, steps) == pytest.approx(2.4672e-6, rel=1e-4)
    values = [scheduled_lr(lr, "cosine", i, steps) for i in range(1, steps + 1)]
    assert np.all(np.diff(values) < 0) and values[-1] > 0  # strictly decaying, never 0
    for i in (1, 2, 50, 100):
        assert scheduled_lr(lr, "constant", i, steps) == lr


def record_lrs(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The learning rate of every Adam step taken while the test runs."""
    seen: list[float] = []
    original = Adam.step

    def spy(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Adam, "step", spy)
    return seen


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_the_trainers_adam_is_torchs_adam_bit_for_bit(monkeypatch, model: str) -> None:
    """`tempsup.training.schedule.Adam` (torch's functional update, no optimizer object) trains
    exactly as `torch.optim.Adam` does, with the same fused choice, and so does the lab's
    trainer."""
    import tempsup.training.schedule as training
    from tempsup.bows.config import BowsConfig
    from tempsup.bows.trainer import train as train_bows

    config = SMALL.replace(model=model, steps=60, snapshot_every=20, bias=True, tied=False)
    bows = BowsConfig(n_samples=64, n_heldout=32, batch=16, epochs=4, seeds=2, snapshot_every=4)
    ours = run_all(config), [s.W for s in train_bows(bows)]
    monkeypatch.setattr(
        training,
        "adam",
        lambda params, lr: torch.optim.Adam(params, lr=lr, fused=training._FUSED_ADAM),
    )
    torchs = run_all(config), [s.W for s in train_bows(bows)]
    for a, b in zip(ours[0], torchs[0], strict=True):
        for name in ("W_x", "W_h", "W_y", "b_y", "loss"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for a, b in zip(ours[1], torchs[1], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("schedule", ["cosine", "constant"])
def test_training_steps_use_the_scheduled_lr(monkeypatch, schedule: str) -> None:
    seen = record_lrs(monkeypatch)
    config = SMALL.replace(steps=40, snapshot_every=40, lr=0.02, schedule=schedule)
    run_all(config)
    want = [scheduled_lr(0.02, schedule, i, 40) for i in range(1, 41)]
    np.testing.assert_allclose(seen, want, rtol=1e-12)
    if schedule == "cosine":
        assert seen[0] == pytest.approx(0.02) and seen[20] == pytest.approx(0.01)


def test_optimizer_steps_pass_the_lr_and_average_the_loss_since_the_last_snapshot() -> None:
    """The shared step loop (tempsup.training.schedule), with a step whose losses the test chooses:
    step i gets the scheduled lr (also set on the optimizer) and returns losses (i, 2i), so a
    snapshot's loss is the mean of i over the steps since the previous snapshot."""
    config = SMALL.replace(steps=50, snapshot_every=20, lr=0.02, schedule="cosine")
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    calls: list[tuple[int, float, float]] = []

    def step(i: int, lr: float) -> torch.Tensor:
        calls.append((i, lr, opt.param_groups[0]["lr"]))
        return torch.tensor([float(i), 2.0 * i])

    snaps = list(optimizer_steps(opt, config, 2, step, lambda i, loss: (i, loss.tolist())))
    assert snaps == [(20, [10.5, 21.0]), (40, [30.5, 61.0]), (50, [45.5, 91.0])]
    assert [i for i, _, _ in calls] == list(range(1, 51))
    want = [0.01 * (1 + np.cos(np.pi * (i - 1) / 50)) for i in range(1, 51)]
    np.testing.assert_allclose([lr for _, lr, _ in calls], want, rtol=1e-12)
    np.testing.assert_allclose([lr for _, _, lr in calls], want, rtol=1e-12)


# ---- batching is exact -----------------------------------------------------------------


@pytest.mark.parametrize("model", ["linear", "ssm", "rnn"])
def test_config_alone_equals_config_in_a_sweep(model: str) -> None:
    one = SMALL.replace(model=model, sparsity=0.5, k=3)
    other = one.replace(sparsity=0.9, k=2, curriculum=0.3)
    batch = run_all([other, one])  # config-major: models 0-1 are `other`, 2-3 are `one`
    for cfg, index in ((other, 0), (one, 1)):
        alone = run_all(cfg)
        part = [split_snapshot(s, [other, one])[index] for s in batch]
        assert_snapshots_equal(alone, part, atol=1e-5)


def test_model_axis_is_config_major() -> None:
    a = SMALL.replace(sparsity=0.3, seeds=2)
    b = SMALL.replace(sparsity=0.6, seeds=2)
    (snap,) = list(train([a, b]))[:1]
    alone_a, alone_b = next(iter(train(a))), next(iter(train(b)))
    np.testing.assert_array_equal(snap.W_x[:2], alone_a.W_x)
    np.testing.assert_array_equal(snap.W_x[2:], alone_b.W_x)


# ---- warm start ------------------------------------------------------------------------


def init_weights(hidden: int = 2, inputs: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "W_x": rng.normal(size=(hidden, inputs)),
        "W_h": 0.3 * rng.normal(size=(hidden, hidden)),
        "W_y": rng.normal(size=(hidden, inputs)),
        "b_y": -0.1 * np.ones(inputs),
    }


def test_warm_start_seed_0_starts_exactly_at_the_given_weights() -> None:
    config = SMALL.replace(model="ssm", tied=False, bias=True, seeds=4)
    init = init_weights()
    first = next(iter(train(config, init=init)))
    for name, value in init.items():
        np.testing.assert_allclose(getattr(first, name)[0], value, rtol=1e-6, atol=1e-7)
        # the other seeds get a little noise (README: 5 %) so they still explore
        for s in range(1, 4):
            got = getattr(first, name)[s]
            assert not np.array_equal(got, getattr(first, name)[0])
            scale = np.abs(value).mean()
            assert np.abs(got - value).max() < 0.5 * scale
    # it differs from a cold start
    cold = next(iter(train(config)))
    assert not np.allclose(cold.W_x[0], init["W_x"])


def test_warm_start_tied_readout_follows_the_given_recurrence() -> None:
    config = SMALL.replace(model="linear", tied=True, seeds=2, k=2)
    init = init_weights()
    first = next(iter(train(config, init=init)))
    np.testing.assert_allclose(first.W_x[0], init["W_x"], rtol=1e-6)
    np.testing.assert_allclose(first.W_y[0], init["W_h"] @ init["W_h"] @ init["W_x"], rtol=1e-5)


def test_warm_start_in_a_sweep_equals_warm_start_alone() -> None:
    """Every point of a warm-started sweep starts its seed 0 at the given weights, and a
    point trained in the sweep equals the same config trained alone (README)."""
    a = SMALL.replace(model="ssm", tied=False, sparsity=0.5, seeds=3)
    b = a.replace(sparsity=0.9)
    init = init_weights()
    batch = next(iter(train([a, b], init=init)))
    alone_b = next(iter(train(b, init=init)))
    np.testing.assert_allclose(alone_b.W_x[0], init["W_x"], rtol=1e-6)
    part_b = split_snapshot(batch, [a, b])[1]
    np.testing.assert_allclose(
        part_b.W_x[0],
        init["W_x"],
        rtol=1e-6,
        err_msg="seed 0 of the second sweep point did not start at init",
    )
    for name in ("W_x", "W_h", "W_y"):
        np.testing.assert_array_equal(
            getattr(part_b, name),
            getattr(alone_b, name),
            err_msg=f"{name}: sweep point differs from the run alone",
        )


@pytest.mark.parametrize(
    ("model", "objective"),
    [("linear", "sampled"), ("ssm", "sampled"), ("rnn", "sampled"), ("linear", "expected"),
     ("ssm", "expected")],
)  # fmt: skip
def test_runs_of_other_base_seeds_trained_as_one_batch_equal_each_run_alone(
    model: str, objective: str
) -> None:
    """A worker trains a classroom's runs as one batch (tempsup.model.config.batch_key): runs of
    different base seeds, k and sparsity. Each draws its own data stream, so each run's
    every frame equals the run trained alone, to float rounding."""
    base = SMALL.replace(model=model, objective=objective, steps=150, snapshot_every=50, seeds=2)
    configs = [base.replace(seed=3), base.replace(seed=4, k=2), base.replace(seed=3, sparsity=0.6)]
    together = run_all(configs)
    for i, cfg in enumerate(configs):
        alone = run_all(cfg)
        parts = [split_snapshot(snap, configs)[i] for snap in together]
        assert len(parts) == len(alone) == 4
        for part, snap in zip(parts, alone, strict=True):
            for name in ("W_x", "W_h", "W_y", "loss"):
                np.testing.assert_allclose(
                    getattr(part, name), getattr(snap, name), rtol=2e-5, atol=1e-6,
                    err_msg=f"{name} of run {i} at step {snap.step}",
                )  # fmt: skip


# ---- curriculum ------------------------------------------------------------------------


def record_p(monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    seen: list[np.ndarray] = []
    original = train_module.sample_inputs

    def spy(gen, p, *args, **kwargs):
        seen.append(p.detach().numpy().copy())
        return original(gen, p, *args, **kwargs)

    monkeypatch.setattr(train_module, "sample_inputs", spy)
    return seen


def test_curriculum_moves_p_from_start_to_target(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = record_p(monkeypatch)
    config = SMALL.replace(steps=100, snapshot_every=50, sparsity=0.9, curriculum=0.2)
    run_all(config)
    ps = np.array([p[0] for p in seen])  # one draw for snapshot 0, then one per step
    assert len(ps) == 1 + config.steps
    assert ps[0] == pytest.approx(0.8) and ps[1] == pytest.approx(0.8)  # starts at 1 - 0.2
    assert np.all(np.diff(ps) <= 1e-7)  # moves monotonically towards the target
    assert ps[config.steps // 2] > 0.1 + 1e-3  # still moving before mid-training
    assert np.allclose(ps[config.steps // 2 + 1 :], 0.1)  # reached 1 - 0.9 by mid-training
    assert np.all([np.all(p == p[0]) for p in seen])  # every seed sees the same p


def test_no_curriculum_keeps_p_constant(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = record_p(monkeypatch)
    run_all(SMALL.replace(sparsity=0.7))
    assert np.allclose(np.stack(seen), 0.3)


def test_curriculum_changes_training() -> None:
    plain = run_all(SMALL)
    curr = run_all(SMALL.replace(curriculum=0.1))
    assert not np.array_equal(plain[-1].W_h, curr[-1].W_h)
    np.testing.assert_array_equal(plain[0].W_h, curr[0].W_h)  # same init


# ---- cancellation ------------------------------------------------------------------------


def test_stopping_iteration_cancels_training() -> None:
    steps_done: list[int] = []
    config = SMALL.replace(steps=200, snapshot_every=20)
    gen = train(config, on_step=steps_done.append)
    snaps = [next(gen), next(gen)]
    assert [s.step for s in snaps] == [0, 20]
    assert steps_done[-1] == 20
    gen.close()
    assert steps_done[-1] == 20  # no further step ran
    with pytest.raises(StopIteration):
        next(gen)
    # cancelling leaves no state behind: a fresh run equals an uninterrupted one
    full = run_all(config)
    assert_snapshots_equal(snaps, full[:2])


def test_breaking_out_of_a_for_loop_stops() -> None:
    steps_done: list[int] = []
    for snap in train(SMALL.replace(steps=200, snapshot_every=20), on_step=steps_done.append):
        if snap.step == 40:
            break
    assert max(steps_done) == 40


# ---- batchability --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("hidden", 3),
        ("model", "rnn"),
        ("seeds", 3),
        ("steps", 40),
        ("tied", False),
        ("batch", 32),
        ("input_dist", "constant"),
    ],
)
def test_check_batchable_refuses_non_sweepable_differences(field: str, value: object) -> None:
    a = SMALL
    b = SMALL.replace(sparsity=0.5, **{field: value})
    with pytest.raises(TempsupError) as info:
        check_batchable([a, b])
    message = str(info.value)
    assert repr(field) in message
    assert "sparsity, k, curriculum, seed" in message
    with pytest.raises(TempsupError):
        next(iter(train([a, b])))


def test_check_batchable_accepts_sweepable_differences() -> None:
    check_batchable([SMALL, SMALL.replace(sparsity=0.1, k=1, curriculum=0.5)])
    check_batchable([SMALL])


def test_train_refuses_no_configs() -> None:
    with pytest.raises(TempsupError, match="at least one config"):
        next(iter(train([])))
