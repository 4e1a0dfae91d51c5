"""Analysis of trained tied autoencoders: covariance, WᵀW, PCA, R², and the paper's claims.

Pure numpy functions of weights and data statistics (science.md §2); models
and figures do not compute geometry themselves. Weights may carry any leading
axes (frames, seeds): W is (..., m, d), b is (..., d).

Measures for the claims:

(a) PCA circle at small m — `pca_overlap`: the fraction of the data variance
    that W's row space captures, relative to the best m-dimensional subspace
    (the top m principal components): tr(QᵀΣQ) / Σ_{k≤m} λ_k with Q an
    orthonormal basis of W's rows. 1 exactly when the rows span the top-m PCs;
    unlike a comparison of eigenvectors it is well defined when eigenvalues
    are degenerate (the circle's cos/sin pairs are). `principal_angles` gives
    the angles themselves.
(b) antipodal pairs at larger m — `antipodal_fraction`: the fraction of
    features i whose most anti-aligned column j has cos(W_i, W_j) < −0.8.
    The PCA circle has antipodes too (φ and φ + π), so `paired_fraction`
    also asks that the pair be *isolated*: |cos(W_i, W_k)| < 0.5 for every
    other represented feature k. The circle scores ≈ 0 on it, pairs ≈ 1.
(c) no circle without correlations — `circle_score`: the Pearson correlation,
    over pairs i < j, between cos(W_i, W_j) and cos(φ_i − φ_j). ≈ 1 for the
    PCA circle, ≈ 0 when geometry ignores the feature angle (the i.i.d.
    control). `opposite_partner_fraction` asks whether each feature's most
    anti-aligned partner is the feature opposite on the circle: 1 for the
    circle's pairs, ≈ 1/(d − 1) by chance.

Linear vs nonlinear superposition (the paper's definition): feature i is in
linear superposition when a linear decoder from h = Wx recovers it with
R²_i ≥ R2_THRESHOLD; when only the model's own nonlinear readout does, it is
in nonlinear superposition; otherwise it is not represented. The threshold is
0.5, the line the paper draws (its definition allows any 1 − ε).
"""

from __future__ import annotations

import numpy as np

from tempsup.bows.data import statistics

R2_THRESHOLD = 0.5
ANTIPODAL_COS = -0.8  # "anti-aligned": cos(W_i, W_j) below this
ISOLATED_COS = 0.5  # a pair is isolated when every other |cos| stays below this
DEAD_NORM = 0.1  # a column shorter than this × the longest is "not represented"

__all__ = [
    "R2_THRESHOLD",
    "antipodal_fraction",
    "circle_score",
    "column_cosines",
    "gram",
    "linear_r2",
    "model_r2",
    "opposite_partner_fraction",
    "paired_fraction",
    "pca",
    "pca_overlap",
    "principal_angles",
    "statistics",
    "summary",
    "superposition_kinds",
]


def gram(W: np.ndarray) -> np.ndarray:
    """WᵀW: (..., m, d) -> (..., d, d), the interference matrix ⟨W_i, W_j⟩."""
    W = np.asarray(W, dtype=float)
    return np.swapaxes(W, -1, -2) @ W


