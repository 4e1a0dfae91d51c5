"""The panel registry is the one place a panel is named: the app's cards, the animation,
the HTML export and the static site all read `tempsup.figures.rnn.PANEL_SET`, and the
correlations lab's page and export `tempsup.bows.figures.lab.PANEL_SET` (fast: one
shipped run, one lab run made by hand, no training)."""

from __future__ import annotations

import dataclasses
import html

import numpy as np
import pytest
from dash import no_update

from tempsup.analysis import captions
from tempsup.figures import animation, eigen, rnn
from tempsup.figures.panel import PanelEntry
from tempsup.io.run import Run
from tempsup.paper import shipped
from tempsup.paper.presets import preset
from tempsup.teaching import site
from tests.helpers import nodes


@pytest.fixture(scope="module")
def run():
    """A shipped run's last three frames (every panel and caption as on the whole run)."""
    out = shipped.load(preset("spiral-sink").configs[0])
    assert out is not None
    return Run(out.config, {name: a[-3:] for name, a in out.arrays.items()})


@pytest.fixture
def app_panels():
    """`app.panels`, imported before a test patches the registry: its caption callback's
    outputs are fixed when it is first imported, whatever the registry holds then."""
    from app import panels

    return panels


def cards(config) -> list[tuple[str, str, captions.Caption]]:
    """The app's panel cards for `config`: (graph id's panel, heading, caption: the
    headline and what its "Why?" disclosure holds)."""
    from app import panels

    out = []
    for card in panels.grid(config).children[1:]:  # after the CAPTIONS store
        heading, graph, block = card.children
        headline, details = block.children
        summary, body = details.children
        assert summary.children == captions.WHY
        out.append((graph.id["panel"], heading.children,
                    captions.Caption(headline.children, body.children)))  # fmt: skip
    return out


def export_rows(page: str) -> dict[str, str]:
    """The export summary's "<name> panel" rows: name -> the caption as HTML-escaped (the
    correlations lab's export)."""
    rows = {}
    for cell in page.split("<tr><th>")[1:]:
        key, _, rest = cell.partition("</th><td>")
        if key.endswith(" panel"):
            rows[key.removesuffix(" panel")] = rest.partition("</td>")[0]
    return rows


def panel_sections(page: str) -> dict[str, str]:
    """The RNN export's (and the site's) panel captions: name -> its section's HTML."""
    out = {}
    for cell in page.split('<section class="panel-caption" data-panel="')[1:]:
        name, _, rest = cell.partition('">')
        out[name] = rest.partition("</section>")[0]
    return out


