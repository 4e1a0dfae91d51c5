"""What the panels draw with: the RNN selection (run, seed, feature) and its canonical
gauge, rounding, names and roles of the directions, corner texts, the loss axes (the bows
lab's loss panel uses them too). The panel protocol itself is `tempsup.figures.panel`.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable
from typing import Any

import cachetools
import numpy as np

from tempsup.core.palette import CURSOR, LOSS
from tempsup.errors import TempsupError
from tempsup.figures.panel import Selection
from tempsup.io.run import Run
from tempsup.io.tasks_frame import geometry_weights
from tempsup.theory import gauge

SIG_DIGITS = 4  # floats in figures: 4 significant digits keeps frames small and plots exact enough


def select(run: Run, seed: int | None, feature: int = 0) -> Selection:
    """Validate the seed (None = the run's best) and the feature against the run."""
    n_seeds = int(run["loss"].shape[1])
    s = run.best if seed is None else seed
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < n_seeds:
        raise TempsupError(f"seed: expected an integer in [0, {n_seeds - 1}] or None, got {seed!r}")
    n_x = run.config.inputs
    if (
        isinstance(feature, bool)
        or not isinstance(feature, (int, np.integer))
        or not 0 <= feature < n_x
    ):
        raise TempsupError(f"feature: expected an integer in [0, {n_x - 1}], got {feature!r}")
    return Selection(run, int(s), int(feature))


# Canonical-gauge results per frame, keyed by the frame's weights (content, not identity):
# a streaming page rebuilds its Run on every poll, and only the frames new since the last
# poll need the Newton solve. Bounded by bytes; shared by the threads of a web process.
_CANONICAL: cachetools.LRUCache = cachetools.LRUCache(
    maxsize=64 * 2**20, getsizeof=lambda cw: sum(v.nbytes for v in cw.values())
)
_CANONICAL_LOCK = threading.Lock()
_WEIGHTS = ("W_x", "W_h", "W_y", "b_y")
# and the last few whole results by the run's W_h array (identity): the panels of one
# view ask for the same selection several times
_RECENT: list[tuple[np.ndarray, int, dict[str, np.ndarray]]] = []
_RECENT_KEEP = 4


def seed_weights(sel: Selection, *extra: str) -> dict[str, np.ndarray]:
    """The selected seed's frames of W_x, W_h, W_y, b_y (and the `extra` arrays named), (F, ...),
    as the recall geometry reads them (`tasks_frame.geometry_weights`): a multi run's
    readout of the delay k = max(ks), a cued run's feature channels without its cue
    channels. Every panel reads weights here, so each draws for every task alike."""
    names = _WEIGHTS + extra
    return geometry_weights(sel.config, {name: sel.run[name][:, sel.seed] for name in names})


def canonical_weights(sel: Selection) -> dict[str, np.ndarray]:
    """Every frame of the selected seed in the canonical gauge (`tempsup.theory.gauge.canonical`):
    "W_x", "W_h", "W_y", "b_y" as (F, ...) float arrays. Panels draw gauge-dependent things
    (arrows w_s, ‖w_0‖, kθ) from these, so two runs computing the same function look alike."""
    cfg, s = sel.config, sel.seed
    stored = sel.run.gauged(s) if hasattr(sel.run, "gauged") else None
    if stored is not None:  # a finished job's run holds it (`tempsup.io.run.Run.with_gauge`)
        return stored
    for arr, seed, cw in list(_RECENT):
        if arr is sel.run["W_h"] and seed == s:
            return cw
    view = seed_weights(sel)
    weights = [np.ascontiguousarray(view[name]) for name in _WEIGHTS]
    problem = f"{cfg.k} {cfg.relu_hidden} {cfg.tied}".encode()
    keys = [_frame_key(problem, [w[f] for w in weights]) for f in range(len(weights[0]))]
    with _CANONICAL_LOCK:
        found = [_CANONICAL.get(key) for key in keys]
    missing = [f for f, cw in enumerate(found) if cw is None]
    if missing:  # one batched solve for every frame not seen before
        new = gauge.canonical(*(w[missing] for w in weights), cfg.k, cfg.relu_hidden, cfg.tied)
        with _CANONICAL_LOCK:
            for j, f in enumerate(missing):
                # copies: a view would keep the whole batch alive past the memo's byte count
                found[f] = {name: value[j].copy() for name, value in new.items()}
                _CANONICAL[keys[f]] = found[f]
    cw = {name: np.stack([c[name] for c in found]) for name in found[0]}
    with _CANONICAL_LOCK:
        _RECENT.insert(0, (sel.run["W_h"], s, cw))
        del _RECENT[_RECENT_KEEP:]
    return cw


def _frame_key(problem: bytes, arrays: list[np.ndarray]) -> bytes:
    digest = hashlib.blake2b(problem, digest_size=16)
    for a in arrays:
        digest.update(a.tobytes())
    return digest.digest()


_RND_SMALL = 64  # measured: below this many values the string route is as quick


def rnd(x: Any) -> Any:
    """Plain-JSON copy of a number or array: SIG_DIGITS significant digits, NaN/inf -> None.

    Each value is float(f"{v:.4g}"), computed for whole arrays (a figure holds
    thousands): the leading digits as an integer m, then m / 10^n or m · 10^n, one
    correctly rounded operation on exact operands, which is the double nearest that
    decimal, as float() parses it. Values whose digits could round either way (a
    near-tie, or a power of ten at the edge of the exponent) go through the string.
    """
    if isinstance(x, (float, int)) and not isinstance(x, bool):  # one number: no array
        v = float(x)
        return float(format(v, _SPEC)) if math.isfinite(v) else None
    if type(x) is list and len(x) <= _RND_SMALL and all(type(v) is float for v in x):
        # a frame's few plain numbers (a polygon's corners, a cursor's ends): no array
        return [float(format(v, _SPEC)) if math.isfinite(v) else None for v in x]
    arr = np.asarray(x, dtype=float)
    if arr.size <= _RND_SMALL:  # a few values: the string route is quicker than array setup
        return _rnd_strings(arr)
    flat = arr.ravel()
    out = np.full(flat.shape, np.nan)
    ok = np.isfinite(flat) & (flat != 0)
    v = flat[ok]
    shift = SIG_DIGITS - 1 - np.floor(np.log10(np.abs(v)))  # digits right of the point
    safe = np.abs(shift) <= 22  # 10^n exact in a double
    scaled = np.where(safe, v * 10.0 ** np.where(safe, shift, 0.0), np.nan)
    digits = np.rint(scaled)
    exact = (
        safe
        & (np.abs(digits) >= 10 ** (SIG_DIGITS - 1))
        & (np.abs(digits) < 10**SIG_DIGITS)
        & (np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) > 1e-6)  # no near-tie
    )
    power = 10.0 ** np.abs(np.where(safe, shift, 0.0))
    sub = np.where(exact, np.where(shift >= 0, digits / power, digits * power), np.nan)
    for i in np.flatnonzero(~exact):  # rare: the string route
        sub[i] = float(f"{v[i]:.{SIG_DIGITS}g}")
    out[ok] = sub
    out[flat == 0] = flat[flat == 0]  # keeps the sign of -0.0, as the string route does
    out = out.reshape(arr.shape)
    gaps = np.isnan(out)
    if not gaps.any():
        return out.tolist()
    values = out.astype(object)
    values[gaps] = None
    return values.tolist()


