"""Eigen panel: eigenvalues of W_h in the complex plane, inside or outside the unit circle.

A complex pair inside the circle is a spiral sink: each step rotates by θ =
arg λ and shrinks by |λ| (science.md §1). The panel notes ρ(W_h), the swept
angle kθ from w_0 to w_k and ‖w_0‖ (the sources are ambiguous about which
"radius" the SSM phase transition refers to, so both are shown). The
eigenvalues and ρ are gauge-free; kθ and ‖w_0‖ depend on the hidden basis, so
they are measured in the canonical gauge (`tempsup.theory.gauge`, the same basis the
directions panel draws) and labelled so, with the sign convention that basis really
applies (`tempsup.analysis.captions.ktheta_note`: kθ ≥ 0 for a linear recurrence with N_h = 2,
the sign the unit order gives for the ReLU RNN). The eigenvalues of earlier frames are
drawn faintly, so the path learning took is visible in every frame. Every number comes
from `geometry.summary`, the function `tempsup inspect` reads (`tempsup.io.describe`): the
panel and the status line under it cannot disagree with the run's summary.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.analysis import captions
from tempsup.core.palette import EIGEN, EIGEN_PATH, UNIT_CIRCLE
from tempsup.figures._common import (
    canonical_weights,
    corner_text,
    fmt,
    rnd,
    rounded,
    seed_weights,
    thin,
)
from tempsup.figures.panel import Parts, Selection
from tempsup.theory import geometry

PATH_POINTS = 1500  # the faint path of earlier eigenvalues keeps at most this many points


def prepare(sel: Selection) -> dict[str, Any]:
    """Every frame's spectrum and numbers, from `geometry.summary`: the function
    `tempsup inspect` (`tempsup.io.describe`) reads them from, so the two cannot disagree."""
    cfg, f = sel.config, sel.feature
    w = seed_weights(sel)  # (F, ...): the feature channels, a multi run's delay-k readout
    weights = [w[name] for name in ("W_x", "W_h", "W_y", "b_y")]
    geo = geometry.summary(
        *weights, cfg.k, cfg.relu_hidden, tied=cfg.tied, gauged=canonical_weights(sel)
    )  # kθ and ‖w_0‖ in the canonical gauge the directions panel draws
    lam = geo["eig_real"] + 1j * geo["eig_imag"]  # (F, N_h)
    rho = np.asarray(geo["spectral_radius"])  # (F,)
    swept = np.asarray(geo["swept_angle_deg_features"][:, f])  # (F,)
    w0 = np.asarray(geo["w0_norm_features"][:, f])  # (F,)
    R = max(1.1, 1.1 * float(rho.max(initial=0.0)))
    # the frame's own: the frames' so far (`causal`); the summary sits at its corner
    R_at = np.fmax(1.1, 1.1 * np.fmax.accumulate(rho))  # NaN (none yet) counts as nothing
    return {"lam": lam, "rho": rho, "swept": swept, "w0": w0, "R": R, "R_at": R_at}


def causal(config: Any) -> bool:
    """Each frame is drawn from the frames up to it alone (`PanelSet.causal`)."""
    return True


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    lam, R = d["lam"], float(d["R_at"][frame])
    text = (
        f"ρ(W<sub>h</sub>) = {fmt(float(d['rho'][frame]))} (gauge-free)"
        f"<br>kθ = {fmt(float(d['swept'][frame]), 4)}°, ‖w<sub>0</sub>‖ = "
        f"{fmt(float(d['w0'][frame]))}<br>{captions.ktheta_note(sel.config)}"
    )
    return [
        _path(d),
        {
            "type": "scatter",
            "x": rounded(d, "lam.real", lambda: lam.real)[frame],
            "y": rounded(d, "lam.imag", lambda: lam.imag)[frame],
            "mode": "markers",
            "marker": {"color": EIGEN, "size": 11, "line": {"color": "white", "width": 1}},
            "name": "eigenvalues of W<sub>h</sub>",
            "customdata": rounded(d, "lam.polar", lambda: _polar(lam))[frame],
            "hovertemplate": "λ = %{x} + %{y}i<br>|λ| = %{customdata[0]}, "
            "arg λ = %{customdata[1]}°<extra></extra>",
        },
        corner_text(text, R, "spectrum summary"),
    ]


def _polar(lam: np.ndarray) -> np.ndarray:
    """(|λ|, arg λ in degrees) of each eigenvalue: what its hover names."""
    return np.stack([np.abs(lam), np.degrees(np.angle(lam))], -1)


def _path(d: dict[str, Any]) -> dict[str, Any]:
    """The faint path of every frame's eigenvalues: the same trace in every frame, built
    once per `d` (as the loss panel's history): a view draws it for each of its frames."""
    if "path" not in d:
        lam = d["lam"]
        path = lam[thin(len(lam), max(PATH_POINTS // lam.shape[1], 2))]
        d["path"] = {
            "type": "scatter",
            "x": rnd(path.real.ravel()),
            "y": rnd(path.imag.ravel()),
            "mode": "markers",
            "marker": {"color": EIGEN_PATH, "size": 5},
            "name": "eigenvalues during training",
            "hoverinfo": "skip",
        }
    return dict(d["path"])  # its own top level: a caller may set a key (the animation)


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    R = d["R"]
    rng = rnd([-R, R])
    circle = {
        "type": "circle",
        "xref": "x",
        "yref": "y",
        "x0": -1,
        "y0": -1,
        "x1": 1,
        "y1": 1,
        "line": {"color": UNIT_CIRCLE, "width": 1.5, "dash": "dot"},
        "layer": "below",
    }
    return Parts(
        title="Eigenvalues of W<sub>h</sub><br><sup>dotted: unit circle (|λ| = 1)</sup>",
        axes={
            "xaxis": {"range": rng, "title": {"text": "Re λ"}, "constrain": "domain"},
            "yaxis": {
                "range": rng,
                "title": {"text": "Im λ"},
                "scaleanchor": "x",
                "scaleratio": 1,
                "constrain": "domain",
            },
        },
        moving=(1, 2),
        shapes=(circle,),
    )
