"""The correlations lab follows the authors' recipe, and its grid says what its runs show.

The recipe is that of the authors' public code (LucasPrietoAl/correlations-feature-geometry,
`synthetic_bows/train_autoencoders.py`): binary features, 10,000 samples of which a random
8,000 train, AdamW lr 1e-2 with CosineAnnealingLR stepped per epoch down to 1e-9, gradient
clipping 1, batch 256, 200 epochs, MSELoss, nn.Linear's init. The grid is their main figure
(`synthetic_bows/plots.py`): WᵀW/‖W‖² for linear wd 1, ReLU wd 1 and ReLU wd 6 at nine m.
The grid machinery is tested on a shortened recipe; the full recipe only in what ships.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tempsup.bows import analysis
from tempsup.bows import grid as G
from tempsup.bows.config import DEFAULTS, BowsConfig
from tempsup.bows.data import synthetic, text_report
from tempsup.bows.figures.grid import block, grid_figure
from tempsup.bows.model import BatchedTiedAE, init_weights
from tempsup.bows.trainer import epoch_indices, train

ROOT = Path(__file__).resolve().parent.parent
# A shortened recipe: the authors' in every respect but size and length.
SHORT = DEFAULTS.replace(epochs=3, n_samples=512, n_heldout=128, seeds=2, snapshot_every=4)


def test_defaults_are_the_authors_recipe():
    c = DEFAULTS
    assert (c.structure, c.n_features, c.values, c.sharpness, c.base_log_odds, c.noise) == (
        "circular", 12, "binary", 10.0, 0.0, 0.0,
    )  # fmt: skip
    assert (c.n_samples, c.n_samples + c.n_heldout) == (8000, 10_000)
    assert (c.lr, c.min_lr, c.schedule, c.grad_clip, c.batch, c.epochs) == (
        0.01, 1e-9, "epoch-cosine", 1.0, 256, 200,
    )  # fmt: skip
    assert (c.reduction, c.init, c.model) == ("mean", "torch", "relu")
    assert c.weight_decay == 1.0 and c.steps == 200 * 32


def test_learning_rate_is_torchs_cosine_stepped_once_per_epoch():
    c = DEFAULTS
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.AdamW([param], lr=c.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=c.epochs, eta_min=c.min_lr)
    for epoch in range(c.epochs):
        expected = opt.param_groups[0]["lr"]
        for k in range(c.steps_per_epoch):
            step = epoch * c.steps_per_epoch + k + 1
            assert c.learning_rate(step) == pytest.approx(expected, rel=1e-9, abs=1e-15)
        opt.step()  # (no gradient: nothing moves) torch wants a step before the schedule's
        sched.step()
    assert c.learning_rate(c.steps) < 1e-4  # the last epoch trains near the floor


def test_data_is_binary_and_a_random_8000_of_10000_train():
    train_X = synthetic(DEFAULTS).X
    held = synthetic(DEFAULTS, held_out=True).X
    assert train_X.shape == (8000, 12) and held.shape == (2000, 12)
    assert set(np.unique(train_X)) == {0.0, 1.0}
    # the split is random: both halves hold every latent position of the circle
    assert abs(train_X.mean() - held.mean()) < 0.01 and abs(train_X.mean() - 0.5) < 0.02


def test_init_is_nn_linears_default():
    W = init_weights(12, 4, seed=3)
    bound = 1 / np.sqrt(12)
    assert W.shape == (4, 12) and np.abs(W).max() <= bound
    assert np.std(W) == pytest.approx(bound / np.sqrt(3), rel=0.25)  # uniform on ±bound


def test_the_loss_is_torchs_mse():
    model = BatchedTiedAE(12, [3, 5], [0, 1], [False, True])
    x = torch.from_numpy(synthetic(SHORT).X[:64])
    with torch.no_grad():
        per_model = model.loss(x, "mean")
        xhat = model(x)
    for i in range(2):
        assert float(per_model[i]) == pytest.approx(float(torch.nn.MSELoss()(xhat[i], x)))


def plain_torch_run(cfg: BowsConfig, relu: bool) -> np.ndarray:
    """One model trained by the authors' loop (torch AdamW, CosineAnnealingLR per epoch,
    clip_grad_norm_, MSELoss) on the lab's data and minibatch order: its final W."""
    X = torch.from_numpy(synthetic(cfg).X)
    W = torch.nn.Parameter(torch.from_numpy(init_weights(cfg.d, cfg.m, cfg.seed * 1000)))
    b = torch.nn.Parameter(torch.zeros(cfg.d))
    opt = torch.optim.AdamW([W, b], lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.epochs, eta_min=cfg.min_lr)
    gen = torch.Generator().manual_seed(cfg.seed + 7_919)
    for _ in range(cfg.epochs):
        idx = epoch_indices(gen, X.shape[0], cfg.n_samples)
        for start in range(0, cfg.n_samples, cfg.batch):
            xb = X[idx[start : start + cfg.batch]]
            z = xb @ W.T @ W + b
            loss = torch.nn.MSELoss()(torch.relu(z) if relu else z, xb)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([W, b], cfg.grad_clip)
            opt.step()
        sched.step()
    return W.detach().numpy()