_SPEC = f".{SIG_DIGITS}g"


def rounded(d: dict[str, Any], name: str, values: Callable[[], Any] | None = None) -> Any:
    """`rnd` of a panel's per-frame array `d[name]` (or of `values()`, named `name`) for
    every frame at once, kept in `d`, the panel's prepared data: a frame takes its row
    (`values()` may also be one number every frame draws, e.g. a colour scale's bound).

    A frame's numbers rounded a few at a time cost a call each (about 3 µs, the string
    route); a whole (F, …) array costs about as much as one such call, and a view draws
    F frames of tens of calls. The rows are shared by every frame drawn from `d`: read,
    never changed."""
    return per_frame(d, f"rounded:{name}", lambda: rnd(d[name] if values is None else values()))


def per_frame(d: dict[str, Any], slot: str, compute: Callable[[], Any]) -> Any:
    """`compute()`, a table with a row per frame, kept in `d` (a panel's prepared data)
    under `slot`: what a frame would otherwise work out alone, a few calls of a few
    microseconds each, is worked out for every frame at once. Read, never changed."""
    if slot not in d:  # two threads at once compute the same table; either is kept
        d[slot] = compute()
    return d[slot]


def clipped_range(rng: list[float]) -> dict[str, Any]:
    """An axis's `range` and the `autorangeoptions` that stop autoscale (the modebar's
    button, a double click) there: for a panel that draws something far past its range
    (the half-space, the projections' band, the loss cursor), which the axis clips, so
    that a wider scale (Compare's, holding both runs) still shows it edge to edge."""
    return {"range": rng, "autorangeoptions": {"clipmin": rng[0], "clipmax": rng[1]}}


def _rnd_strings(arr: np.ndarray) -> Any:
    """The string route, for a few values: a figure's frame rounds thousands of small
    arrays (arrows, markers), so this is plain Python lists throughout (a numpy object
    array to reshape cost more than the rounding)."""
    flat = [float(format(v, _SPEC)) if math.isfinite(v) else None for v in arr.ravel().tolist()]
    if arr.ndim == 0:
        return flat[0]
    return _nested(flat, arr.shape)


