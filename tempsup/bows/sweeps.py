"""The sweep over the bottleneck m as one queued job: from the PCA circle to antipodal pairs.

science.md §2: at a small bottleneck m the ReLU tied autoencoder copies the
covariance's top principal components (the PCA circle); at a larger m the
features pair up antipodally; weight decay moves the switch. A
`BowsSweepSpec` is that experiment as a job of the queue (`tempsup.jobs.kinds`,
kind "bows-sweep", in `tempsup.jobs.kinds`): every (weight decay, m)
point × its seeds trains as ONE batch (`tempsup.bows.trainer.train`, which
batches configs differing only in m and weight decay), exactly as
`tempsup.bows.run.train_runs` does.

While it trains, each snapshot is published as a small summary, one number
per point (`SWEEP_FRAME_ARRAYS`: the best seed's loss and the claims' measures
of `tempsup.bows.analysis`), so a page can show progress without the weights.
The result is a `BowsSweepResult`: the table rows (`tempsup.bows.run.TABLE_COLUMNS`)
and the points' run keys; on finish every point's `BowsRun` is stored as a
DONE "bows" job of its own (`queue.put_result`), so the lab opens any point,
and `sweep_figure(load_point_runs(queue, result))` draws the whole sweep.

Torch is imported only where training happens: web processes build specs and
read results without it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from tempsup.bows import analysis
from tempsup.bows.config import MAX_WORK, MODELS, SCHEMA_VERSION, BowsConfig
from tempsup.bows.data import make_dataset
from tempsup.bows.run import (
    EVAL_SAMPLES,
    FRAME_ARRAYS,
    STATIC_ARRAYS,
    BowsRun,
    frame,
    split_snapshot,
    static_arrays,
    sweep_configs,
    table_row,
)
from tempsup.core.specs import SweepResultBase, SweepSpecBase
from tempsup.errors import TempsupError

if TYPE_CHECKING:
    import plotly.graph_objects as go

Frame = dict[str, np.ndarray]


class Results(Protocol):
    """The part of a job queue (`tempsup.jobs.queue.BaseQueue`) the points go through."""

    def result(self, key: str) -> Any: ...
    def put_result(self, spec: Any, result: Any) -> None: ...


# A figure of WᵀW per point stays readable up to ~6 m × 4 weight decays; more
# points also make one batch slow. The queue's `max_work` bounds the size further.
MAX_POINTS = 40
# The batch's largest tensor, batch × models × d × m_max (the activations of the
# forward pass), like BowsConfig's own memory check for one run.
MAX_ELEMENTS = 2.5e8
# Per-point numbers of a published frame, each (P,) in `configs` order, plus "step" ().
SWEEP_FRAME_ARRAYS = (
    "step", "loss", "best_seed", "pca_overlap", "antipodal_fraction", "paired_fraction",
    "circle_score",
)  # fmt: skip
# Extra arrays of a kept (worker-side) frame: the data statistics, shared by reference.
_PCA_VALUES = "pca_values"


@dataclass(frozen=True)
class BowsSweepSpec(SweepSpecBase):
    """A sweep job: every (weight decay, m) point of `base` × its seeds, trained as one batch.

    `ms` and `weight_decays` are sorted and must not repeat; empty
    `weight_decays` means `(base.weight_decay,)`. `models` (in MODELS order)
    adds a third axis, the model: the linear and the ReLU model train in the
    same batch (the authors' grid, `tempsup.bows.grid`); empty means the base's
    model. The base's own m, weight decay and model are otherwise ignored: `key`
    hashes the points' config keys, so two specs with the same points are the same job.
    Checks, JSON and key:
    `tempsup.core.specs.SweepSpecBase`, as for the RNN's `tempsup.analysis.sweeps.SweepSpec`.
    """

    kind: ClassVar[str] = "bows-sweep"
    what: ClassVar[str] = "bows sweep"
    version: ClassVar[int] = SCHEMA_VERSION
    config_type: ClassVar[type] = BowsConfig
    axes: ClassVar[tuple[tuple[str, type], tuple[str, type]]] = (
        ("ms", int),
        ("weight_decays", float),
    )

    base: BowsConfig
    ms: tuple[int, ...]
    weight_decays: tuple[float, ...] = ()
    models: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        given = self.models if isinstance(self.models, (list, tuple)) else (self.models,)
        bad = [k for k in given if k not in MODELS]
        if bad or len(set(given)) != len(given):
            raise TempsupError(
                f"{self.what}: models expected distinct values of {', '.join(MODELS)}, "
                f"got {list(given)!r}"
            )
        object.__setattr__(self, "models", tuple(k for k in MODELS if k in given))
        n = self._check_points(MAX_POINTS) * max(len(self.models), 1)
        if n > MAX_POINTS:
            raise TempsupError(
                f"{self.what}: expected at most {MAX_POINTS} points (models × ms × "
                f"weight_decays), got {n}; sweep fewer values"
            )
        b = self.base
        elements = b.batch * n * b.seeds * b.d * max(self.ms)
        formula = "batch*points*seeds*d*max(m)"
        self._check_memory(elements, MAX_ELEMENTS, formula, "batch, seeds or points")
        self._check_work(MAX_WORK, "epochs, seeds or points")

    def _outer_default(self) -> tuple[float, ...]:
        return (float(self.base.weight_decay),)

    @cached_property
    def configs(self) -> list[BowsConfig]:
        """One config per point, model-major, then weight decay, then m
        (`tempsup.bows.run.sweep_configs`)."""
        return sweep_configs(self.base, self.ms, self.weight_decays, self.models)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        return {**out, "models": list(self.models)} if self.models else out

    @classmethod
    def from_dict(cls, data: Any) -> BowsSweepSpec:
        """`SweepSpecBase.from_dict`, with the optional "models" list."""
        if isinstance(data, dict) and "models" in data:
            data = dict(data)
            models = data.pop("models")
            plain = super().from_dict(data)
            if not isinstance(models, (list, tuple)):
                raise TempsupError(f"{cls.what}: models expected a list, got {models!r}")
            return cls(plain.base, plain.ms, plain.weight_decays, tuple(models))
        return super().from_dict(data)


# ---- training: the whole sweep as one batch -------------------------------------------


def stream_sweep(
    spec: BowsSweepSpec,
    init: dict[str, np.ndarray] | None = None,
    on_step: Callable[[int], None] | None = None,
    text: str | None = None,
) -> Iterator[Frame]:
    """Train the sweep as one batch (`text`: the text a "text" base config names); yield
    each snapshot's frames of all points together.

    A yielded frame holds the FRAME_ARRAYS of every model concatenated along
    the model axis (point-major, `spec.base.seeds` per point; W zero-padded to
    the largest m: (M, m_max, d)) and, in every frame, the data statistics
    (STATIC_ARRAYS and the covariance's eigenvalues, the same arrays each time,
    not copies). These frames stay in the worker; `sweep_frame` publishes them.
    """
    from tempsup.bows.trainer import train

    configs = spec.configs
    data = make_dataset(configs[0], text)
    static = static_arrays(data)
    static[_PCA_VALUES] = analysis.pca(static["cov"])[0]  # (d,) once, not per frame
    X_eval = data.X[:EVAL_SAMPLES]
    m_max = max(spec.ms)
    snapshots = train(configs, data=data, init=init, on_step=on_step)
    try:
        for snap in snapshots:
            parts = [
                frame(c, p, static["cov"], X_eval)
                for c, p in zip(configs, split_snapshot(snap, configs), strict=True)
            ]
            W = np.zeros((sum(p["W"].shape[0] for p in parts), m_max, data.d), np.float32)
            start = 0
            for p in parts:  # (S, m, d) each, into (M, m_max, d)
                s, m = p["W"].shape[:2]
                W[start : start + s, :m] = p["W"]
                start += s
            full = {
                name: np.concatenate([p[name] for p in parts])
                for name in FRAME_ARRAYS
                if name not in ("step", "W")
            }
            yield {"step": parts[0]["step"], "W": W, **full, **static}
    finally:
        snapshots.close()


def point_frames(spec: BowsSweepSpec, full: Frame) -> list[Frame]:
    """Cut a `stream_sweep` frame into one `tempsup.bows.run.frame` per point."""
    S = spec.base.seeds
    out = []
    for i, cfg in enumerate(spec.configs):
        sl = slice(i * S, (i + 1) * S)
        part = {n: full[n][sl] for n in FRAME_ARRAYS if n not in ("step", "W")}
        out.append({"step": full["step"], "W": full["W"][sl, : cfg.m], **part})
    return out


def _pca_overlap(W: np.ndarray, cov: np.ndarray, values: np.ndarray) -> float:
    """`analysis.pca_overlap` of one W (m, d) with the eigenvalues computed once per sweep
    (an eigendecomposition per point and frame takes seconds for a text's d = 1000)."""
    _, s, vt = np.linalg.svd(np.asarray(W, dtype=float), full_matrices=False)
    q = vt[: int((s > 1e-6 * max(s.max(initial=0.0), 1e-30)).sum())].T  # (d, r) row basis
    best = float(np.clip(values[: W.shape[0]], 0, None).sum())
    return float(np.trace(q.T @ np.asarray(cov, dtype=float) @ q)) / best if best > 0 else np.nan


def sweep_frame(spec: BowsSweepSpec, full: Frame) -> Frame:
    """The published summary of one snapshot: per point, the seed with the lowest loss
    at this snapshot, its loss and the claims' measures (`tempsup.bows.analysis`)."""
    cov, angle, values = full["cov"], full["angle"], full[_PCA_VALUES]
    rows: dict[str, list[float]] = {name: [] for name in SWEEP_FRAME_ARRAYS[1:]}
    for part in point_frames(spec, full):
        loss = np.asarray(part["loss"], dtype=float)  # (S,)
        best = int(np.nanargmin(loss)) if np.isfinite(loss).any() else 0
        W = part["W"][best]  # (m, d)
        rows["loss"].append(loss[best])
        rows["best_seed"].append(best)
        rows["pca_overlap"].append(_pca_overlap(W, cov, values))
        rows["antipodal_fraction"].append(float(analysis.antipodal_fraction(W)))
        rows["paired_fraction"].append(float(analysis.paired_fraction(W)))
        rows["circle_score"].append(float(analysis.circle_score(W, angle)))
    out = {"step": np.asarray(int(full["step"]), dtype=np.int64)}
    for name, values_ in rows.items():
        out[name] = np.asarray(values_, dtype=np.int64 if name == "best_seed" else np.float32)
    return out


# ---- the finished sweep -----------------------------------------------------------------


@dataclass
class BowsSweepResult(SweepResultBase):
    """A finished sweep: the table rows (`tempsup.bows.run.TABLE_COLUMNS`, `configs`
    order), the points' run keys, and the published frames stacked (axis 0 frames,
    axis 1 points).

    `runs` holds the points' BowsRuns only on the worker that trained them (they
    are stored as "bows" jobs of their own, `load_point_runs` reads them back);
    it is not serialised. Storage and frames: `tempsup.core.specs.SweepResultBase`,
    as for the RNN's `tempsup.analysis.sweeps.SweepResult`.
    """

    spec_type: ClassVar[type] = BowsSweepSpec
    frame_arrays: ClassVar[tuple[str, ...]] = SWEEP_FRAME_ARRAYS
    expected: ClassVar[str] = "a tempsup bows sweep result"
    source: ClassVar[str] = "bows sweep result"


# The switch's table (science.md §2b): one row per point, the claims' three measures
# and the loss. (row key, header, format) — rows are `BowsSweepResult.rows`.
SWITCH_COLUMNS = (
    ("weight_decay", "weight decay", "{:g}"),
    ("m", "m", "{:d}"),
    ("loss", "loss", "{:.4f}"),
    ("pca_correlation", "WᵀW vs top-m PCA projection (r)", "{:.3f}"),
    ("opposite_antipodal_fraction", "antipodal to the opposite feature", "{:.2f}"),
    ("paired_fraction", "in isolated pairs", "{:.2f}"),
    ("n_nonlinear", "nonlinear superposition (R² line 0.5)", "{:d}"),
    ("n_nonlinear_strict", "nonlinear superposition (R² line 0.9)", "{:d}"),
)


def switch_table(rows: Sequence[dict[str, object]]) -> tuple[list[str], list[list[str]]]:
    """The headers and formatted cells of the switch's table, rows sorted by (weight decay, m).

    A value a row lacks (a result stored before the measure existed) shows as "–".
    """

    def cell(row: dict[str, object], key: str, fmt: str) -> str:
        value = row.get(key)
        if value is None or (isinstance(value, float) and not np.isfinite(value)):
            return "–"
        try:
            return fmt.format(int(value) if fmt == "{:d}" else value)
        except (TypeError, ValueError):
            return str(value)

    ordered = sorted(rows, key=lambda r: (float(r.get("weight_decay", 0)), int(r.get("m", 0))))
    headers = [h for _, h, _ in SWITCH_COLUMNS]
    return headers, [[cell(r, k, f) for k, _, f in SWITCH_COLUMNS] for r in ordered]


def sweep_result(
    spec: BowsSweepSpec, kept: Sequence[Frame], published: Sequence[Frame] | None = None
) -> BowsSweepResult:
    """The finished sweep from every `stream_sweep` frame: a BowsRun per point and its
    table row; `published` are the `sweep_frame`s already made (else recomputed)."""
    if not kept:
        raise TempsupError("bows sweep: expected at least one frame, got none")
    static = {k: kept[0][k] for k in STATIC_ARRAYS}
    per_point = [point_frames(spec, f) for f in kept]
    runs = [
        BowsRun.from_frames(cfg, [frames[i] for frames in per_point], static)
        for i, cfg in enumerate(spec.configs)
    ]
    if published is None or len(published) != len(kept):
        published = [sweep_frame(spec, f) for f in kept]
    return BowsSweepResult.assemble(spec, runs, published, table_row)


def store_points(queue: Results, spec: BowsSweepSpec, result: BowsSweepResult) -> None:
    """Each point's BowsRun becomes a DONE "bows" job, unless a readable one exists
    (a shared link must keep replaying the run it was made from)."""
    for run in result.runs or []:
        if queue.result(run.config.key) is None:
            queue.put_result(run.config, run)


def load_point_runs(queue: Results, result: BowsSweepResult) -> list[BowsRun]:
    """The points' BowsRuns as stored by `store_points`, in `configs` order; a point
    whose run is gone (evicted, damaged) is left out — `sweep_figure` shows a gap."""
    runs = []
    for key in result.keys:
        run = queue.result(key)
        if isinstance(run, BowsRun):
            runs.append(run)
    return runs


def progress_figure(spec: BowsSweepSpec, published: Frame, title: str = "") -> go.Figure:
    """The claims' measures against m from one published frame, one line style per
    weight decay (the lower half of `tempsup.bows.figures.sweep_figure`, which needs
    the finished runs): what a page shows while the sweep trains."""
    import plotly.graph_objects as go

    from tempsup.bows.figures.sweep import DASHES, MEASURES
    from tempsup.core.palette import base_layout
    from tempsup.figures._common import rnd

    data = []
    for k, wd in enumerate(spec.weight_decays):
        idx = [i for i, c in enumerate(spec.configs) if c.weight_decay == wd]
        xs = [spec.configs[i].m for i in idx]
        for key, label, colour in MEASURES:
            ys = np.asarray(published[key], dtype=float)[idx]
            data.append(
                {
                    "type": "scatter",
                    "x": xs,
                    "y": rnd(ys),
                    "mode": "lines+markers",
                    "line": {"color": colour, "dash": DASHES[k % len(DASHES)], "width": 2},
                    "marker": {"size": 7},
                    "name": f"{label}, wd = {wd:g}",
                    "hovertemplate": f"m = %{{x}}: {label} = %{{y}} (wd = {wd:g})<extra></extra>",
                }
            )
    step = int(np.asarray(published["step"]))
    layout = base_layout(
        title or f"Sweep over m: step {step} of {spec.steps} (best seed so far)",
        height=460,
        margin={"l": 60, "r": 20, "t": 70, "b": 130},
        xaxis={"title": {"text": "bottleneck m"}, "tickmode": "array", "tickvals": list(spec.ms)},
        yaxis={"title": {"text": "measure"}, "range": [-0.05, 1.05]},
        legend={"orientation": "h", "x": 0, "y": -0.25, "yanchor": "top"},
    )
    return go.Figure({"data": data, "layout": layout})
