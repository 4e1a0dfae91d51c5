"""Captions against the numbers beside them, for every combination the app offers.

The explorer's captions (what `app.panels.explanation` puts under each panel), the loss
panel's legend and the eigen panel's kθ are read the way a reader meets them, for every
model × N_h × N_x × readout tie × bias the controls offer (their marks, and N_h = 100
from a link), with what `tempsup.theory.budget` computes for each. Runs are hand-made (weights
through `tempsup.io.run.derived`, a few frames), except one ReLU RNN whose weights are a
trained run's (S = 0.97), where the canonical kθ is negative, and the shipped runs of the
gallery's presets, where the headlines are checked against the panels' own numbers.

A caption is read at a glance (issue 41): a headline of at most 25 words, the run's own
numbers in it, and the explanation behind a native "Why?" disclosure on every surface.
"""

from __future__ import annotations

import html
import itertools
import re

import numpy as np
import pytest

from app.controls import HIDDEN_MARKS, INPUT_MARKS, OPTION_FIELDS
from tempsup import figures
from tempsup.analysis.captions import HEADLINE_WORDS, WHY, Caption
from tempsup.analysis.captions import words as word_count
from tempsup.figures import rnn
from tempsup.io.run import TERM_NAMES, Run, derived
from tempsup.model.config import MODELS, PAPER_MODELS, RunConfig
from tempsup.theory import budget, geometry
from tests.helpers import nodes, rot

LARGE = 100  # N_h from a link (the N_h = 100 preset); the sliders stop at 16
HIDDEN = sorted({*HIDDEN_MARKS, LARGE})
# The colours the loss panel uses, as a reader names them (the test's own words).
WORDS = {
    "#111111": "black",
    "#D55E00": "vermillion",
    "#E69F00": "orange",
    "#56B4E9": "sky blue",
    "#CC79A7": "reddish purple",
    "#009E73": "bluish green",
    "#999999": "grey",
    "rgba(120, 120, 120, 0.35)": "faint grey",
}
COLOUR_WORD = re.compile(r"\b(black|vermillion|orange|sky blue|(?:reddish )?purple|"
                         r"(?:bluish )?green|(?:faint )?grey|red|blue)\b")  # fmt: skip


def caption(panel: str, config: RunConfig) -> Caption:
    """The caption the explorer shows under `panel` for `config` before its run shows."""
    from app.panels import PANELS, explanation

    (p,) = [p for p in PANELS if p.name == panel]
    return explanation(p, config)


def why(panel: str, config: RunConfig) -> str:
    """The explanation behind the "Why?" of `panel`'s caption for `config`."""
    return caption(panel, config).why


def offered() -> list[RunConfig]:
    """Every model × N_h × N_x × tie × bias the controls offer (N_h = 100 from a link)."""
    assert OPTION_FIELDS == ("tied", "bias")
    out = []
    for model, n_h, n_x, tied, bias in itertools.product(
        MODELS, HIDDEN, INPUT_MARKS, (True, False), (False, True)
    ):
        if model == "lru" and n_h % 2:  # N_h/2 complex modes: refused by the config
            continue
        out.append(RunConfig(model=model, hidden=n_h, inputs=n_x, tied=tied, bias=bias))
    return out


@pytest.mark.parametrize("model", MODELS)
def test_every_caption_says_only_what_holds_for_its_config(model: str) -> None:
    for cfg in (c for c in offered() if c.model == model):
        plan = budget.plan(cfg)
        words = {p: why(p, cfg) for p in ("directions", "loss", "projections", "eigen")}
        where = f"{model} N_h={cfg.hidden} N_x={cfg.inputs} tied={cfg.tied} bias={cfg.bias}"
        linear_recurrence = not cfg.relu_hidden
        # the gauge: a stretch orthogonal to w_k is a symmetry of a tied linear recurrence
        # only (the ReLU RNN's is a permutation / positive scaling of units)
        stretch = "stretch orthogonal to w_k" in words["directions"]
        assert stretch == (linear_recurrence and cfg.tied and cfg.inputs < cfg.hidden), where
        assert ("w_y along +h_1" in words["directions"]) == linear_recurrence, where
        if cfg.relu_hidden:
            assert "permutation of the hidden units" in words["directions"], where
        # the staircase is measured for the linear RNN (loss-dynamics preset) only
        steps = re.search(r"(comes|learning) .*in steps", words["loss"])
        assert bool(steps) == (model == "linear"), (where, words["loss"])
        # a lone input's free half-space exists only under a ReLU readout
        assert ("invisible to the readout" in words["directions"]) == cfg.relu_readout, where
        # composition interference is pointed to in the loss panel only where it is drawn
        for panel in ("directions", "projections"):
            points = "in the loss panel" in words[panel]
            assert points == (plan.terms and cfg.relu_readout), (where, panel)
        if not plan.terms:
            assert "not computed" in words["loss"], where
            for name in TERM_NAMES:
                assert f"{name} (" not in words["loss"], (where, name)
        # kθ's sign: a convention of the linear recurrence's gauge (N_h = 2); unsigned
        # angles otherwise; the ReLU RNN's unit order sets it, and may make it negative
        says_nonneg = "kθ ≥ 0" in words["eigen"]
        assert says_nonneg == (not (cfg.relu_hidden and cfg.hidden == 2)), where
        if cfg.relu_hidden and cfg.hidden == 2:
            assert "may be negative" in words["eigen"], where


