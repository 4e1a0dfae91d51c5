"""Columns panel: each feature's direction W_i in the bottleneck, coloured by its angle.

m = 2 draws the columns as they are (m = 1 on a line). For m > 2 they are
projected onto the top two left singular vectors of the *final* frame's W
(the PCA of W's columns, uncentred): one fixed plane for every frame, so
playing the animation shows the final geometry forming rather than a
jittering basis. The colour is the feature's angle on a cyclic scale (circle:
φ_i; figure-8: the curve parameter; sphere: longitude; text: the angle in the
covariance's top-2 PCA plane): a PCA circle shows as a colour wheel, antipodal
pairs as opposite colours on one line. The corner text gives the claims'
numbers for this frame (`tempsup.bows.analysis`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.bows import analysis
from tempsup.bows.figures._common import CYCLIC, MAX_TEXT_LABELS, SPOKE
from tempsup.figures._common import corner_text, fmt, rnd
from tempsup.figures.panel import Parts, Selection


def projection(W_final: np.ndarray) -> np.ndarray:
    """The fixed plane: (2, m), the identity for m ≤ 2 (m = 1 padded with a zero row)."""
    m = W_final.shape[0]
    if m == 1:
        return np.array([[1.0], [0.0]])
    if m == 2:
        return np.eye(2)
    u, _, _ = np.linalg.svd(W_final.astype(float), full_matrices=False)
    top = u[:, :2]  # (m, 2)
    top = top * np.where(top[np.abs(top).argmax(0), [0, 1]] < 0, -1.0, 1.0)  # fixed signs
    return top.T


def prepare(sel: Selection) -> dict[str, Any]:
    run, s = sel.run, sel.seed
    W = run["W"][:, s].astype(float)  # (F, m, d)
    P = projection(W[-1])
    xy = np.einsum("km,fmd->fkd", P, W)  # (F, 2, d)
    R = 1.15 * max(float(np.abs(xy).max()), 1e-3)
    angle = run["angle"].astype(float)
    nums = {
        "pca": analysis.pca_overlap(W, run["cov"]),  # (F,)
        "paired": analysis.paired_fraction(W),
        "circle": analysis.circle_score(W, angle),
    }
    norms = np.linalg.norm(W, axis=1)  # (F, d) ‖W_i‖
    return {"xy": xy, "R": R, "deg": np.degrees(angle) % 360, "nums": nums, "norms": norms}


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    run = sel.run
    x, y = d["xy"][frame]
    dd = x.shape[0]
    spokes_x = [v for xi in rnd(x) for v in (0.0, xi, None)]
    spokes_y = [v for yi in rnd(y) for v in (0.0, yi, None)]
    labels = run.labels
    norms = d["norms"][frame]
    show_text = dd <= MAX_TEXT_LABELS
    short = labels if run.config.structure == "text" else [str(i) for i in range(dd)]
    n = d["nums"]
    text = (
        f"PCA overlap {fmt(float(n['pca'][frame]))}<br>"
        f"isolated antipodal pairs {fmt(float(n['paired'][frame]) * 100, 3)} %<br>"
        f"circle score {fmt(float(n['circle'][frame]))}"
    )
    points = {
        "type": "scatter",
        "x": rnd(x),
        "y": rnd(y),
        "mode": "markers+text" if show_text else "markers",
        "marker": {
            "size": 11 if dd <= 100 else 6,
            "color": rnd(d["deg"]),
            "colorscale": CYCLIC,
            "cmin": 0,
            "cmax": 360,
            "line": {"color": "white", "width": 1},
            "colorbar": {"title": {"text": "angle (°)"}, "thickness": 12, "len": 0.8},
        },
        "customdata": [[lab, v] for lab, v in zip(labels, rnd(norms), strict=True)],
        "hovertemplate": "%{customdata[0]}<br>‖W_i‖ = %{customdata[1]}<extra></extra>",
        "name": "columns W_i",
        "showlegend": False,
    }
    if show_text:
        points["text"] = short
        points["textposition"] = "top center"
        points["textfont"] = {"size": 10, "color": "#444444"}
    return [
        {
            "type": "scatter",
            "x": spokes_x,
            "y": spokes_y,
            "mode": "lines",
            "line": {"color": SPOKE, "width": 1},
            "hoverinfo": "skip",
            "showlegend": False,
            "name": "spokes",
        },
        points,
        corner_text(text, d["R"], "geometry summary"),
    ]


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    m = sel.config.m
    R = d["R"]
    if m > 2:
        sub = f"m = {m}: projected on the top-2 PCs of the final W's columns"
        xt, yt = "PC 1 of W's columns", "PC 2"
    elif m == 2:
        sub, xt, yt = "m = 2: the bottleneck itself", "h<sub>1</sub>", "h<sub>2</sub>"
    else:
        sub, xt, yt = "m = 1: the bottleneck is a line", "h<sub>1</sub>", ""
    return Parts(
        title=f"Columns W<sub>i</sub> coloured by feature angle<br><sup>{sub}</sup>",
        axes={
            "xaxis": {"range": rnd([-R, R]), "title": {"text": xt}, "constrain": "domain"},
            "yaxis": {
                "range": rnd([-R, R]),
                "title": {"text": yt},
                "scaleanchor": "x",
                "scaleratio": 1,
                "constrain": "domain",
            },
        },
        moving=(0, 1, 2),
    )
