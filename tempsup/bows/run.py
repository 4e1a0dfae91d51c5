"""A correlated-features run as data: frames of weights and R², the data statistics, its file.

A *frame* is one snapshot of one config's models with the per-feature R² of a
linear decoder and of the model itself attached. `stream_frames(config)`
yields them while training (frame 0 also carries the data statistics, so a
consumer that only sees frames has everything a figure needs); a `BowsRun`
stacks them: axis 0 the frame, axis 1 the seed. The `.npz` run file, in the
style of tempsup's RNN runs (`tempsup.io.run`):

    step       (F,)          optimizer steps at each frame
    W          (F, S, m, d)  encoder = transposed decoder
    b          (F, S, d)     decoder bias
    loss       (F, S)        training loss ‖x − x̂‖² (mean over the steps since the last frame)
    r2_linear  (F, S, d)     R² of the best linear decoder of x_i from h = Wx
    r2_model   (F, S, d)     R² of the model's own reconstruction x̂_i
    mean       (d,)          feature means of the training data
    cov        (d, d)        covariance of the training data
    angle      (d,)          each feature's angle (its colour), radians
    labels     (d,)          feature names (e.g. "3: φ=90°", or the word)
    best       ()            seed with the lowest final loss
    config     ()            the BowsConfig as JSON (with "kind": "bows")

The seed axis is always present (size 1 for one seed).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from tempsup.bows import analysis
from tempsup.bows.config import BowsConfig
from tempsup.bows.data import Dataset, make_dataset, statistics
from tempsup.core import files as _files
from tempsup.core.views import RunViews
from tempsup.errors import TempsupError

if TYPE_CHECKING:  # training imports torch; reading run files and frames does not need it
    from tempsup.bows.trainer import Snapshot

FRAME_ARRAYS = ("step", "W", "b", "loss", "r2_linear", "r2_model")
STATIC_ARRAYS = ("mean", "cov", "angle", "labels")
ARRAYS = FRAME_ARRAYS + STATIC_ARRAYS
# The model's own R² is measured on at most this many training samples per frame.
EVAL_SAMPLES = 2048
TABLE_COLUMNS = (
    "structure", "model", "m", "weight_decay", "key", "seed", "loss", "pca_correlation",
    "pca_overlap", "opposite_antipodal_fraction", "antipodal_fraction", "paired_fraction",
    "circle_score", "opposite_partner_fraction", "mean_r2_linear", "min_r2_linear",
    "mean_r2_model", "n_linear", "n_nonlinear", "n_nonlinear_strict", "n_absent", "w_norm_sq",
    "file",
)  # fmt: skip


def static_arrays(data: Dataset) -> dict[str, np.ndarray]:
    """The per-run arrays: the data's mean and covariance, feature angles and labels."""
    mean, cov = statistics(data.X)
    return {
        "mean": mean.astype(np.float32),
        "cov": cov.astype(np.float32),
        "angle": np.asarray(data.angle, dtype=np.float32),
        "labels": np.asarray(data.labels, dtype=str),
    }


def frame(
    config: BowsConfig, snap: Snapshot, cov: np.ndarray, X_eval: np.ndarray
) -> dict[str, np.ndarray]:
    """One frame of one config's models (snap already cut to this config, W (S, m, d))."""
    W = snap.W[:, : config.m]
    arrays = {
        "step": np.asarray(snap.step, dtype=np.int64),
        "W": W,
        "b": snap.b,
        "loss": snap.loss,
        "r2_linear": analysis.linear_r2(W, cov),
        "r2_model": analysis.model_r2(W, snap.b, X_eval, config.relu),
    }
    return {k: v if k == "step" else np.asarray(v, dtype=np.float32) for k, v in arrays.items()}


def split_snapshot(snap: Snapshot, configs: Sequence[BowsConfig]) -> list[Snapshot]:
    """Cut a batched snapshot (config-major model axis) into one per config, rows cut to m."""
    from tempsup.bows.trainer import Snapshot

    out, start = [], 0
    for cfg in configs:
        sl = slice(start, start + cfg.seeds)
        out.append(Snapshot(snap.step, snap.W[sl, : cfg.m], snap.b[sl], snap.loss[sl]))
        start += cfg.seeds
    return out


