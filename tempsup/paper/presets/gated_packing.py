"""GRU and LSTM: do they pack and forget like the ReLU RNN?

A GRU and an LSTM trained on the k = 3 delay at S = 0.9 and 0.97 with N_h = 2 and 3 put
their k intermediate directions in the interference-free half-space and forget sharply
after k, as the ReLU RNN does.

A finding, measured rather than assumed: read at the silent state (the linearised
a_s = w_yᵀw_s the panels draw) and, beside it, for a real input of the law's mean value
(the active response), since a gated network's memory need not be linear. A smooth
network cannot forget exactly as the ReLU RNN does (a_s = 0 after k), so "sharp" here
means every a_s after k within SHARP of a_k.

Sources: science.md §1, §1b; issue 42 (the paper's open question on gated recurrences).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from tempsup.analysis.measures import ALIVE, TOL, active_kernel, kernel
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.preset import ClaimResult, Preset, card, fixed, listed, result, rounded

# the gallery card's picture (run label, panel or "summary": the preset's figure)
THUMBNAIL = ("gru S=0.97 N_h=3", "directions")
NAME = "gated-packing"
TITLE, CLAIM = card(__doc__)
SHARP = 0.1  # forgetting counts as sharp when every |a_s| after k is at most this × a_k
MODELS = ("gru", "lstm")


def label(model: str, sparsity: float, hidden: int) -> str:
    return f"{model} S={sparsity:g} N_h={hidden}"


def readings(run: Run) -> dict[str, np.ndarray]:
    """Per seed, for the linearised kernel ("lin") and the active one ("act"): alive (a_k ≥
    ALIVE), all k intermediate a_s ≤ TOL, and max_(s>k) |a_s| / a_k."""
    k, out = run.config.k, {}
    for name, a in (("lin", kernel(run)), ("act", active_kernel(run))):
        ak = a[:, k]
        out[f"{name}_alive"] = ak >= ALIVE
        out[f"{name}_packed"] = (a[:, :k] <= TOL).all(axis=1) & (ak >= ALIVE)
        out[f"{name}_after"] = np.abs(a[:, k + 1 :]).max(axis=1) / np.maximum(np.abs(ak), 1e-12)
        out[f"{name}_a"] = a
    return out


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The packing claim per gated model, then sharp forgetting over all of them."""
    return [packs(runs, "gru"), packs(runs, "lstm"), forgets_sharply(runs)]


def packs(runs: dict[str, Run], model: str) -> ClaimResult:
    """All k intermediate a_s ≤ TOL on the best seed of every (S, N_h) run of `model`."""
    mine = {lab: r for lab, r in runs.items() if r.config.model == model}
    ok, held, per_run = [], True, {}
    for lab, run in mine.items():
        r, b, k = readings(run), run.best, run.config.k
        ok.append(r["lin_packed"])
        held &= bool(r["lin_packed"][b])
        per_run[lab] = {
            "a_best": rounded(r["lin_a"][b, : k + 4]),
            "a_active_best": rounded(r["act_a"][b, : k + 4]),
            "intermediate_free_best": int((r["lin_a"][b, :k] <= TOL).sum()),
            "packed_active_best": bool(r["act_packed"][b]),
            "alive_seeds": int(r["lin_alive"].sum()),
            "seeds": int(r["lin_alive"].size),
        }
    return result(
        f"the {model.upper()} puts all k intermediate directions in the interference-free "
        "half-space",
        np.concatenate(ok),
        held,
        {"model": model, "k": 3, "runs": per_run},
        f"per seed: a_k ≥ {ALIVE} and a_s ≤ {TOL} for every s < k (the linearised kernel, "
        "as the panels draw it); held when the best seed of every (S, N_h) run does so; "
        "the active kernel's verdict is reported beside it",
        said=said_packs,
    )


def said_packs(m: dict[str, Any]) -> str:
    """Per run: the best seed's free intermediate count, its a_s, linearised and active."""
    parts = [
        f"{lab}: {r['intermediate_free_best']} of {m['k']} free, a_0…a_{len(r['a_best']) - 1} "
        f"= {listed(r['a_best'])} (active {listed(r['a_active_best'])}; "
        f"{'packed' if r['packed_active_best'] else 'not packed'} for a real input), "
        f"{r['alive_seeds']} of {r['seeds']} seeds alive"
        for lab, r in m["runs"].items()
    ]
    return "; ".join(parts) + "."


def forgets_sharply(runs: dict[str, Run]) -> ClaimResult:
    """max_(s>k) |a_s| / a_k ≤ SHARP on the best seed of every run, GRU and LSTM."""
    ok, held, per_run = [], True, {}
    for lab, run in runs.items():
        r, b = readings(run), run.best
        sharp = r["lin_alive"] & (r["lin_after"] <= SHARP)
        ok.append(sharp)
        held &= bool(sharp[b])
        per_run[lab] = {
            "after_best": rounded(r["lin_after"][b]),
            "after_active_best": rounded(r["act_after"][b]),
        }
    return result(
        "gated networks forget sharply after k (every later a_s within "
        f"{SHARP:g} of a_k; the ReLU RNN's are exactly 0)",
        np.concatenate(ok),
        held,
        {"runs": per_run},
        f"per seed: a_k ≥ {ALIVE} and max_(s>k) |a_s| / a_k ≤ {SHARP:g} (linearised kernel; "
        "the active one beside it); held on the best seed of every run",
        said=said_sharp,
    )


def said_sharp(m: dict[str, Any]) -> str:
    """max_(s>k) |a_s| / a_k per run, linearised (active)."""
    parts = [
        f"{lab} {fixed(r['after_best'])} ({fixed(r['after_active_best'])})"
        for lab, r in m["runs"].items()
    ]
    return "max_(s>k) |a_s|/a_k of the best seeds, linearised (active): " + ", ".join(parts) + "."


def figure(runs: dict[str, Run]) -> go.Figure:
    fig = go.Figure(layout=base_layout("a_s / a_k of the best seeds against the age s"))
    for lab, run in runs.items():
        a = kernel(run)[run.best]
        k = run.config.k
        ak = a[k] if abs(a[k]) > 1e-12 else 1.0
        fig.add_scatter(x=list(range(len(a))), y=(a / ak).tolist(), mode="lines+markers", name=lab)
    fig.update_xaxes(title="age s")
    return fig


def build(quick: bool = False) -> Preset:
    if quick:  # the suite's stand-in: the sparsest, widest run of each model
        grid = tuple((m, 0.97, 3) for m in MODELS)
        base = RunConfig("gru", k=3, seeds=4, steps=600, snapshot_every=50)
    else:
        grid = tuple((m, s, h) for m in MODELS for s in (0.9, 0.97) for h in (2, 3))
        base = RunConfig("gru", k=3, seeds=8, steps=3000, snapshot_every=50)
    configs = tuple(base.replace(model=m, sparsity=s, hidden=h) for m, s, h in grid)
    labels = tuple(label(*g) for g in grid)
    recipe = (
        f"GRU and LSTM (torch's equations, one layer, ReLU readout), free readout, k = 3, "
        f"T = 20, {base.seeds} seeds, {base.steps} steps each, at "
        + ", ".join(f"S = {s:g}, N_h = {h}" for m, s, h in grid if m == "gru"),
        "each seen through its linearisation at the silent state (20 silent inputs from "
        "h = 0), and through its response to one input of the law's mean value",
    )
    return Preset(
        NAME, TITLE, CLAIM, configs, labels, recipe, main=label("gru", 0.97, 3), checker=check,
        figure=figure,
    )  # fmt: skip