def make_run(cfg: RunConfig, W_x: np.ndarray, W_h: np.ndarray, frames: int = 3) -> Run:
    """A run whose every seed holds these weights (W_x growing over the frames), the tied
    readout W_y := W_k or a fixed free one, and its derived arrays computed as for a
    trained run (`tempsup.io.run.derived`: the budget may leave terms or E[L] as NaN)."""
    n_h, n_x = W_x.shape
    F, M = frames, cfg.seeds
    scale = (1.0 + np.arange(F) / 10.0)[:, None, None, None]
    Wx = np.broadcast_to(W_x, (F, M, n_h, n_x)) * scale
    Wh = np.broadcast_to(W_h, (F, M, n_h, n_h)).copy()
    if cfg.tied:
        Wy = geometry.feature_directions(Wx, Wh, cfg.k + 1, cfg.relu_hidden)[..., cfg.k, :, :]
    else:
        Wy = np.broadcast_to(np.roll(W_x, 1, axis=0), (F, M, n_h, n_x)).copy()
    b_y = np.zeros((F, M, n_x))
    steps = np.linspace(0, cfg.steps, F).round().astype(int)
    loss = np.exp(-np.arange(F))[:, None] * (1.0 + np.arange(M))[None, :]
    arrays = {"step": steps, "W_x": Wx, "W_h": Wh, "W_y": Wy, "b_y": b_y, "loss": loss}
    return Run(cfg, {**arrays, **derived(cfg, cfg.steps, Wx, Wh, Wy, b_y)})


def small(model: str, n_h: int, n_x: int, tied: bool = True, seeds: int = 2) -> Run:
    rng = np.random.default_rng(n_h * 100 + n_x)
    W_h = 0.8 * rot(100) if n_h == 2 else 0.6 * rng.standard_normal((n_h, n_h)) / np.sqrt(n_h)
    W_x = np.abs(rng.standard_normal((n_h, n_x))) + 0.1
    cfg = RunConfig(model=model, hidden=n_h, inputs=n_x, tied=tied, seeds=seeds, steps=40,
                    snapshot_every=20)  # fmt: skip
    return make_run(cfg, W_x, W_h)


# Hand-made runs of the paper's models over the app's N_h and N_x (kept small: these
# compute the real terms; the gated models' runs are trained, tests/test_gated_runs.py),
# plus the sizes the budget skips: the ReLU RNN's terms at N_h = N_x = 10 (8 seeds), and
# its terms and E[L] at N_h = 100.
RUNS = [
    *[(m, h, x, True, 2) for m in PAPER_MODELS for h in (2, 3, 5, 10) for x in (1, 2)],
    *[(m, 2, 1, False, 2) for m in PAPER_MODELS],
    ("rnn", 10, 10, True, 8),
    ("rnn", LARGE, 2, True, 1),
]


@pytest.fixture(scope="module")
def runs() -> dict[tuple, Run]:
    return {spec: small(*spec) for spec in RUNS}


def legend(traces: list[dict]) -> list[dict]:
    return [t for t in traces if t.get("showlegend", True)]


def inside(layout: dict, ys: list) -> list[float]:
    """The finite points of a curve inside the y range (a log axis: in decades, > 0)."""
    lo, hi = layout["yaxis"]["range"]
    if layout["yaxis"].get("type") == "log":
        ys = [np.log10(y) if y is not None and y > 0 else None for y in ys]
    return [y for y in ys if y is not None and np.isfinite(y) and lo <= y <= hi]


