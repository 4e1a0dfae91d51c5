"""A training run as data: frames of weights, losses and loss terms, and its file.

A *frame* is one snapshot of one config's models, with the four loss terms
attached (exact for `linear`, the rectified-kernel terms for ReLU readouts,
see `tempsup.theory`). A `Run` stacks frames: axis 0 is the frame, axis 1 the
seed. The `.npz` run file is the public format other tools read (README, "Run
file format"):

    step     (F,)               optimizer steps at each frame
    W_x      (F, M, N_h, N_x)
    W_h      (F, M, N_h, N_h)
    W_y      (F, M, N_h, N_x)   effective readout, also when tied (W_{s=k})
    b_y      (F, M, N_x)        zeros without a bias
    loss     (F, M)             measured training loss
    terms    (F, M, 4)          task, mean correction, projection, composition
    success  (M,)               seed reached (close to) the best seed's loss
    best     ()                 index of the seed with the lowest final loss
    config   ()                 the RunConfig as JSON

The seed axis is always present (size 1 for a single seed), so readers never
special-case it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from tempsup import _files, geometry, theory
from tempsup.config import RunConfig, importance_weights
from tempsup.errors import TempsupError
from tempsup.snapshot import Snapshot

ARRAYS = ("step", "W_x", "W_h", "W_y", "b_y", "loss", "terms")
TERM_NAMES = ("task", "mean correction", "projection interference", "composition interference")
# A seed "succeeded" when it closed at least this fraction of the gap between
# the silent network (zero output) and the best seed: dead ReLU networks and
# the mirror/real-eigenvalue local minima of science.md §1b fall below it.
SUCCESS_FRACTION = 0.9


def loss_terms(config: RunConfig, W_x, W_h, W_y, b_y) -> np.ndarray:
    """The four expected-loss terms for weights with any leading axes: (..., 4)."""
    w_s = geometry.feature_directions(W_x, W_h, config.seq_len, config.relu_hidden)
    a = geometry.projections(W_y, w_s)  # (..., T, N_x, N_x)
    mu, nu = theory.input_moments(config.input_dist)
    terms = theory.relu_readout_terms if config.relu_readout else theory.loss_terms
    return terms(
        a,
        config.k,
        config.p,
        mu,
        nu,
        config.seq_len,
        importance=np.asarray(importance_weights(config)),
        b_y=b_y if config.bias else None,
    )


def frame(config: RunConfig, snap: Snapshot) -> dict[str, np.ndarray]:
    """One frame of a run: the snapshot's arrays plus the loss terms."""
    arrays = {
        "step": np.asarray(snap.step),
        "W_x": snap.W_x,
        "W_h": snap.W_h,
        "W_y": snap.W_y,
        "b_y": snap.b_y,
        "loss": snap.loss,
    }
    arrays["terms"] = loss_terms(config, snap.W_x, snap.W_h, snap.W_y, snap.b_y)
    return {
        k: np.asarray(v, dtype=np.int64 if k == "step" else np.float32) for k, v in arrays.items()
    }


def split_snapshot(snap: Snapshot, configs: Sequence[RunConfig]) -> list[Snapshot]:
    """Cut a batched snapshot (config-major model axis) into one per config."""
    out, start = [], 0
    for cfg in configs:
        sl = slice(start, start + cfg.seeds)
        out.append(
            Snapshot(
                snap.step, snap.W_x[sl], snap.W_h[sl], snap.W_y[sl], snap.b_y[sl], snap.loss[sl]
            )
        )
        start += cfg.seeds
    return out


def success_mask(config: RunConfig, final_loss: np.ndarray) -> np.ndarray:
    """Which seeds reached a low loss: (M,) bool (see SUCCESS_FRACTION)."""
    _, nu = theory.input_moments(config.input_dist)
    silent = theory.zero_output_loss(
        config.k, config.p, nu, config.seq_len, np.asarray(importance_weights(config))
    )
    best = float(np.min(final_loss))
    threshold = best + (1.0 - SUCCESS_FRACTION) * max(silent - best, 0.0)
    return (final_loss <= threshold) & (final_loss < SUCCESS_FRACTION * silent)


