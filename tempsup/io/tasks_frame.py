"""A frame's derived numbers for the tasks beyond recall and for persistent inputs (issue 43).

`tempsup.io.run.derived` computes today's numbers for recall at persistence q = 0 and
hands every other config here. Which number is which (`expected_loss_method`):

- the linear model on a linear task (recall, multi, sum) at any q: the exact closed form
  of `tempsup.theory.tasks_loss`, its five terms: the four of `terms` (task, mean
  correction, projection, composition) and the temporal covariance, stored apart as
  `temporal_term` so every reader of the four-term array keeps working;
- a ReLU readout (ssm, rnn, the gated models' linearisation) at q > 0 or on another
  task, and every model on `cued` (no fixed linear target): a Monte Carlo estimate with
  its standard error (`tempsup.theory.tasks_mc`, MC_SEQUENCES sequences of one fixed
  seed, the same for every frame and seed), the terms NaN. The second-order expansion
  of today's theory assumes inputs independent in time and recall's target.

The geometry (kθ, the k-th projection, half-space counts) is recall's: for multi and
cued it reads one delay, `geometry_weights`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.model import task_shapes as tasks
from tempsup.model.config import RunConfig, importance_weights
from tempsup.theory import closed_form, geometry, tasks_loss

# Sequences of a frame's Monte Carlo estimate: its standard error is a few percent of the
# loss, and every frame is computed: measured for 8 seeds, N_h = 2, T = 20, one thread,
# 8 ms a frame (SSM, ReLU RNN), 12 ms for cued, so a 100-frame run spends about a second.
MC_SEQUENCES = 2048
CLOSED_FORM = "closed form"
MONTE_CARLO = "Monte Carlo ± se"
CUED_LINEAR_WARNING = (
    "a linear readout of a linear model cannot select by cue: its output is a fixed linear "
    "function of the past inputs and cues, so it cannot switch between delays (its loss is "
    "measured anyway); the ReLU RNN and the gated models can"
)


def expected_loss_method(config: RunConfig) -> str:
    """How a frame's expected loss was computed, in words (summary()["expected_loss_method"])."""
    if config.plain_task:
        if not config.relu_readout:
            return CLOSED_FORM
        what = "of its linearisation, " if config.gated else ""
        if config.relu_hidden:
            return "stratified Monte Carlo ± se; terms to second order in p"
        return f"exact {what}by convolution; terms to second order in p"
    if config.task in tasks.LINEAR_TASKS and not config.relu_readout:
        return CLOSED_FORM
    return MONTE_CARLO


def task_warnings(config: RunConfig) -> list[str]:
    """What the summary must say of the task itself (the cued linear model's limit)."""
    return [CUED_LINEAR_WARNING] if config.task == "cued" and config.model == "linear" else []


