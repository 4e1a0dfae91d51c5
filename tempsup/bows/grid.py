"""The authors' main figure as one job: WᵀW/‖W‖² of three models at nine bottlenecks.

Prieto, Stevinson, Barsbey et al. (arXiv 2603.09972; their code,
LucasPrietoAl/correlations-feature-geometry, `synthetic_bows/plots.py`) draw,
for the circle of 12 features, the covariance beside WᵀW normalised by ‖W‖²
(the squared Frobenius norm) for three rows — the linear model at weight
decay 1, the ReLU model at weight decay 1 and at weight decay 6 — and nine
bottlenecks m = 2, 3, 4, 6, 7, 8, 10, 11, 12. `grid_spec` is that figure's
training: one "bows-sweep" job of the queue (`tempsup.bows.sweeps.BowsSweepSpec`
with both models), every point × seed in one batch.

A `Grid` holds what the figure and the words need: the final weights of every
seed of every point, the best seed of each (the lowest loss on the whole
training set at the final weights: exact, not the noisy mean of the last
minibatches), and the data's covariance. It is built from the finished
runs (`from_runs`) or read from the file that ships with the package
(`shipped`, `tempsup/bows/grid_runs/<spec key>.npz`, written by
`python scripts/bows_grid.py`), so the lab opens the grid at once.

`panel_measures` computes every number said about a panel ONCE; `statement`
turns them into the sentence per m that the lab page shows and that the
README's generated block holds (scripts/bows_grid.py writes it; a test fails
when they differ).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tempsup.bows import analysis
from tempsup.bows.config import DEFAULTS, BowsConfig
from tempsup.bows.data import make_dataset, statistics
from tempsup.bows.sweeps import BowsSweepSpec
from tempsup.errors import TempsupError

GRID_MS = (2, 3, 4, 6, 7, 8, 10, 11, 12)  # the authors' figure leaves out 5 and 9
GRID_WDS = (1.0, 6.0)
# the figure's rows: (model, weight decay), as the authors order them
ROWS = (("linear", 1.0), ("relu", 1.0), ("relu", 6.0))
ROW_NAMES = {("linear", 1.0): "linear, wd 1", ("relu", 1.0): "ReLU, wd 1",
             ("relu", 6.0): "ReLU, wd 6"}  # fmt: skip
NORM_THRESHOLD = 0.5  # a feature is represented when its column's norm ‖W_i‖ exceeds this
PCA_R = 0.9  # "WᵀW is the top-m PCA projection" when the correlation reaches this
DIRECTORY = Path(__file__).with_name("grid_runs")


def grid_spec(base: BowsConfig = DEFAULTS, ms: Sequence[int] = GRID_MS) -> BowsSweepSpec:
    """The grid's job: both models × weight decays 1 and 6 × `ms`, one batch (the
    (linear, 6) points train too, in the same batch, and are not drawn)."""
    return BowsSweepSpec(base, tuple(ms), GRID_WDS, ("linear", "relu"))


@dataclass(frozen=True)
class Grid:
    """Final weights of every point of a grid spec, and the data's statistics."""

    spec: BowsSweepSpec
    W: np.ndarray  # (P, S, m_max, d), points in spec.configs order, rows ≥ m zero
    b: np.ndarray  # (P, S, d)
    loss: np.ndarray  # (P, S) loss on the whole training set at the final weights
    cov: np.ndarray  # (d, d)
    angle: np.ndarray  # (d,)

    @property
    def ms(self) -> tuple[int, ...]:
        return tuple(self.spec.ms)

    def index(self, model: str, weight_decay: float, m: int) -> int:
        for i, c in enumerate(self.spec.configs):
            if (c.model, c.weight_decay, c.m) == (model, float(weight_decay), m):
                return i
        raise TempsupError(f"grid: no point ({model}, wd {weight_decay:g}, m {m})")

    def best(self, point: int) -> int:
        return int(np.nanargmin(self.loss[point]))

    def weights(self, model: str, weight_decay: float, m: int) -> np.ndarray:
        """The best seed's W (m, d) of one point."""
        p = self.index(model, weight_decay, m)
        return self.W[p, self.best(p), :m]

    def normalised_gram(self, model: str, weight_decay: float, m: int) -> np.ndarray:
        """WᵀW / ‖W‖² (Frobenius) of the best seed: what the authors' figure draws."""
        return normalised_gram(self.weights(model, weight_decay, m))

    # ---- file --------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        meta = json.dumps({"kind": "bows-grid", "spec": self.spec.to_dict()})
        np.savez_compressed(buf, W=self.W, b=self.b, loss=self.loss, cov=self.cov,
                            angle=self.angle, meta=np.asarray(meta))  # fmt: skip
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "grid file") -> Grid:
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                arrays = {k: np.asarray(z[k]) for k in ("W", "b", "loss", "cov", "angle")}
        except (OSError, ValueError, KeyError) as exc:
            raise TempsupError(
                f"{source}: expected a tempsup bows grid (.npz), got unreadable data ({exc})"
            ) from None
        if not isinstance(meta, dict) or meta.get("kind") != "bows-grid":
            raise TempsupError(f"{source}: expected a tempsup bows grid, got {meta!r:.80}")
        return cls(BowsSweepSpec.from_dict(meta["spec"]), **arrays)


