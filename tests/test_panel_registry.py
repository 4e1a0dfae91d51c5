"""The panel registry is the one place a panel is named: the app's cards, the animation,
the HTML export and the static site all read `tempsup.figures.rnn.PANEL_SET` (fast: one
shipped run, no training)."""

from __future__ import annotations

import dataclasses
import html

import pytest

from tempsup import captions, site
from tempsup.figures import animation, eigen, rnn
from tempsup.figures.panel import PanelEntry
from tempsup.paper import shipped
from tempsup.paper.presets import preset
from tempsup.run import Run


@pytest.fixture(scope="module")
def run():
    """A shipped run's last three frames (every panel and caption as on the whole run)."""
    out = shipped.load(preset("spiral-sink").configs[0])
    assert out is not None
    return Run(out.config, {name: a[-3:] for name, a in out.arrays.items()})


def cards(config) -> list[tuple[str, str, str]]:
    """The app's panel cards for `config`: (graph id's panel, heading, caption)."""
    from app import panels

    out = []
    for card in panels.grid(config).children:
        heading, graph, words = card.children
        out.append((graph.id["panel"], heading.children, words.children))
    return out


def export_rows(page: str) -> dict[str, str]:
    """The export summary's "<name> panel" rows: name -> the caption as HTML-escaped."""
    rows = {}
    for cell in page.split("<tr><th>")[1:]:
        key, _, rest = cell.partition("</th><td>")
        if key.endswith(" panel"):
            rows[key.removesuffix(" panel")] = rest.partition("</td>")[0]
    return rows


def subplot_titles(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def expect_everywhere(run, entries: tuple[PanelEntry, ...]) -> None:
    """Every surface shows exactly `entries`, each with its registry title and caption."""
    cfg = run.config
    planned = captions.Computed.plan(cfg)
    assert cards(cfg) == [(e.name, e.title, e.caption(cfg, planned)) for e in entries]

    done = captions.Computed.of_run(run["terms"][:, run.best], run["expected_loss"][:, run.best])
    words = {e.name: html.escape(e.caption(cfg, done)) for e in entries}
    assert export_rows(animation.export_html(run)) == words

    listed = site.panel_captions_html(run)
    for e in entries:
        assert f"<li><strong>{e.name}</strong>: {words[e.name]}</li>" in listed
    assert listed.count("<li>") == len(entries)

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


def test_a_panel_added_to_the_registry_shows_up_on_every_surface(run, monkeypatch) -> None:
    fifth = PanelEntry(
        "spectrum", eigen, cell=(3, 1), title="A fifth panel",
        caption=lambda config, computed: f"The fifth panel's words for k = {config.k}.",
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


def test_a_changed_title_or_caption_changes_every_surface(run, monkeypatch) -> None:
    entries = tuple(
        dataclasses.replace(
            e, title=f"Renamed {e.name}", caption=lambda c, d, n=e.name: f"New {n}."
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
