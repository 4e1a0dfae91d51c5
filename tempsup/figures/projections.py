"""Projections panel: how strongly an input of age s reaches the readout (science.md §1).

Scalar input: bars of a_s = w_yᵀw_s against s, coloured by role, the s = k bar
outlined, a dashed mark at the target a_k = 1 and, for a ReLU readout, the
interference-free band a_s + b ≤ 0 shaded (those inputs cost nothing).
Vector input: the heatmap of W_yᵀW_s at s = k (readout i × input feature j) on
a diverging scale centred at 0. The paper expects a positive diagonal and everything
else ≤ 0; the subtitle says what this run's last frame shows instead of repeating that
(`heatmap_summary`: how many diagonal entries are positive, how many off-diagonal ones
are, the largest), counted on the values as the cells print them, so it cannot sit above
entries that contradict it. These projections are gauge invariant (geometry.py), so
they can be compared across runs even with a free readout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.core.palette import DIVERGING, HALF_SPACE, ROLE_COLORS, ROLE_LABELS, ROLES
from tempsup.figures._common import (
    clipped_range,
    feature_name,
    n_ages,
    rnd,
    role,
    rounded,
    seed_weights,
)
from tempsup.figures.panel import MARGIN, Parts, Selection
from tempsup.model.lens_names import carries_lens
from tempsup.theory import geometry


def prepare(sel: Selection) -> dict[str, Any]:
    """ "A": A[f, s, i, j] = W_y[:, i] · W_s[:, j] for every frame, (F, n, N_x, N_x)."""
    cfg, lens = sel.config, carries_lens(sel.run.arrays)
    w = seed_weights(sel, *(("active",) if lens else ()))
    W_s = geometry.feature_directions(w["W_x"], w["W_h"], n_ages(cfg.k), cfg.relu_hidden)
    out = {"A": geometry.projections(w["W_y"], W_s)}
    if lens:  # the active response's kernel beside the silent one
        active = w["active"][:, : W_s.shape[1]].astype(float)  # (F, n, S, N_x)
        out["A_active"] = geometry.projections(w["W_y"], active)
    return out


def _bias(sel: Selection) -> np.ndarray:
    run, cfg = sel.run, sel.config
    if not cfg.readout_bias:
        return np.zeros(run.n_frames)
    return seed_weights(sel)["b_y"][:, sel.feature].astype(float)


def _bar_range(sel: Selection, A: np.ndarray) -> list[float]:
    a = A[:, :, sel.feature, sel.feature]
    lo = min(float(a.min()), float(-_bias(sel).max()), 0.0)
    hi = max(float(a.max()), 1.0)
    pad = 0.08 * (hi - lo)
    return [lo - pad, hi + pad]


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    cfg, A = sel.config, d["A"]
    if cfg.inputs > 1:
        return [_heatmap(sel, d, frame)]
    f, k = sel.feature, cfg.k
    a = rounded(d, "a", lambda: A[:, :, f, f])[frame]
    out: list[dict[str, Any]] = []
    if cfg.relu_readout:
        x0, x1 = -0.5, len(a) - 0.5
        out.append(
            {
                "type": "scatter",
                "x": [x0, x1, x1, x0, x0],
                "y": rounded(d, "band.y", lambda: _band_y(sel, A))[frame],
                "mode": "lines",
                "fill": "toself",
                "fillcolor": HALF_SPACE,
                "line": {"width": 0},
                "name": "interference-free: a<sub>s</sub>"
                + (" + b" if cfg.readout_bias else "")
                + " ≤ 0",
                "hoverinfo": "skip",
            }
        )
    for r in ROLES:
        ages = [s for s in range(len(a)) if role(s, k) == r]
        if not ages:
            continue
        out.append(
            {
                "type": "bar",
                "x": ages,
                "y": [a[s] for s in ages],
                "name": ROLE_LABELS[r],
                "legendgroup": r,
                "marker": {
                    "color": ROLE_COLORS[r],
                    "line": {"color": "#111111", "width": 2.5 if r == "output" else 0},
                },
                "hovertemplate": "a<sub>%{x}</sub> = %{y}<extra></extra>",
            }
        )
    if "A_active" in d:
        active = rounded(d, "a_active", lambda: d["A_active"][:, :, f, f])[frame]
        out.append(
            {
                "type": "scatter",
                "x": list(range(len(active))),
                "y": active,
                "mode": "markers",
                "marker": {"symbol": "diamond-open", "size": 9, "color": "#111111"},
                "name": "one real input (active response)",
                "hovertemplate": "active a<sub>%{x}</sub> = %{y}<extra></extra>",
            }
        )
    return out


# The interference-free band reaches this many times the axis's span below its range: the
# axis clips it to what is shown, so on a wider scale (Compare draws both runs on the range
# holding both) it still fills the panel down to its bottom, and autoscale stops at the
# axis's range (`autorangeoptions`), as the directions panel's half-space does.
BAND_REACH = 10.0


def _band_y(sel: Selection, A: np.ndarray) -> np.ndarray:
    """Each frame's interference-free band, bottom to top -b: (F, 5) corners' heights. The
    bottom reaches below the bars' range of the frames up to this one (`causal`; the last
    frame's is the whole run's, `_bar_range`)."""
    a = A[:, :, sel.feature, sel.feature]  # (F, n)
    top = -_bias(sel)
    lo = np.minimum(np.minimum.accumulate(np.minimum(a.min(axis=-1), top)), 0.0)
    hi = np.maximum(np.maximum.accumulate(a.max(axis=-1)), 1.0)
    pad = 0.08 * (hi - lo)  # as `_bar_range` pads it
    lo, hi = lo - pad, hi + pad
    low = lo - BAND_REACH * (hi - lo)
    return np.stack([low, low, top, top, low], -1)


def causal(config: Any) -> bool:
    """Each frame is drawn from the frames up to it alone (`PanelSet.causal`) for scalar
    input; with vector input the heatmap's colour scale is the whole run's."""
    return config.inputs == 1


def _heatmap(sel: Selection, d: dict[str, Any], frame: int) -> dict[str, Any]:
    k, n_x, A = sel.config.k, sel.config.inputs, d["A"]
    names = [feature_name(j) for j in range(n_x)]
    zmax = rounded(d, "zmax", lambda: float(np.abs(A[:, k]).max()) or 1.0)
    trace: dict[str, Any] = {
        "type": "heatmap",
        "z": rounded(d, "A.k", lambda: A[:, k])[frame],
        "x": names,
        "y": names,
        "zmin": None if zmax is None else -zmax,
        "zmax": zmax,
        "colorscale": DIVERGING,
        "colorbar": {"title": {"text": "W<sub>y</sub>ᵀW<sub>k</sub>"}, "thickness": 12},
        "hovertemplate": "readout %{y}, feature %{x}: %{z}<extra></extra>",
        "name": f"W_yᵀW_s at s = {k}",
    }
    if n_x <= 12:
        trace["texttemplate"] = "%{z:.2f}"
    return trace


CELL_DIGITS = 2  # the heatmap prints each cell to 2 decimals; the subtitle counts the same


def heatmap_summary(M: np.ndarray) -> dict[str, Any]:
    """What a W_yᵀW_k heatmap (N_x, N_x) shows, counted on its cells as printed
    (`CELL_DIGITS` decimals): positive diagonal entries, positive off-diagonal ones, the
    largest off-diagonal entry."""
    shown = np.round(np.asarray(M, dtype=float), CELL_DIGITS)
    n = len(shown)
    off = shown[~np.eye(n, dtype=bool)]
    return {
        "n": n,
        "diagonal_positive": int((np.diag(shown) > 0).sum()),
        "off_positive": int((off > 0).sum()),
        "off_total": int(off.size),
        "largest_off": float(off.max()) if off.size else 0.0,
    }


def heatmap_subtitle(M: np.ndarray, step: int) -> str:
    """The heatmap's subtitle: what its cells (last frame, `step`) show, in words."""
    h = heatmap_summary(M)
    text = f"last frame (step {step}): diagonal {h['diagonal_positive']} of {h['n']} positive; "
    if h["off_positive"] == 0:
        return text + "every off-diagonal entry ≤ 0"
    return (
        text + f"{h['off_positive']} of {h['off_total']} off-diagonal > 0, "
        f"largest {h['largest_off']:.{CELL_DIGITS}f}"
    )


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    cfg, A = sel.config, d["A"]
    k = cfg.k
    if cfg.inputs > 1:
        step = int(sel.run["step"][-1])
        return Parts(
            title=f"Projections W<sub>y</sub>ᵀW<sub>s</sub> at s = k = {k}"
            f"<br><sup>{heatmap_subtitle(A[-1, k], step)}</sup>",
            axes={
                "xaxis": {
                    "title": {"text": "input feature j"},
                    "showgrid": False,
                    "constrain": "domain",
                },
                "yaxis": {
                    "title": {"text": "readout i"},
                    "autorange": "reversed",
                    "scaleanchor": "x",
                    "constrain": "domain",
                    "showgrid": False,
                },
            },
            moving=(0,),
            extra={"margin": {**MARGIN, "r": 100}},  # the colour bar's width: drawn once
        )
    n = A.shape[1]
    shapes = (
        {
            "type": "line",
            "xref": "x",
            "yref": "y",
            "x0": k - 0.45,
            "x1": k + 0.45,
            "y0": 1,
            "y1": 1,
            "line": {"color": "#111111", "width": 2, "dash": "dot"},
        },
    )
    n_traces = sum(1 for r in ROLES if r != "intermediate" or k > 0) + cfg.relu_readout
    n_traces += "A_active" in d
    title = "Readout projections a<sub>s</sub> = w<sub>y</sub>ᵀw<sub>s</sub>"
    title += "<br><sup>outlined: s = k; dotted: target a<sub>k</sub> = 1</sup>"
    return Parts(
        title=title,
        axes={
            "xaxis": {
                "range": [-0.6, n - 0.4],
                "tickmode": "array",
                "tickvals": list(range(n)),
                "title": {"text": "age s (steps since the input)"},
                "zeroline": False,
            },
            "yaxis": {
                # the band reaches below it; the active response's marks are inside it
                **clipped_range(rnd(_bar_range(sel, np.concatenate([A, d.get("A_active", A)])))),
                "title": {"text": "a<sub>s</sub>"},
                "zeroline": True,
                "zerolinewidth": 2,
                "zerolinecolor": "#555555",
            },
        },
        moving=tuple(range(n_traces)),
        shapes=shapes,
        extra={"barmode": "overlay", "bargap": 0.25},
    )