@pytest.mark.parametrize("spec", RUNS, ids=["-".join(map(str, s)) for s in RUNS])
def test_the_loss_legend_is_what_is_drawn_and_what_the_caption_names(runs, spec) -> None:
    run = runs[spec]
    cfg = run.config
    plan = budget.plan(cfg)
    traces = figures.frame_traces("loss", run)
    layout = figures.panel_layout("loss", run)
    shown = legend(traces)
    names = [t["name"] for t in shown]
    # every legend entry is drawn: finite points inside the axis range
    for t in shown:
        assert inside(layout, t["y"]), (spec, t["name"])
    ticks = layout["yaxis"].get("tickvals")  # labelled by hand: enough labels to read it
    if ticks is not None:
        lo, hi = layout["yaxis"]["range"]
        assert len([y for y in ticks if lo <= y <= hi]) >= 3, (spec, layout["yaxis"])
    # what was not computed is neither drawn nor named; what was, is, under its own name
    has_terms = bool(np.isfinite(run["terms"]).any())
    assert has_terms == plan.terms, spec
    for name in TERM_NAMES:
        assert (name in names) == plan.terms, (spec, name, names)
    assert ("sum of the four terms" in names) == plan.terms, spec
    assert ("expected loss E[L]" in names) == plan.expected, spec
    # at most five curves drawn when the panel opens; the rest one click away in the legend
    drawn = [t["name"] for t in shown if t.get("visible", True) is True]
    hidden = [t["name"] for t in shown if t.get("visible") == "legendonly"]
    assert len(drawn) <= 5 and len(drawn) + len(hidden) == len(shown), (spec, names)
    assert any(n.startswith("measured loss") for n in drawn), spec
    if plan.terms:
        assert set(TERM_NAMES) <= set(drawn), (spec, drawn)
    # the explanation names each curve with the colour the legend draws it in, says which
    # are hidden, and names no colour the panel does not use
    text = why("loss", cfg)
    clicked = text.split("one click away in the legend:")[1] if hidden else ""
    for t in shown:
        word = WORDS[t["line"]["color"]]
        generic = t["name"].split(" (seed ")[0]
        assert f"{generic} ({word}" in text, (spec, generic, word)
        assert (f"{generic} ({word}" in clicked) == (t["name"] in hidden), (spec, generic)
    used = {WORDS[t["line"]["color"]] for t in shown}
    for word in COLOUR_WORD.findall(text):
        assert word in used, (spec, word, used)
    if not plan.terms:
        assert "not computed" in layout["title"]["text"]


def test_the_default_ssm_draws_its_negative_composition_below_zero() -> None:
    """The default SSM's solution at S = 0.9 in miniature: a_1 < 0 parks an input far on the
    negative side and a_3 ≈ 1 recalls the target, so composition interference is negative
    and the mean correction positive (science.md §1c); the panel draws the negative one."""
    W_h = np.array([[0.0, -0.5], [0.86, 0.0]])  # a quarter turn per step: a_s ≈ [0, −2.3, 0, 1, …]
    W_x = np.array([[2.7], [0.0]])
    cfg = RunConfig(model="ssm", seeds=1, steps=40, snapshot_every=20)
    run = make_run(cfg, W_x, W_h)
    terms = run["terms"][-1, 0]
    assert terms[3] < 0 < terms[1], terms  # composition < 0 < mean correction
    traces = figures.frame_traces("loss", run)
    layout = figures.panel_layout("loss", run)
    (comp,) = [t for t in traces if t["name"] == "composition interference"]
    drawn = inside(layout, comp["y"])
    assert len(drawn) == run.n_frames and max(drawn) < 0
    text = why("loss", cfg)
    assert "erases it" in text and "composition negative" in text
    # and the headline gives the two with their signs, the numbers the panel draws
    head = figures.rnn.run_captions(run)["loss"].headline
    mean, comp = (f"{v:+.3g}" for v in terms[[1, 3]])
    assert f"mean correction {mean} against composition {comp}" in head, head


TRAINED_RNN = {  # best seed of the ReLU RNN, S = 0.97, tied (kθ = −212° in the canonical gauge)
    "W_x": np.array([[-0.5268], [1.8583]]),
    "W_h": np.array([[-0.3831, 0.7443], [-1.2978, 0.9188]]),
}


