"""Matrices panel: the data covariance Σ beside WᵀW, on one colour scale.

The paper's first picture (science.md §2): where features are in linear
superposition WᵀW reproduces the covariance's top principal components (for
the circle: a banded, circulant matrix like Σ); antipodal pairs show as −1
entries off a bright diagonal. The two matrices live on different scales, so
each is divided by its largest |entry| (Σ once; WᵀW over all frames, so growth
during training stays visible) and both share one diverging colour scale on
[−1, 1]; the hover shows the raw values. Large vocabularies show the most
frequent MAX_MATRIX words, ordered by angle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.bows import analysis
from tempsup.bows.figures._common import MAX_MATRIX, short_labels, shown_features
from tempsup.core.palette import DIVERGING
from tempsup.figures._common import fmt, rnd
from tempsup.figures.panel import Parts, Selection


def prepare(sel: Selection) -> dict[str, Any]:
    run = sel.run
    idx = shown_features(run, MAX_MATRIX)
    cov = run["cov"].astype(float)[np.ix_(idx, idx)]
    G = analysis.gram(run["W"][:, sel.seed])[:, idx][:, :, idx]  # (F, n, n)
    s_cov = float(np.abs(cov).max()) or 1.0
    s_gram = float(np.abs(G).max()) or 1.0
    return {"idx": idx, "cov": cov, "G": G, "s_cov": s_cov, "s_gram": s_gram}


def _heatmap(z: np.ndarray, raw: np.ndarray, name: str, axes: str) -> dict[str, Any]:
    n = z.shape[0]
    return {
        "type": "heatmap",
        "x": list(range(n)),
        "y": list(range(n)),
        "z": rnd(z),
        "customdata": rnd(raw),
        "coloraxis": "coloraxis",
        "name": name,
        "hovertemplate": f"{name}[%{{y}}, %{{x}}] = %{{customdata}}<extra></extra>",
        "xaxis": "x" + axes,
        "yaxis": "y" + axes,
    }


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    G = d["G"][frame]
    return [
        _heatmap(d["cov"] / d["s_cov"], d["cov"], "Σ", ""),
        _heatmap(G / d["s_gram"], G, "WᵀW", "2"),
    ]


def _axes(n: int, labels: list[str], domain: list[float], suffix: str, title: str) -> dict:
    ticks = {"tickmode": "array", "tickvals": list(range(n)), "ticktext": labels}
    if n > 24:  # too many to read: hover names the cell
        ticks = {"showticklabels": False}
    x_name, y_name = "x" + suffix, "y" + suffix
    return {
        "xaxis" + suffix: {
            "domain": domain,
            "range": [-0.5, n - 0.5],
            "title": {"text": title},
            "anchor": y_name,
            "showgrid": False,
            "zeroline": False,
            "constrain": "domain",
            **ticks,
        },
        "yaxis" + suffix: {
            "range": [n - 0.5, -0.5],  # matrix convention: row 0 on top
            "anchor": x_name,
            "scaleanchor": x_name,
            "scaleratio": 1,
            "showgrid": False,
            "zeroline": False,
            "constrain": "domain",
            **ticks,
        },
    }


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    run = sel.run
    idx = d["idx"]
    n = len(idx)
    labels = short_labels(run, idx)
    shown = "" if n == run.d else f"; the {n} most frequent of {run.d} words"
    axes = {
        **_axes(n, labels, [0.0, 0.44], "", f"covariance Σ ÷ {fmt(d['s_cov'])}"),
        **_axes(n, labels, [0.56, 1.0], "2", f"WᵀW ÷ {fmt(d['s_gram'])}"),
    }
    return Parts(
        title=f"Data covariance beside WᵀW<br><sup>each ÷ its largest |entry|, one colour "
        f"scale{shown}</sup>",
        axes=axes,
        moving=(1,),
        extra={
            "coloraxis": {
                "colorscale": DIVERGING,
                "cmin": -1,
                "cmax": 1,
                "colorbar": {"title": {"text": "÷ max"}, "thickness": 12, "len": 0.8},
            }
        },
    )
