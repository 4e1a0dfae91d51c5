"""Large: N_h = 100 with 75 features (science.md §1; quick form N_h = 20, 15 features).

The same picture at scale, summarised over all entries: a positive diagonal
of W_yᵀW_k for the most important features and ≤ 0 almost everywhere else.
The ReLU RNN is warm-started from an SSM, which learns from the default init
where the ReLU RNN does not.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from tempsup.analysis.measures import ALIVE, TOL, diag_stats, projections
from tempsup.core.palette import DIVERGING, base_layout
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.preset import ClaimResult, Preset, fixed, num, result, rounded

# the gallery card's picture (run label, panel or "summary": the preset's figure):
# the W_yᵀW_k heatmap at scale
THUMBNAIL = ("rnn", "projections")


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The preset's claims, one function each, on the statistics of W_yᵀW_s computed once."""
    run = runs["rnn"]
    st = diag_stats(run)
    return [diagonal(run, st), rest_le_zero(run, st)]


def diagonal(run: Run, st: dict[str, Any]) -> ClaimResult:
    """A positive diagonal at s = k for the first features by importance."""
    b, n_x, k = run.best, run.config.inputs, run.config.k
    ok1 = (st["n_on"] >= 1) & st["prefix"]
    return result(
        f"W_yᵀW_{{s={k}}}: a positive diagonal for the most important features",
        ok1,
        bool(ok1[b]),
        {
            "on_diagonal": int(st["n_on"][b]),
            "fraction_on_diagonal": rounded(st["n_on"][b] / n_x),
            "on_diagonal_are_first": bool(st["prefix"][b]),
            "diag_first_20": rounded(st["diag"][b, :20], 2),
        },
        f"per seed: the features with gain ≥ {ALIVE} are the first n by importance "
        "(n ≥ 1); held on the best seed",
        said=said_diagonal,
    )


def said_diagonal(m: dict[str, Any]) -> str:
    """How many features are on the diagonal, and whether they are the first ones."""
    first = "the most important ones" if m["on_diagonal_are_first"] else "not the first ones"
    return (
        f"{m['on_diagonal']} features on the diagonal ({num(100 * m['fraction_on_diagonal'], 2)} "
        f"%), {first}."
    )


def rest_le_zero(run: Run, st: dict[str, Any]) -> ClaimResult:
    """Off the diagonal and at every other age: ≤ 0 almost everywhere."""
    b = run.best
    ok2 = (st["off_frac"] >= 0.99) & (st["other_frac"] >= 0.99) & (st["n_on"] >= 1)
    return result(
        "everything else is ≤ 0 (summarised over all entries)",
        ok2,
        bool(ok2[b]),
        {
            "fraction_off_diagonal_le_tol": rounded(st["off_frac"][b], 4),
            "max_off_diagonal": rounded(st["off_max"][b]),
            "fraction_other_ages_le_tol": rounded(st["other_frac"][b], 4),
            "fraction_other_ages_le_0": rounded(st["other_strict"][b], 4),
            "max_other_ages": rounded(st["other_max"][b]),
        },
        f"per seed: ≥ 99 % of the off-diagonal entries at s = k and ≥ 99 % of the entries "
        f"at s ≠ k (s < T) are ≤ {TOL}; held on the best seed",
        said=said_rest,
    )


def said_rest(m: dict[str, Any]) -> str:
    """The share of the other entries ≤ 0.1 and the largest of them."""
    strictly = f"; {num(100 * m['fraction_other_ages_le_0'], 2)} % strictly ≤ 0"
    off = _share(m["fraction_off_diagonal_le_tol"], "off-diagonal entries", m["max_off_diagonal"])
    other = _share(
        m["fraction_other_ages_le_tol"], "entries at other ages", m["max_other_ages"], strictly
    )
    return f"{off} and {other} are ≤ {TOL}."


def _share(fraction: float, entries: str, largest: float, more: str = "") -> str:
    """One kind of entry for the sentence: "99.9 % of the <entries> (largest 0.05<more>)"."""
    return f"{num(100 * fraction, 3)} % of the {entries} (largest {fixed(largest, 2)}{more})"


# ---- the presets -----------------------------------------------------------------------------


def figure(runs: dict[str, Run]) -> go.Figure:
    run = runs["rnn"]
    A = projections(run, run.config.k + 1)[run.best, run.config.k]
    return go.Figure(
        go.Heatmap(z=A.tolist(), colorscale=DIVERGING, zmid=0),
        layout=base_layout("W_yᵀW_k of the best seed (readout i × feature j)"),
    )


def build(quick: bool = False) -> Preset:
    hidden, inputs = (20, 15) if quick else (100, 75)
    ssm = RunConfig("ssm", k=2, sparsity=0.99, hidden=hidden, inputs=inputs, importance=0.9)
    ssm = ssm.replace(batch=256, lr=0.003, seeds=2 if quick else 4)
    # few frames: the check reads the final one, and a frame of 4 seeds at N_h = 100 is
    # ~0.4 MB of run file (these runs ship with the package, tempsup.paper.shipped)
    ssm = ssm.replace(steps=300 if quick else 500, snapshot_every=100)
    rnn = ssm.replace(model="rnn", steps=1500 if quick else 2000, warm_start=ssm.key,
                      snapshot_every=100 if quick else 200)  # fmt: skip
    title = f"Large: N_h = {hidden}, {inputs} features"
    claim = (
        f"With N_h = {hidden} and {inputs} features the same picture, summarised: a "
        "positive diagonal for the most important features, ≤ 0 almost everywhere else."
    )
    recipe = (
        f"N_x = {inputs} (importance 0.9^i), N_h = {hidden}, k = 2, T = 20, S = 0.99, "
        f"batch 256, lr 3e-3, {ssm.seeds} seeds",
        f"stage 1: SSM for {ssm.steps} steps (from the default init the ReLU RNN's first "
        "outputs are ~100x too large and lr 1e-2 kills it; at 3e-3 it barely learns)",
        f"stage 2: ReLU RNN warm-started from stage 1 (warm_start = its key), {rnn.steps} steps",
    )
    configs, labels = (ssm, rnn), ("ssm warm-up", "rnn")
    return Preset(
        "large", title, claim, configs, labels, recipe, main="rnn", checker=check, figure=figure
    )