@pytest.mark.parametrize("model", ["linear", "relu"])
def test_training_is_the_authors_loop(model):
    cfg = SHORT.replace(model=model, m=3, seeds=1, epochs=4)
    *_, last = train(cfg)
    np.testing.assert_allclose(last.W[0, :3], plain_torch_run(cfg, model == "relu"), atol=2e-5)


# ---- the grid --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def short_grid() -> G.Grid:
    """The grid trained through its job's code path on the shortened recipe."""
    return G.train_grid(G.grid_spec(SHORT))


def test_grid_spec_is_the_authors_figure_in_one_job():
    spec = G.grid_spec()
    assert spec.kind == "bows-sweep" and spec.base == DEFAULTS
    assert spec.ms == (2, 3, 4, 6, 7, 8, 10, 11, 12)
    points = {(c.model, c.weight_decay, c.m) for c in spec.configs}
    for model, wd in (("linear", 1.0), ("relu", 1.0), ("relu", 6.0)):
        assert {(model, wd, m) for m in spec.ms} <= points
    assert type(spec).from_dict(spec.to_dict()) == spec  # the queue stores it as JSON


def test_linear_and_relu_in_one_batch_train_as_alone():
    both = list(train([SHORT.replace(model="linear", m=2), SHORT.replace(model="relu", m=4)]))
    alone = list(train(SHORT.replace(model="relu", m=4)))
    np.testing.assert_allclose(both[-1].W[2:, :4], alone[-1].W, atol=1e-6)


@pytest.mark.parametrize("wide", [True, False])
def test_grid_figure_draws_the_covariance_and_3_x_9_normalised_panels(short_grid, wide):
    fig = grid_figure(short_grid, wide=wide).to_plotly_json()
    (mosaic,) = fig["data"]
    raw = np.asarray(mosaic["customdata"], dtype=float)
    panels = fig["layout"]["meta"]["panels"]
    assert len(panels) == 1 + 3 * 9 and panels[0]["name"] == "covariance Σ"
    place = {p["name"]: (slice(p["y0"], p["y0"] + 12), slice(p["x0"], p["x0"] + 12))
             for p in panels}  # fmt: skip
    assert all(p["y0"] == block(p["row"], p["col"], 12, 0 if wide else 4)[0].start for p in panels)
    np.testing.assert_allclose(raw[place["covariance Σ"]], short_grid.cov, atol=1e-3)
    for model, wd in (("linear", 1.0), ("relu", 1.0), ("relu", 6.0)):
        for m in short_grid.ms:
            W = short_grid.weights(model, wd, m)
            cells = raw[place[f"{G.ROW_NAMES[(model, wd)]}, m = {m}: WᵀW/‖W‖²"]]
            np.testing.assert_allclose(cells, W.T @ W / np.sum(W * W), atol=1e-3)
            assert np.trace(cells) == pytest.approx(1.0, abs=0.01)
    labels = {a["text"] for a in fig["layout"]["annotations"]}
    assert {f"m = {m}" for m in (2, 3, 4, 6, 7, 8, 10, 11, 12)} <= labels
    assert {"linear<br>wd 1", "ReLU<br>wd 1", "ReLU<br>wd 6", "covariance Σ"} <= labels


