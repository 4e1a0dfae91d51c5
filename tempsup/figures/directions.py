"""Directions panel: the feature directions w_s in the hidden-state space (science.md §1).

An input s steps old sits on w_s (`geometry.feature_directions`); arrows are
coloured by role (intermediate s < k, output s = k, old s > k), the readout w_y
is dashed black, and for a ReLU readout the interference-free half-space
{h : w_yᵀh + b ≤ 0} is shaded with a count of the directions inside it.

N_h = 2 is drawn directly (N_h = 1 on a line), N_h = 3 as a 3-D view, and
N_h > 3 as an orthogonal projection onto a plane: its first axis is along each
frame's w_y, so w_yᵀh is exact and the shaded half-plane still decides "free or
not" exactly; its second axis is fixed by the last frame (`second_axis`): w_k's
part orthogonal to w_y (the plane span(w_y, w_k)), or, under the tied readout
where w_y = w_k makes that span a line, the direction orthogonal to w_y in which
the other directions spread most.
With vector input (N_x > 1) every feature's w_k is drawn, each in its own colour
(`palette.FEATURE_COLORS`): the direction its readout reads, so at k = 0 these are the
columns of W_x and the pentagon of five features in a plane is there to see. The feature
picked in the menu is highlighted: its other ages (s ≠ k, coloured by role), its readout,
its half-space and count. Only w_k for the others, not every age of every feature: ten
features at k = 2 would be 60 arrows, and one arrow per feature stays readable at
N_x = 5 and N_x = 10 (beyond `FEATURE_TRACES` features they share one trace and legend
entry, their markers still coloured per feature).
Everything is drawn in the canonical gauge (`tempsup.theory.gauge`: the minimum-norm
hidden basis, w_y along +h_1, kθ >= 0 for N_h = 2), because the arrows' lengths
and angles depend on the hidden basis while a_s = w_yᵀw_s (the hover text, the
half-space count) does not: two runs computing the same function look the same.
Arrows are scatter traces (line + "arrow" marker), never layout annotations,
so every frame-dependent thing lives in the trace data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempsup.core.palette import (
    HALF_SPACE,
    HALF_SPACE_EDGE,
    READOUT,
    ROLE_COLORS,
    ROLE_LABELS,
    ROLES,
    feature_color,
)
from tempsup.figures._common import (
    canonical_weights,
    clipped_range,
    corner_text,
    feature_name,
    n_ages,
    per_frame,
    rnd,
    role,
    rounded,
)
from tempsup.figures.panel import MARGIN, Parts, Selection
from tempsup.model.config import MODEL_NAMES
from tempsup.theory import geometry

# The drawn basis is the canonical gauge's (tempsup.theory.gauge); lengths and angles depend on it.
GAUGE_NOTE = {
    False: "minimum-norm gauge, w<sub>y</sub> along +h<sub>1</sub>",  # linear recurrence
    True: "minimum-norm gauge, units sorted by readout weight",  # ReLU recurrence
}
ARROW_SIZE = 13
RANGE_PAD = 1.15  # axes reach 15 % beyond the longest arrow of any frame
LABEL_MIN = 0.05  # arrows shorter than this fraction of the axis range get no "s=…" label
FEATURE_TRACES = 10  # up to this many features: one trace (and legend entry) per feature


# ---- data: every frame of the selected seed and feature --------------------------------


def prepare(sel: Selection) -> dict[str, Any]:
    """Directions, readout, bias, projections and plane coordinates for all frames,
    in the canonical gauge."""
    cfg, f = sel.config, sel.feature
    n = n_ages(cfg.k)
    cw = canonical_weights(sel)
    W_s = geometry.feature_directions(cw["W_x"], cw["W_h"], n, cfg.relu_hidden)
    w = W_s[..., f]  # (F, n, N_h)
    w_y = cw["W_y"][..., f]  # (F, N_h)
    b = cw["b_y"][:, f].astype(float) if cfg.readout_bias else np.zeros(len(w))  # (F,)
    a = np.einsum("fh,fnh->fn", w_y, w)  # (F, n): a_s = w_yᵀ w_s
    free = geometry.interference_free(a[..., None, None], b[:, None])[..., 0, 0]  # (F, n)
    w_k = np.swapaxes(W_s[:, cfg.k], -1, -2)  # (F, N_x, N_h): every feature's w_k
    pts, ry, k_pts = _coords(w, w_y, cfg.k, cfg.tied, w_k)  # (F, n, d), (F, d), (F, N_x, d)
    drawn = [pts, ry] + ([k_pts] if cfg.inputs > 1 else [])
    scale = max(float(np.abs(x).max(initial=0.0)) for x in drawn)
    R = RANGE_PAD * scale if scale > 0 else 1.0
    # each frame's own scale: the longest drawn coordinate of the frames so far (`causal`)
    reach = np.maximum.accumulate(
        np.max([np.abs(x).reshape(len(x), -1).max(axis=1, initial=0.0) for x in drawn], axis=0)
    )
    R_at = np.where(reach > 0, RANGE_PAD * reach, 1.0)  # (F,)
    norm = np.linalg.norm(w, axis=-1)  # (F, n): ‖w_s‖ in the canonical gauge
    # every feature's own a_k = w_y(j)ᵀw_k(j) and ‖w_k(j)‖, for the hover of its arrow
    k_a = np.einsum("fhj,fjh->fj", cw["W_y"], w_k)  # (F, N_x)
    return {
        "w": w, "w_y": w_y, "b": b, "a": a, "free": free, "pts": pts, "ry": ry, "R": R,
        "R_at": R_at,
        "norm": norm, "k_pts": k_pts, "k_a": k_a, "k_norm": np.linalg.norm(w_k, axis=-1),
    }  # fmt: skip


def _mode(n_h: int) -> str:
    return "2d" if n_h <= 2 else "3d" if n_h == 3 else "projection"


def _coords(
    w: np.ndarray, w_y: np.ndarray, k: int, tied: bool, extra: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """Drawing coordinates of directions (F, n, d) and readout (F, d), d = 2 or 3, and,
    given `extra` (F, m, N_h) (other features' vectors), theirs (F, m, d) in the same
    drawing: the projection is the selected feature's."""
    n_h = w.shape[-1]
    if n_h == 1:  # the hidden state is a line: draw it as the x axis
        out = [np.concatenate([v, np.zeros_like(v)], -1) for v in (w, w_y)]
        if extra is not None:
            out.append(np.concatenate([extra, np.zeros_like(extra)], -1))
        return tuple(out)
    if n_h <= 3:
        return (w, w_y) if extra is None else (w, w_y, extra)
    fixed = second_axis(w[-1], w_y[-1], k, tied)  # one vector for every frame
    bases = np.stack([_plane_basis(w_y[i], w[i], k, fixed) for i in range(len(w))])  # (F, 2, N_h)
    out = [np.einsum("fch,fnh->fnc", bases, w), np.einsum("fch,fh->fc", bases, w_y)]
    if extra is not None:
        out.append(np.einsum("fch,fnh->fnc", bases, extra))
    return tuple(out)


def second_axis(w: np.ndarray, w_y: np.ndarray, k: int, tied: bool) -> np.ndarray:
    """The vector (N_h,) whose part orthogonal to w_y is the projection's second axis,
    taken from one frame (the last) and used for all of them, so the view does not turn.

    Untied: w_k's part orthogonal to w_y, the plane span(w_y, w_k). Tied (w_y = w_k, so
    that span is a line): the direction orthogonal to w_y in which the other directions
    w_s (s ≠ k) spread most, their first principal axis (uncentred), signed so that the
    largest of their coordinates on it is positive. A zero vector when neither exists.
    """
    norm_y = float(np.linalg.norm(w_y))
    e1 = w_y / norm_y if norm_y > 0 else np.zeros_like(w_y)
    perp = w - np.outer(w @ e1, e1)  # (n, N_h): each w_s without its part along w_y
    scale = max(float(np.abs(w).max(initial=0.0)), norm_y, 1e-12)
    if not tied and np.linalg.norm(perp[k]) > 1e-6 * scale:
        return perp[k]
    others = np.delete(perp, k, axis=0)  # (n - 1, N_h)
    if not len(others) or np.abs(others).max() <= 1e-6 * scale:
        return np.zeros_like(w_y)
    v = np.linalg.svd(others, full_matrices=False)[2][0]  # (N_h,)
    c = others @ v
    return v if c[np.abs(c).argmax()] >= 0 else -v


def _plane_basis(w_y: np.ndarray, w: np.ndarray, k: int, fixed: np.ndarray) -> np.ndarray:
    """Orthonormal (e1, e2), (2, N_h): e1 ∥ w_y so w_yᵀh = ‖w_y‖ h_1 exactly, e2 the part of
    `fixed` (`second_axis`) orthogonal to it. A dead readout or a zero `fixed` falls back to
    w_k, the longest other direction, then a unit vector."""
    others = [w[s] for s in np.argsort(-np.linalg.norm(w, axis=-1)) if s != k]
    candidates = [w_y, fixed, w[k], *others, *np.eye(len(w_y))]
    scale = max(float(np.abs(w).max(initial=0.0)), float(np.abs(w_y).max(initial=0.0)), 1e-12)
    basis: list[np.ndarray] = []
    for v in candidates:
        r = v - sum((v @ e) * e for e in basis)
        if np.linalg.norm(r) > 1e-6 * scale:
            basis.append(r / np.linalg.norm(r))
            if len(basis) == 2:
                break
    return np.stack(basis)


# ---- geometry of the shaded region --------------------------------------------------


def half_plane_polygon(R: float, ry: np.ndarray, b: float) -> list[tuple[float, float]]:
    """The square [-R, R]² clipped to {h : ryᵀh + b ≤ 0} (Sutherland–Hodgman), closed.

    Empty when the square misses the half-plane; the whole square when ry = 0 and b ≤ 0.
    The boundary passes through the point of the line nearest the origin, a vertex of its
    own: drawn with 4 digits, the corners far out (`HALF_SPACE_REACH`) are off by 0.05 %
    of R, and the boundary through them alone would miss the origin's neighbourhood by as
    much; through that point it is off by 0.05 % of the distance from it.
    """
    square = [(-R, -R), (R, -R), (R, R), (-R, R)]
    val = [float(ry[0] * x + ry[1] * y + b) for x, y in square]
    out: list[tuple[float, float]] = []
    for i in range(4):
        p, q, vp, vq = square[i], square[(i + 1) % 4], val[i], val[(i + 1) % 4]
        if vp <= 0:
            out.append(p)
        if (vp < 0 < vq) or (vq < 0 < vp):
            t = vp / (vp - vq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
            if vq > 0:  # leaving the half-plane: the boundary follows, through its foot
                out += _foot(ry, b, R)
    return out + out[:1]


def _foot(ry: np.ndarray, b: float, R: float) -> list[tuple[float, float]]:
    """The point of {h : ryᵀh + b = 0} nearest the origin, if it lies inside [-R, R]²."""
    n2 = float(ry[0] ** 2 + ry[1] ** 2)
    # + 0.0: no signed zero (b = 0 puts it at the origin, whatever the signs of ry's zeros)
    foot = (-b * float(ry[0]) / n2 + 0.0, -b * float(ry[1]) / n2 + 0.0)
    return [foot] if max(abs(foot[0]), abs(foot[1])) < R else []


def plane_in_cube(R: float, n: np.ndarray, b: float) -> np.ndarray:
    """Vertices of {h : nᵀh + b = 0} ∩ [-R, R]³ in order around the polygon, (m, 3), m ≥ 3 or 0."""
    if np.linalg.norm(n) == 0:
        return np.zeros((0, 3))
    pts = []
    for axis in range(3):  # the 12 edges: two coordinates fixed at ±R, one free
        i, j = [d for d in range(3) if d != axis]
        for ci in (-R, R):
            for cj in (-R, R):
                if n[axis] == 0:
                    continue
                t = -(b + n[i] * ci + n[j] * cj) / n[axis]
                if -R <= t <= R:
                    p = np.zeros(3)
                    p[i], p[j], p[axis] = ci, cj, t
                    pts.append(p)
    if len(pts) < 3:
        return np.zeros((0, 3))
    P = np.unique(np.round(np.array(pts), 12), axis=0)
    if len(P) < 3:
        return np.zeros((0, 3))
    c = P.mean(0)
    u = P[0] - c
    v = np.cross(n / np.linalg.norm(n), u)
    return P[np.argsort(np.arctan2((P - c) @ v, (P - c) @ u))]


# ---- traces ---------------------------------------------------------------------------


def _roles(k: int, inputs: int = 1) -> list[str]:
    """The role traces of the selected feature; with vector input its w_k is drawn with
    the other features' (in its feature colour), so "output" is not among them."""
    return [r for r in ROLES if (r != "intermediate" or k > 0) and (r != "output" or inputs == 1)]


def _n_feature_traces(inputs: int) -> int:
    return 0 if inputs == 1 else inputs if inputs <= FEATURE_TRACES else 1


def causal(config: Any) -> bool:
    """Whether each frame is drawn from the frames up to it alone (`PanelSet.causal`): in
    the plane (N_h <= 2), yes: the half-space's reach, which arrows are labelled and where
    the count sits follow the longest arrow so far (`R_at`), never a later frame. A 3-D
    view cuts the half-space's plane at the whole run's cube, and a projection (N_h > 3)
    takes its second axis from the last frame."""
    return config.state_size <= 2


def traces(sel: Selection, d: dict[str, Any], frame: int) -> list[dict[str, Any]]:
    cfg = sel.config
    k, R = cfg.k, float(d["R_at"][frame])  # the scale of the frames so far (`causal`)
    pts, ry = d["pts"][frame], d["ry"][frame]
    b = float(d["b"][frame])
    is3d = _mode(cfg.state_size) == "3d"
    out: list[dict[str, Any]] = []
    if cfg.relu_readout:
        if is3d:  # the plane fills the scene's cube, the whole run's
            out.append(_half_space_3d(d["R"], ry, b, cfg.readout_bias))
        else:
            out.append(_half_space_2d(R, ry, b, cfg))
    # the numbers the arrows carry, rounded once per frame (not a few at a time per trace)
    names = ("pts", "a", "norm", "ry") + (("k_pts", "k_a", "k_norm") if cfg.inputs > 1 else ())
    shown = {name: rounded(d, name)[frame] for name in names}
    shown["short"] = per_frame(d, "short labels", lambda: _short(d["pts"], d["R_at"]))[frame]
    for r in _roles(k, cfg.inputs):
        ages = [s for s in range(len(pts)) if role(s, k) == r]
        out.append(_arrows(r, ages, pts, shown, R, is3d, cfg.inputs > 1))
    if cfg.inputs > 1:
        out += _feature_arrows(sel, d, frame, shown, is3d)
    out.append(_readout(shown["ry"], cfg.tied, is3d))
    if cfg.relu_readout:
        n_free, n_free_before = free_counts(d, k)[frame]
        # short lines: the corner text stays inside a panel a phone's width wide
        text = f"{n_free} of {len(pts) - 1} directions in the<br>interference-free half-space"
        if cfg.inputs > 1:
            text = f"{feature_name(sel.feature)}: {text}"
        if k > 0:
            text += f"<br>({n_free_before} of {k} intermediate)"
        if is3d:  # a 3-D scene has no fixed corner: the count goes into the legend entry
            out[0]["name"] += "<br>" + text.replace("<br>", " ")
        else:
            out.append(corner_text(text, R, "count"))
    return out


def _short(pts: np.ndarray, R_at: np.ndarray) -> list[list[bool]]:
    """Per frame and age (or feature): whether the arrow is too short for its label
    (shorter than LABEL_MIN of the frame's half-range `R_at`, that of the frames so far)."""
    return (np.linalg.norm(pts, axis=-1) < LABEL_MIN * R_at[:, None]).tolist()


def free_counts(d: dict[str, Any], k: int) -> list[tuple[int, int]]:
    """Per frame, the count the corner prints: how many directions but w_k lie in the
    half-space, and how many of the intermediate ones (s < k). Kept in `d`: the caption's
    headline (`tempsup.figures.rnn.measured`) reads the same numbers."""
    return per_frame(d, "free counts", lambda: _free_counts(d["free"], k))


def _free_counts(free: np.ndarray, k: int) -> list[tuple[int, int]]:
    """Per frame: how many directions but w_k lie in the half-space, and how many of the
    intermediate ones (s < k)."""
    others = free.sum(axis=-1) - free[:, k]
    return list(zip(others.tolist(), free[:, :k].sum(axis=-1).tolist(), strict=True))


def _half_space_name(bias: bool) -> str:
    return f"interference-free half-space w<sub>y</sub>ᵀh{' + b' if bias else ''} ≤ 0"


# The half-space is filled out to this many times the frame's own square (that of the
# frames so far, `R_at`): the axes clip it to what is shown, and a page that draws the
# panel on a wider scale (Compare, both runs on one; the finished run's, when a weight grew
# after this frame) still sees a half-plane, not a box round the origin. 100: the finished
# runs measured reach at most 3 times their first frame's; the boundary passes through its
# foot (`half_plane_polygon`), so the corners' 4 digits keep it within 0.05 % of R.
HALF_SPACE_REACH = 100.0


def _half_space_2d(R: float, ry: np.ndarray, b: float, cfg) -> dict[str, Any]:
    poly = half_plane_polygon(HALF_SPACE_REACH * R, ry, b) if len(ry) == 2 else []
    return {
        "type": "scatter",
        "x": rnd([p[0] for p in poly]),
        "y": rnd([p[1] for p in poly]),
        "mode": "lines",
        "fill": "toself",
        "fillcolor": HALF_SPACE,
        "line": {"color": HALF_SPACE_EDGE, "width": 1},
        "name": _half_space_name(cfg.readout_bias),
        "hoverinfo": "skip",
    }


def _half_space_3d(R: float, ry: np.ndarray, b: float, bias: bool) -> dict[str, Any]:
    P = plane_in_cube(R, ry, b)
    m = len(P)
    return {
        "type": "mesh3d",
        "x": rnd(P[:, 0]),
        "y": rnd(P[:, 1]),
        "z": rnd(P[:, 2]),
        "i": [0] * max(m - 2, 0),
        "j": list(range(1, m - 1)),
        "k": list(range(2, m)),
        "color": "rgb(0, 158, 115)",
        "opacity": 0.18,
        "name": f"boundary of the {_half_space_name(bias)} "
        "(the free side faces away from w<sub>y</sub>)",
        "showlegend": True,
        "hoverinfo": "skip",
    }


def _arrows(
    r: str,
    ages: list[int],
    pts: np.ndarray,
    shown: dict[str, Any],
    R: float,
    is3d: bool,
    of_picked: bool = False,
) -> dict:
    """One trace per role: a segment origin → w_s per age, separated by gaps; the hover
    gives a_s (gauge-free) and ‖w_s‖ (canonical gauge, the full vector when projected).
    `shown` holds the frame's numbers as drawn (rounded). `of_picked`: with
    vector input, these are the highlighted feature's other ages."""
    dims = ("x", "y", "z")[: pts.shape[-1]]
    coords: dict[str, list] = {c: [] for c in dims}
    text, size, custom = [], [], []
    tips, a_s, norm_s = ([shown[name][s] for s in ages] for name in ("pts", "a", "norm"))
    short = [shown["short"][s] for s in ages]  # tiny arrows' labels pile up: none
    for i, s in enumerate(ages):
        for c, dim in enumerate(dims):
            coords[dim] += [0.0, tips[i][c], None]
        text += ["", "" if short[i] else f"s={s}", ""]
        size += [0, ARROW_SIZE if not is3d else 5, 0]
        custom += [[None, None, None], [s, a_s[i], norm_s[i]], [None] * 3]
    color = ROLE_COLORS[r]
    trace: dict[str, Any] = {
        "type": "scatter3d" if is3d else "scatter",
        **coords,
        "mode": "lines+markers+text",
        "name": ("highlighted feature: " if of_picked else "") + ROLE_LABELS[r],
        "legendgroup": r,
        "line": {"color": color, "width": 3 if r != "old" else 2},
        "text": text,
        "textposition": "top center",
        "textfont": {"color": color, "size": 11},
        "customdata": custom,
        "hovertemplate": "s = %{customdata[0]}: w<sub>y</sub>ᵀw<sub>s</sub> = %{customdata[1]} "
        "(gauge-free)<br>‖w<sub>s</sub>‖ = %{customdata[2]} (canonical gauge)"
        f"<extra>{r}</extra>",
    }
    if is3d:
        trace["marker"] = {"size": size, "color": color, "symbol": "diamond"}
    else:
        trace["marker"] = {"size": size, "color": color, "symbol": "arrow", "angleref": "previous"}
    return trace


def _feature_arrows(
    sel: Selection, d: dict[str, Any], frame: int, shown: dict[str, Any], is3d: bool
) -> list[dict[str, Any]]:
    """Every feature's w_k, each in its own colour and labelled with its letter; the
    highlighted feature's arrow is the thicker. One trace per feature up to
    `FEATURE_TRACES` features, else one trace whose markers carry the colours."""
    k, n_x = sel.config.k, sel.config.inputs
    pts = d["k_pts"][frame]
    drawn, ka, kn = (shown[name] for name in ("k_pts", "k_a", "k_norm"))
    short = per_frame(d, "short feature labels", lambda: _short(d["k_pts"], d["R_at"]))[frame]
    dims = ("x", "y", "z")[: pts.shape[-1]]

    def segment(js: list[int]) -> dict[str, Any]:
        coords: dict[str, list] = {c: [] for c in dims}
        text, size, custom, colors = [], [], [], []
        for j in js:
            for c, dim in enumerate(dims):
                coords[dim] += [0.0, drawn[j][c], None]
            text += ["", "" if short[j] else feature_name(j), ""]
            size += [0, ARROW_SIZE if not is3d else 5, 0]
            custom += [[None] * 3, [feature_name(j), ka[j], kn[j]], [None] * 3]
            colors += [feature_color(j)] * 3
        return {
            "type": "scatter3d" if is3d else "scatter",
            **coords,
            "mode": "lines+markers+text",
            "text": text,
            "textposition": "top center",
            "customdata": custom,
            "hovertemplate": f"feature %{{customdata[0]}}, s = k = {k}: w<sub>y</sub>ᵀw<sub>k</sub>"
            " = %{customdata[1]} (its own readout, gauge-free)<br>‖w<sub>k</sub>‖ = "
            "%{customdata[2]} (canonical gauge)<extra></extra>",
            "legendgroup": "features",
            "marker": {"size": size, "color": colors, "symbol": "diamond" if is3d else "arrow"},
            "_colors": colors,
        }

    groups = [[j] for j in range(n_x)] if n_x <= FEATURE_TRACES else [list(range(n_x))]
    out = []
    for js in groups:
        t = segment(js)
        colors = t.pop("_colors")
        one = len(js) == 1
        color = colors[0] if one else "#9A9A9A"
        picked = one and js[0] == sel.feature
        # two legend entries, not ten: the highlighted feature's, and one for the others
        # (each arrow carries its letter; clicking the entry hides or shows them all)
        first_other = js[0] == (1 if sel.feature == 0 else 0)
        t["name"] = (
            f"w<sub>k</sub> of {feature_name(js[0])} (highlighted)"
            if picked
            else "w<sub>k</sub> of the other features (lettered)"
            if one
            else f"w<sub>k</sub> of each of the {n_x} features (lettered)"
        )
        t["legendgroup"] = "picked" if picked else "features"
        t["showlegend"] = picked or first_other or not one
        t["line"] = {"color": color, "width": 4.5 if picked else 2.5}
        t["textfont"] = {"color": color if one else colors[1::3], "size": 12 if picked else 11}
        if not is3d:
            t["marker"]["angleref"] = "previous"
        out.append(t)
    return out


def _readout(ry: list[Any], tied: bool, is3d: bool) -> dict[str, Any]:
    """The readout's arrow; `ry` its drawn (rounded) coordinates."""
    dims = ("x", "y", "z")[: len(ry)]
    name = "readout w<sub>y</sub>" + (" = w<sub>k</sub> (tied)" if tied else "")
    marker = (
        {"size": [0, 5], "color": READOUT, "symbol": "diamond-open"}
        if is3d
        else {"size": [0, ARROW_SIZE + 2], "color": READOUT, "symbol": "arrow-open"}
    )
    if not is3d:
        marker["angleref"] = "previous"
    return {
        "type": "scatter3d" if is3d else "scatter",
        **{dim: [0.0, ry[c]] for c, dim in enumerate(dims)},
        "mode": "lines+markers+text",
        "name": name,
        "line": {"color": READOUT, "width": 2.5, "dash": "dash"},
        "marker": marker,
        "text": ["", "w<sub>y</sub>"],
        "textposition": "bottom center",
        "textfont": {"color": READOUT, "size": 12},
        "hoverinfo": "skip",
    }


# ---- fixed layout ---------------------------------------------------------------------


# What the projection's second axis is (`second_axis`), by tied readout.
SECOND_AXIS = {
    False: "⊥ w<sub>y</sub>, towards w<sub>k</sub>",
    True: "⊥ w<sub>y</sub>: the others' widest spread",
}


def _projection_note(n_h: int, tied: bool) -> str:
    if tied:
        return (
            f"N<sub>h</sub> = {n_h} projected: x along w<sub>y</sub> = w<sub>k</sub> (tied); "
            "y ⊥ w<sub>y</sub>, where<br>the other w<sub>s</sub> spread most at the last frame "
            "(the same axes in every frame)"
        )
    return (
        f"projection onto span(w<sub>y</sub>, w<sub>k</sub>) of the N<sub>h</sub> = {n_h} "
        "hidden space:<br>x along w<sub>y</sub>, y along the last frame's w<sub>k</sub> "
        "⊥ w<sub>y</sub> (the same axes in every frame)"
    )


def parts(sel: Selection, d: dict[str, Any]) -> Parts:
    cfg = sel.config
    R, n = d["R"], d["w"].shape[1]
    mode = _mode(cfg.state_size)
    title = f"Feature directions w<sub>s</sub>, s = 0…{n - 1} (k = {cfg.k})"
    if cfg.inputs > 1:
        title = (
            f"w<sub>k</sub> of all {cfg.inputs} features (k = {cfg.k}); "
            f"{feature_name(sel.feature)}: every w<sub>s</sub>, s = 0…{n - 1}"
        )
    note = {
        "2d": MODEL_NAMES[cfg.model],
        "3d": f"{MODEL_NAMES[cfg.model]}; drag to rotate",
        "projection": _projection_note(cfg.state_size, cfg.tied),
    }[mode]
    if cfg.state_size == 1:
        note = "N<sub>h</sub> = 1: the hidden state is a line"
    sep = "<br>" if mode == "projection" else " · "
    title += f"<br><sup>{note}{sep}{GAUGE_NOTE[cfg.relu_hidden]}</sup>"
    rng = rnd([-R, R])
    if mode == "3d":
        axes = {
            "scene": {
                **{
                    ax: {"range": rng, "title": {"text": f"h<sub>{i + 1}</sub>"}, "nticks": 5}
                    for i, ax in enumerate(("xaxis", "yaxis", "zaxis"))
                },
                "aspectmode": "cube",
            }
        }
    else:
        titles = {
            "2d": ("h<sub>1</sub>", "h<sub>2</sub>" if cfg.state_size == 2 else ""),
            "projection": ("along w<sub>y</sub>", SECOND_AXIS[cfg.tied]),
        }[mode]
        # autoscale stops at the panel's square: the half-space is filled far past it
        # (HALF_SPACE_REACH)
        axes = {
            "xaxis": {**clipped_range(rng), "title": {"text": titles[0]}, "constrain": "domain"},
            "yaxis": {
                **clipped_range(rng),
                "title": {"text": titles[1]},
                "scaleanchor": "x",
                "scaleratio": 1,
                "constrain": "domain",
            },
        }
    n_traces = (
        len(_roles(cfg.k, cfg.inputs))
        + _n_feature_traces(cfg.inputs)
        + 1
        + cfg.relu_readout * (1 if mode == "3d" else 2)
    )
    margin = dict(MARGIN)
    if mode == "projection":
        margin["t"] = 130
    if cfg.inputs > 1:  # the other features' legend entry adds a row on a two-column panel
        margin["b"] = 146
    extra = {"margin": margin} if margin != MARGIN else {}
    return Parts(title=title, axes=axes, moving=tuple(range(n_traces)), extra=extra)