def _nested(flat: list[Any], shape: tuple[int, ...]) -> list[Any]:
    """`flat` (row-major) as nested lists of `shape`, as ndarray.tolist() gives them."""
    if len(shape) == 1:
        return flat
    step = math.prod(shape[1:])
    return [_nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def thin(n: int, limit: int) -> np.ndarray:
    """At most `limit` evenly spread indices of range(n), always the first and the last."""
    if n <= limit:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(int))


def feature_name(j: int) -> str:
    """Input features are A, B, C, … in decreasing importance (science.md §1)."""
    return chr(ord("A") + j) if j < 26 else f"x{j}"


def role(s: int, k: int) -> str:
    return "intermediate" if s < k else "output" if s == k else "old"


def n_ages(k: int) -> int:
    """Ages s = 0 … n-1 to draw: through k+3 (forgetting shows), at most 12 unless k needs more."""
    return max(min(k + 4, 12), k + 2)


# Where a corner text sits: this share of the axes' span in from the left and down from
# the top. The trace carries it (`meta`), so that assets/tempsup.js keeps the text there
# when a page draws the panel on other axis ranges than its own (Compare: both runs on
# one scale).
CORNER_INSET = 0.015


def corner_text(text: str, R: float, name: str) -> dict[str, Any]:
    """A text-only trace (so frames can change it) at the top-left corner of the panel's
    square axes [-R, R]², marked so that it stays at the corner of whatever ranges the axes
    are drawn with (`CORNER_INSET`)."""
    edge = R * (1 - 2 * CORNER_INSET)
    return {**text_at(text, -edge, edge, name), "meta": {"corner": CORNER_INSET}}


def text_at(text: str, x: float, y: float, name: str) -> dict[str, Any]:
    """A text-only trace (so frames can change it) anchored at data point (x, y), top left.
    Its letters have a halo of the contrasting colour (Plotly's `shadow: "auto"`): the text
    stays whole where it crosses a line of the plot (the eigen panel's unit circle)."""
    return {
        "type": "scatter",
        "x": [rnd(x)],
        "y": [rnd(y)],
        "mode": "text",
        "text": [text],
        "textposition": "bottom right",
        "textfont": {"size": 12, "color": "#333333", "shadow": "auto"},
        "hoverinfo": "skip",
        "showlegend": False,
        "name": name,
    }


def fmt(v: float, digits: int = 3) -> str:
    return f"{v:.{digits}g}" if math.isfinite(v) else "n/a"


# ---- loss over training: the RNN's and the bows lab's loss panels ----------------------


def positive(v: Any) -> list:
    """Values for a log axis: non-positive ones become gaps (None)."""
    v = np.asarray(v, dtype=float)
    return rnd(np.where(v > 0, v, np.nan))


def log_range(values: np.ndarray, decades: int) -> list[float]:
    """A log axis range (log10 units) over the positive finite `values`, at most `decades`
    below the largest, padded by 0.1: one range for every frame, so the axis stays put."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    hi = float(values.max()) if values.size else 1.0
    lo = max(float(values.min()), hi * 10.0**-decades) if values.size else 0.1
    return [np.log10(lo) - 0.1, np.log10(hi) + 0.1]


def step_cursor(step: int, log_range: list[float], loss: Any) -> list[dict[str, Any]]:
    """The moving traces of a log-axis loss panel: a dashed line at the frame's `step`
    across the whole `log_range`, and a dot on the shown seed's `loss` (a 1-element array)."""
    lo, hi = (10.0**v for v in log_range)
    return cursor_traces(step, [lo, hi], positive(loss))


def cursor_traces(step: int, span: Any, dot: Any, shown: Any = None) -> list[dict[str, Any]]:
    """A loss panel's cursor on any axis: a dashed line at `step` over `span` (drawn
    values) and a dot at `dot`; `shown` is the loss the hover names when the axis draws
    another number (a symmetric-log axis), else the hover names the drawn value."""
    marker: dict[str, Any] = {
        "type": "scatter",
        "x": [step],
        "y": dot,
        "mode": "markers",
        "marker": {"color": LOSS, "size": 9},
        "name": "current loss",
        "showlegend": False,
        "hovertemplate": "step %{x}: loss %{y}<extra></extra>",
    }
    if shown is not None:
        marker["customdata"] = shown
        marker["hovertemplate"] = "step %{x}: loss %{customdata}<extra></extra>"
    return [
        {
            "type": "scatter",
            "x": [step, step],
            "y": rnd(span),
            "mode": "lines",
            "line": {"color": CURSOR, "width": 1.5, "dash": "dash"},
            "name": "current step",
            "showlegend": False,
            "hoverinfo": "skip",
        },
        marker,
    ]


