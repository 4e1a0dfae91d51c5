"""Data for the correlated-features lab: feature vectors whose co-activation has a shape.

Every generator returns a `Dataset`: samples X (N, d) as float32, one label
and one *angle* per feature (the colour of the feature in the figures), and
where the structure has one, the feature positions. Definitions (science.md §2;
the circle is the authors' synthetic data, the rest are ours):

circular   d features at angles φ_i = 2πi/d on the unit circle. Sample n has a
           latent angle θ_n = 2π(n mod d)/d + noise·ε, ε ~ N(0, 1); feature i is
           on with probability sigmoid(sharpness·cos(θ_n − φ_i) + base_log_odds).
figure8    the same rule on a figure-8: positions on the curve
           z(t) = (2 sin t, sin 2t) (two loops of about unit radius, crossing at
           the origin) at t_i = 2π(i + ½)/d (the half step keeps two features off
           the crossing point itself); sample n sits at t = t_{n mod d} + noise·ε
           and feature i is on with probability
           sigmoid(sharpness·(1 − ‖z(t) − z(t_i)‖²/2) + base_log_odds).
           On the unit circle 1 − ‖u − v‖²/2 = cos(angle), so this is the circle's
           rule with Euclidean distance: features near the crossing co-activate
           with both loops.
sphere     d features at Fibonacci-lattice points p_i on the unit sphere (nearly
           even spacing); sample n has latent direction u_n = normalise(p_{n mod d}
           + noise·ε), ε ~ N(0, I_3); feature i is on with probability
           sigmoid(sharpness·u_nᵀp_i + base_log_odds), the circle's rule in 3-D.
iid        the control: feature i is on independently with probability p̄_i, the
           circular structure's exact mean activation of feature i (an average
           over the d latent positions and, with noise, over the jitter by
           Gauss–Hermite quadrature). Same marginals, no correlations.
text       bag of words: lower-cased words ([a-z] runs with inner apostrophes),
           minus a short English stop list; the vocabulary is the `vocab` most
           frequent words (ties alphabetical); every `window` consecutive
           non-empty lines (non-overlapping, the paper's "records") make one
           sample, x_i = 1 if word i occurs in it. Nothing is downloaded.

Feature values (`values`, synthetic structures): "binary" (the default, the
authors') puts 1 where a feature is on (like the bag of words; the covariance is
then exactly the co-activation statistics); "uniform" puts an independent
uniform[0, 1] magnitude there (Toy Models of Superposition). A text's bag of
words is always binary presence, as in the paper.

The split (synthetic structures): n_samples + n_heldout samples are generated
and a seeded random n_samples of them train (the authors: 8,000 of 10,000);
the held-out rest is never trained on.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tempsup.bows.config import BowsConfig
from tempsup.errors import TempsupError

# Gauss–Hermite nodes for the iid control's mean activation under angle noise.
QUADRATURE_POINTS = 64
# Never read more than this from a text file (the app accepts uploads).
MAX_TEXT_BYTES = 200_000_000
WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")
_STOP = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t also one two may many much must shall said like"""
STOPWORDS = frozenset(_STOP.split())


@dataclass(frozen=True)
class Dataset:
    """Samples and per-feature metadata of one structure."""

    X: np.ndarray  # (N, d) float32 feature values
    angle: np.ndarray  # (d,) radians in [0, 2π): the feature's colour in the figures
    labels: tuple[str, ...]  # (d,) e.g. "φ=30°" or the word
    positions: np.ndarray | None = None  # (d, 2 or 3) where the structure places the features

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def n(self) -> int:
        return int(self.X.shape[0])


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=float)))  # stable for large |z|


# ---- the latent structures ---------------------------------------------------------


def circle_angles(d: int) -> np.ndarray:
    """φ_i = 2πi/d: evenly spaced, feature 0 at angle 0."""
    return 2 * np.pi * np.arange(d) / d


def circular_probabilities(theta: np.ndarray, d: int, sharpness: float, base: float) -> np.ndarray:
    """P(feature i on | latent angle θ) for every θ: (len(θ), d)."""
    phi = circle_angles(d)
    return sigmoid(sharpness * np.cos(np.asarray(theta)[:, None] - phi[None, :]) + base)