def normalised_gram(W: np.ndarray) -> np.ndarray:
    """WᵀW / ‖W‖²_F, the authors' `gram_matrix` (their W/(‖W‖ + 1e-9) squared)."""
    W = np.asarray(W, dtype=float)
    return W.T @ W / (float(np.sum(W * W)) + 1e-18)


def full_loss(W: np.ndarray, b: np.ndarray, X: np.ndarray, config: BowsConfig) -> np.ndarray:
    """The config's loss on all of X for every seed's final weights W (S, m, d), b (S, d)."""
    X = np.asarray(X, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64)
    z = np.einsum("bd,skd,ske->sbe", X, W, W) + np.asarray(b, dtype=np.float64)[:, None, :]
    xhat = np.maximum(z, 0.0) if config.relu else z
    sq = (xhat - X[None]) ** 2
    per = sq.mean(-1) if config.reduction == "mean" else sq.sum(-1)
    return per.mean(-1)


def from_runs(spec: BowsSweepSpec, runs: Sequence, text: str | None = None) -> Grid:
    """The grid of a finished spec from its point runs (`tempsup.bows.run.BowsRun`, in
    spec.configs order): final weights, and each seed's loss on the whole training set."""
    configs = spec.configs
    if len(runs) != len(configs) or any(
        r.config.key != c.key for r, c in zip(runs, configs, strict=False)
    ):
        raise TempsupError(
            f"grid: expected the {len(configs)} runs of the spec's points in order, got {len(runs)}"
        )
    X = make_dataset(configs[0], text).X
    S, d, m_max = spec.base.seeds, runs[0].d, max(spec.ms)
    W = np.zeros((len(runs), S, m_max, d), np.float32)
    b = np.zeros((len(runs), S, d), np.float32)
    loss = np.zeros((len(runs), S))
    for p, run in enumerate(runs):
        w, bias = run["W"][-1], run["b"][-1]  # (S, m, d), (S, d)
        W[p, :, : w.shape[1]] = w
        b[p] = bias
        loss[p] = full_loss(w, bias, X, run.config)
    cov = np.asarray(runs[0]["cov"], dtype=np.float64)
    return Grid(spec, W, b, loss, cov, np.asarray(runs[0]["angle"], dtype=np.float64))


# ---- the measured words ------------------------------------------------------------