def pca(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (d,) in decreasing order and eigenvectors (d, d) as columns."""
    vals, vecs = np.linalg.eigh(np.asarray(cov, dtype=float))
    return vals[::-1], vecs[:, ::-1]


def _row_basis(W: np.ndarray) -> list[np.ndarray]:
    """Orthonormal bases (d, r) of the row spaces of W (..., m, d), flattened over lead axes."""
    W = np.asarray(W, dtype=float)
    flat = W.reshape(-1, *W.shape[-2:])
    out = []
    for w in flat:
        _, s, vt = np.linalg.svd(w, full_matrices=False)
        r = int((s > 1e-6 * max(s.max(initial=0.0), 1e-30)).sum())
        out.append(vt[:r].T)
    return out


def pca_overlap(W: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Variance captured by W's row space over that of the top-m PCs: (...,) in [0, 1]."""
    W = np.asarray(W, dtype=float)
    cov = np.asarray(cov, dtype=float)
    vals, _ = pca(cov)
    m = W.shape[-2]
    best = float(np.clip(vals[:m], 0, None).sum())
    out = [float(np.trace(q.T @ cov @ q)) / best if best > 0 else np.nan for q in _row_basis(W)]
    return np.asarray(out).reshape(W.shape[:-2])


def principal_angles(W: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Principal angles (degrees, ascending) between W's row space and the top-m PCs.

    For one W (m, d): (m,) (fewer if W has lower rank). With degenerate
    eigenvalues the top-m PCs are not unique; prefer `pca_overlap` then.
    """
    _, vecs = pca(cov)
    (q,) = _row_basis(np.asarray(W)[None])
    u = vecs[:, : q.shape[1]]
    s = np.linalg.svd(u.T @ q, compute_uv=False)
    return np.degrees(np.arccos(np.clip(s, -1.0, 1.0)))  # s descending: angles ascending


def linear_r2(W: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """R² of the best linear decoder (with intercept) of each x_i from h = Wx: (..., d).

    From the covariance alone: R²_i = (ΣWᵀ(WΣWᵀ)⁺WΣ)_ii / Σ_ii. NaN for a
    feature that never varies.
    """
    W = np.asarray(W, dtype=float)
    cov = np.asarray(cov, dtype=float)
    cw = W @ cov  # (..., m, d) = Cov(h, x)
    chh = cw @ np.swapaxes(W, -1, -2)  # (..., m, m) = Cov(h)
    explained = (cw * (np.linalg.pinv(chh, hermitian=True) @ cw)).sum(-2)  # (..., d)
    var = np.diag(cov)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 1e-12, explained / np.where(var > 1e-12, var, 1.0), np.nan)


def model_r2(W: np.ndarray, b: np.ndarray, X: np.ndarray, relu: bool) -> np.ndarray:
    """R² of the model's own reconstruction σ(WᵀWx + b) of each feature: (..., d).

    1 − E(x_i − x̂_i)² / Var(x_i) over the samples X (N, d); NaN where Var = 0.
    """
    W = np.asarray(W, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    z = X @ np.swapaxes(gram(W), -1, -2) + b[..., None, :]  # (..., N, d)
    x_hat = np.maximum(z, 0.0) if relu else z
    mse = ((x_hat - X) ** 2).mean(-2)
    var = X.var(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 1e-12, 1.0 - mse / np.where(var > 1e-12, var, 1.0), np.nan)


def superposition_kinds(
    r2_lin: np.ndarray, r2_model: np.ndarray, threshold: float = R2_THRESHOLD
) -> np.ndarray:
    """Per feature: "linear", "nonlinear" or "absent" (see the module docstring)."""
    lin = np.nan_to_num(np.asarray(r2_lin), nan=-np.inf) >= threshold
    non = np.nan_to_num(np.asarray(r2_model), nan=-np.inf) >= threshold
    return np.where(lin, "linear", np.where(non, "nonlinear", "absent"))


def column_cosines(W: np.ndarray) -> np.ndarray:
    """cos(W_i, W_j) between columns: (..., d, d); NaN for unrepresented columns."""
    W = np.asarray(W, dtype=float)
    norms = np.linalg.norm(W, axis=-2)  # (..., d)
    alive = norms > DEAD_NORM * norms.max(axis=-1, keepdims=True)
    safe = np.where(alive, norms, 1.0)
    cos = gram(W) / (safe[..., :, None] * safe[..., None, :])
    dead = ~(alive[..., :, None] & alive[..., None, :])
    return np.where(dead, np.nan, np.clip(cos, -1.0, 1.0))


def _others(cos: np.ndarray) -> np.ndarray:
    d = cos.shape[-1]
    return np.where(np.eye(d, dtype=bool), np.nan, cos)


def antipodal_fraction(W: np.ndarray, threshold: float = ANTIPODAL_COS) -> np.ndarray:
    """Fraction of features whose most anti-aligned column has cos < threshold: (...,)."""
    cos = _others(column_cosines(W))
    lowest = np.min(np.nan_to_num(cos, nan=np.inf), axis=-1)  # (..., d)
    return (lowest < threshold).mean(-1)


def paired_fraction(
    W: np.ndarray, threshold: float = ANTIPODAL_COS, isolated: float = ISOLATED_COS
) -> np.ndarray:
    """Fraction of features in an isolated antipodal pair: (...,).

    Feature i counts when its most anti-aligned column j has cos < threshold
    and every other represented column k ∉ {i, j} has |cos(W_i, W_k)| < isolated.
    """
    cos = _others(column_cosines(W))
    filled = np.nan_to_num(cos, nan=np.inf)
    j = np.argmin(filled, axis=-1)  # (..., d) the partner
    lowest = np.take_along_axis(filled, j[..., None], -1)[..., 0]
    rest = np.abs(np.nan_to_num(cos, nan=0.0))
    np.put_along_axis(rest, j[..., None], 0.0, axis=-1)
    return ((lowest < threshold) & (rest.max(-1) < isolated)).mean(-1)


def opposite_partner_fraction(W: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Fraction of features whose most anti-aligned column is the one opposite on the circle.

    "Opposite": the angle difference is within half a feature spacing of π.
    1 for the circle's antipodal pairs; ≈ 1/(d−1) when the pairing ignores
    the angle (the i.i.d. control): structure against feature index. (...,).
    """
    cos = _others(column_cosines(W))
    angle = np.asarray(angle, dtype=float)
    d = angle.shape[0]
    j = np.argmin(np.nan_to_num(cos, nan=np.inf), axis=-1)  # (..., d)
    alive = np.isfinite(cos).any(-1)
    diff = np.abs(np.angle(np.exp(1j * (angle[j] - angle[np.arange(d)]))))  # in [0, π]
    return ((np.abs(diff - np.pi) <= np.pi / d + 1e-9) & alive).mean(-1)


def circle_score(W: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Pearson r over pairs i < j of cos(W_i, W_j) and cos(φ_i − φ_j): (...,)."""
    cos = column_cosines(W)
    angle = np.asarray(angle, dtype=float)
    d = angle.shape[0]
    iu = np.triu_indices(d, 1)
    target = np.cos(angle[:, None] - angle[None, :])[iu]
    vals = cos[..., iu[0], iu[1]]  # (..., pairs)
    flat = vals.reshape(-1, vals.shape[-1])
    out = []
    for v in flat:
        ok = np.isfinite(v)
        if ok.sum() < 3 or np.std(v[ok]) < 1e-9 or np.std(target[ok]) < 1e-9:
            out.append(np.nan)
        else:
            out.append(float(np.corrcoef(v[ok], target[ok])[0, 1]))
    return np.asarray(out).reshape(vals.shape[:-1])


def summary(
    W: np.ndarray,
    b: np.ndarray,
    cov: np.ndarray,
    angle: np.ndarray,
    r2_model: np.ndarray | None = None,
) -> dict[str, float]:
    """The claims' numbers for one model (W (m, d), b (d,))."""
    r2_lin = linear_r2(W, cov)
    out = {
        "pca_overlap": float(pca_overlap(W, cov)),
        "antipodal_fraction": float(antipodal_fraction(W)),
        "paired_fraction": float(paired_fraction(W)),
        "circle_score": float(circle_score(W, angle)),
        "opposite_partner_fraction": float(opposite_partner_fraction(W, angle)),
        "mean_r2_linear": float(np.nanmean(r2_lin)),
        "w_norm_sq": float(np.sum(np.asarray(W, dtype=float) ** 2)),  # ‖W‖_F²
        "mean_bias": float(np.mean(b)),
    }
    if r2_model is not None:
        kinds = superposition_kinds(r2_lin, r2_model)
        out["mean_r2_model"] = float(np.nanmean(r2_model))
        out["n_linear"] = int((kinds == "linear").sum())
        out["n_nonlinear"] = int((kinds == "nonlinear").sum())
        out["n_absent"] = int((kinds == "absent").sum())
    return out