def data_statistics(config: BowsConfig, text: str | None = None) -> dict[str, np.ndarray]:
    """The STATIC_ARRAYS of a config without training (e.g. for a page showing a live job)."""
    return static_arrays(make_dataset(config, text))


def stream_frames(
    config: BowsConfig,
    init: dict[str, np.ndarray] | None = None,
    on_step: Callable[[int], None] | None = None,
    text: str | None = None,
) -> Iterator[dict[str, np.ndarray]]:
    """Train `config` (`text`: the text a "text" config names), yielding its frames as
    they come; stop iterating to cancel.

    Frame 0 also holds the STATIC_ARRAYS (mean, cov, angle, labels).
    `BowsRun.from_frames(config, frames)` stacks the frames into a run.
    """
    from tempsup.bows.trainer import train

    data = make_dataset(config, text)
    static = static_arrays(data)
    X_eval = data.X[:EVAL_SAMPLES]
    snapshots = train(config, data=data, init=init, on_step=on_step)
    try:
        for snap in snapshots:
            f = frame(config, snap, static["cov"], X_eval)
            yield {**f, **static} if snap.step == 0 else f
    finally:
        snapshots.close()


def train_runs(
    configs: Sequence[BowsConfig],
    on_step: Callable[[int], None] | None = None,
    text: str | None = None,
) -> list[BowsRun]:
    """Train batchable configs (differing in m and weight decay) together: one run each
    (`text`: the text "text" configs name)."""
    from tempsup.bows.trainer import train

    configs = list(configs)
    if not configs:
        raise TempsupError("train: expected at least one config, got none")
    data = make_dataset(configs[0], text)
    static = static_arrays(data)
    X_eval = data.X[:EVAL_SAMPLES]
    frames: list[list[dict[str, np.ndarray]]] = [[] for _ in configs]
    for snap in train(configs, data=data, on_step=on_step):
        for i, (cfg, part) in enumerate(zip(configs, split_snapshot(snap, configs), strict=True)):
            frames[i].append(frame(cfg, part, static["cov"], X_eval))
    return [BowsRun.from_frames(c, f, static) for c, f in zip(configs, frames, strict=True)]


