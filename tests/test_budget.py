"""Which frames get the loss terms and the expected loss (tempsup.theory.budget),
and what NaN means."""

from __future__ import annotations

import numpy as np

from tempsup import figures
from tempsup.io.run import Run, derived, frame
from tempsup.model.config import RunConfig, snapshot_steps
from tempsup.model.snapshot import Snapshot
from tempsup.theory import budget


def snap(config: RunConfig, step: int, seed: int = 0) -> Snapshot:
    rng = np.random.default_rng(seed)
    m, n_h, n_x = config.seeds, config.hidden, config.inputs
    return Snapshot(
        step,
        rng.normal(size=(m, n_h, n_x)),
        0.3 * rng.normal(size=(m, n_h, n_h)) / np.sqrt(n_h),
        rng.normal(size=(m, n_h, n_x)) / np.sqrt(n_h),
        np.zeros((m, n_x)),
        rng.random(m),
    )


def test_the_papers_setting_gets_everything_at_every_frame() -> None:
    for model in ("linear", "ssm", "rnn"):
        plan = budget.plan(RunConfig(model=model))
        assert plan.steps is None and plan.terms and plan.expected and plan.note == ""
    for model in ("ssm", "rnn"):  # five features: both pieces, at most frames, ends included
        config = RunConfig(model=model, inputs=5)
        plan = budget.plan(config)
        assert plan.terms and plan.expected
        assert plan.steps is None or (
            len(plan.steps) >= config.n_snapshots // 3 and {0, config.steps} <= plan.steps
        )


def test_a_wide_relu_rnn_skips_the_pair_terms_and_thins_the_frames() -> None:
    config = RunConfig(model="rnn", hidden=20, inputs=15, seeds=2, steps=400, batch=64)
    plan = budget.plan(config)
    assert not plan.terms and plan.expected
    steps = snapshot_steps(config.steps, config.snapshot_every)
    assert plan.steps is not None and {steps[0], steps[-1]} <= plan.steps
    assert len(plan.steps) < len(steps)
    assert "not computed" in plan.note and "of 21 frames" in plan.note
    kept = frame(config, snap(config, steps[-1]))
    assert np.isnan(kept["terms"]).all() and np.isfinite(kept["expected_loss"]).all()
    skipped = next(s for s in steps if s not in plan.steps)
    assert np.isnan(frame(config, snap(config, skipped))["expected_loss"]).all()


def test_the_loss_panel_says_what_was_not_computed() -> None:
    config = RunConfig(model="rnn", hidden=20, inputs=15, seeds=2, steps=400, batch=64)
    steps = snapshot_steps(config.steps, config.snapshot_every)
    frames = [frame(config, snap(config, s, seed=i)) for i, s in enumerate(steps)]
    run = Run.from_frames(config, frames)
    layout = figures.panel_layout("loss", run, None)
    assert "four terms not computed" in layout["title"]["text"]
    label = [t for t in figures.frame_traces("loss", run, None, 1) if t["name"] == "explained"]
    # the title says the terms were not computed; the cursor's label claims no share of E[L]
    assert label[0]["text"] == [""]


def test_derived_at_any_step_when_every_frame_is_computed() -> None:
    config = RunConfig(model="ssm", seeds=2)
    s = snap(config, 7)  # not a snapshot step: the plan covers every step
    d = derived(config, 7, s.W_x, s.W_h, s.W_y, s.b_y)
    assert np.isfinite(d["terms"]).all() and np.isfinite(d["expected_loss"]).all()