def loss_axes(last: int, log_range: list[float], narrow_dtick: str | None = None) -> dict:
    """A loss panel's axes: training steps 0 … `last` (padded 2 %), the loss on a log axis
    labelled by decade when it spans more than 2.5 of them (else `narrow_dtick`, if any)."""
    pad = max(last, 1) * 0.02
    yaxis = {
        "type": "log",
        "range": rnd(log_range),
        "title": {"text": "loss"},
        "exponentformat": "power",
    }
    if log_range[1] - log_range[0] > 2.5:
        yaxis["dtick"] = 1
    elif narrow_dtick is not None:
        yaxis["dtick"] = narrow_dtick
    return {
        "xaxis": {"range": rnd([-pad, last + pad]), "title": {"text": "training step"}},
        "yaxis": yaxis,
    }


# ---- a symmetric-log axis (plotly has none): signed values, decades on both sides ------


def symlog(v: Any, c: float) -> np.ndarray:
    """sign(v)·log10(1 + |v|/c): logarithmic beyond ±c, linear (slope 1/(c ln 10)) inside,
    0 at 0, so negative values have a place on the axis. NaN stays NaN."""
    v = np.asarray(v, dtype=float)
    return np.sign(v) * np.log10(1.0 + np.abs(v) / c)


def symlog_scale(reference: float, below: int) -> float:
    """The linear threshold c: `below` decades under `reference` (a size that matters, e.g.
    the loss of a silent output), rounded down to a power of ten."""
    ref = reference if math.isfinite(reference) and reference > 0 else 1.0
    return 10.0 ** (math.floor(math.log10(ref)) - below)


def symlog_ranges(values: Any, c: float, pad: float = 0.1) -> np.ndarray:
    """(F, 2): at each frame, an axis range (symlog units) over every finite value of
    `values` (F, …) in the frames up to it, padded: no such value is outside; (0, 1)
    padded before any. The last frame's covers the whole run."""
    y = symlog(values, c).reshape(len(values), -1)
    ok = np.isfinite(y)
    low = np.minimum.accumulate(np.where(ok, y, np.inf).min(axis=-1, initial=np.inf))
    high = np.maximum.accumulate(np.where(ok, y, -np.inf).max(axis=-1, initial=-np.inf))
    none = ~np.isfinite(low)
    return np.stack([np.where(none, 0.0, low) - pad, np.where(none, 1.0, high) + pad], -1)


def symlog_axis(c: float, rng: list[float], title: str) -> dict[str, Any]:
    """A y axis drawn in symlog units but labelled in the values: 0 and ±10ⁿ for every decade
    above 10c in the range (every other decade when there are many; 2·10ⁿ and 5·10ⁿ too, or
    finer, when the range holds fewer than three ticks)."""
    top = max(abs(rng[0]), abs(rng[1]))
    first = round(math.log10(c)) + 1  # 10c: the first decade clear of the linear band
    decades = range(first, first + int(math.ceil(top)) + 2)
    for mantissas in ((1,), (1, 2, 5), (1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9)):
        sides = []
        for sign in (1, -1):
            ticks = []
            for n in decades:
                for m in mantissas:
                    y = float(symlog(sign * m * 10.0**n, c))
                    if rng[0] <= y <= rng[1]:
                        ticks.append((y, ("−" if sign < 0 else "") + _tick_text(m, n)))
            sides.append(sorted(ticks, key=lambda t: abs(t[0])))
        if len(sides[0]) + len(sides[1]) >= 3:
            break
    if len(sides[0]) + len(sides[1]) > 8:  # crowded: every other decade on each side
        sides = [ticks[::-1][::2][::-1] for ticks in sides]  # keeps the largest of each side
    ticks = ([(0.0, "0")] if rng[0] <= 0.0 <= rng[1] else []) + sides[0] + sides[1]
    vals, texts = [y for y, _ in ticks], [t for _, t in ticks]
    return {
        "range": rnd(rng),
        "title": {"text": title},
        "tickmode": "array",
        "tickvals": rnd(vals),
        "ticktext": texts,
        "zeroline": True,
    }


def _tick_text(m: float, n: int) -> str:
    """m·10ⁿ as a tick label: a decade as 10ⁿ (1, 10, 100 written out), other ticks as plain
    decimals from 0.01 to 999, else as m·10ⁿ."""
    if m == 1:
        return _power(n)
    if -2 <= n <= 2:
        return f"{m * 10.0**n:.{max(0, -n) + (1 if m % 1 else 0)}f}"
    return ("" if m == 1 else f"{m:g}·") + _power(n)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power(n: int) -> str:
    """10ⁿ as text: 1, 10, 100 written out, smaller and larger as 10⁻³, 10⁴."""
    if 0 <= n <= 2:
        return str(10**n)
    return "10" + str(n).translate(_SUPERSCRIPT)