def figure8_curve(t: np.ndarray) -> np.ndarray:
    """z(t) = (2 sin t, sin 2t): two loops of about unit radius crossing at the origin."""
    t = np.asarray(t, dtype=float)
    return np.stack([2 * np.sin(t), np.sin(2 * t)], axis=-1)


def figure8_parameters(d: int) -> np.ndarray:
    """t_i = 2π(i + ½)/d: no feature sits exactly on the crossing."""
    return 2 * np.pi * (np.arange(d) + 0.5) / d


def figure8_probabilities(t: np.ndarray, d: int, sharpness: float, base: float) -> np.ndarray:
    """P(feature i on | curve parameter t): (len(t), d)."""
    z = figure8_curve(t)  # (N, 2)
    p = figure8_curve(figure8_parameters(d))  # (d, 2)
    dist2 = ((z[:, None, :] - p[None, :, :]) ** 2).sum(-1)  # (N, d)
    return sigmoid(sharpness * (1.0 - dist2 / 2.0) + base)


def sphere_points(d: int) -> np.ndarray:
    """d nearly evenly spread points on the unit sphere (Fibonacci lattice): (d, 3)."""
    i = np.arange(d) + 0.5
    z = 1.0 - 2.0 * i / d
    r = np.sqrt(1.0 - z * z)
    lon = np.pi * (1.0 + 5**0.5) * i  # golden-angle steps
    return np.stack([r * np.cos(lon), r * np.sin(lon), z], axis=-1)


def iid_probabilities(config: BowsConfig) -> np.ndarray:
    """p̄_i: the circular structure's exact mean activation of each feature: (d,)."""
    d = config.n_features
    grid = circle_angles(d)  # the latent positions, each equally often
    if config.noise > 0:
        nodes, weights = np.polynomial.hermite_e.hermegauss(QUADRATURE_POINTS)
        weights = weights / weights.sum()  # E over ε ~ N(0, 1)
        theta = (grid[:, None] + config.noise * nodes[None, :]).ravel()
        w = np.tile(weights, d) / d
    else:
        theta, w = grid, np.full(d, 1.0 / d)
    probs = circular_probabilities(theta, d, config.sharpness, config.base_log_odds)
    return w @ probs


def activation_probabilities(config: BowsConfig, n: int, rng: np.random.Generator) -> np.ndarray:
    """P(feature on) for samples 0 … n-1 of a synthetic structure: (n, d)."""
    d = config.n_features
    index = np.arange(n) % d
    eps_dims = 3 if config.structure == "sphere" else 1
    eps = rng.standard_normal((n, eps_dims)) if config.noise > 0 else np.zeros((n, eps_dims))
    s, b = config.sharpness, config.base_log_odds
    if config.structure == "circular":
        theta = circle_angles(d)[index] + config.noise * eps[:, 0]
        return circular_probabilities(theta, d, s, b)
    if config.structure == "figure8":
        t = figure8_parameters(d)[index] + config.noise * eps[:, 0]
        return figure8_probabilities(t, d, s, b)
    if config.structure == "sphere":
        pts = sphere_points(d)
        u = pts[index] + config.noise * eps
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        return sigmoid(s * u @ pts.T + b)
    if config.structure == "iid":
        return np.broadcast_to(iid_probabilities(config), (n, d))
    raise TempsupError(f"structure: no synthetic generator for {config.structure!r}")


def feature_angles(config: BowsConfig) -> np.ndarray:
    """The angle that colours each synthetic feature (radians in [0, 2π))."""
    d = config.n_features
    if config.structure == "figure8":
        return figure8_parameters(d)
    if config.structure == "sphere":
        p = sphere_points(d)
        return np.mod(np.arctan2(p[:, 1], p[:, 0]), 2 * np.pi)  # longitude
    return circle_angles(d)