def panel_measures(grid: Grid, model: str, weight_decay: float, m: int) -> dict[str, float]:
    """Every number said about one panel (best seed, final weights), computed once.

    n_features: columns with ‖W_i‖ > NORM_THRESHOLD; pca_r: correlation of WᵀW with
    the top-m PCA projection (`analysis.pca_correlation`); pairs: the number of
    isolated antipodal pairs (`analysis.paired_fraction` × d / 2); circle: the
    columns' cosines against the features' angles (`analysis.circle_score`);
    self_share: the diagonal's share of WᵀW/‖W‖² (1 − interference); loss.
    """
    p = grid.index(model, weight_decay, m)
    W = grid.weights(model, weight_decay, m)
    d = W.shape[1]
    G = normalised_gram(W)
    norms = np.linalg.norm(W, axis=0)
    return {
        "m": m,
        "loss": float(grid.loss[p, grid.best(p)]),
        "seed": grid.best(p),
        "n_features": int((norms > NORM_THRESHOLD).sum()),
        "pca_r": float(analysis.pca_correlation(W, grid.cov)),
        "pairs": int(round(float(analysis.paired_fraction(W)) * d / 2)),
        "circle": float(analysis.circle_score(W, grid.angle)),
        "max_offdiag": float(np.max(np.abs(G - np.diag(np.diag(G))))),
    }


def describe(measures: dict[str, float], d: int) -> str:
    """One panel in words, from its measures alone (`panel_measures`).

    "top-m PCA projection" when WᵀW correlates with it to PCA_R; else "circle" when
    the columns' cosines follow the features' angles to PCA_R; else isolated pairs;
    else neither. Then the antipodal pairs, if any, and the columns' norms.
    """
    m, pairs, n = int(measures["m"]), int(measures["pairs"]), int(measures["n_features"])
    r, circle = measures["pca_r"], measures["circle"]
    s = "s" if pairs != 1 else ""
    if r >= PCA_R:
        shape = f"top-{m} PCA projection (r = {r:.2f})"
        if circle >= PCA_R:
            shape += f", a circle (r = {circle:.2f})"
        if pairs:
            shape += f", opposite features antipodal ({pairs} pair{s})"
    elif circle >= PCA_R:
        shape = f"circle (r = {circle:.2f}), not the top-{m} PCA projection (r = {r:.2f})"
    elif pairs:
        shape = f"{pairs} isolated antipodal pair{s} (top-{m} PCA r = {r:.2f})"
    else:
        shape = f"neither the top-{m} PCA projection (r = {r:.2f}) nor a circle (r = {circle:.2f})"
    return f"{shape}; ‖W_i‖ > {NORM_THRESHOLD:g}: {n} of {d}"


# What the words mean, said once (under the page's table and the README's).
LEGEND = (
    f"Best seed of each panel, final weights. “top-m PCA projection”: WᵀW correlates with "
    f"the projection onto the covariance's top m principal components to r ≥ {PCA_R:g} "
    "(Pearson r over all entries; the linear model's optimum). “circle”: the columns' "
    "cosines cos(W_i, W_j) follow the features' angles cos(φ_i − φ_j) to r ≥ "
    f"{PCA_R:g}. “antipodal pair”: cos(W_i, W_j) < {analysis.ANTIPODAL_COS:g}; "
    f"“isolated”: |cos| < {analysis.ISOLATED_COS:g} with every other feature. ‖W_i‖: "
    "the length of feature i's column (the authors' figure hides it: it draws WᵀW/‖W‖²)."
)


def statement_rows(grid: Grid) -> list[tuple[int, list[str]]]:
    """Per m, what each row of the grid (ROWS order) shows there, measured."""
    d = grid.cov.shape[0]
    return [(m, [describe(panel_measures(grid, *row, m), d) for row in ROWS]) for m in grid.ms]


def statement(grid: Grid) -> list[str]:
    """One line per m: `statement_rows` as sentences."""
    return [
        f"m = {m}: " + "; ".join(f"{ROW_NAMES[row]}: {cell}" for row, cell in zip(ROWS, cells,
                                                                               strict=True)) + "."
        for m, cells in statement_rows(grid)
    ]  # fmt: skip


# ---- the shipped grid --------------------------------------------------------------


def path(spec: BowsSweepSpec, directory: Path = DIRECTORY) -> Path:
    return directory / f"{spec.key}.npz"


def shipped(spec: BowsSweepSpec | None = None, directory: Path = DIRECTORY) -> Grid | None:
    """The grid that ships with the package for `spec` (default: the recipe's), or None."""
    spec = grid_spec() if spec is None else spec
    file = path(spec, directory)
    if not file.is_file():
        return None
    try:
        grid = Grid.from_bytes(file.read_bytes(), source=file.name)
    except TempsupError:
        return None
    return grid if grid.spec.key == spec.key else None


