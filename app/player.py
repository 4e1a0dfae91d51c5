"""The player: one scrubber that drives every panel of a page, play/pause, step, keyboard.

All of it runs in the browser (`assets/tempsup.js`): a page's view store already holds
each frame's figure data, so moving the slider re-renders the panels without a round
trip to the server. The player's ids are pattern-matching (`ids.player(part, page)`, the
graphs `ids.graph(page, panel)`), so its callbacks are registered once, below, for every
page that lays out `controls(page)` — the explorer and the correlations lab; the browser
reads each graph's panel from its id.

The explorer's player card (`layout`) adds the seed and feature menus and the share link.
"""

from __future__ import annotations

from typing import Any

from dash import ALL, MATCH, Input, Output, State, callback, clientside_callback, dcc, html

from app import ids
from app.view import empty_view
from app.widgets import js, scrubber
from tempsup.core.frames import frame_label
from tempsup.figures import NEAR_BEST

TICK_MS = 120  # ~8 frames a second: 100 frames play in about 12 s
INITIAL_VIEW = empty_view("loading…")


def row(
    page: str, maximum: int = 0, value: int = 0, marks: dict | None = None, label: bool = False
) -> html.Div:
    """◀ Play ▶ and the scrubber of `page` (with its play interval, and with `label` the
    frame label): stepping and playing work on any page that lays this out, also without a
    view store (Compare)."""

    def button(text: str, part: str, title: str) -> html.Button:
        return html.Button(text, id=ids.player(part, page), n_clicks=0, title=title)

    return html.Div(
        className="player-row",
        children=[
            button("◀", ids.PREV, "previous frame (←)"),
            button("Play", ids.PLAY, "play / pause (space)"),
            button("▶", ids.NEXT, "next frame (→)"),
            scrubber(ids.player(ids.FRAME, page), maximum=maximum, value=value, marks=marks),
            *(
                [html.Span(id=ids.player(ids.FRAME_LABEL, page), className="frame-label")]
                if label
                else []
            ),  # fmt: skip
            dcc.Interval(id=ids.player(ids.TICK, page), interval=TICK_MS, disabled=True),
        ],
    )


def controls(page: str, view: Any = INITIAL_VIEW, request: Any = None) -> list[Any]:
    """The row with its frame label, and `page`'s view store (prefilled with `view`) whose
    frames the scrubber picks; `request`: the frame a link asks for (`follow` in JS).

    A prefilled page opens its scrubber on the frame it shows, so its panels are drawn
    once, at that frame, rather than at frame 1 and then again."""
    last = max(0, _n_frames(view) - 1)
    return [
        row(page, maximum=last, value=opening_frame(view, request), label=True),
        dcc.Store(id=ids.player(ids.VIEW, page), data=view),
        dcc.Store(id=ids.player(ids.REQUEST, page), data=request),
    ]


def opening_frame(view: Any, request: Any = None) -> int:
    """The frame (0-based) a page with `view` inside opens on, as `follow` in
    assets/tempsup.js would move it: the link's frame when it asks for one of this run,
    else the last frame."""
    n = _n_frames(view)
    if n == 0:
        return 0
    frame = request.get("frame") if isinstance(request, dict) else None
    if (
        isinstance(frame, int)
        and not isinstance(frame, bool)
        and request.get("key") == view.get("key")
    ):
        return max(0, min(frame, n - 1))
    return n - 1


def label(view: Any, frame: Any) -> str:
    """The line under the player at `frame` (0-based) of `view`, as assets/tempsup.js
    `draw` writes it: `tempsup.core.frames.frame_label` and that frame's status line."""
    n = _n_frames(view)
    if not n:
        return str(view.get("message", "")) if isinstance(view, dict) else ""
    i = max(0, min(frame if isinstance(frame, int) else n - 1, n - 1))
    summaries = view.get("summaries") or []
    summary = summaries[i] if i < len(summaries) else ""
    return frame_label(i, n, view["steps"][i]) + (f" · {summary}" if summary else "")


def _n_frames(view: Any) -> int:
    n = view.get("n", 0) if isinstance(view, dict) else 0
    return n if isinstance(n, int) and n > 0 else 0


def _p(part: str) -> dict[str, Any]:
    return ids.player(part, MATCH)


FRAME, VIEW, REQUEST, TICK, PLAY = (_p(ids.FRAME), _p(ids.VIEW), _p(ids.REQUEST), _p(ids.TICK),
                                    _p(ids.PLAY))  # fmt: skip

