"""Analysis of trained tied autoencoders: covariance, WᵀW, PCA, R², and the paper's claims.

Pure numpy functions of weights and data statistics (science.md §2); models
and figures do not compute geometry themselves. Weights may carry any leading
axes (frames, seeds): W is (..., m, d), b is (..., d).

Measures for the claims:

(a) PCA circle at small m — `pca_correlation`: the Pearson correlation, over
    all d² entries, of WᵀW with the top-m PCA projection U_m U_mᵀ (the linear
    autoencoder's optimum, science.md §2). Eigenvalues that (nearly) tie
    across the cut, like the circle's cos/sin pairs, leave U_m undefined
    inside their eigenspace; there the m-subspace closest to W's row space is
    taken (`top_projection`). `pca_overlap`: the fraction of the data variance
    that W's row space captures, relative to the best m-dimensional subspace
    (the top m principal components): tr(QᵀΣQ) / Σ_{k≤m} λ_k with Q an
    orthonormal basis of W's rows. 1 exactly when the rows span the top-m PCs;
    unlike a comparison of eigenvectors it is well defined when eigenvalues
    are degenerate (the circle's cos/sin pairs are). `principal_angles` gives
    the angles themselves.
(b) antipodal pairs at larger m — `opposite_antipodal_fraction`: the fraction
    of features i with cos(W_i, W_ī) < −0.8, ī the feature opposite on the
    circle (angle nearest φ_i + π). The circle's PCA solution scores 1 on it
    too (its columns at φ and φ + π are antipodal), so it says "antipodal
    pairs" only together with a low PCA correlation or `paired_fraction`.
    `antipodal_fraction`: the fraction of
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

At that line an isolated antipodal pair is never nonlinear superposition:
if W_j = −W_i and every other column is orthogonal to W_i, h holds
‖W_i‖(x_i − x_j), and that coordinate alone decodes x_i linearly with
R² = (V_i − C)² / (V_i (V_i + V_j − 2C)) (V the variances, C the
covariance), which is (1 − ρ)/2 ≥ 1/2 for equal variances and ρ ≤ 0: the
circle's opposite features are anti-correlated, so a linear decoder keeps
R² ≥ 0.5 for every feature of the pairs. `n_nonlinear_strict` therefore also
counts the same definition at 1 − ε = STRICT_R2 = 0.9 (the model recovers the
feature to 0.9, no linear decoder does).
"""

from __future__ import annotations

import numpy as np

from tempsup.bows.data import statistics

R2_THRESHOLD = 0.5
STRICT_R2 = 0.9  # the paper's definition at ε = 0.1 (see the module docstring)
TIE_RTOL = 0.1  # eigenvalues within 10 % of the m-th one tie across the cut
ANTIPODAL_COS = -0.8  # "anti-aligned": cos(W_i, W_j) below this
ISOLATED_COS = 0.5  # a pair is isolated when every other |cos| stays below this
DEAD_NORM = 0.1  # a column shorter than this × the longest is "not represented"

