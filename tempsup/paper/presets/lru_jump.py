"""LRU: does its swept angle jump with sparsity as the SSM's does?

The LRU (a complex-diagonal linear recurrence with a ReLU readout) trained with the SSM
preset's recipe switches its best seed from the ≈ 90° to the ≈ 270° basin of kθ as
sparsity grows, at the sparsity where the SSM does.

A finding, measured on the same sparsity grid and init seeds as the ssm-jump preset,
whose runs sit beside these: the LRU's recurrence is a rotation-and-shrink per complex
mode, so with N_h = 2 (one mode) kθ is k·arg λ. Its jump is located as the SSM's is
(ssm-jump's `story`), and the two locations are compared.

Sources: science.md §1; issue 42 (the paper's open question on complex SSMs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

import tempsup.paper.presets.ssm_jump as ssm_jump
from tempsup.analysis.measures import swept
from tempsup.core.palette import base_layout
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, card, result

# the gallery card's picture: kθ against S for both models
THUMBNAIL = ("lru S=0.5", "summary")
NAME = "lru-jump"
TITLE, CLAIM = card(__doc__)


def sweep(runs: dict[str, Run], model: str) -> list[Run]:
    """The runs of one model, by increasing sparsity."""
    return sorted(
        (r for r in runs.values() if r.config.model == model), key=lambda r: r.config.sparsity
    )


def check(runs: dict[str, Run]) -> list[ClaimResult]:
    """The LRU's own switch, then where it lies against the SSM's."""
    return [lru_switches(runs), where_against_ssm(runs)]


def lru_switches(runs: dict[str, Run]) -> ClaimResult:
    """The LRU's best seed reads d…d s…s over increasing sparsity, within JUMP_WIDTH."""
    lru = sweep(runs, "lru")
    m = ssm_jump.story(lru)
    per_seed = [
        ssm_jump.switches(ssm_jump.jump(m["sparsity"], regimes))
        for regimes in m["regimes_per_seed"]
    ]
    return result(
        "the LRU's best seed switches from the ≈ 90° to the ≈ 270° basin of kθ within "
        f"ΔS ≤ {ssm_jump.JUMP_WIDTH:g} as sparsity grows",
        np.array(per_seed),
        ssm_jump.switches(m["jump_best"]),
        m,
        "as the ssm-jump claim, on the LRU's runs: regimes d (||kθ| − 100°| ≤ 30°), s "
        "(||kθ| − 270°| ≤ 30°), '.' neither, kθ in the canonical gauge of the LRU's real "
        "2 × 2 recurrence (exact: the LRU is linear); counted per seed index",
        said=said_switch,
        counted=ssm_jump.COUNTED,
    )


def said_switch(m: dict[str, Any]) -> str:
    """The ssm-jump preset's sentence (one writer for a sweep's story), of the LRU."""
    return "LRU: " + ssm_jump.said(m)


def where_against_ssm(runs: dict[str, Run]) -> ClaimResult:
    """The two jumps' locations within JUMP_WIDTH of each other."""
    found = {m: ssm_jump.story(sweep(runs, m))["jump_best"] for m in ("lru", "ssm")}
    both = found["lru"] is not None and found["ssm"] is not None
    gap = abs(found["lru"]["location"] - found["ssm"]["location"]) if both else None
    held = both and gap <= ssm_jump.JUMP_WIDTH + 1e-9
    return result(
        "the LRU's jump lies where the SSM's does",
        np.array([held]),
        held,
        {"lru_jump": found["lru"], "ssm_jump": found["ssm"], "gap": gap},
        f"held when both best seeds jump cleanly and the locations (midpoints of the last "
        f"dense and first sparse sparsity) are ≤ {ssm_jump.JUMP_WIDTH:g} apart",
        said=said_where,
    )


def said_where(m: dict[str, Any]) -> str:
    """Both locations, or which model does not jump."""
    lru, ssm = m["lru_jump"], m["ssm_jump"]
    if lru is None or ssm is None:
        which = " and ".join(n for n, j in (("the LRU", lru), ("the SSM", ssm)) if j is None)
        return f"No comparison: {which} does not jump cleanly on this grid."
    return (
        f"The LRU jumps at S ≈ {lru['location']:g} (between {lru['between'][0]:g} and "
        f"{lru['between'][1]:g}), the SSM at S ≈ {ssm['location']:g}: {m['gap']:.3g} apart."
    )


def figure(runs: dict[str, Run]) -> go.Figure:
    fig = go.Figure(layout=base_layout("kθ of the best seed against sparsity: LRU and SSM"))
    for model in ("lru", "ssm"):
        group = sweep(runs, model)
        fig.add_scatter(
            x=[r.config.sparsity for r in group],
            y=[float(swept(r)[r.best]) for r in group],
            mode="lines+markers",
            name=model.upper(),
            hovertemplate="S = %{x}<br>kθ = %{y:.0f}°<extra>" + model + "</extra>",
        )
    fig.update_xaxes(title="sparsity S")
    fig.update_yaxes(title="kθ (deg)")
    return fig


def build(quick: bool = False) -> Preset:
    ssm = ssm_jump.build(quick)
    # the suite's quick form: half the SSM's seeds (their indices still follow one init)
    seeds = ssm.configs[0].seeds // 2 if quick else ssm.configs[0].seeds
    # ten frames a run: the claim reads the final geometry, and 16 seeds' lens arrays at
    # every 20th step would be a quarter of what the package may carry (tests/test_shipped)
    lru = (c.replace(model="lru", seeds=seeds, snapshot_every=c.steps // 10) for c in ssm.configs)
    configs = tuple(lru) + ssm.configs
    labels = tuple(f"lru {lab}" for lab in ssm.labels) + tuple(f"ssm {lab}" for lab in ssm.labels)
    base = configs[0]
    recipe = (
        f"LRU (λ = exp(−exp(ν) + i·exp(θ)), γ = √(1 − |λ|²) input normalisation, ReLU "
        f"readout), tied readout, N_h = 2 (one complex mode), k = 3, T = 20, {base.seeds} "
        f"seeds, {base.steps} steps, at S = " + ", ".join(f"{c.sparsity:g}" for c in ssm.configs),
        "beside it the ssm-jump preset's SSM runs (the same configs: trained once)",
    )
    return Preset(
        NAME, TITLE, CLAIM, configs, labels, recipe, main=f"lru {ssm.main}", checker=check,
        figure=figure,
    )  # fmt: skip
