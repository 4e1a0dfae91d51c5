"""The gallery: every claim of the paper as a card that opens its run in one click.

Cards come from `tempsup.paper.presets` (the runs, the recipe, the check). Their runs
are queued as low-priority jobs when the server starts (`app.services.queue_presets`),
so on a fresh start a card says how many
of its runs are ready and fills in as they finish; afterwards it is instant.
Each card shows a thumbnail of its main run, the measured claims with their
seed success rates (each with the numbers behind it and its criterion, folded),
and links into the explorer (or the compare page).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from dash import Input, Output, callback, dcc, html

from app import ids, preset_runs
from app.pages import intro, register
from app.urlstate import compare_href, query_from_config
from tempsup.errors import TempsupError
from tempsup.figures.thumbnail import THUMB_HEIGHT
from tempsup.io.run import Run
from tempsup.paper.preset import ClaimResult, Preset, measured_items
from tempsup.paper.presets import card_picture as presets_card_picture
from tempsup.paper.presets import presets

POLL_MS = 3000  # cards refresh while presets are still training


def layout() -> html.Div:
    return html.Div(
        children=[
            intro(
                "The paper's claims, one click each",
                "Every card trains (or has trained) the runs behind one claim of the paper and "
                "measures it on them: the numbers and how many seeds agree are on the card. "
                "Open a run to watch it form in the explorer.",
            ),
            dcc.Interval(id=ids.GALLERY_POLL, interval=POLL_MS),
            # filled by `refresh` as soon as the page shows: building the layout never
            # touches the job store (the app must start even while the store is down)
            html.Div(id=ids.GALLERY_CARDS, className="gallery", children=html.P("Loading…")),
        ]
    )


def card_picture(
    preset: Preset, quick: bool, ready: dict[str, Run]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The picture the preset chose for its card (`tempsup.paper.presets.card_picture`,
    which the static site draws too), cached by which of its runs are ready: a finished
    run never changes."""
    return _picture(preset.name, quick, tuple(sorted(ready)))


@lru_cache(maxsize=32)
def _picture(
    name: str, quick: bool, labels: tuple[str, ...]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    p = next(p for p in presets(quick) if p.name == name)
    runs = preset_runs.ready(p)
    return presets_card_picture(p, {label: runs[label] for label in labels if label in runs})


def claim_rows(results: tuple[ClaimResult, ...]) -> html.Ul:
    """Each claim with its verdict, its count (saying what it counts), the claim's own
    sentence of what was measured — the words the lesson, the report and the README use —
    every number behind it, and the criterion (all on the card, none folded away)."""
    items = []
    for r in results:
        mark = "✓ held" if r.held else "✗ did not hold"
        numbers = "; ".join(measured_items(r.measured))
        said = r.statement or numbers
        items.append(
            html.Li(
                className="held" if r.held else "not-held",
                children=[
                    html.Strong(mark),
                    f" — {r.claim} ",
                    html.Span(f"({r.count_text})", className="rate"),
                    html.Div(
                        className="measured",
                        children=[html.Span("measured: ", className="what"), said],
                    ),
                    html.Div(
                        className="numbers",
                        children=[html.Span("numbers: ", className="what"), numbers],
                    )
                    if said != numbers
                    else None,
                    html.Div(
                        className="criterion",
                        children=[html.Span("criterion: ", className="what"), r.criterion],
                    )
                    if r.criterion
                    else None,
                ],
            )
        )
    return html.Ul(className="claims", children=items)


def links(preset: Preset) -> list[Any]:
    out = [
        dcc.Link(f"open {label}", href="/" + query_from_config(cfg), className="chip")
        for label, cfg in zip(preset.labels, preset.configs, strict=True)
    ]
    if len(preset.configs) == 2:
        out.append(dcc.Link("compare side by side", className="chip",
                            href=compare_href(preset.configs[0], preset.configs[1])))  # fmt: skip
    return out


def card(preset: Preset, quick: bool, ready: dict[str, Run]) -> html.Div:
    n, total = len(ready), len(preset.configs)
    body: list[Any]
    if n < total:
        body = [html.P(f"Training in the background: {n} of {total} runs ready.",
                       className="status")]  # fmt: skip
    else:
        try:
            results = preset_runs.checked(preset.name, quick, preset.keys)
            body = [claim_rows(results)]
        except TempsupError as exc:
            body = [html.P(f"Could not check this preset: {exc}", className="error")]
    thumb, notes = card_picture(preset, quick, ready)
    graph = (
        html.Figure(
            className="thumb",
            children=[
                dcc.Graph(
                    figure=thumb, config={"staticPlot": True}, style={"height": f"{THUMB_HEIGHT}px"}
                ),
                html.Figcaption(" · ".join(notes)) if notes else None,
            ],
        )  # fmt: skip
        if thumb
        else html.Div(className="thumb-placeholder", children="…")
    )
    return html.Div(
        className="card preset",
        id=f"preset-{preset.name}",
        children=[
            html.H2(preset.title),
            graph,
            html.P(preset.claim, className="explain"),
            *body,
            html.Div(className="chips", children=links(preset)),
            html.Details([html.Summary("recipe"), html.Ul([html.Li(r) for r in preset.recipe])]),
        ],
    )


def cards() -> tuple[list[html.Div], bool]:
    """Every preset's card, and whether some of their runs are still training."""
    if preset_runs.off():
        return [html.P(preset_runs.OFF)], False
    quick = preset_runs.quick()
    out, pending = [], False
    for p in presets(quick):
        ready = preset_runs.ready(p)
        pending |= len(ready) < len(p.configs)
        out.append(card(p, quick, ready))
    return out, pending


@callback(
    Output(ids.GALLERY_CARDS, "children"),
    Output(ids.GALLERY_POLL, "disabled"),
    Input(ids.GALLERY_POLL, "n_intervals"),
)
def refresh(_n: int):
    """Redraw the cards while runs are still training; stop once all are ready."""
    content, pending = cards()
    return content, not pending


register("/gallery", "Gallery", layout, order=1)