def task_derived(
    config: RunConfig, step: int, W_x: Any, W_h: Any, W_y: Any, b_y: Any, todo: bool = True
) -> dict[str, np.ndarray]:
    """`derived` for a config that is not recall at q = 0: terms (..., 4), temporal_term,
    expected_loss, expected_loss_se (...), at the step's sparsity. `todo`: whether this
    frame is computed at all (`tempsup.theory.budget`); NaN otherwise."""
    p = config.p_at(int(step))
    bias = np.asarray(b_y, dtype=float) if config.readout_bias else None
    T, q, dist = config.seq_len, config.persistence, config.input_dist
    imp = tasks.output_importance(config.task, config.delays, importance_weights(config))
    lead = np.broadcast_shapes(np.shape(W_x)[:-2], np.shape(W_h)[:-2])
    nan = np.full(lead, np.nan)
    out = {"terms": np.full(lead + (4,), np.nan), "temporal_term": nan}
    out.update(expected_loss=nan, expected_loss_se=nan)
    if not todo:
        return out
    W_x, W_h, W_y = (np.asarray(w, dtype=float) for w in (W_x, W_h, W_y))
    if not config.relu_hidden:
        A = geometry.projections(W_y, geometry.feature_directions(W_x, W_h, T, False))
    if config.task in tasks.LINEAR_TASKS and not config.relu_readout:
        mu, nu = closed_form.input_moments(dist)
        c = tasks.target_weights(config.task, config.delays, config.window, T, config.inputs)
        five = tasks_loss.loss_terms(A, c, p, mu, nu, T, q, imp, bias)
        zero = np.zeros(five.shape[:-1])
        return {"terms": five[..., :4], "temporal_term": five[..., 4], "expected_loss":
                five.sum(-1), "expected_loss_se": zero}  # fmt: skip
    from tempsup.theory import tasks_mc  # torch, which readers of runs do not load before

    args = (config.task, config.delays, p, dist, T)
    kwargs = {"window": config.window, "q": q, "importance": imp, "sequences": MC_SEQUENCES}
    if config.relu_hidden:
        predict = _relu_rnn(W_x, W_h, W_y, bias)
        mean, se = tasks_mc.monte_carlo_loss_of(predict, *args, config.inputs, **kwargs)
    else:
        readout = "relu" if config.relu_readout else "linear"
        mean, se = tasks_mc.monte_carlo_loss(A, *args, b_y=bias, readout=readout, **kwargs)
    out.update(expected_loss=np.asarray(mean), expected_loss_se=np.asarray(se))
    return out


def _relu_rnn(W_x: np.ndarray, W_h: np.ndarray, W_y: np.ndarray, b: np.ndarray | None) -> Any:
    """The ReLU RNN's forward pass in numpy over any leading axes, for `monte_carlo_loss_of`:
    h_t = W_x x_t + W_h ReLU(h_{t−1}), ŷ_t = ReLU(W_yᵀ h_t + b), x (T, n_in, B)."""

    def predict(x: np.ndarray) -> np.ndarray:
        h = None
        out = []
        for x_t in x:
            drive = W_x @ x_t  # (..., N_h, B)
            h = drive if h is None else drive + W_h @ np.maximum(h, 0.0)
            z = np.swapaxes(W_y, -1, -2) @ h  # (..., n_out, B)
            out.append(z if b is None else z + b[..., None])
        return np.maximum(np.stack(out, axis=-3), 0.0)

    return predict


def silent_loss(config: RunConfig) -> float:
    """The loss of the silent network (ŷ = 0) on the config's task at its final sparsity:
    the yardstick of a seed's success (`tempsup.io.run.success_mask`)."""
    mu, nu = closed_form.input_moments(config.input_dist)
    imp = tasks.output_importance(config.task, config.delays, importance_weights(config))
    T, p = config.seq_len, config.p
    if config.task != "cued":  # a linear target: the closed form at A = 0
        c = tasks.target_weights(config.task, config.delays, config.window, T, config.inputs)
        zero = np.zeros((T, config.n_out, config.inputs))
        return float(tasks_loss.expected_loss(zero, c, p, mu, nu, T, config.persistence, imp))
    # cued: E[y_t²] = pν when the cued delay d <= t (uniform over ks), else 0
    reach = sum(min(max(T - d, 0), T) for d in config.delays) / len(config.delays)
    return float(p * nu * reach * imp.sum())


def geometry_weights(config: RunConfig, weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The weights the recall geometry reads (square A_s, k-th projection): the feature
    channels of W_x (a cued task's cue channels dropped) and, for multi, the readout block
    of the delay k = max(ks) (`RunConfig.output_block`); a lens's "active" response, when
    given, keeps its feature channels too. Recall and sum: unchanged. Any leading axes
    (frames, seeds): every panel and measure reads its weights through this one view."""
    if config.task in ("recall", "sum"):
        return weights
    block = config.output_block()
    out = dict(weights)
    # W_x (..., N_h, n_in) and a lens's "active" (..., T, S, n_in): the feature channels
    for name, cut in (("W_x", slice(0, config.inputs)), ("active", slice(0, config.inputs)),
                      ("W_y", block), ("b_y", block)):  # fmt: skip
        if name in weights:
            out[name] = np.asarray(weights[name])[..., cut]
    return out