def feature_labels(config: BowsConfig) -> tuple[str, ...]:
    deg = np.degrees(feature_angles(config))
    if config.structure == "sphere":
        lat = np.degrees(np.arcsin(sphere_points(config.n_features)[:, 2]))
        return tuple(
            f"{i}: lon {a:.0f}°, lat {b:.0f}°"
            for i, (a, b) in enumerate(zip(deg, lat, strict=True))
        )
    sym = "t" if config.structure == "figure8" else "φ"
    return tuple(f"{i}: {sym}={a:.0f}°" for i, a in enumerate(deg))


def feature_positions(config: BowsConfig) -> np.ndarray | None:
    d = config.n_features
    if config.structure in ("circular", "iid"):
        a = circle_angles(d)
        return np.stack([np.cos(a), np.sin(a)], axis=-1)
    if config.structure == "figure8":
        return figure8_curve(figure8_parameters(d))
    if config.structure == "sphere":
        return sphere_points(d)
    return None


def synthetic(config: BowsConfig, held_out: bool = False) -> Dataset:
    """The training samples of a synthetic structure (`held_out`: the held-out ones instead),
    from config.seed: n_samples + n_heldout generated, a seeded random n_samples train."""
    n = config.n_samples + config.n_heldout
    rng = np.random.default_rng([config.seed, 20_260_310])
    probs = activation_probabilities(config, n, rng)
    on = rng.random(probs.shape) < probs
    X = on * rng.random(probs.shape) if config.values == "uniform" else on.astype(float)
    if config.n_heldout:
        order = np.random.default_rng([config.seed, 8_000]).permutation(n)
        X = X[order[config.n_samples :] if held_out else np.sort(order[: config.n_samples])]
    elif held_out:
        X = X[:0]
    return Dataset(
        X.astype(np.float32),
        feature_angles(config),
        feature_labels(config),
        feature_positions(config),
    )


# ---- bag of words -------------------------------------------------------------------


def tokenize(line: str) -> list[str]:
    return [w for w in WORD.findall(line.lower()) if w not in STOPWORDS]


def read_text(path: str | Path) -> str:
    """A local text file (the command line's `--text`), at most MAX_TEXT_BYTES."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_TEXT_BYTES:
            raise TempsupError(
                f"text: expected a text file of at most {MAX_TEXT_BYTES / 1e6:.0f} MB, "
                f"got {size / 1e6:.0f} MB"
            )
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise TempsupError(f"text: cannot read {str(path)!r} ({exc.strerror})") from None


def text_sha256(text: str) -> str:
    """What a "text" config names its text by: the sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def bag_of_words(text: str, vocab: int, window: int) -> Dataset:
    """One binary presence vector per `window` consecutive non-empty lines.

    The last window may be shorter. Features are the `vocab` most frequent
    words (fewer if the text has fewer); their angle is their direction in the
    plane of the two top principal components of the covariance, so words that
    co-occur get similar colours.
    """
    lines = [tokenize(line) for line in text.splitlines() if line.strip()]
    if not lines:
        raise TempsupError("text: the text has no non-empty lines")
    counts = Counter(w for line in lines for w in line)
    if len(counts) < 2:
        raise TempsupError(
            f"text: expected at least 2 distinct words (after stop words), got {len(counts)}"
        )
    words = sorted(counts, key=lambda w: (-counts[w], w))[:vocab]
    index = {w: i for i, w in enumerate(words)}
    chunks = [lines[i : i + window] for i in range(0, len(lines), window)]
    X = np.zeros((len(chunks), len(words)), dtype=np.float32)
    for n, chunk in enumerate(chunks):
        cols = sorted({index[w] for line in chunk for w in line if w in index})
        X[n, cols] = 1.0
    return Dataset(X, pca_angles(np.cov(X, rowvar=False, bias=True)), tuple(words))


# The fewest samples (windows of lines) whose covariance the lab's pictures can rest on:
# with fewer, most word pairs never meet and Σ is mostly sampling noise.
MIN_TEXT_SAMPLES = 50