def subplot_titles(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def expect_everywhere(run, entries: tuple[PanelEntry, ...]) -> None:
    """Every surface shows exactly `entries`, each with its registry title and caption."""
    cfg = run.config
    planned = captions.Computed.plan(cfg)
    assert cards(cfg) == [(e.name, e.title, e.caption(cfg, planned)) for e in entries]

    done = captions.Computed.of_run(run["terms"][:, run.best], run["expected_loss"][:, run.best])
    measured = rnn.measured(run)
    words = {e.name: e.caption(cfg, done, measured) for e in entries}
    for surface in (animation.export_html(run), site.panel_captions_html(run)):
        sections = panel_sections(surface)
        assert list(sections) == [e.name for e in entries]
        for e in entries:  # its registry title, then its headline and "Why?"
            assert sections[e.name].endswith(words[e.name].html()), e.name
            assert f">{html.escape(e.title)}</h" in sections[e.name], e.name

    fig = animation.animation_figure(run)
    by_cell = sorted(entries, key=lambda e: e.cell)  # Plotly numbers titles row by row
    want = [e.module.parts(sel := run_selection(run), e.module.prepare(sel)).title for e in by_cell]
    assert subplot_titles(fig) == want
    for e in entries:  # each panel's axes sit in its registry cell
        sub = fig.get_subplot(*e.cell)
        assert sub is not None, e.name


def run_selection(run):
    from tempsup.figures._common import select

    return select(run, None, 0)


def test_every_surface_reads_each_panel_from_the_registry(run) -> None:
    from app import panels

    assert tuple(p.name for p in panels.PANELS) == rnn.PANELS == rnn.PANEL_SET.names
    expect_everywhere(run, rnn.PANEL_SET.entries)


def test_a_panel_added_to_the_registry_shows_up_on_every_surface(
    run, app_panels, monkeypatch
) -> None:
    fifth = PanelEntry(
        "spectrum", eigen, cell=(3, 1), title="A fifth panel",
        caption=lambda config, computed, measured=None: captions.Caption(
            f"The fifth panel's words for k = {config.k}.", "Why it says so."),
    )  # fmt: skip
    monkeypatch.setattr(
        rnn,
        "PANEL_SET",
        dataclasses.replace(rnn.PANEL_SET, entries=(*rnn.PANEL_SET.entries, fifth)),
    )
    expect_everywhere(run, rnn.PANEL_SET.entries)
    # the phone's arrangement stacks it too, with its own title
    narrow = animation.animation_figure(run).layout.meta["tempsup"]["narrow"]["layout"]
    assert narrow["annotations[4].text"].startswith("Eigenvalues")  # the fifth title, last
    assert "legend5" not in narrow or narrow["legend5"]["y"] < narrow["legend4"]["y"]


def test_a_changed_title_or_caption_changes_every_surface(run, app_panels, monkeypatch) -> None:
    entries = tuple(
        dataclasses.replace(
            e,
            title=f"Renamed {e.name}",
            caption=lambda c, d, m=None, n=e.name: captions.Caption(f"New {n}.", f"Why {n}."),
        )
        for e in rnn.PANEL_SET.entries
    )
    monkeypatch.setattr(rnn, "PANEL_SET", dataclasses.replace(rnn.PANEL_SET, entries=entries))
    expect_everywhere(run, entries)


def test_the_labs_animation_places_its_panels_where_its_registry_says() -> None:
    from tempsup.bows.figures import animation as bows_animation
    from tempsup.bows.figures import lab

    assert {e.name: e.cell for e in lab.PANEL_SET.entries} == bows_animation.CELLS
    assert tuple(bows_animation.CELLS) == lab.PANELS


# ---- the correlations lab: its page and its export read its registry's captions ----------


@pytest.fixture(scope="module")
def lab_run():
    """A correlations-lab run made by hand: two frames of random weights, no training."""
    from tempsup.bows.config import BowsConfig
    from tempsup.bows.run import BowsRun, data_statistics

    cfg = BowsConfig(n_samples=512, m=2, seeds=2)
    static = data_statistics(cfg)
    d, rng = len(static["mean"]), np.random.default_rng(0)
    frames = [
        {"step": np.array(step), "W": rng.normal(size=(2, cfg.m, d)), "b": np.zeros((2, d)),
         "loss": np.array([1.0, 0.5]) / (step + 1), "r2_linear": rng.random((2, d)),
         "r2_model": rng.random((2, d))}
        for step in (0, 1)
    ]  # fmt: skip
    return BowsRun.from_frames(cfg, frames, static)


def lab_cards(query: str | None = None) -> dict[str, str]:
    """The lab page's panel cards (opened with `query`): the graph id's panel -> the
    words under it."""
    from app import ids
    from app.pages import lab as page

    graph = ids.graph(ids.LAB, None)["type"]
    cards = [
        n.children
        for n in nodes(page.layout(query))
        if getattr(n, "className", None) == "card panel"
        and getattr(n.children[0], "id", {}).get("type") == graph  # not the sweep's card
    ]
    return {g.id["panel"]: words.children for g, words in cards}


def expect_lab_everywhere(lab_run, entries: tuple[PanelEntry, ...]) -> None:
    """The lab's page and export show `entries`' captions, each panel's own."""
    from tempsup.bows.figures import animation as bows_animation

    cfg = lab_run.config
    assert lab_cards() == {e.name: e.caption(cfg, None) for e in entries}
    words = {e.name: html.escape(e.caption(cfg, None)) for e in entries}
    assert export_rows(bows_animation.export_html(lab_run)) == words


def test_the_labs_page_and_export_read_its_captions_from_its_registry(lab_run) -> None:
    from tempsup.bows.figures import lab

    assert all(e.caption for e in lab.PANEL_SET.entries)  # every lab panel says what to see
    expect_lab_everywhere(lab_run, lab.PANEL_SET.entries)


def test_a_changed_lab_caption_changes_its_page_and_export(lab_run, monkeypatch) -> None:
    from tempsup.bows.figures import lab

    entries = tuple(
        dataclasses.replace(e, caption=lambda c, d, n=e.name: f"New {n} for m = {c.m}.")
        for e in lab.PANEL_SET.entries
    )
    monkeypatch.setattr(lab, "PANEL_SET", dataclasses.replace(lab.PANEL_SET, entries=entries))
    expect_lab_everywhere(lab_run, entries)


def test_the_labs_captions_are_written_per_model(lab_run) -> None:
    """What only the ReLU can do is said of the ReLU autoencoder alone: the linear one's
    page (opened from a link, or its model chosen) and export read its own words."""
    from app.pages import lab as page
    from tempsup.bows.figures import animation as bows_animation
    from tempsup.bows.figures import lab

    linear = lab_run.config.replace(model="linear")
    words = {m: lab.panel_captions(lab_run.config.replace(model=m)) for m in ("relu", "linear")}
    assert "only the ReLU can read it out" in words["relu"]["r2"]
    assert "only the ReLU" not in words["linear"]["r2"] and "lost" in words["linear"]["r2"]
    assert "pairing features antipodally, which the corner measures" in words["relu"]["columns"]
    assert "antipodally would take the ReLU" in words["linear"]["columns"]
    assert words["relu"]["loss"] == words["linear"]["loss"]  # true of both models alike
    linear_run = dataclasses.replace(lab_run, config=linear)
    escaped = {n: html.escape(w) for n, w in words["linear"].items()}
    assert export_rows(bows_animation.export_html(linear_run)) == escaped
    assert page.update_captions("linear") == [words["linear"][n] for n in lab.PANEL_SET.names]
    assert page.update_captions("relu") == [words["relu"][n] for n in lab.PANEL_SET.names]
    assert all(v is no_update for v in page.update_captions("tanh"))
    assert lab_cards("?model=linear") == words["linear"]