def ktheta(run: Run) -> float:
    (note,) = [t for t in figures.frame_traces("eigen", run) if t.get("mode") == "text"]
    return float(re.search(r"kθ = (-?[\d.]+)°", note["text"][0]).group(1))


def test_the_relu_rnn_prints_the_sign_convention_it_applies() -> None:
    cfg = RunConfig(model="rnn", sparsity=0.97, seeds=1, steps=40, snapshot_every=20)
    run = make_run(cfg, TRAINED_RNN["W_x"], TRAINED_RNN["W_h"])
    value = ktheta(run)
    assert value < 0  # its units, sorted by readout weight, turn clockwise
    words = why("eigen", cfg)
    assert "kθ ≥ 0" not in words and "may be negative" in words
    (note,) = [t for t in figures.frame_traces("eigen", run) if t.get("mode") == "text"]
    assert "unit order" in note["text"][0]


@pytest.mark.parametrize("spec", RUNS, ids=["-".join(map(str, s)) for s in RUNS])
def test_the_printed_ktheta_satisfies_the_stated_convention(runs, spec) -> None:
    run = runs[spec]
    if "kθ ≥ 0" in why("eigen", run.config):
        assert ktheta(run) >= -1e-6, spec


def test_every_caption_follows_the_config_store() -> None:
    from app.controls import config_store
    from app.panels import PANELS, update_captions

    for cfg in (RunConfig(model="rnn", hidden=10, inputs=10), RunConfig(model="linear")):
        out = update_captions(config_store(cfg, autostart=False))
        assert out["key"] == cfg.key
        assert out["captions"] == {p.name: caption(p.name, cfg).to_dict() for p in PANELS}


# ---- read at a glance: one sentence each, the run's numbers, the rest behind "Why?" ------


def test_every_headline_is_one_short_sentence_before_a_run() -> None:
    """Before a run shows, each panel's headline (the config's) is one sentence of at
    most 25 words, for every combination the controls offer."""
    for cfg in offered():
        for panel, c in rnn.panel_captions(cfg).items():
            assert word_count(c.headline) <= HEADLINE_WORDS, (cfg.key, panel, c.headline)
            assert c.headline.count(". ") == 0 and c.headline.endswith("."), c.headline
            assert len(c.why) > len(c.headline), (cfg.key, panel)


@pytest.mark.parametrize("spec", RUNS, ids=["-".join(map(str, s)) for s in RUNS])
def test_every_headline_of_a_run_is_one_short_sentence(runs, spec) -> None:
    """With a run, each headline is one sentence of at most 25 words: with the summary's
    "Why?", what a reader sees under a panel before opening anything is at most 40."""
    run = runs[spec]
    for panel, c in rnn.run_captions(run).items():
        assert word_count(c.headline) <= HEADLINE_WORDS, (spec, panel, c.headline)
        assert word_count(c.headline) + word_count(WHY) <= 40
        assert c.headline.endswith(".") and ". " not in c.headline.rstrip("."), c.headline
        assert not c.headline.startswith("Train to see"), (spec, panel)  # the run's own


def shipped_runs() -> dict[str, Run]:
    """One shipped run per model kind and input kind the gallery has: the linear RNN, the
    SSM sparse and dense, the ReLU RNN, vector input (ReLU RNN, k = 2) and N_h = 100 (SSM,
    where neither the terms nor E[L] are computed)."""
    from tempsup.paper import shipped
    from tempsup.paper.presets import preset

    out = {}
    for name, pick in (("spiral-sink", 0), ("ssm-dense-vs-sparse", 0), ("ssm-dense-vs-sparse", 1),
                       ("relu-rnn-sharp-forgetting", 0), ("vector-all-or-none", 2),
                       ("large", 0)):  # fmt: skip
        cfg = preset(name).configs[pick]
        run = shipped.load(cfg)
        assert run is not None, cfg.key
        out[f"{name}-{pick}"] = run
    return out


@pytest.fixture(scope="module")
def shipped() -> dict[str, Run]:
    return shipped_runs()


def numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", text.replace("−", "-"))]


def corner(run: Run, panel: str, name: str) -> str:
    """A panel's corner text at the last frame, as plain text."""
    from tempsup.figures.thumbnail import plain

    (t,) = [t for t in figures.frame_traces(panel, run, None, -1) if t.get("name") == name]
    return plain(t["text"][0])


