"""The four synchronised panels: their cards and what to look for in each.

Which panels there are, in which order, with which heading and caption, is the panel
registry's (`tempsup.figures.rnn`, shared with the HTML export and the static site):
this module only places them. The captions are written per model and all four follow
the config on screen. Figures come from
`tempsup.figures` (shared with the HTML export); the browser swaps each graph's data for
the frame under the scrubber (`assets/tempsup.js`), so scrubbing never waits for the server.
"""

from __future__ import annotations

from typing import Any

from dash import Input, Output, callback, dcc, html, no_update

from app import ids
from tempsup.core.palette import empty_figure
from tempsup.errors import TempsupError
from tempsup.figures import rnn
from tempsup.figures.panel import PanelEntry
from tempsup.model.config import DEFAULTS, RunConfig

PAPER_URL = "https://openreview.net/forum?id=7cMzTpbJHC"
WAITING = "waiting for the first frame…"  # a card's figure until a run shows


Panel = PanelEntry  # a panel's name (the graph's id carries it: `ids.graph`) and title
PANELS = rnn.PANEL_SET.entries  # the cards, in the registry's order


def directions_explanation(config: RunConfig) -> str:
    """The directions panel's caption for this config (`tempsup.analysis.captions`)."""
    return explanation(rnn.PANEL_SET.entry("directions"), config)


def explanation(panel: Panel, config: RunConfig) -> str:
    """A panel's caption for the config on screen: written per model
    by `tempsup.analysis.captions`."""
    return rnn.panel_captions(config)[panel.name]


def card(panel: Panel, config: RunConfig = DEFAULTS) -> html.Div:
    return html.Div(
        className="card panel",
        children=[
            html.H2(panel.title),
            dcc.Graph(
                id=ids.graph(ids.EXPLORER, panel.name),
                figure=empty_figure(WAITING),
                config={"displaylogo": False, "responsive": True},
                className="graph",
                style={"height": "30rem"},
            ),
            html.P(explanation(panel, config), id=ids.explain(panel.name), className="explain"),
        ],
    )


def grid(config: RunConfig = DEFAULTS) -> html.Div:
    """The four panels, captioned for `config` (the captions follow the CONFIG store)."""
    return html.Div(className="panels", children=[card(p, config) for p in rnn.PANEL_SET.entries])


@callback(
    [Output(ids.explain(p.name), "children") for p in PANELS],
    Input(ids.CONFIG, "data"),
    prevent_initial_call=True,
)
def update_captions(store: Any):
    """Every caption for the config on screen (a broken store changes nothing)."""
    try:
        config = RunConfig.from_dict(store["config"])
    except (TempsupError, KeyError, TypeError):
        return [no_update] * len(PANELS)
    words = rnn.panel_captions(config)
    return [words[p.name] for p in PANELS]