def train_grid(spec: BowsSweepSpec | None = None) -> Grid:
    """Train a grid spec exactly as its job does (`tempsup.bows.sweeps`: one batch, the
    published frames, the finished result) and keep its final weights."""
    from tempsup.bows.sweeps import stream_sweep, sweep_frame, sweep_result

    spec = grid_spec() if spec is None else spec
    kept, published = [], []
    for frame in stream_sweep(spec):
        kept.append(frame)
        published.append(sweep_frame(spec, frame))
    return from_runs(spec, sweep_result(spec, kept, published).runs or [])


def write(grid: Grid, directory: Path = DIRECTORY) -> Path:
    """Ship `grid` as `<spec key>.npz`, removing the files of other keys (an old recipe's)."""
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.npz"):
        if old.name != path(grid.spec, directory).name:
            old.unlink()
    file = path(grid.spec, directory)
    file.write_bytes(grid.to_bytes())
    return file


# The README's block of measured words (section "Correlated-features lab").
README_START = "<!-- bows-grid: generated by `python -m tempsup.bows.grid --readme README.md` -->"
README_END = "<!-- /bows-grid -->"


def readme_block(grid: Grid) -> str:
    """The README's block: `statement_rows` of `grid` as a table, its legend, between markers."""
    head = "| m | " + " | ".join(ROW_NAMES[row] for row in ROWS) + " |"
    rule = "|---|" + "---|" * len(ROWS)
    body = [f"| {m} | " + " | ".join(cells) + " |" for m, cells in statement_rows(grid)]
    return "\n".join([README_START, head, rule, *body, "", LEGEND, README_END])


def replace_readme_block(text: str, block: str) -> str:
    """`text` with its block between the markers replaced by `block`."""
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise TempsupError(f"README: expected the markers {README_START!r} … {README_END!r}")
    return text[:start] + block + text[end + len(README_END) :]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m tempsup.bows.grid [--train] [--readme README.md] [--check]`: train and
    ship the grid, write (or check) the README's measured block from the shipped grid."""
    import argparse
    import time

    parser = argparse.ArgumentParser(prog="python -m tempsup.bows.grid", description=main.__doc__)
    parser.add_argument("--train", action="store_true", help="train the grid and ship it")
    parser.add_argument("--readme", help="the README whose measured block to write")
    parser.add_argument("--check", action="store_true", help="only check the README's block")
    args = parser.parse_args(argv)
    if args.train:
        import torch

        torch.set_num_threads(1)
        start, cpu = time.perf_counter(), time.process_time()
        grid = train_grid()
        print(
            f"grid {grid.spec.key}: {len(grid.spec.configs)} points x {grid.spec.base.seeds} "
            f"seeds, {grid.spec.steps} steps, {time.perf_counter() - start:.0f} s "
            f"({time.process_time() - cpu:.0f} s of CPU) -> {write(grid)}"
        )
    grid = shipped()
    if grid is None:
        print("no shipped grid for the recipe: run with --train first")
        return 1
    for line in statement(grid):
        print(line)
    if args.readme:
        readme = Path(args.readme)
        text = readme.read_text(encoding="utf-8")
        new = replace_readme_block(text, readme_block(grid))
        if args.check:
            if new != text:
                print(f"{readme}: the measured block differs from the shipped grid")
                return 1
        elif new != text:
            readme.write_text(new, encoding="utf-8")
            print(f"{readme}: measured block written")
    return 0


def covariance(config: BowsConfig, text: str | None = None) -> np.ndarray:
    """The training data's covariance (what the grid's first column draws)."""
    return statistics(make_dataset(config, text).X)[1]


__all__ = [
    "GRID_MS",
    "ROWS",
    "Grid",
    "describe",
    "from_runs",
    "grid_spec",
    "normalised_gram",
    "panel_measures",
    "shipped",
    "statement",
    "statement_rows",
]


if __name__ == "__main__":
    raise SystemExit(main())