@dataclass
class Run(_files.RunFile):
    """A run's frames stacked: axis 0 frames, axis 1 seeds; `save` and `load` its file."""

    config: RunConfig
    arrays: dict[str, np.ndarray]

    @classmethod
    def from_frames(cls, config: RunConfig, frames: Iterable[dict[str, np.ndarray]]) -> Run:
        frames = list(frames)
        if not frames:
            raise TempsupError("run: expected at least one frame, got none")
        return cls(config, {k: np.stack([f[k] for f in frames]) for k in ARRAYS})

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    @property
    def n_frames(self) -> int:
        return int(self.arrays["step"].shape[0])

    @property
    def final_loss(self) -> np.ndarray:
        return self.arrays["loss"][-1]

    @property
    def best(self) -> int:
        """Seed with the lowest final measured loss."""
        return int(np.argmin(self.final_loss))

    @property
    def success(self) -> np.ndarray:
        return success_mask(self.config, self.final_loss)

    def weights(self, frame_index: int = -1, seed: int | None = None) -> dict[str, np.ndarray]:
        """W_x, W_h, W_y, b_y of one seed (default: the best) at one frame."""
        s = self.best if seed is None else seed
        return {n: self.arrays[n][frame_index, s] for n in ("W_x", "W_h", "W_y", "b_y")}

    def summary(self, seed: int | None = None) -> dict[str, float]:
        """Headline numbers of the final frame for one seed (default: best)."""
        s = self.best if seed is None else seed
        w = self.weights(-1, s)
        geo = geometry.summary(
            w["W_x"], w["W_h"], w["W_y"], w["b_y"], self.config.k, self.config.relu_hidden
        )
        return {
            "key": self.config.key,
            "seed": s,
            "loss": float(self.final_loss[s]),
            "expected_loss": float(self.arrays["terms"][-1, s].sum()),
            "successes": int(self.success.sum()),
            "seeds": int(self.config.seeds),
            "swept_angle_deg": float(np.ravel(geo["swept_angle_deg"])[0]),
            "spectral_radius": float(geo["spectral_radius"]),
            "w0_norm": float(np.ravel(geo["w0_norm"])[0]),
            "n_interference_free": int(np.ravel(geo["n_interference_free"])[0]),
        }

    # ---- the run file (the .npz container and save/load: `tempsup._files`) ------------

    def to_bytes(self) -> bytes:
        return _files.pack(
            **self.arrays,
            success=self.success,
            best=self.best,
            config=self.config.to_json(),
        )

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "run file") -> Run:
        config, arrays = _files.read_run(
            data, source, ARRAYS, "tempsup run file", RunConfig.from_dict
        )
        for name, arr in arrays.items():
            kind = "iu" if name == "step" else "fiu"
            if arr.dtype.kind not in kind:
                raise TempsupError(f"{source}: {name} has dtype {arr.dtype}, expected numbers")
        n_frames, n_seeds = arrays["loss"].shape[:2] if arrays["loss"].ndim == 2 else (0, 0)
        if n_seeds != config.seeds:
            raise TempsupError(f"{source}: holds {n_seeds} seeds, its config says {config.seeds}")
        expect = {
            "step": (n_frames,),
            "W_x": (n_frames, n_seeds, config.hidden, config.inputs),
            "W_h": (n_frames, n_seeds, config.hidden, config.hidden),
            "W_y": (n_frames, n_seeds, config.hidden, config.inputs),
            "b_y": (n_frames, n_seeds, config.inputs),
            "terms": (n_frames, n_seeds, 4),
        }
        _files.check_shapes(source, arrays, expect)
        if n_frames == 0:
            raise TempsupError(f"{source}: holds no frames")
        return cls(config, arrays)