def test_the_headlines_cite_the_numbers_the_panels_draw(shipped) -> None:
    """Each headline's numbers are the panel's: the directions panel's half-space count,
    the eigen panel's ρ and kθ, the loss panel's label, the bars a_s; every panel, every
    model kind the gallery ships, each within 25 words."""
    from tempsup.analysis import measures

    for label, run in shipped.items():
        cfg, heads = run.config, {p: c.headline for p, c in rnn.run_captions(run).items()}
        for panel, head in heads.items():
            assert word_count(head) <= HEADLINE_WORDS, (label, panel, head)
        m = rnn.measured(run)
        eigen_note = corner(run, "eigen", "spectrum summary")
        rho, swept = (re.search(p, eigen_note).group(1) for p in
                      (r"ρ\(W_h\) = (\S+)", r"kθ = (\S+)°"))  # fmt: skip
        if cfg.relu_readout:  # the sparse point: directions parked in the free half-space
            count = corner(run, "directions", "count")
            free, others = (int(v) for v in re.search(r"(\d+) of (\d+) directions", count).groups())
            assert f"{free} of {others} directions" in heads["directions"], (label, count)
            assert "interference-free half-space" in heads["directions"], label
            assert (free, others) == (m.free, m.others)
        else:  # the linear RNN: the arrows' turn, the eigen panel's kθ
            assert f"kθ = {swept}°" in heads["directions"], (label, heads["directions"])
        # the eigen panel's numbers, printed as the panel prints them
        if cfg.model == "linear":
            sink = bool(measures.spiral(run)["sink"][run.best])
            assert heads["eigen"].startswith("A spiral sink") == sink, label
            assert f"kθ = {swept}°" in heads["eigen"], (label, heads["eigen"])
        else:
            assert f"kθ = {swept}°" in heads["eigen"], (label, heads["eigen"], eigen_note)
            assert f"ρ(W_h) = {rho}" in heads["eigen"], (label, heads["eigen"], eigen_note)
        if cfg.model == "ssm":  # the basin named as the ssm-jump claim reads it
            where = {"d": "dense basin", "s": "sparse basin", ".": "between"}
            assert where[str(measures.basin(m.swept))] in heads["eigen"], (label, heads["eigen"])
        # the loss panel's label, the measured loss of the status line
        share = corner(run, "loss", "explained")
        if share:
            pct = re.search(r"([\d.]+) % of E\[L\]", share).group(1)
            assert f"{pct} % of E[L]" in heads["loss"], (label, share, heads["loss"])
        else:
            assert "computed at this size" in heads["loss"], label
        final = float(run["loss"][-1, run.best])
        assert any(abs(v - final) <= 1e-3 * abs(final) for v in numbers(heads["loss"])), label
        # the projections: a_k as the bars draw it, or the heatmap's subtitle's counts
        if cfg.inputs > 1:
            subtitle = figures.panel_layout("projections", run)["title"]["text"]
            dp = re.search(r"diagonal (\d+) of (\d+) positive", subtitle).groups()
            assert f"{dp[0]} of {dp[1]} diagonal entries positive" in heads["projections"]
        else:
            bars = [t for t in figures.frame_traces("projections", run) if t["type"] == "bar"]
            (out,) = [t for t in bars if t["name"].startswith("output")]
            a_k = out["y"][0]
            assert numbers(heads["projections"])[0] == pytest.approx(a_k, rel=5e-3), label


def test_the_sparse_relu_readout_headline_is_the_half_space(shipped) -> None:
    """The sparse SSM's and the sparse ReLU RNN's directions headline: the directions park
    in the shaded interference-free half-space, with the measured count (all k intermediate
    ones for the ReLU RNN, science.md §1)."""
    for label in ("ssm-dense-vs-sparse-1", "relu-rnn-sharp-forgetting-0"):
        run = shipped[label]
        head = rnn.run_captions(run)["directions"].headline
        m = rnn.measured(run)
        k = run.config.k
        assert head.startswith(f"{m.free} of {m.others} directions ({m.free_intermediate} of {k}")
        assert "park in the shaded interference-free half-space" in head
    sharp = rnn.run_captions(shipped["relu-rnn-sharp-forgetting-0"])
    assert sharp["projections"].headline.endswith("sharp forgetting.")