clientside_callback(
    js("render"),
    Output(ids.graph(MATCH, ALL), "figure"),
    Output(_p(ids.FRAME_LABEL), "children"),
    Input(FRAME, "value"),
    Input(VIEW, "data"),
)
# the slider's range follows the frames; while training it follows the newest; a link's
# frame (the request store) is applied once that run's frames are all in
clientside_callback(
    js("follow"),
    Output(FRAME, "max"),
    Output(FRAME, "value", allow_duplicate=True),
    Output(REQUEST, "data", allow_duplicate=True),
    Input(VIEW, "data"),
    State(FRAME, "value"),
    State(FRAME, "max"),
    State(ids.job(ids.STORE, MATCH), "data"),
    State(REQUEST, "data"),
    prevent_initial_call="initial_duplicate",  # a page may arrive with its frames inside
)
# Play / Pause, and each tick of the play interval
clientside_callback(
    js("play"),
    Output(FRAME, "value", allow_duplicate=True),
    Output(TICK, "disabled"),
    Output(PLAY, "children"),
    Input(PLAY, "n_clicks"),
    Input(TICK, "n_intervals"),
    State(TICK, "disabled"),
    State(FRAME, "value"),
    State(FRAME, "max"),
    prevent_initial_call=True,
)
clientside_callback(
    js("step"),
    Output(FRAME, "value", allow_duplicate=True),
    Input(_p(ids.PREV), "n_clicks"),
    Input(_p(ids.NEXT), "n_clicks"),
    State(FRAME, "value"),
    State(FRAME, "max"),
    prevent_initial_call=True,
)


# ---- the explorer's player card -------------------------------------------------------


def layout(
    seed_options: list | None = None,
    seed: int | None = None,
    view: Any = INITIAL_VIEW,
    request: Any = None,
    n_features: int = 1,
) -> html.Div:
    """The explorer's player card (sticky: it stays in view while the panels scroll; on a
    phone only its first row, the menus scroll away: assets/player-pinned.css); a
    prefilled page passes its run's seeds, its view, the view its link asks for and its
    number of features (the menu opens on the link's feature)."""
    feature = _asked_feature(request, request.get("key") if isinstance(request, dict) else None,
                             n_features)  # fmt: skip
    return html.Div(
        className="card player",
        children=[
            *controls(ids.EXPLORER, view, request),
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
                        title="every feature's w_k is drawn; the one picked here also shows "
                        "its other ages, its readout and its interference-free half-space",
                        children=[
                            "highlight feature ",
                            dcc.Dropdown(
                                id=ids.FEATURE_PICK,
                                # the page opens with the one-feature choice the callback
                                # gives for N_x = 1: the menu's button is never nameless
                                options=feature_options(n_features),
                                value=0 if feature is None else feature,
                                disabled=n_features == 1,
                                clearable=False,
                                className="feature-pick",
                            ),
                        ],
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
        ],
    )


def hint() -> html.P:
    """What ✓ means, under the player (the player card stays in view, this scrolls away)."""
    return html.P(f"✓ and “near the best loss”: {NEAR_BEST}.", className="hint player-hint")


def feature_options(n_inputs: int) -> list[dict[str, object]]:
    """Features are named A, B, C, … in decreasing importance. The directions panel draws
    every feature's w_k; the one picked is highlighted (its other ages, readout, half-space)."""
    return [{"label": _feature_name(i), "value": i} for i in range(n_inputs)]


def _feature_name(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"x{i}"


@callback(
    Output(ids.FEATURE_PICK, "options"),
    Output(ids.FEATURE_PICK, "disabled"),
    Output(ids.FEATURE_PICK, "value"),
    Input(ids.CONFIG, "data"),
    State(ids.FEATURE_PICK, "value"),
    State(ids.player(ids.REQUEST, ids.EXPLORER), "data"),
)
def update_features(store: dict | None, current: object, request: Any = None):
    """One entry per input feature; the one a link asks for (its `feature`), else keep the
    chosen one while it exists."""
    n = 1
    if isinstance(store, dict) and isinstance(store.get("config"), dict):
        value = store["config"].get("inputs")
        n = value if isinstance(value, int) and 1 <= value <= 128 else 1
    asked = _asked_feature(request, store.get("key") if isinstance(store, dict) else None, n)
    if asked is not None:
        return feature_options(n), n == 1, asked
    keep = isinstance(current, int) and not isinstance(current, bool) and 0 <= current < n
    return feature_options(n), n == 1, current if keep else 0


def _asked_feature(request: Any, key: Any, n_features: int) -> int | None:
    """The feature (0-based) a share link asks for (REQUEST store) of the config `key`."""
    if not isinstance(request, dict) or request.get("key") != key or key is None:
        return None
    feature = request.get("feature")
    valid = isinstance(feature, int) and not isinstance(feature, bool)
    return feature if valid and 0 <= feature < n_features else None


# The link to exactly this view: the config (the URL's query), the seed shown, the frame
# and the feature (named as the menu names it).
clientside_callback(
    js("share_link"),
    Output(ids.SHARE_LINK, "href"),
    Input(ids.URL, "search"),
    Input(ids.player(ids.FRAME, ids.EXPLORER), "value"),
    Input(ids.job(ids.STORE, ids.EXPLORER), "data"),
    Input(ids.player(ids.VIEW, ids.EXPLORER), "data"),
    Input(ids.FEATURE_PICK, "value"),
    State(ids.FEATURE_PICK, "options"),
)

# A per-browser id for the per-client job limit, made once and kept locally.
clientside_callback(
    js("client_id"),
    Output(ids.CLIENT, "data"),
    Input(ids.ROOT_URL, "pathname"),
    State(ids.CLIENT, "data"),
)