@dataclass
class BowsRun(_files.RunFile, RunViews):
    """A run's frames stacked (axis 0 frames, axis 1 seeds) and the data statistics;
    `save` and `load` its file."""

    config: BowsConfig
    arrays: dict[str, np.ndarray]

    kind = "bows"
    FIGURES: ClassVar[str] = "tempsup.bows.figures"

    @classmethod
    def from_frames(
        cls,
        config: BowsConfig,
        frames: Iterable[dict[str, np.ndarray]],
        static: dict[str, np.ndarray] | None = None,
    ) -> BowsRun:
        """Stack frames; the static arrays come from `static`, frame 0, or the data set."""
        frames = list(frames)
        if not frames:
            raise TempsupError("run: expected at least one frame, got none")
        if static is None:
            if all(k in frames[0] for k in STATIC_ARRAYS):
                static = {k: frames[0][k] for k in STATIC_ARRAYS}
            else:
                static = data_statistics(config)
        arrays = {k: np.stack([f[k] for f in frames]) for k in FRAME_ARRAYS}
        arrays.update({k: np.asarray(static[k]) for k in STATIC_ARRAYS})
        return cls(config, arrays)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def frames(self, start: int = 0) -> list[dict[str, np.ndarray]]:
        """The run cut back into frames start … F-1 (frame 0 with the STATIC_ARRAYS),
        as `stream_frames` yields them."""
        out = []
        for i in range(start, self.n_frames):
            f = {k: np.array(self.arrays[k][i]) for k in FRAME_ARRAYS}
            if i == 0:
                f.update({k: np.array(self.arrays[k]) for k in STATIC_ARRAYS})
            out.append(f)
        return out

    @property
    def n_frames(self) -> int:
        return int(self.arrays["step"].shape[0])

    @property
    def n_seeds(self) -> int:
        return int(self.arrays["loss"].shape[1])

    @property
    def d(self) -> int:
        return int(self.arrays["W"].shape[-1])

    @property
    def labels(self) -> list[str]:
        return [str(s) for s in self.arrays["labels"]]

    @property
    def final_loss(self) -> np.ndarray:
        return self.arrays["loss"][-1]

    @property
    def best(self) -> int:
        """Seed with the lowest final training loss."""
        return int(np.nanargmin(self.final_loss))

    def weights(self, frame_index: int = -1, seed: int | None = None) -> dict[str, np.ndarray]:
        """W (m, d) and b (d,) of one seed (default: the best) at one frame."""
        s = self.best if seed is None else seed
        return {"W": self.arrays["W"][frame_index, s], "b": self.arrays["b"][frame_index, s]}

    def summary(self, seed: int | None = None, frame_index: int = -1) -> dict[str, object]:
        """The claims' numbers for one seed (default: best) at one frame (default: last)."""
        s = self.best if seed is None else seed
        w = self.weights(frame_index, s)
        nums = analysis.summary(
            w["W"], w["b"], self.arrays["cov"], self.arrays["angle"],
            self.arrays["r2_model"][frame_index, s],
        )  # fmt: skip
        return {
            "key": self.config.key,
            "structure": self.config.structure,
            "model": self.config.model,
            "m": self.config.m,
            "weight_decay": self.config.weight_decay,
            "seed": s,
            "seeds": self.n_seeds,
            "step": int(self.arrays["step"][frame_index]),
            "loss": float(self.arrays["loss"][frame_index, s]),
            **nums,
        }

    # ---- the run file (the .npz container and save/load: `tempsup.core.files`) ------------

    def to_bytes(self) -> bytes:
        return _files.pack(
            **self.arrays,
            best=self.best,
            config=json.dumps({"kind": self.kind, **self.config.to_dict()}),
        )

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "run file") -> BowsRun:
        config, arrays = _files.read_run(
            data, source, ARRAYS, "correlated-features (bows) run file", BowsConfig.from_dict,
            written_by="`tempsup bows train` or the lab's Download run",
        )  # fmt: skip
        loss = arrays["loss"]
        F, S = loss.shape if loss.ndim == 2 else (0, 0)
        d = arrays["cov"].shape[0] if arrays["cov"].ndim == 2 else -1
        expect = {
            "step": (F,),
            "W": (F, S, config.m, d),
            "b": (F, S, d),
            "r2_linear": (F, S, d),
            "r2_model": (F, S, d),
            "mean": (d,),
            "cov": (d, d),
            "angle": (d,),
            "labels": (d,),
        }
        if config.structure != "text":
            expect["cov"] = (config.d, config.d)
        _files.check_shapes(source, arrays, expect)
        if F == 0:
            raise TempsupError(f"{source}: holds no frames")
        return cls(config, arrays)


# ---- sweeps -----------------------------------------------------------------------------


def sweep_configs(
    base: BowsConfig,
    ms: Sequence[int],
    weight_decays: Sequence[float] | None = None,
    models: Sequence[str] | None = None,
) -> list[BowsConfig]:
    """One config per (model, weight decay, m) point, model-major then weight decay, each
    validated; no models means the base's model only."""
    wds = list(weight_decays) if weight_decays else [base.weight_decay]
    kinds = list(models) if models else [base.model]
    return [
        base.replace(model=k, m=int(m), weight_decay=float(wd))
        for k in kinds
        for wd in wds
        for m in ms
    ]


def table_row(run: BowsRun, file: str = "") -> dict[str, object]:
    """The sweep table's row for one run (its best seed, final frame)."""
    s = run.summary()
    return {**{c: s[c] for c in TABLE_COLUMNS if c in s}, "file": file}


def write_table(rows: Sequence[dict[str, object]], path: str | Path) -> Path:
    return _files.write_csv(rows, path, TABLE_COLUMNS)