__all__ = [
    "R2_THRESHOLD",
    "STRICT_R2",
    "antipodal_fraction",
    "circle_score",
    "column_cosines",
    "gram",
    "linear_r2",
    "model_r2",
    "opposite_antipodal_fraction",
    "opposite_partner_fraction",
    "paired_fraction",
    "pca",
    "pca_correlation",
    "pca_overlap",
    "principal_angles",
    "statistics",
    "summary",
    "superposition_kinds",
    "top_projection",
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


def top_projection(cov: np.ndarray, m: int, W: np.ndarray | None = None) -> np.ndarray:
    """The projection onto the top-m principal components of cov: (d, d).

    Eigenvalues within TIE_RTOL of the m-th (relative) form the cluster that
    straddles the cut; of its eigenspace E the projection keeps the
    r = m − (eigenvalues above the cluster) dimensions closest to W's row
    space (the top-r eigenvectors of P_E P_W P_E), or, without W, r/|E| of all
    of E (the average over the choices). With distinct eigenvalues it is
    U_m U_mᵀ whatever W is.
    """
    vals, vecs = pca(cov)
    d = vals.shape[0]
    m = int(min(max(m, 0), d))
    if m == 0:
        return np.zeros((d, d))
    cut = vals[m - 1]
    tie = np.abs(vals - cut) <= TIE_RTOL * max(abs(cut), 1e-30)
    above = (vals > cut) & ~tie
    U = vecs[:, above]
    P = U @ U.T
    E = vecs[:, tie]
    r = m - int(above.sum())
    if r <= 0:
        return P
    if W is None:
        return P + (r / E.shape[1]) * E @ E.T
    (q,) = _row_basis(np.asarray(W, dtype=float)[None])
    inner = E.T @ q  # (|E|, rank W): W's row space seen from inside E
    _, v = np.linalg.eigh(inner @ inner.T)
    V = E @ v[:, ::-1][:, :r]  # the r directions of E closest to W's rows
    return P + V @ V.T


def pca_correlation(W: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Pearson r over all d² entries of WᵀW and the top-m PCA projection: (...,)."""
    W = np.asarray(W, dtype=float)
    flat = W.reshape(-1, *W.shape[-2:])
    out = []
    for w in flat:
        G = gram(w).ravel()
        P = top_projection(cov, w.shape[0], w).ravel()
        ok = np.std(G) > 1e-12 and np.std(P) > 1e-12
        out.append(float(np.corrcoef(G, P)[0, 1]) if ok else np.nan)
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


def opposite_features(angle: np.ndarray) -> np.ndarray:
    """For each feature, the feature whose angle is nearest its own + π: (d,) indices."""
    angle = np.asarray(angle, dtype=float)
    diff = np.abs(np.angle(np.exp(1j * (angle[None, :] - angle[:, None] - np.pi))))
    return np.argmin(diff, axis=1)


def opposite_antipodal_fraction(
    W: np.ndarray, angle: np.ndarray, threshold: float = ANTIPODAL_COS
) -> np.ndarray:
    """Fraction of features with cos(W_i, W_ī) < threshold, ī opposite on the circle: (...,).

    An unrepresented column (`column_cosines`) never counts.
    """
    cos = column_cosines(W)
    opp = opposite_features(angle)
    d = opp.shape[0]
    vals = cos[..., np.arange(d), opp]  # (..., d)
    return (np.nan_to_num(vals, nan=np.inf) < threshold).mean(-1)


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
        "pca_correlation": float(pca_correlation(W, cov)),
        "pca_overlap": float(pca_overlap(W, cov)),
        "opposite_antipodal_fraction": float(opposite_antipodal_fraction(W, angle)),
        "antipodal_fraction": float(antipodal_fraction(W)),
        "paired_fraction": float(paired_fraction(W)),
        "circle_score": float(circle_score(W, angle)),
        "opposite_partner_fraction": float(opposite_partner_fraction(W, angle)),
        "mean_r2_linear": float(np.nanmean(r2_lin)),
        "min_r2_linear": float(np.nanmin(r2_lin)) if np.isfinite(r2_lin).any() else np.nan,
        "w_norm_sq": float(np.sum(np.asarray(W, dtype=float) ** 2)),  # ‖W‖_F²
        "mean_bias": float(np.mean(b)),
    }
    if r2_model is not None:
        kinds = superposition_kinds(r2_lin, r2_model)
        out["mean_r2_model"] = float(np.nanmean(r2_model))
        out["n_linear"] = int((kinds == "linear").sum())
        out["n_nonlinear"] = int((kinds == "nonlinear").sum())
        out["n_absent"] = int((kinds == "absent").sum())
        strict = superposition_kinds(r2_lin, r2_model, STRICT_R2)
        out["n_nonlinear_strict"] = int((strict == "nonlinear").sum())
    return out
