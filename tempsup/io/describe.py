"""One seed at one frame of a run, as plain numbers: what `tempsup inspect` prints.

Every number is labelled by whether it depends on the hidden basis. The
gauge-free ones (`GAUGE_FREE`: losses, the four terms, a_s = w_yᵀw_s and
W_yᵀW_k, the eigenvalues of W_h, ρ(W_h), the interference-free counts) are
properties of the function the network computes. The others (`GAUGE_DEPENDENT`:
kθ, ‖w_0‖, ‖w_s‖) are measured in the canonical gauge of `tempsup.theory.gauge`, so a
run file whose weights went through any admissible change of basis (same
function, tie intact) describes the same (science.md §1d).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from tempsup.core.frames import frame_index, frame_label, frame_number, stop_note
from tempsup.errors import TempsupError
from tempsup.io import tasks_frame
from tempsup.model.config import MODEL_NAMES
from tempsup.model.lens_names import carries_lens
from tempsup.theory import gauge, geometry


class Run(Protocol):
    """What `describe` reads of a run (`tempsup.io.run.Run`, whose `summary` is `describe`:
    named by its shape here, so the two modules do not import each other)."""

    config: Any
    arrays: dict[str, np.ndarray]
    n_frames: int
    best: int
    best_seed: Any
    success: np.ndarray

    def __getitem__(self, name: str) -> np.ndarray: ...

    def weights(self, frame_index: int = -1, seed: int | None = None) -> dict[str, np.ndarray]: ...


TERM_KEYS = ("task", "mean_correction", "projection", "composition")
GAUGE_FREE = (
    "loss", "expected_loss", "expected_loss_se", "terms", "terms_sum", "a", "A_k",
    "eigenvalues", "spectral_radius", "n_interference_free", "n_intermediate_free",
)  # fmt: skip
GAUGE_DEPENDENT = ("swept_angle_deg", "swept_angle_deg_features", "w0_norm", "norms")


def seed_index(run: Run, seed: int | str | None) -> int:
    """A seed of the run: an index in [0, M-1], or "best"/None for the best final loss."""
    n = int(run["loss"].shape[1])
    if seed is None or seed == "best":
        return run.best
    try:
        s = int(seed)
    except (TypeError, ValueError):
        s = None
    if s is None or isinstance(seed, bool) or not 0 <= s < n:
        raise TempsupError(f"seed: expected an integer in [0, {n - 1}] or best, got {seed!r}")
    return s


def frame_position(run: Run, frame: int) -> int:
    """The 0-based index of frame `frame` as people number it (1 … F; -1 … -F from the
    last), as the app, the link and the export do (`tempsup.core.frames`)."""
    return frame_index(frame, run.n_frames)


def describe(run: Run, seed: int | str | None = None, frame: int = -1) -> dict[str, Any]:
    """The summary of one seed at one frame, JSON-ready (floats, lists, no NaN).

    `frame` is numbered from 1 as on every surface (`tempsup.core.frames`; -1: the last).
    Keys: the config's headline fields; "seed", "frame" (1-based), "frames", "step",
    "best_seed" (`tempsup.io.run.BestSeed.to_dict`: why it is best, the seeds tied with it),
    "succeeded" (this seed), "successes" (how many seeds succeeded),
    "stopped" (a cancelled run's "stopped at step … of … (cancelled)", else None);
    "loss", "expected_loss" (the run file's, or the terms' sum for files that
    predate it), "expected_loss_se" (None without it), "terms" (task,
    mean_correction, projection, composition), "terms_sum"; "a" (a_s for
    s = 0…T-1, feature 0), "A_k" (W_yᵀW_k), "eigenvalues" ([[re, im], …] by
    modulus), "spectral_radius", the interference-free counts over s < k + 4;
    "swept_angle_deg" (+ per feature), "w0_norm", "norms" (‖w_s‖, s < k + 4) in
    the canonical gauge; "gauge", "gauge_description", "gauge_free",
    "gauge_dependent" (which keys are which); the task ("task", "ks", "window",
    "persistence"), "expected_loss_method" (closed form, Monte Carlo, …:
    `tempsup.io.tasks_frame`) and "temporal_term" (the closed form's fifth term; None where
    it is not computed). For multi and cued the geometry reads the delay k = max(ks)
    (`tasks_frame.geometry_weights`).
    """
    s = seed_index(run, seed)
    f = frame_position(run, frame)
    cfg = run.config
    w = tasks_frame.geometry_weights(cfg, run.weights(f, s))
    geo = geometry.summary(
        w["W_x"], w["W_h"], w["W_y"], w["b_y"], cfg.k, cfg.relu_hidden, tied=cfg.tied
    )
    W_s = geometry.feature_directions(w["W_x"], w["W_h"], cfg.seq_len, cfg.relu_hidden)
    A = geometry.projections(w["W_y"], W_s)  # (T, N_x, N_x), gauge-free
    terms = np.asarray(run["terms"][f, s], dtype=float)
    expected = run.arrays.get("expected_loss")
    expected_se = run.arrays.get("expected_loss_se")
    temporal = run.arrays.get("temporal_term")
    lam = geometry.eigenvalues(np.asarray(w["W_h"], dtype=float))
    out: dict[str, Any] = {
        "key": cfg.key,
        "model": cfg.model,
        "model_name": MODEL_NAMES[cfg.model],
        "k": cfg.k,
        "sparsity": cfg.sparsity,
        "hidden": cfg.hidden,
        "inputs": cfg.inputs,
        "seq_len": cfg.seq_len,
        "tied": cfg.tied,
        "task": cfg.task,
        "ks": list(cfg.delays),
        "window": cfg.window,
        "persistence": cfg.persistence,
        "seeds": int(run["loss"].shape[1]),
        "best": run.best,
        "best_seed": run.best_seed.to_dict(),
        "seed": s,
        "succeeded": bool(run.success[s]),
        "successes": int(run.success.sum()),
        "frame": frame_number(f, run.n_frames),
        "frames": run.n_frames,
        "step": int(run["step"][f]),
        "stopped": stop_note(int(run["step"][-1]), cfg.steps),
        "loss": _num(run["loss"][f, s]),
        "expected_loss": _num(terms.sum() if expected is None else expected[f, s]),
        "expected_loss_se": None if expected_se is None else _num(expected_se[f, s]),
        "expected_loss_method": tasks_frame.expected_loss_method(cfg),
        "temporal_term": None if temporal is None else _num(temporal[f, s]),
        "terms": {name: _num(v) for name, v in zip(TERM_KEYS, terms, strict=True)},
        "terms_sum": _num(terms.sum()),
        "a": _nums(A[:, 0, 0]),
        "A_k": _nums(A[cfg.k]),
        "eigenvalues": [[_num(z.real), _num(z.imag)] for z in lam],
        "spectral_radius": _num(geo["spectral_radius"]),
        "n_interference_free": int(geo["n_interference_free"]),
        "n_intermediate_free": int(geo["n_intermediate_free"]),
        "swept_angle_deg": _num(geo["swept_angle_deg"]),
        "swept_angle_deg_features": _nums(geo["swept_angle_deg_features"]),
        "w0_norm": _num(geo["w0_norm"]),
        "norms": _nums(geo["norms"]),
        "gauge": gauge.GAUGE_NAME,
        "gauge_description": gauge.convention(cfg.relu_hidden),
        "gauge_free": list(GAUGE_FREE),
        "gauge_dependent": list(GAUGE_DEPENDENT),
        "origin": getattr(run, "origin", None),
        "warnings": tasks_frame.task_warnings(cfg)
        + memory_warnings(A[:, 0, 0], getattr(run, "origin", None)),
    }
    if carries_lens(run.arrays):
        out["lens"] = lens(run, f, s)
    return out


# |a_s| below this at every age: the network's readout sees no input of any age.
SILENT_KERNEL = 1e-6


def memory_warnings(a: np.ndarray, origin: dict[str, str] | None) -> list[str]:
    """What the page and `tempsup inspect` must say before any geometry: a network whose
    readout kernel is ~0 at every age stores nothing (its directions, kθ and counts
    describe no memory), and a Run whose shape is not its module's says why."""
    out = []
    peak = float(np.nanmax(np.abs(a))) if np.size(a) else 0.0
    if not peak > SILENT_KERNEL:
        out.append(
            f"this network stores nothing: its readout kernel a_s = w_yᵀw_s is below "
            f"{SILENT_KERNEL:g} at every age s (max |a_s| = {peak:.3g}), so no input reaches "
            "the output; its directions, kθ and half-space counts describe no memory"
        )
    if origin and origin.get("shape"):
        out.append(origin["shape"])
    return out


def lens(run: Run, f: int, s: int) -> dict[str, Any]:
    """The lens at frame f, seed s of a run that carries one (a gated model's, or a network
    read through its linearisation): where it was linearised and how far the response to
    a real (active) input is from the silent one (`tempsup.model.lens`)."""
    cfg = run.config
    w = run.weights(f, s)
    active = np.asarray(run["active"][f, s], dtype=float)  # (T, S, N_x)
    a_active = np.einsum("si,tsj->tij", np.asarray(w["W_y"], dtype=float), active)
    return {
        "linearised_at": f"the silent state: {cfg.seq_len} silent inputs from h = 0",
        "silent_state": _nums(run["silent"][f, s]),
        "settled": bool(run["settled"][f, s] > 0.5),
        "resting_readout": _nums(w["b_y"]),
        "a_active": _nums(a_active[:, 0, 0]),
        "nonlinearity": _num(run["nonlinearity"][f, s]),
    }


def lines(d: dict[str, Any]) -> list[str]:
    """`describe`'s dict as the human-readable lines `tempsup inspect` prints."""
    readout = "tied" if d["tied"] else "free"
    best = "best" if d["seed"] == d["best"] else f"best is {d['best']}"
    ok = "succeeded" if d["succeeded"] else "did not succeed"
    se = d["expected_loss_se"]
    expected = _f(d["expected_loss"]) + (f" ± {_f(se)}" if se else "")
    t = d["terms"]
    eig = ", ".join(_complex(re, im) for re, im in d["eigenvalues"])
    out = [
        f"run {d['key']}: {d['model_name']}, k = {d['k']}, S = {d['sparsity']:g}, "
        f"N_h = {d['hidden']}, N_x = {d['inputs']}, T = {d['seq_len']}, {readout} readout"
        + task_text(d),
        f"seed {d['seed']} of {d['seeds']} ({best}; {ok}), "
        + frame_label(d["frame"] - 1, d["frames"], d["step"])
        + (f"; {d['stopped']}" if d.get("stopped") else ""),
        best_line(d["best_seed"]),
        "gauge-free (the same in every hidden basis):",
        f"  loss {_f(d['loss'])} measured, {expected} expected"
        + (f" ({d['expected_loss_method']})" if task_text(d) else ""),
        f"  terms: task {_f(t['task'])}, mean correction {_f(t['mean_correction'])}, "
        f"projection {_f(t['projection'])}, composition {_f(t['composition'])}"
        + _temporal_text(d)
        + f" (sum {_f(d['terms_sum'])})",
        f"  a_s = w_yᵀw_s, s = 0…{len(d['a']) - 1}: " + " ".join(_f(v, 3) for v in d["a"]),
        f"  eigenvalues of W_h: {eig}; ρ(W_h) = {_f(d['spectral_radius'])}",
    ]
    if d["model"] != "linear":
        n_old = len(d["norms"]) - 1
        out.append(
            f"  interference-free (a_s + b ≤ 0): {d['n_interference_free']} of {n_old} ages "
            f"s ≠ k, {d['n_intermediate_free']} of {d['k']} intermediate"
        )
    out += [
        f"in the {d['gauge']} gauge ({d['gauge_description']}):",
        f"  kθ = {_f(d['swept_angle_deg'], 4)}°, ‖w_0‖ = {_f(d['w0_norm'])}, "
        f"‖w_s‖ (s = 0…{len(d['norms']) - 1}): " + " ".join(_f(v, 3) for v in d["norms"]),
    ]
    if d.get("lens"):
        g = d["lens"]
        settled = "" if g["settled"] else " (the silent run did not settle)"
        out += [
            f"linearised at {g['linearised_at']}{settled}:",
            "  active response a_s (one input of the mean value): "
            + " ".join(_f(v, 3) for v in g["a_active"]),
            f"  nonlinearity (active vs silent kernel): {_f(g['nonlinearity'], 3)}",
        ]
    out = [f"warning: {w}" for w in d.get("warnings", [])] + out
    return out


def _temporal_text(d: dict[str, Any]) -> str:
    """', temporal covariance X' where the closed form has its fifth term, else ''."""
    value = d.get("temporal_term")
    return "" if value is None else f", temporal covariance {_f(value)}"


def task_text(d: dict[str, Any]) -> str:
    """', task sum (window 3), persistence q = 0.5' for anything but recall at q = 0."""
    task = d.get("task", "recall")
    parts = [] if task == "recall" else [f"task {task}"]
    if task in ("multi", "cued"):
        parts[-1] += f" (delays {', '.join(str(v) for v in d['ks'])})"
    elif task == "sum":
        parts[-1] += f" (window {d['window']})"
    if d.get("persistence"):
        parts.append(f"persistence q = {d['persistence']:g}")
    return "".join(", " + p for p in parts)


def best_line(b: dict[str, Any]) -> str:
    """How the best seed was chosen, and the seeds it cannot be told apart from."""
    tie = f"; {b['tie']}: not told apart" if b["tie"] else ""
    return f"best seed {b['seed']}: {b['reason']}{tie}"


def _num(x: Any) -> float | None:
    v = float(np.asarray(x, dtype=float))
    return v if math.isfinite(v) else None


def _nums(x: Any) -> Any:
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 0:
        return _num(arr)
    return [_nums(v) for v in arr]


def _f(v: float | None, digits: int = 4) -> str:
    return "n/a" if v is None else f"{v:.{digits}g}"


def _complex(re: float | None, im: float | None) -> str:
    if re is None or im is None:
        return "n/a"
    if abs(im) < 1e-12:
        return _f(re, 3)
    return f"{_f(re, 3)}{'+' if im > 0 else '−'}{_f(abs(im), 3)}i"
