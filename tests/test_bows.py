"""The correlated-features lab without long training: config, generators, model, analysis,
run files, figures and the command line (tempsup.bows, science.md §2).

Statistical checks use enough samples that the tolerances are ≥ 5 standard
errors; every generator is seeded, so the numbers are fixed anyway.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from tempsup.bows import analysis, data
from tempsup.bows import figures as bfig
from tempsup.bows.config import DEFAULTS, FIELDS, BowsConfig
from tempsup.bows.model import BatchedTiedAE
from tempsup.bows.run import (
    ARRAYS,
    STATIC_ARRAYS,
    BowsRun,
    stream_frames,
    sweep_configs,
    train_runs,
)
from tempsup.bows.trainer import train
from tempsup.cli import main
from tempsup.errors import TempsupError

# The default config's key, pinned on purpose (as in test_config.py): it keys
# the job cache and share links. If an edit changes it, bump
# tempsup.bows.config.SCHEMA_VERSION deliberately and update this constant.
DEFAULT_KEY = "1ed880afe5d89b84"

# A small run: 4 epochs of 512 samples, 8 steps, frames every 2 steps.
TINY = dict(n_samples=512, epochs=4, snapshot_every=2, seeds=2)


# ---- config --------------------------------------------------------------------------------


def test_defaults_are_the_authors_setting():
    c = DEFAULTS
    assert (c.structure, c.n_features, c.sharpness, c.base_log_odds) == ("circular", 12, 10, 0)
    assert (c.model, c.weight_decay, c.lr, c.batch, c.grad_clip, c.epochs) == (
        "relu", 1.0, 0.01, 256, 1.0, 200,
    )  # fmt: skip
    # tests/test_lab_recipe.py checks the rest of the recipe (data, split, schedule, loss)
    assert c.steps == 200 * math.ceil(8000 / 256) == 6400
    assert c.n_snapshots == 101
    assert BowsConfig.kind == "bows" and c.kind == "bows"
    assert "kind" not in FIELDS  # a class attribute, not a field


def test_default_key_is_pinned():
    assert DEFAULTS.key == DEFAULT_KEY


OTHER_VALUES = {
    "structure": "iid",
    "n_features": 10,
    "sharpness": 5.0,
    "base_log_odds": -2.0,
    "noise": 0.1,
    "values": "uniform",
    "min_lr": 0.0,
    "n_heldout": 0,
    "reduction": "sum",
    "init": "xavier",
    "m": 3,
    "model": "linear",
    "weight_decay": 0.0,
    "lr": 0.02,
    "schedule": "constant",
    "epochs": 100,
    "batch": 128,
    "grad_clip": 0.0,
    "n_samples": 1200,
    "seeds": 2,
    "seed": 1,
    "snapshot_every": 10,
    "vocab": 500,
    "window": 10,
}


@pytest.mark.parametrize("name", sorted(OTHER_VALUES))
def test_every_field_changes_the_key(name):
    assert DEFAULTS.replace(**{name: OTHER_VALUES[name]}).key != DEFAULTS.key


def test_the_text_changes_the_key():
    a = BowsConfig(structure="text", text_sha256=data.text_sha256("a text"))
    assert a.key != a.replace(text_sha256=data.text_sha256("another text")).key


def test_key_is_tagged_with_the_kind():
    # the same fields hashed without the tag give another key: never a collision with RNN runs
    import hashlib

    from tempsup.bows.config import SCHEMA_VERSION

    plain = json.dumps({"v": SCHEMA_VERSION, **DEFAULTS.to_dict()}, sort_keys=True,
                       separators=(",", ":"))  # fmt: skip
    assert hashlib.sha256(plain.encode()).hexdigest()[:16] != DEFAULTS.key


def test_json_round_trip_and_the_kind_tag():
    c = BowsConfig(structure="figure8", m=3, noise=0.2)
    assert BowsConfig.from_json(c.to_json()) == c
    tagged = json.dumps({"kind": "bows", **c.to_dict()})
    assert BowsConfig.from_json(tagged) == c
    with pytest.raises(TempsupError, match="kind"):
        BowsConfig.from_json(json.dumps({"kind": "rnn", **c.to_dict()}))
    with pytest.raises(TempsupError, match="unknown field.*hidden"):
        BowsConfig.from_dict({"hidden": 2})
    with pytest.raises(TempsupError, match="JSON"):
        BowsConfig.from_json("{not json")


@pytest.mark.parametrize(
    ("changes", "pattern"),
    [
        ({"structure": "square"}, r"structure: expected one of circular, figure8, sphere"),
        ({"model": "gelu"}, r"model: expected one of linear, relu"),
        ({"values": "gauss"}, r"values: expected one of binary, uniform"),
        ({"n_features": 1}, r"n_features: expected an integer in \[2, 10000\], got 1"),
        ({"structure": "sphere", "n_features": 3}, r"n_features: expected an integer in \[4,"),
        ({"m": 13}, r"m: expected an integer in \[1, 12\], got 13 \(the bottleneck"),
        ({"m": 0}, r"m: expected an integer in \[1, 12\], got 0"),
        ({"m": 2.0}, r"m: expected an integer"),
        ({"sharpness": -1.0}, r"sharpness: expected a number in \[0, 100\]"),
        ({"noise": float("nan")}, r"noise: expected a number in \[0, 6.28"),
        ({"lr": 0.0}, r"lr: expected a number in \(0, 10\], got 0.0"),
        ({"weight_decay": -1.0}, r"weight_decay: expected a number in \[0, 100\]"),
        ({"grad_clip": -0.5}, r"grad_clip: expected a number in \[0, 1e\+06\]"),
        ({"batch": 0}, r"batch: expected an integer in \[1, 65536\]"),
        ({"epochs": 0}, r"epochs: expected an integer in \[1, 100000\]"),
        ({"seeds": 0}, r"seeds: expected an integer in \[1, 256\]"),
        ({"snapshot_every": 7000}, r"snapshot_every: expected an integer in \[1, 6400\]"),
        ({"structure": "text"}, r"text_sha256: structure 'text' needs the sha256"),
        ({"structure": "text", "text_sha256": "/etc/passwd"}, r"got '/etc/passwd'"),
        ({"structure": "text", "text_sha256": "A" * 64}, r"\(64 hex digits\)"),
        ({"text_sha256": "a" * 64}, r"text_sha256: only structure 'text' reads a text"),
        ({"n_features": 10000, "m": 1000, "seeds": 64}, r"run too (large|long)"),
    ],
)
def test_validation_names_field_value_and_range(changes, pattern):
    with pytest.raises(TempsupError, match=pattern):
        DEFAULTS.replace(**changes)


def test_text_config_uses_the_vocabulary_as_d():
    c = BowsConfig(structure="text", text_sha256="0" * 64, vocab=50, m=40)
    assert c.d == 50
    with pytest.raises(TempsupError, match=r"m: expected an integer in \[1, 50\]"):
        c.replace(m=51)


# ---- generators ----------------------------------------------------------------------------


def binary(**kw) -> BowsConfig:
    """Binary values, every generated sample kept in order (sample n at latent n mod d)."""
    return BowsConfig(**{"values": "binary", "n_heldout": 0, **kw})


@pytest.mark.parametrize(("sharpness", "base"), [(10.0, 0.0), (4.0, -2.0), (10.0, -5.0)])
def test_circular_activation_rates_match_the_sigmoid(sharpness, base):
    cfg = binary(n_samples=24_000, sharpness=sharpness, base_log_odds=base)
    X = data.synthetic(cfg).X
    d = cfg.n_features
    latent = np.arange(len(X)) % d
    phi = data.circle_angles(d)
    for k in range(d):
        rows = X[latent == k]
        expect = data.sigmoid(sharpness * np.cos(phi[k] - phi) + base)  # (d,)
        se = np.sqrt(np.maximum(expect * (1 - expect), 1e-4) / len(rows))
        assert np.all(np.abs(rows.mean(0) - expect) < 5 * se + 1e-3), (k, rows.mean(0), expect)


def test_binary_and_uniform_values():
    b = data.synthetic(binary(n_samples=12_000)).X
    u = data.synthetic(binary(n_samples=12_000, values="uniform")).X
    assert set(np.unique(b)) <= {0.0, 1.0}
    assert u.min() >= 0 and u.max() <= 1 and len(np.unique(u)) > 1000
    on = u > 0
    assert abs(u[on].mean() - 0.5) < 0.01  # uniform[0, 1] when on
    assert abs(on.mean() - b.mean()) < 0.01  # the same activation law


def test_circular_covariance_depends_only_on_angular_distance():
    cfg = binary(n_samples=48_000)
    _, cov = data.statistics(data.synthetic(cfg).X)
    d = cfg.n_features
    i, j = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
    dist = np.minimum((i - j) % d, (j - i) % d)  # steps of 30° around the circle
    profile = []
    for k in range(d // 2 + 1):
        vals = cov[dist == k]
        assert vals.std() < 0.01, (k, vals)  # circulant: one value per distance
        profile.append(vals.mean())
    assert np.all(np.diff(profile) < 0), profile  # co-activation falls with distance
    assert profile[0] > 0.2 and profile[-1] < -0.2  # opposite features exclude each other
    exact = data.expected_circular_covariance(cfg)
    assert np.abs(cov - exact).max() < 0.01


def test_circular_covariance_top_components_are_the_circle():
    cfg = binary(n_samples=24_000)
    _, cov = data.statistics(data.synthetic(cfg).X)
    vals, vecs = analysis.pca(cov)
    assert vals[0] / vals[1] < 1.05 and vals[1] / vals[2] > 5  # a degenerate cos/sin pair
    phi = data.circle_angles(cfg.n_features)
    circle = np.stack([np.cos(phi), np.sin(phi)], 1) / np.sqrt(cfg.n_features / 2)
    captured = np.linalg.norm(vecs[:, :2].T @ circle) ** 2 / 2
    assert captured > 0.99


def test_iid_control_matches_the_mean_activation_and_has_no_correlations():
    n = 48_000
    for noise in (0.0, 0.6):
        circ = data.synthetic(binary(n_samples=n, noise=noise)).X
        iid = data.synthetic(binary(n_samples=n, noise=noise, structure="iid")).X
        p_bar = data.iid_probabilities(binary(noise=noise))
        se = np.sqrt(p_bar * (1 - p_bar) / n)
        assert np.all(np.abs(iid.mean(0) - p_bar) < 5 * se)
        assert np.all(np.abs(circ.mean(0) - p_bar) < 5 * se + 2e-3)
        _, cov = data.statistics(iid)
        off = cov[~np.eye(len(cov), dtype=bool)]
        assert np.abs(off).max() < 0.01  # ~diagonal (sampling error ≈ 0.0023)
        _, circ_cov = data.statistics(circ)
        assert np.abs(circ_cov[~np.eye(len(cov), dtype=bool)]).max() > 0.15


def test_iid_uses_the_circle_base_rate_also_when_sparse():
    cfg = binary(base_log_odds=-6.0, structure="iid", n_samples=48_000)
    X = data.synthetic(cfg).X
    assert abs(X.mean() - data.iid_probabilities(cfg).mean()) < 0.005
    assert X.mean() < 0.3  # sparser than base 0 (0.5): ≈ 0.28


def test_noise_blurs_the_latent():
    sharp = data.synthetic(binary(n_samples=24_000)).X
    blurred = data.synthetic(binary(n_samples=24_000, noise=1.0)).X
    latent = np.arange(24_000) % 12
    # P(the latent's own feature is on) drops from ≈ 1 with a noisy angle
    own_sharp = sharp[np.arange(24_000), latent].mean()
    own_blur = blurred[np.arange(24_000), latent].mean()
    assert own_sharp > 0.99 and own_blur < 0.9


def test_figure8_shape():
    cfg = binary(structure="figure8", n_samples=24_000)
    ds = data.synthetic(cfg)
    pos = ds.positions
    assert pos.shape == (12, 2)
    assert np.allclose(pos, data.figure8_curve(data.figure8_parameters(12)))
    # two loops: features 0-5 at x > 0, 6-11 at x < 0
    assert np.all(pos[:6, 0] > 0) and np.all(pos[6:, 0] < 0)
    _, cov = data.statistics(ds.X)
    iu = np.triu_indices(12, 1)
    dist = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    assert np.corrcoef(cov[iu], -dist[iu])[0, 1] > 0.8  # co-activation follows distance
    # features beside the crossing co-activate across the loops; far ones on one loop do not
    assert cov[0, 6] > 0.03 and cov[5, 11] > 0.03
    assert cov[0, 3] < -0.01


def test_sphere_shape():
    cfg = binary(structure="sphere", n_features=20, n_samples=40_000)
    ds = data.synthetic(cfg)
    pts = ds.positions
    assert pts.shape == (20, 3) and np.allclose(np.linalg.norm(pts, axis=1), 1)
    assert abs(pts.mean(0)).max() < 0.1  # spread over the whole sphere
    _, cov = data.statistics(ds.X)
    vals, vecs = analysis.pca(cov)
    assert vals[2] > 3 * vals[3]  # three dominant components: the sphere's x, y, z
    assert vals[0] / vals[2] < 1.3
    proj = vecs[:, :3] @ vecs[:, :3].T @ pts
    assert 1 - ((pts - proj) ** 2).sum() / (pts**2).sum() > 0.97


def test_angles_and_labels():
    for structure in ("circular", "figure8", "sphere", "iid"):
        cfg = BowsConfig(structure=structure, n_samples=24)
        ds = data.synthetic(cfg)
        assert ds.X.shape == (24, 12) and ds.X.dtype == np.float32
        assert len(ds.labels) == 12 and ds.angle.shape == (12,)
        assert np.all((ds.angle >= 0) & (ds.angle < 2 * np.pi))
    assert data.synthetic(BowsConfig(n_samples=12)).labels[3] == "3: φ=90°"


def topic_corpus(n_lines: int = 600, seed: int = 0) -> tuple[str, dict[str, list[str]]]:
    """A synthetic text with topic structure: blocks of 20 lines stay on one topic."""
    topics = {
        "sea": ["ocean", "wave", "ship", "sailor", "harbour", "tide"],
        "sky": ["cloud", "rain", "storm", "wind", "thunder", "sun"],
        "farm": ["cow", "barn", "wheat", "tractor", "field", "farmer"],
    }
    rng = random.Random(seed)
    names = list(topics)
    lines = []
    for n in range(n_lines):
        topic = names[(n // 20) % 3]
        words = rng.sample(topics[topic], 3) + ["the", "and", "of"]  # stop words are dropped
        rng.shuffle(words)
        lines.append(" ".join(words).capitalize() + ".")
        if n % 7 == 0:
            lines.append("")  # blank lines do not count
    return "\n".join(lines), topics


def test_bag_of_words_of_a_generated_text():
    text, topics = topic_corpus()
    ds = data.bag_of_words(text, vocab=100, window=20)
    words = set(ds.labels)
    assert words == {w for ws in topics.values() for w in ws}  # stop words gone, all words in
    assert ds.X.shape == (30, 18)  # 600 non-empty lines / 20
    assert set(np.unique(ds.X)) <= {0.0, 1.0}
    _, cov = data.statistics(ds.X)
    idx = {w: i for i, w in enumerate(ds.labels)}
    same = [cov[idx[a], idx[b]] for ws in topics.values() for a in ws for b in ws if a < b]
    cross = [cov[idx[a], idx[b]] for a in topics["sea"] for b in topics["farm"]]
    assert min(same) > 0.1 and max(cross) < 0  # words of one topic co-occur
    # the PCA angle groups the topics: angles within a topic are closer than across
    ang = ds.angle
    spread = [np.ptp(np.unwrap(sorted(ang[[idx[w] for w in ws]]))) for ws in topics.values()]
    assert max(spread) < np.pi / 2


def test_bag_of_words_vocabulary_is_the_most_frequent_words():
    text = "alpha beta\nalpha gamma\nalpha beta delta\n"
    ds = data.bag_of_words(text, vocab=2, window=1)
    assert ds.labels == ("alpha", "beta")
    assert ds.X.tolist() == [[1, 1], [1, 0], [1, 1]]
    ds = data.bag_of_words(text, vocab=10, window=2)
    assert ds.labels == ("alpha", "beta", "delta", "gamma")  # ties alphabetical
    assert ds.X.shape == (2, 4)  # the last window is shorter


def test_text_dataset_from_a_file(tmp_path):
    text, _ = topic_corpus()
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    assert data.read_text(path) == text
    cfg = BowsConfig(structure="text", text_sha256=data.text_sha256(text), vocab=12, window=10, m=2)
    ds = data.make_dataset(cfg, text)
    assert ds.d == 12 and ds.n == 60
    with pytest.raises(TempsupError, match="m: expected at most the 18 words"):
        data.make_dataset(cfg.replace(vocab=100, m=20), text)
    with pytest.raises(TempsupError, match="text: cannot read"):
        data.read_text(tmp_path / "missing.txt")
    with pytest.raises(TempsupError, match="text: expected the text with sha256 .*, got none"):
        data.make_dataset(cfg)
    with pytest.raises(TempsupError, match="text: expected the text with sha256 .*, got one with"):
        data.make_dataset(cfg, text + "more")  # a config names its text by content
    empty = "\n\n the and of\n"
    with pytest.raises(TempsupError, match="text: expected at least 2 distinct words"):
        data.make_dataset(cfg.replace(text_sha256=data.text_sha256(empty)), empty)


# ---- model and training --------------------------------------------------------------------


def test_model_shapes_and_padding():
    model = BatchedTiedAE(d=12, ms=[2, 5], seeds=[0, 1], relu=True)
    x = torch.rand(7, 12)
    assert model(x).shape == (2, 7, 12)
    assert model.encode(x).shape == (2, 7, 5)
    state = model.state()
    assert state["W"].shape == (2, 5, 12) and np.all(state["W"][0, 2:] == 0)
    assert (model(x) >= 0).all()
    linear = BatchedTiedAE(d=12, ms=[12], seeds=[0], relu=False)
    linear.load_weights(np.eye(12)[None], np.zeros((1, 12)))
    assert torch.allclose(linear(x)[0], x)  # W = I reconstructs exactly
    with pytest.raises(TempsupError, match="m: expected bottlenecks in"):
        BatchedTiedAE(d=4, ms=[5], seeds=[0], relu=True)


def test_a_sweep_point_equals_the_same_config_trained_alone():
    base = BowsConfig(**TINY)
    together = train_runs(sweep_configs(base, [2, 4], [0.0, 1.0]))
    alone = train_runs([base.replace(m=4, weight_decay=0.0)])[0]
    assert together[1].config == alone.config
    np.testing.assert_allclose(together[1]["W"], alone["W"], atol=1e-5)
    np.testing.assert_allclose(together[1]["loss"], alone["loss"], rtol=1e-5)
    assert together[0]["W"].shape == (5, 2, 2, 12)  # (F, S, m, d)
    # weight decay acted only on its own models
    assert not np.allclose(together[1]["W"][-1], together[3]["W"][-1])


def test_sweep_rejects_configs_that_differ_elsewhere():
    with pytest.raises(TempsupError, match="sweep: every point must share 'sharpness'"):
        train_runs([BowsConfig(**TINY), BowsConfig(**TINY, sharpness=5.0)])


def per_model_grad_norms(model: BatchedTiedAE) -> np.ndarray:
    sq = model.W.grad.pow(2).sum(dim=(1, 2)) + model.b.grad.pow(2).sum(dim=1)
    return sq.sqrt().numpy()


def test_clip_scales_each_models_gradient_to_the_bound():
    from tempsup.bows.trainer import _clip_per_model

    model = BatchedTiedAE(12, [2, 2, 2], [0, 1, 2], relu=True)
    g = torch.Generator().manual_seed(0)
    model.W.grad = (
        torch.randn(model.W.shape, generator=g) * torch.tensor([5.0, 0.01, 2.0])[:, None, None]
    )
    model.b.grad = torch.randn(model.b.shape, generator=g) * torch.tensor([5.0, 0.01, 2.0])[:, None]
    raw = per_model_grad_norms(model)
    assert raw[0] > 1.0 > raw[1] and raw[2] > 1.0  # the bound binds on models 0 and 2 only
    direction = model.W.grad[0] / torch.tensor(raw[0])
    _clip_per_model(model, 1.0)
    clipped = per_model_grad_norms(model)
    np.testing.assert_allclose(clipped, [1.0, raw[1], 1.0], rtol=1e-5)
    # scaled, not bent: the direction is the same
    torch.testing.assert_close(model.W.grad[0], direction, rtol=1e-4, atol=1e-6)


def record_grad_norms(monkeypatch) -> list[np.ndarray]:
    """Per-model gradient norms as the optimizer sees them, at every step."""
    seen: list[np.ndarray] = []
    from tempsup.training.schedule import Adam

    original = Adam.step

    def spy(self, *args, **kwargs):
        W, b = self.param_groups[0]["params"]
        sq = W.grad.pow(2).sum(dim=(1, 2)) + b.grad.pow(2).sum(dim=1)
        seen.append(sq.sqrt().numpy().copy())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Adam, "step", spy)
    return seen


def test_gradient_clipping_binds_during_training(monkeypatch):
    # the tiny model's raw gradient norms are ~0.1-1: a bound of 0.02 binds at every step
    seen = record_grad_norms(monkeypatch)
    list(train(BowsConfig(**TINY, grad_clip=0.0)))
    raw = np.stack(seen)
    assert raw.shape == (8, 2) and raw.min() > 0.05, raw
    seen.clear()
    list(train(BowsConfig(**TINY, grad_clip=0.02)))
    clipped = np.stack(seen)
    np.testing.assert_allclose(clipped, 0.02, rtol=1e-4)


def test_stream_frames_can_be_cancelled_and_carry_the_statistics():
    cfg = BowsConfig(**TINY)
    stream = stream_frames(cfg)
    first = next(stream)
    second = next(stream)
    stream.close()  # cancellation: stop iterating
    assert set(STATIC_ARRAYS) <= set(first) and not set(STATIC_ARRAYS) & set(second)
    assert int(first["step"]) == 0 and int(second["step"]) == 2
    frames = list(stream_frames(cfg))
    run = BowsRun.from_frames(cfg, frames)
    assert run.n_frames == cfg.n_snapshots == 5
    batch = train_runs([cfg])[0]
    for k in ARRAYS:
        if k == "labels":
            assert run.labels == batch.labels
        else:
            np.testing.assert_allclose(run[k], batch[k], atol=1e-6)
    # without frame 0's statistics the run rebuilds them from the config
    again = BowsRun.from_frames(cfg, [{k: f[k] for k in f if k not in STATIC_ARRAYS}
                                      for f in frames])  # fmt: skip
    np.testing.assert_allclose(again["cov"], run["cov"], atol=1e-6)


# ---- analysis ------------------------------------------------------------------------------


def circle_weights(d: int = 12) -> np.ndarray:
    phi = data.circle_angles(d)
    return np.stack([np.cos(phi), np.sin(phi)])  # (2, d)


def pairs_weights(d: int = 12) -> np.ndarray:
    W = np.zeros((d // 2, d))
    for i in range(d // 2):
        W[i, i], W[i, i + d // 2] = 1.0, -1.0
    return W


def test_pca_overlap():
    cov = data.expected_circular_covariance(binary())
    _, vecs = analysis.pca(cov)
    assert analysis.pca_overlap(vecs[:, :2].T * 3.0, cov) == pytest.approx(1.0)
    assert analysis.pca_overlap(circle_weights(), cov) == pytest.approx(1.0, abs=1e-6)
    low = vecs[:, -2:].T
    assert analysis.pca_overlap(low, cov) < 0.1
    stacked = np.stack([circle_weights(), low])  # leading axes are kept
    assert analysis.pca_overlap(stacked, cov).shape == (2,)
    assert np.allclose(analysis.principal_angles(vecs[:, :2].T, cov), 0, atol=1e-4)


def test_linear_r2_equals_least_squares_on_samples():
    X = data.synthetic(BowsConfig(n_samples=6000)).X.astype(float)
    _, cov = data.statistics(X)
    W = np.random.default_rng(0).standard_normal((3, 12))
    H = np.c_[X @ W.T, np.ones(len(X))]
    coef, *_ = np.linalg.lstsq(H, X, rcond=None)
    r2 = 1 - ((X - H @ coef) ** 2).mean(0) / X.var(0)
    np.testing.assert_allclose(analysis.linear_r2(W, cov), r2, atol=1e-8)


def test_model_r2_and_superposition_kinds():
    X = data.synthetic(BowsConfig(n_samples=2000)).X
    assert np.allclose(analysis.model_r2(np.eye(12), np.zeros(12), X, relu=True), 1.0)
    kinds = analysis.superposition_kinds(np.array([0.9, 0.2, 0.1]), np.array([0.9, 0.8, 0.1]))
    assert kinds.tolist() == ["linear", "nonlinear", "absent"]


def test_pair_and_circle_measures_tell_the_geometries_apart():
    phi = data.circle_angles(12)
    circle, pairs = circle_weights(), pairs_weights()
    # the circle has antipodes too, but they are not isolated
    assert analysis.antipodal_fraction(circle) == 1.0
    assert analysis.paired_fraction(circle) == 0.0
    assert analysis.paired_fraction(pairs) == 1.0
    assert analysis.circle_score(circle, phi) == pytest.approx(1.0)
    assert analysis.opposite_partner_fraction(pairs, phi) == 1.0
    shuffled = circle[:, np.random.default_rng(1).permutation(12)]
    assert abs(analysis.circle_score(shuffled, phi)) < 0.5
    # an unrepresented feature is never paired
    dead = pairs.copy()
    dead[:, 0] = 0.0
    assert analysis.paired_fraction(dead) == pytest.approx(10 / 12)
    assert np.isnan(analysis.column_cosines(dead)[0, 1])


# ---- run files -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs() -> list[BowsRun]:
    return train_runs(sweep_configs(BowsConfig(**TINY), [1, 2, 3], [0.0, 6.0]))


@pytest.fixture(scope="module")
def text_run(tmp_path_factory) -> BowsRun:
    text, _ = topic_corpus()
    path = tmp_path_factory.mktemp("text") / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    digest = data.text_sha256(path.read_text(encoding="utf-8"))
    cfg = BowsConfig(structure="text", text_sha256=digest, vocab=18, window=5, m=3, **TINY)
    return train_runs([cfg], text=text)[0]


def test_run_file_round_trip(runs, tmp_path):
    run = runs[2]
    back = BowsRun.from_bytes(run.to_bytes())
    assert back.config == run.config
    for k in ARRAYS:
        assert np.array_equal(back[k], run[k]), k
    path = run.save(tmp_path / "sub" / "r.npz")
    assert BowsRun.load(path).summary() == run.summary()
    with np.load(path, allow_pickle=False) as npz:  # plain numpy reads it, no pickle
        assert json.loads(str(npz["config"]))["kind"] == "bows"
        assert npz["W"].shape == (5, 2, 3, 12)
        assert int(npz["best"]) == run.best


def test_text_run_keeps_its_words(text_run, tmp_path):
    back = BowsRun.load(text_run.save(tmp_path / "t.npz"))
    assert back.labels == text_run.labels and "ocean" in back.labels
    assert back.d == 18


def test_damaged_run_files_are_refused(runs, tmp_path):
    refused = r"not a correlated-features \(bows\) run file: expected a .npz archive"
    with pytest.raises(TempsupError, match=refused):
        BowsRun.from_bytes(b"not a zip")
    arrays = dict(runs[0].arrays)
    import io

    buf = io.BytesIO()
    np.savez(buf, **{k: v for k, v in arrays.items() if k != "cov"}, config=np.asarray("{}"))
    with pytest.raises(TempsupError, match="missing cov"):
        BowsRun.from_bytes(buf.getvalue())
    buf = io.BytesIO()
    bad = {**arrays, "W": arrays["W"][:, :, :, :5]}
    np.savez(buf, **bad, config=np.asarray(runs[0].config.to_json()))
    with pytest.raises(TempsupError, match=r"W has shape"):
        BowsRun.from_bytes(buf.getvalue())
    with pytest.raises(TempsupError, match="cannot read run file"):
        BowsRun.load(tmp_path / "nope.npz")


def test_summary_numbers(runs):
    s = runs[1].summary()
    for k in ("pca_overlap", "paired_fraction", "circle_score", "mean_r2_linear", "loss"):
        assert isinstance(s[k], float) and math.isfinite(s[k]), k
    assert s["n_linear"] + s["n_nonlinear"] + s["n_absent"] == 12
    assert s["m"] == 2 and s["weight_decay"] == 0.0


# ---- figures -------------------------------------------------------------------------------


@pytest.mark.parametrize("panel", bfig.PANELS)
def test_panels_follow_the_figure_contract(runs, panel):
    for run in runs[:3]:  # m = 1, 2, 3
        for frame in (0, -1):
            traces = bfig.PANEL_SET.frame_traces(panel, run, None, frame)
            layout = bfig.PANEL_SET.panel_layout(panel, run)
            fig = bfig.PANEL_SET.panel_figure(panel, run, None, frame)
            assert fig == go.Figure({"data": traces, "layout": layout})
            json.dumps(traces)  # plain JSON, no numpy
            json.dumps(layout)
            moving = bfig.PANEL_SET.moving_traces(panel, run)
            assert moving and max(moving) < len(traces)
        assert len(bfig.PANEL_SET.all_frame_traces(panel, run, 0, start=1)) == run.n_frames - 1


def test_matrices_share_one_colour_scale(runs):
    traces = bfig.PANEL_SET.frame_traces("matrices", runs[1])
    assert [t["type"] for t in traces] == ["heatmap", "heatmap"]
    assert {t["coloraxis"] for t in traces} == {"coloraxis"}
    layout = bfig.PANEL_SET.panel_layout("matrices", runs[1])
    assert layout["coloraxis"]["cmin"] == -1 and layout["coloraxis"]["cmax"] == 1
    assert np.nanmax(np.abs(np.array(traces[0]["z"], dtype=float))) == pytest.approx(1.0)


def test_columns_are_coloured_by_angle_with_labels(runs):
    run = runs[1]  # m = 2: the bottleneck itself
    spokes, points, text = bfig.PANEL_SET.frame_traces("columns", run)
    W = run.weights()["W"]
    np.testing.assert_allclose(points["x"], W[0], rtol=1e-3, atol=1e-4)
    assert points["marker"]["colorscale"] and points["marker"]["cmax"] == 360
    assert points["text"][:3] == ["0", "1", "2"]
    assert "PCA overlap" in text["text"][0]
    # m = 3: a fixed projection (the final frame's top-2 PCs), m = 1: a line
    xy3 = bfig.PANEL_SET.frame_traces("columns", runs[2], None, -1)[1]
    assert len(xy3["x"]) == 12
    assert set(bfig.PANEL_SET.frame_traces("columns", runs[0])[1]["y"]) == {0.0}


def test_r2_panel_has_the_threshold_line(runs):
    layout = bfig.PANEL_SET.panel_layout("r2", runs[1])
    (line,) = layout["shapes"]
    assert line["y0"] == line["y1"] == analysis.R2_THRESHOLD
    bars, diamonds, counts = bfig.PANEL_SET.frame_traces("r2", runs[1])
    assert bars["type"] == "bar" and len(bars["y"]) == 12
    assert "linear superposition" in counts["text"][0]


def test_text_run_figures_use_words(text_run):
    traces = bfig.PANEL_SET.frame_traces("columns", text_run)
    assert "ocean" in traces[1]["text"]
    layout = bfig.PANEL_SET.panel_layout("matrices", text_run)
    assert "ocean" in layout["xaxis"]["ticktext"]


def test_animation_and_export(runs):
    fig = bfig.animation_figure(runs[2])
    assert len(fig.frames) == runs[2].n_frames
    assert len(fig.layout.sliders[0].steps) == runs[2].n_frames
    page = bfig.export_html(runs[2], link="http://example/bows?k=1")
    assert "<html" in page and runs[2].config.key in page and "plotly" in page.lower()
    assert 'id="tempsup-config"' in page and "http://example/bows?k=1" in page


def test_sweep_figure(runs):
    fig = bfig.sweep_figure(runs)
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    lines = [t for t in fig.data if t.type == "scatter"]
    assert len(heatmaps) == 6  # 2 weight decays x 3 bottlenecks
    assert len(lines) == 2 * 3  # three measures per weight decay
    assert list(lines[0].x) == [1, 2, 3]
    assert "sweep" in bfig.export_sweep_html(runs)


def test_figure_arguments_are_checked(runs):
    with pytest.raises(TempsupError, match="panel: expected one of matrices"):
        bfig.PANEL_SET.panel_figure("eigen", runs[0])
    with pytest.raises(TempsupError, match=r"seed: expected an integer in \[0, 1\]"):
        bfig.PANEL_SET.panel_figure("loss", runs[0], seed=5)
    with pytest.raises(TempsupError, match="frame: expected"):
        bfig.PANEL_SET.frame_traces("loss", runs[0], frame=99)
    with pytest.raises(TempsupError, match="sweep figure: expected at least one run"):
        bfig.sweep_figure([])


# ---- command line --------------------------------------------------------------------------


def test_cli_train_and_sweep(tmp_path, capsys):
    small = ["--n-samples", "512", "--epochs", "2", "--snapshot-every", "2", "--seeds", "2"]
    out = tmp_path / "run.npz"
    html = tmp_path / "run.html"
    code = main(["bows", "train", *small, "--m", "3", "--structure", "figure8",
                 "--out", str(out), "--html", str(html), "--json", "--quiet"])  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["m"] == 3 and summary["structure"] == "figure8" and out.exists()
    assert BowsRun.load(out).config.structure == "figure8" and html.exists()
    code = main(["bows", "sweep", *small, "--m", "2,3", "--weight-decay", "0,1",
                 "--out-dir", str(tmp_path / "sw"), "--quiet"])  # fmt: skip
    assert code == 0
    lines = (tmp_path / "sw" / "sweep.csv").read_text().splitlines()
    assert lines[0].startswith("structure,model,m,weight_decay,key")
    assert len(lines) == 5
    assert len(list((tmp_path / "sw").glob("*.npz"))) == 4


def test_cli_trains_a_text_file_named_by_its_content(tmp_path, capsys):
    text, _ = topic_corpus()
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    small = ["--n-samples", "64", "--epochs", "1", "--snapshot-every", "1", "--seeds", "1"]
    out = tmp_path / "text.npz"
    text_flags = ["--structure", "text", "--text", str(path), "--vocab", "12", "--window", "5"]
    code = main(["bows", "train", *small, *text_flags, "--m", "2", "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    run = BowsRun.load(out)
    assert run.config.text_sha256 == data.text_sha256(text) and "ocean" in run.labels
    assert main(["bows", "train", "--structure", "text", "--text", str(tmp_path / "no.txt")]) == 2
    assert "text: cannot read" in capsys.readouterr().err


def test_cli_errors_are_one_line(capsys):
    assert main(["bows", "train", "--m", "13", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "tempsup: error: m: expected an integer in [1, 12], got 13 " \
        "(the bottleneck is at most the 12 features)"  # fmt: skip


def test_every_config_field_has_a_flag():
    from tempsup.cli import BOWS_FLAG_HELP

    assert set(BOWS_FLAG_HELP) == {f.name for f in dataclasses.fields(BowsConfig)}


# ---- the job queue ---------------------------------------------------------------------------


def test_bows_job_kind_trains_through_the_queue(tmp_path):
    from tempsup.bows.run import FRAME_ARRAYS
    from tempsup.jobs import JobQueue, kinds
    from tempsup.jobs.kinds import get_kind, kind_of
    from tempsup.jobs.record import JobState
    from tempsup.jobs.worker import Worker

    assert kinds.BOWS_FRAME_ARRAYS == FRAME_ARRAYS
    assert get_kind("bows") is kinds.BOWS and kind_of(BowsConfig()) is kinds.BOWS
    cfg = BowsConfig(**TINY)
    queue = JobQueue(tmp_path / "jobs")
    assert queue.submit(cfg).key == cfg.key
    Worker(tmp_path / "jobs").run(once=True)
    assert queue.status(cfg.key).state == JobState.DONE
    frames = queue.frames(cfg.key, 0)
    assert len(frames) == cfg.n_snapshots and set(STATIC_ARRAYS) <= set(frames[0])
    run = queue.result(cfg.key)
    assert isinstance(run, BowsRun) and run.config == cfg
    expect = train_runs([cfg])[0]
    np.testing.assert_allclose(run["W"], expect["W"], atol=1e-6)
    assert len(queue.frames(cfg.key, 3)) == cfg.n_snapshots - 3


def test_reading_bows_runs_and_jobs_needs_no_torch():
    import subprocess
    import sys

    code = (
        "import sys, tempsup.jobs.kinds, tempsup.bows.run, tempsup.bows.analysis; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