@dataclass(frozen=True)
class TextReport:
    """What a text gives the lab, counted before training (`text_report`)."""

    words: int  # every word ([a-z] runs), stop words included
    distinct: int  # distinct words after the stop list
    lines: int  # non-empty lines
    samples: int  # windows of `window` lines: the bag of words' samples
    window: int

    @property
    def summary(self) -> str:
        return (
            f"{self.words:,} words ({self.distinct:,} distinct, stop words left out) in "
            f"{self.lines:,} non-empty line{'s' if self.lines != 1 else ''}: "
            f"{self.samples:,} sample{'s' if self.samples != 1 else ''} of {self.window} lines"
        )

    @property
    def warning(self) -> str | None:
        """Why the lab's statistics cannot rest on this text, or None when they can."""
        if self.samples >= MIN_TEXT_SAMPLES and self.distinct >= 2:
            return None
        need = MIN_TEXT_SAMPLES * self.window
        return (
            f"Too short for the lab's statistics: {self.words:,} words make "
            f"{self.samples:,} sample{'s' if self.samples != 1 else ''} of {self.window} lines; "
            f"the covariance of which words occur together needs at least "
            f"{MIN_TEXT_SAMPLES} samples (about {need:,} non-empty lines) and 2 distinct words. "
            "Training would show noise, not structure."
        )


def text_report(text: str, window: int) -> TextReport:
    """Count a text's words, lines and samples for `window` lines per sample."""
    lines = [line for line in text.splitlines() if line.strip()]
    words = sum(len(WORD.findall(line.lower())) for line in lines)
    distinct = len({w for line in lines for w in tokenize(line)})
    samples = -(-len(lines) // window) if lines else 0
    return TextReport(words, distinct, len(lines), samples, window)


def pca_angles(cov: np.ndarray) -> np.ndarray:
    """Each feature's angle in the plane of the covariance's top two eigenvectors."""
    cov = np.atleast_2d(cov)
    _, vecs = np.linalg.eigh(cov)
    top = vecs[:, ::-1][:, :2]  # (d, 2)
    if top.shape[1] < 2:
        return np.zeros(cov.shape[0])
    return np.mod(np.arctan2(top[:, 1], top[:, 0]), 2 * np.pi)


# ---- entry point ----------------------------------------------------------------------


def make_dataset(config: BowsConfig, text: str | None = None) -> Dataset:
    """The training data of a config: synthetic samples, or the bag of words of `text`,
    the text whose sha256 the config names."""
    if config.structure == "text":
        if text is None or text_sha256(text) != config.text_sha256:
            raise TempsupError(
                f"text: expected the text with sha256 {str(config.text_sha256)[:16]}…, "
                + ("got none" if text is None else f"got one with sha256 {text_sha256(text)[:16]}…")
            )
        ds = bag_of_words(text, config.vocab, config.window)
        if config.m > ds.d:
            raise TempsupError(
                f"m: expected at most the {ds.d} words the text's vocabulary holds, got {config.m}"
            )
        return ds
    return synthetic(config)


def statistics(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (d,) and covariance (d, d) of samples X (N, d), the population form (1/N)."""
    X = np.asarray(X, dtype=float)
    mean = X.mean(axis=0)
    centred = X - mean
    return mean, centred.T @ centred / max(len(X), 1)


def expected_circular_covariance(config: BowsConfig) -> np.ndarray:
    """The circular structure's exact covariance of binary features (noise 0): (d, d).

    Given the latent, features are independent, so
    Cov(x_i, x_j) = E_θ[p_i p_j] − p̄_i p̄_j for i ≠ j and p̄_i (1 − p̄_i) on the diagonal.
    """
    d = config.n_features
    P = circular_probabilities(circle_angles(d), d, config.sharpness, config.base_log_odds)
    mean = P.mean(axis=0)
    cov = P.T @ P / d - np.outer(mean, mean)
    cov[np.diag_indices(d)] = mean * (1 - mean)
    return cov


__all__ = [
    "MIN_TEXT_SAMPLES",
    "STOPWORDS",
    "Dataset",
    "TextReport",
    "activation_probabilities",
    "bag_of_words",
    "circle_angles",
    "expected_circular_covariance",
    "feature_angles",
    "figure8_curve",
    "iid_probabilities",
    "make_dataset",
    "pca_angles",
    "sphere_points",
    "statistics",
    "synthetic",
    "text_report",
]