def test_the_dash_cards_fold_each_explanation_under_a_native_disclosure() -> None:
    """Each card's caption: the headline as a paragraph, then html.Details whose first
    child is html.Summary("Why?") and whose body is the explanation: a native disclosure,
    reachable by keyboard without a script. The phase page's side text too."""
    from dash import dcc
    from dash import html as dhtml

    from app import ids, panels
    from app.pages import phase
    from tempsup.analysis.captions import phase_caption

    cfg = RunConfig(model="ssm")
    grid = panels.grid(cfg).children
    assert isinstance(grid[0], dcc.Store) and grid[0].id == ids.CAPTIONS
    for card in grid[1:]:
        heading, graph, block = card.children
        name = graph.id["panel"]
        c = rnn.panel_captions(cfg)[name]
        headline, details = block.children
        assert isinstance(headline, dhtml.P) and headline.children == c.headline
        assert headline.id == ids.headline(name)
        assert isinstance(details, dhtml.Details)
        summary, body = details.children
        assert isinstance(summary, dhtml.Summary) and summary.children == WHY
        assert body.children == c.why and body.id == ids.why(name)
        visible = word_count(c.headline) + word_count(WHY)  # what shows before a click
        assert visible <= 40, (name, visible)

    (block,) = [n for n in nodes(phase.layout()) if getattr(n, "id", None) == ids.explain("phase")]
    headline, details = block.children
    assert headline.children == phase_caption().headline
    assert (
        details.children[0].children == WHY and details.children[1].children == phase_caption().why
    )
    assert word_count(phase_caption().headline) <= HEADLINE_WORDS


def test_the_view_store_carries_the_runs_headlines(runs) -> None:
    """The page shows the run's headlines from its view store (the browser puts them in
    place): the finished view's, and a stream's, whose patches carry their changes."""
    from app.view import full_view, stream_view

    run = runs[("ssm", 2, 1, True, 2)]
    want = {p: c.headline for p, c in rnn.run_captions(run, 0).items()}
    assert full_view(run, 0)["captions"] == want
    assert stream_view(run, 0)["captions"] == want
    first = Run(run.config, {name: run[name][:1] for name in run.arrays})
    early = stream_view(first, 0)["captions"]
    assert early == {p: c.headline for p, c in rnn.run_captions(first, 0).items()}


def test_the_export_and_the_site_print_the_explorers_captions(runs) -> None:
    """The export and the site print each panel's caption for the run: its headline, then
    its explanation under a native <details> whose <summary> is "Why?"."""
    from tempsup.teaching import site

    run = runs[("rnn", 10, 10, True, 8)]  # terms not computed: the captions say so
    page = figures.export_html(run)
    pieces = site.panel_captions_html(run)
    captions = rnn.run_captions(run)
    for panel, c in captions.items():
        printed = c.html()
        assert printed in page and printed in pieces, panel
        assert f'<p class="headline">{html.escape(c.headline)}</p>' in printed
        assert (
            f'<details class="why"><summary>{WHY}</summary><p>{html.escape(c.why)}</p>' in printed
        )
    for text in (page, pieces):
        assert text.count(f"<summary>{WHY}</summary>") == len(captions)
    assert "not computed" in captions["loss"].headline and "not computed" in captions["loss"].why


def test_the_static_site_folds_every_explanation(shipped, tmp_path) -> None:
    """A preset page of the static site, as built: under each animation, four headlines
    and four "Why?" disclosures."""
    from tempsup.teaching import site

    run = shipped["spiral-sink-0"]
    body = site.panel_captions_html(run)
    assert body.count("<details") == body.count("<summary>Why?</summary>") == 4
    for c in rnn.run_captions(run).values():
        assert c.html() in body


def test_a_streamed_frame_draws_its_loss_where_the_finished_run_does(runs) -> None:
    """While a run streams in, the page keeps the frames it was sent: the loss dot of an
    early frame must sit where the finished run puts it (the axis's scale is the config's)."""
    run = runs[("ssm", 2, 1, True, 2)]
    first = Run(run.config, {name: run[name][:2] for name in run.arrays})
    for f in (0, 1):
        streamed = [
            t for t in figures.frame_traces("loss", first, 0, f) if t["name"] == "current loss"
        ]
        final = [t for t in figures.frame_traces("loss", run, 0, f) if t["name"] == "current loss"]
        assert streamed == final, f