def test_grid_file_round_trips(short_grid):
    again = G.Grid.from_bytes(short_grid.to_bytes())
    assert again.spec == short_grid.spec
    np.testing.assert_array_equal(again.W, short_grid.W)
    assert G.statement(again) == G.statement(short_grid)


def test_best_seed_is_the_lowest_loss_on_the_whole_training_set(short_grid):
    X = synthetic(SHORT).X.astype(float)
    p = short_grid.index("relu", 1.0, 3)
    for s in range(SHORT.seeds):
        W, b = short_grid.W[p, s, :3].astype(float), short_grid.b[p, s].astype(float)
        loss = np.mean((np.maximum(X @ W.T @ W + b, 0) - X) ** 2)
        assert short_grid.loss[p, s] == pytest.approx(loss, rel=1e-5)
    assert short_grid.best(p) == int(np.argmin(short_grid.loss[p]))


# ---- the shipped grid and the words everywhere ---------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> G.Grid:
    grid = G.shipped()
    assert grid is not None, "no grid ships for the recipe: python -m tempsup.bows.grid --train"
    return grid


def test_the_shipped_grid_is_the_full_recipes(shipped):
    assert shipped.spec == G.grid_spec() and shipped.spec.base.epochs == 200
    assert shipped.W.shape == (len(shipped.spec.configs), DEFAULTS.seeds, 12, 12)
    assert np.isfinite(shipped.loss).all()
    assert G.path(shipped.spec).stat().st_size < 200_000  # small enough to ship


def test_the_measured_words_match_the_runs(shipped):
    # each cell's numbers, recomputed here from the best seed's weights
    for m, cells in G.statement_rows(shipped):
        for (model, wd), cell in zip(G.ROWS, cells, strict=True):
            W = shipped.weights(model, wd, m).astype(float)
            r = float(analysis.pca_correlation(W, shipped.cov))
            n = int((np.linalg.norm(W, axis=0) > G.NORM_THRESHOLD).sum())
            assert f"‖W_i‖ > 0.5: {n} of 12" in cell, (m, model, wd, cell)
            assert f"PCA projection (r = {r:.2f})" in cell or f"PCA r = {r:.2f}" in cell
            if r >= G.PCA_R:
                assert cell.startswith(f"top-{m} PCA projection")
            else:
                assert not cell.startswith("top-")


def test_the_lab_page_states_what_the_shipped_grid_shows(shipped):
    """The documentation's lab page holds the measured block (written by the grid module)."""
    page = "docs/researchers/correlations-lab.md"
    text = (ROOT / page).read_text(encoding="utf-8")
    assert G.readme_block(shipped) in text, f"run: python -m tempsup.bows.grid --readme {page}"


def test_the_lab_page_reads_the_same_words(shipped):
    from app.pages.lab import grid_words

    table = grid_words(shipped)[0].children
    rows = table.children[1].children
    assert len(rows) == 9
    for row, (m, cells) in zip(rows, G.statement_rows(shipped), strict=True):
        assert [c.children for c in row.children] == [str(m), *cells]


# ---- texts too short for the statistics ---------------------------------------------------


def test_a_five_word_text_is_named_too_short():
    report = text_report("Spring rain waters green fields", 20)
    assert report.words == 5 and report.samples == 1
    assert "5 words" in report.warning and "50 samples" in report.warning
    long = "\n".join(f"line {i} apples pears plums" for i in range(1200))
    assert text_report(long, 20).warning is None


# ---- the lab's view as a link -------------------------------------------------------------


def test_a_lab_link_round_trips_and_names_what_it_ignores():
    from app.pages.lab import FRESH, lab_from_query, lab_query

    values = {**FRESH, "m": 6, "model": "linear", "wd": 6.0, "epochs": 20, "ms": "2, 6"}
    query = lab_query(values, run=True, sweep=False)
    assert "m=6" in query and "run=1" in query and "sweep" not in query
    back, flags, errors = lab_from_query(query)
    assert back == values and flags == {"run": True, "sweep": False} and errors == []
    assert lab_query(FRESH) == ""  # the fresh page is the bare /lab
    _, _, errors = lab_from_query("?model=gelu&m=abc&colour=red")
    assert any(e.startswith("model: expected one of linear, relu") for e in errors)
    assert "m: expected a number, got 'abc'" in errors
    assert "colour: not a setting of the lab" in errors
