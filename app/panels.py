"""The four synchronised panels: their cards and what to look for in each.

Which panels there are, in which order, with which heading and caption, is the panel
registry's (`tempsup.figures.rnn`, shared with the HTML export and the static site):
this module only places them. A caption is a headline, always visible, and its
explanation behind a native "Why?" disclosure (`html.Details`: keyboard-reachable, no
script). Before a run shows, the captions are the config's (they follow the CONFIG
store: the server writes them to the CAPTIONS store); once it shows, each headline is
the run's, with its numbers, which the view store carries (`app.view.shared_parts`),
and the browser puts them in place as the view arrives or grows. Figures come from
`tempsup.figures` (shared with the HTML export); the browser swaps each graph's data for
the frame under the scrubber (`assets/tempsup.js`), so scrubbing never waits for the server.
"""

from __future__ import annotations

import json
from typing import Any

from dash import Input, Output, callback, clientside_callback, dcc, html, no_update

from app import ids
from tempsup.analysis.captions import WHY, Caption
from tempsup.core.palette import empty_figure
from tempsup.errors import TempsupError
from tempsup.figures import rnn
from tempsup.figures.panel import PanelEntry
from tempsup.model.config import DEFAULTS, RunConfig

PAPER_URL = "https://openreview.net/forum?id=7cMzTpbJHC"
WAITING = "waiting for the first frame…"  # a card's figure until a run shows
VIEW = ids.player(ids.VIEW, ids.EXPLORER)  # the explorer's view store


Panel = PanelEntry  # a panel's name (the graph's id carries it: `ids.graph`) and title
PANELS = rnn.PANEL_SET.entries  # the cards, in the registry's order


def directions_explanation(config: RunConfig) -> Caption:
    """The directions panel's caption for this config (`tempsup.analysis.captions`)."""
    return explanation(rnn.PANEL_SET.entry("directions"), config)


def explanation(panel: Panel, config: RunConfig) -> Caption:
    """A panel's caption for the config on screen before its run shows: written per model
    by `tempsup.analysis.captions`."""
    return rnn.panel_captions(config)[panel.name]


def caption_block(name: str, caption: Caption) -> html.Div:
    """A caption as the page shows it: the headline, then the explanation folded under a
    native disclosure (its summary a focusable control), ids from the panel's `name`."""
    return html.Div(
        id=ids.explain(name),
        className="explain caption",
        children=[
            html.P(caption.headline, id=ids.headline(name), className="headline"),
            html.Details(
                className="why",
                children=[html.Summary(WHY), html.P(caption.why, id=ids.why(name))],
            ),
        ],
    )


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
            caption_block(panel.name, explanation(panel, config)),
        ],
    )


def captions_store(config: RunConfig) -> dict[str, Any]:
    """The CAPTIONS store: the config's key and each panel's caption for it."""
    words = rnn.panel_captions(config)
    return {"key": config.key, "captions": {name: c.to_dict() for name, c in words.items()}}


def grid(config: RunConfig = DEFAULTS) -> html.Div:
    """The four panels, captioned for `config` (the captions follow the CONFIG store, and
    the headlines the run on screen)."""
    return html.Div(
        className="panels",
        children=[
            dcc.Store(id=ids.CAPTIONS, data=captions_store(config)),
            *[card(p, config) for p in rnn.PANEL_SET.entries],
        ],
    )


@callback(
    Output(ids.CAPTIONS, "data"),
    Input(ids.CONFIG, "data"),
    prevent_initial_call=True,
)
def update_captions(store: Any):
    """The captions for the config on screen (a broken store changes nothing)."""
    try:
        config = RunConfig.from_dict(store["config"])
    except (TempsupError, KeyError, TypeError):
        return no_update
    return captions_store(config)


# Each headline is the run's when the view on screen is of the config on screen (its key),
# else the config's; each explanation is the config's. Runs in the browser: the view store
# grows with every poll while a job streams, and is never sent back to the server.
clientside_callback(
    """
    function (view, words) {
      const names = NAMES;
      const none = window.dash_clientside.no_update;
      const config = (words && words.captions) || null;
      if (!config) return names.map(() => none).concat(names.map(() => none));
      const run = view && view.captions && view.key === words.key ? view.captions : {};
      return names.map((n) => run[n] || config[n].headline)
        .concat(names.map((n) => config[n].why));
    }
    """.replace("NAMES", json.dumps(list(rnn.PANELS))),
    [Output(ids.headline(p.name), "children") for p in PANELS]
    + [Output(ids.why(p.name), "children") for p in PANELS],
    Input(VIEW, "data"),
    Input(ids.CAPTIONS, "data"),
)
