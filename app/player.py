"""The player: one scrubber that drives every panel, play/pause, step, keyboard.

All of it runs in the browser (`assets/tempsup.js`): the `VIEW` store already
holds each frame's figure data, so moving the slider re-renders the four
panels without a round trip to the server.
"""

from __future__ import annotations

from dash import ClientsideFunction, Input, Output, State, callback, clientside_callback, dcc, html

from app import ids
from app.panels import PANELS
from app.view import empty_view
from app.widgets import player_row, wire_player
from tempsup.figures import NEAR_BEST

TICK_MS = 120  # ~8 frames a second: 100 frames play in about 12 s


def layout(seed_options: list | None = None, seed: int | None = None) -> html.Div:
    """The player card (sticky: it stays in view while the panels scroll); a prefilled page
    passes its run's seeds."""
    return html.Div(
        className="card player",
        children=[
            player_row(ids.PLAY, ids.FRAME, ids.FRAME_LABEL, steppers=(ids.PREV, ids.NEXT)),
            html.Div(
                className="player-row",
                children=[
                    html.Label(
                        [
                            "seed ",
                            dcc.Dropdown(
                                id=ids.SEED_PICK,
                                options=seed_options or [],
                                value=seed,
                                clearable=False,
                                placeholder="best seed",
                                className="seed-pick",
                            ),
                        ]
                    ),
                    html.Label(
                        [
                            "feature ",
                            dcc.Dropdown(
                                id=ids.FEATURE_PICK,
                                options=[],
                                value=0,
                                clearable=False,
                                className="feature-pick",
                            ),
                        ]
                    ),
                    html.A(
                        "share link",
                        id=ids.SHARE_LINK,
                        href="",
                        className="share",
                        title="click to copy a link to exactly this view: the configuration, "
                        "the seed shown and the frame",
                    ),
                    html.Span(id=ids.SHARE_FEEDBACK, className="share-feedback", role="status"),
                ],
            ),
            dcc.Interval(id=ids.TICK, interval=TICK_MS, disabled=True),
        ],
    )


def hint() -> html.P:
    """What ✓ means, under the player (the player card stays in view, this scrolls away)."""
    return html.P(f"✓ and “near the best loss”: {NEAR_BEST}.", className="hint player-hint")


def feature_options(n_inputs: int) -> list[dict[str, object]]:
    """Features are named A, B, C, … in decreasing importance."""
    return [{"label": _feature_name(i), "value": i} for i in range(n_inputs)]


def _feature_name(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"x{i}"


@callback(
    Output(ids.FEATURE_PICK, "options"),
    Output(ids.FEATURE_PICK, "disabled"),
    Output(ids.FEATURE_PICK, "value"),
    Input(ids.CONFIG, "data"),
    State(ids.FEATURE_PICK, "value"),
)
def update_features(store: dict | None, current: object):
    """One entry per input feature; keep the chosen one while it exists."""
    n = 1
    if isinstance(store, dict) and isinstance(store.get("config"), dict):
        value = store["config"].get("inputs")
        n = value if isinstance(value, int) and 1 <= value <= 128 else 1
    keep = isinstance(current, int) and not isinstance(current, bool) and 0 <= current < n
    return feature_options(n), n == 1, current if keep else 0


wire_player(
    frame=ids.FRAME,
    tick=ids.TICK,
    play=ids.PLAY,
    view=ids.VIEW,
    job=ids.JOB,
    graphs=[p.graph for p in PANELS],
    label=ids.FRAME_LABEL,
    steppers=(ids.PREV, ids.NEXT),
    request=ids.REQUEST,
)

# The link to exactly this view: the config (the URL's query), the seed shown, the frame.
clientside_callback(
    ClientsideFunction(namespace="tempsup", function_name="share_link"),
    Output(ids.SHARE_LINK, "href"),
    Input(ids.URL, "search"),
    Input(ids.FRAME, "value"),
    Input(ids.JOB, "data"),
    Input(ids.VIEW, "data"),
)

# A per-browser id for the per-client job limit, made once and kept locally.
clientside_callback(
    ClientsideFunction(namespace="tempsup", function_name="client_id"),
    Output(ids.CLIENT, "data"),
    Input(ids.ROOT_URL, "pathname"),
    State(ids.CLIENT, "data"),
)

INITIAL_VIEW = empty_view("loading…")
