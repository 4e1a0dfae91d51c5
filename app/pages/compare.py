"""Two runs side by side, one scrubber: e.g. the SSM dense vs sparse, linear vs ReLU.

The page's URL holds both runs as explorer queries (`/compare?left=…&right=…`),
so a comparison is a shareable link too; "share link" adds the scrubber's place
(`at`, the percentage of training), which a link opens on. Each side is served from the job
store (or trained if missing) exactly like the explorer; the scrubber moves
through the *fraction* of training, so runs of different lengths stay aligned.
Each side has a seed menu (default: the run's best seed; a pick is kept in the
link as `left_seed` / `right_seed`), and once both runs are in, each panel kind
is drawn on one scale on both sides (`common_scale`), so the eye compares sizes, but
for an axis that maps values to heights differently on the two sides (the loss panel's
symmetric log, whose band follows the config): each side keeps its own (`own_scales`).
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlparse

from dash import (
    ALL,
    Input,
    Output,
    Patch,
    State,
    callback,
    clientside_callback,
    ctx,
    dcc,
    html,
    no_update,
)

from app import ids, player
from app.jobwidget import submit
from app.jobwords import describe
from app.pages import register
from app.panels import PANELS
from app.services import job_queue
from app.streams import finished_run
from app.urlstate import compare_at, compare_href, config_from_query, query_from_config
from app.view import empty_view, full_view, seed_options
from app.widgets import js
from tempsup.core.palette import empty_figure
from tempsup.errors import TempsupError
from tempsup.jobs.record import JobState
from tempsup.model.config import FIELDS, MODEL_NAMES, RunConfig

SIDES = ("left", "right")
SEED_PICKS = {"left": ids.COMPARE_LEFT_SEED, "right": ids.COMPARE_RIGHT_SEED}
PERCENT = 100  # the scrubber moves through the percentage of training
# Ready-made comparisons (left, right), all the paper's own contrasts.
EXAMPLES = {
    "SSM: dense vs sparse": (RunConfig(model="ssm", sparsity=0.3), RunConfig(model="ssm")),
    "Linear RNN vs SSM (S = 0.9)": (RunConfig(model="linear"), RunConfig(model="ssm")),
    "Smooth vs sharp forgetting": (
        RunConfig(model="linear", sparsity=0.97),
        RunConfig(model="rnn", sparsity=0.97),
    ),
}


def compare_column(side: str) -> html.Div:
    """One side of the comparison: its seed picker above its panels."""
    return html.Div(
        className="compare-col",
        children=[
            html.Label(
                className="compare-seed",
                children=[
                    f"{side} seed ",
                    dcc.Dropdown(
                        id=SEED_PICKS[side],
                        options=[],
                        value=None,
                        clearable=False,
                        placeholder="best seed",
                        className="seed-pick",
                    ),
                ],
            ),
            *[
                html.Div(
                    className="card panel",
                    children=[
                        dcc.Graph(
                            id=ids.compare_graph(side, p.name),
                            className="compare-graph",
                            figure=empty_figure("…"),
                            config={"displaylogo": False},
                        ),
                    ],
                )
                for p in PANELS
            ],
        ],
    )


def links_card() -> html.Div:
    """The two explorer links to compare, with examples one click away."""
    examples = [dcc.Link(name, href=compare_href(a, b), className="chip")
                for name, (a, b) in EXAMPLES.items()]  # fmt: skip
    fields = [
        html.Label(
            className="field",
            children=[
                html.Span(f"{side} run"),
                dcc.Input(
                    id=id_,
                    placeholder=f"{side.lower()}: an explorer link",
                    className="wide",
                    debounce=True,
                ),
            ],
        )
        for side, id_ in (("Left", ids.COMPARE_LEFT), ("Right", ids.COMPARE_RIGHT))
    ]
    return html.Div(
        className="card",
        children=[
            html.H2("Compare two runs"),
            html.Div(className="chips", children=["Examples: ", *examples]),
            html.Div(
                className="compare-links",
                children=[*fields, html.Button("Compare", id=ids.COMPARE_GO, n_clicks=0)],
            ),
            html.Div(id=ids.COMPARE_ERROR, className="error", role="alert"),
            html.Div(id=ids.COMPARE_STATUS, className="status", role="status"),
        ],
    )


def player_card() -> html.Div:
    """One scrubber for both runs (percent of training), with its share link."""
    # the player stays in view while the panels scroll (assets/style.css: .player)
    return html.Div(
        className="card player",
        children=[
            player.row(
                ids.COMPARE, maximum=PERCENT, value=PERCENT, marks={0: "start", PERCENT: "end"}
            ),
            html.Div(id=ids.COMPARE_LABEL, className="frame-label"),
            html.A(
                "share link",
                id=ids.COMPARE_SHARE,
                href="",
                className="share",
                title="click to copy a link to this comparison at this point",
            ),
            html.Span(id=ids.COMPARE_SHARE_FEEDBACK, className="share-feedback", role="status"),
        ],
    )


def layout() -> html.Div:
    return html.Div(
        children=[
            dcc.Location(id=ids.COMPARE_URL, refresh="callback-nav"),
            dcc.Store(id=ids.COMPARE_VIEWS),
            dcc.Store(id=ids.COMPARE_SENT),
            dcc.Interval(id=ids.COMPARE_POLL, interval=700, disabled=True),
            links_card(),
            player_card(),
            html.Div(className="compare-grid", children=[compare_column(s) for s in SIDES]),
        ]
    )


def side_configs(search: str | None) -> tuple[RunConfig, RunConfig, list[str]]:
    """The two configs a /compare query names (defaults: the SSM's two regimes)."""
    params = parse_qs(search.lstrip("?") if isinstance(search, str) else "")
    defaults = EXAMPLES["SSM: dense vs sparse"]
    configs, errors = [], []
    for side, default in zip(SIDES, defaults, strict=True):
        text = (params.get(side) or [""])[0]
        if not text:
            configs.append(default)
            continue
        config, errs = config_from_query(text[:2000])
        configs.append(config)
        errors += [f"{side}: {e}" for e in errs]
    return configs[0], configs[1], errors + compare_at(search)[1]


def _link_query(text: Any) -> str:
    """The query part of a pasted explorer link (or of a bare query)."""
    if not isinstance(text, str):
        return ""
    text = text.strip()[:2000]
    return urlparse(text).query if "?" in text else text


def _describe(config: RunConfig) -> str:
    return f"{MODEL_NAMES[config.model]}, k = {config.k}, S = {config.sparsity:g}"


def check_link(side: str, text: Any) -> tuple[str, list[str]]:
    """The query of one pasted explorer link, and what is wrong with it (field, value and
    allowed range in `RunConfig`'s words; nothing: it can be compared)."""
    query = _link_query(text)
    if not query:
        return "", [f"{side}: paste an explorer link (e.g. …/?model=ssm&k=3&sparsity=0.9)"]
    names = {name for name, _ in parse_qsl(query, keep_blank_values=True)}
    if not names & set(FIELDS):
        return query, [f"{side}: {str(text).strip()[:80]!r} names no setting of a run"]
    _, errors = config_from_query(query)
    return query, [f"{side}: {e}" for e in errors]


@callback(
    Output(ids.COMPARE_URL, "search"),
    Output(ids.COMPARE_ERROR, "children"),
    Input(ids.COMPARE_GO, "n_clicks"),
    State(ids.COMPARE_LEFT, "value"),
    State(ids.COMPARE_RIGHT, "value"),
    prevent_initial_call=True,
)
def compare_links(_n: int, left: Any, right: Any):
    """Two pasted explorer links become this page's query; a bad one is named instead."""
    (a, errs_a), (b, errs_b) = check_link("left", left), check_link("right", right)
    if errs_a or errs_b:
        return no_update, "Not compared: " + "; ".join(errs_a + errs_b)
    try:
        return "?" + urlencode({"left": a, "right": b}), ""
    except UnicodeError:  # text no URL can carry
        return no_update, "Not compared: the links hold characters no URL can carry"


@callback(
    Output(ids.COMPARE_LEFT, "value"),
    Output(ids.COMPARE_RIGHT, "value"),
    Input(ids.COMPARE_URL, "search"),
)
def fill_links(search: str | None):
    """The link boxes show the two runs being compared (as explorer queries)."""
    left, right, _ = side_configs(search)
    return query_from_config(left), query_from_config(right)


def side_seeds(search: str | None, configs: Any) -> tuple[dict[str, int | None], list[str]]:
    """The seed each side's link asks for (`left_seed`, `right_seed`; None: the run's best),
    and a message for a value that names none of that config's seeds."""
    params = dict(parse_qsl(search.lstrip("?") if isinstance(search, str) else ""))
    seeds: dict[str, int | None] = {}
    errors = []
    for side, config in zip(SIDES, configs, strict=True):
        text = params.get(f"{side}_seed")
        seeds[side] = None
        if text is None:
            continue
        value = int(text) if text.isdigit() and len(text) < 6 else None
        if value is None or value >= config.seeds:
            errors.append(
                f"{side}_seed: expected an integer in [0, {config.seeds - 1}], got {text[:40]!r}"
            )
        else:
            seeds[side] = value
    return seeds, errors


def common_scale(views: dict[str, Any]) -> dict[str, Any]:
    """Both sides' panels on one scale: per panel kind, each axis both sides give an explicit
    range of the same type and the same mapping of values to coordinates gets the range
    that holds both (copies: views are cached). An axis whose mapping differs between the
    sides keeps its own scale on each (`own_scales` names those panels)."""
    if not _both_in(views):
        return views
    out = {s: {**views[s], "layouts": copy.deepcopy(views[s]["layouts"])} for s in SIDES}
    for panel, a in out["left"]["layouts"].items():
        b = out["right"]["layouts"].get(panel)
        if isinstance(b, dict):
            for axis_a, axis_b in _axis_pairs(a, b):
                _union(axis_a, axis_b)
    return out


def own_scales(views: dict[str, Any]) -> list[str]:
    """The panels whose axes cannot share one scale across the two sides (`_same_mapping`):
    each side keeps its own there, and the page says so."""
    if not _both_in(views):
        return []
    left, right = (views[s]["layouts"] for s in SIDES)
    return [panel for panel, a in left.items() if isinstance(right.get(panel), dict)
            and not all(_same_mapping(x, y) for x, y in _axis_pairs(a, right[panel]))]  # fmt: skip


def _both_in(views: dict[str, Any]) -> bool:
    """Whether both sides hold a run's frames (views with a frame count)."""
    return all(isinstance(views.get(side), dict) and views[side].get("n") for side in SIDES)


def _axis_pairs(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[dict, dict]]:
    """The axes two layouts of one panel kind share: xaxis…, yaxis…, and a scene's x/y/z."""
    pairs = []
    for key in a.keys() & b.keys():
        if key.startswith(("xaxis", "yaxis")) and isinstance(a[key], dict):
            pairs.append((a[key], b[key]))
        elif key.startswith("scene") and isinstance(a[key], dict) and isinstance(b[key], dict):
            for k in ("xaxis", "yaxis", "zaxis"):
                if isinstance(a[key].get(k), dict) and isinstance(b[key].get(k), dict):
                    pairs.append((a[key][k], b[key][k]))
    return pairs


def _union(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Give both axes the range holding both (kept reversed if both are), and an axis
    labelled by its own ticks the labels of both."""
    ra, rb = a.get("range"), b.get("range")
    if a.get("type") != b.get("type") or not (_pair(ra) and _pair(rb)):
        return
    if not _same_mapping(a, b):
        return
    lo, hi = min(*ra, *rb), max(*ra, *rb)
    both = [hi, lo] if ra[0] > ra[1] and rb[0] > rb[1] else [lo, hi]
    a["range"], b["range"] = list(both), list(both)
    ticks = _ticks(a) | _ticks(b)
    for axis in (a, b):
        axis.pop("autorange", None)
        if "autorangeoptions" in axis:  # autoscale stops at the common scale, not one side's
            axis["autorangeoptions"] = {"clipmin": lo, "clipmax": hi}
        if ticks:  # each side's labels covered its own range only
            axis["tickvals"] = sorted(ticks.values())
            axis["ticktext"] = sorted(ticks, key=ticks.__getitem__)


def _ticks(axis: dict[str, Any]) -> dict[str, float]:
    """Label -> coordinate of an axis whose figure places its ticks (tickmode "array")."""
    if axis.get("tickmode") != "array":
        return {}
    return dict(zip(axis.get("ticktext") or [], axis.get("tickvals") or [], strict=False))


def _same_mapping(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether a coordinate means the same value on both axes. An axis whose figure places
    its own labels draws a transform of the values (the loss panel's symmetric log, whose
    linear band follows the run's config: `tempsup.figures.loss.symlog_band`): the two
    share it when every label both show sits at the same coordinate and they show one
    besides 0. A range unioned across two bands put 1 on one side at the height of 0.1 on
    the other."""
    ta, tb = _ticks(a), _ticks(b)
    if not ta and not tb:
        return True
    shared = (ta.keys() & tb.keys()) - {"0"}
    return bool(shared) and all(
        math.isclose(ta[t], tb[t], rel_tol=1e-3, abs_tol=1e-6) for t in shared
    )


def _pair(r: Any) -> bool:
    return (
        isinstance(r, (list, tuple))
        and len(r) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in r)
    )


def _tag(view: dict[str, Any]) -> str:
    """What a side's view is, in a few words: its run, seed and frames, or its message."""
    return json.dumps([view.get(k) for k in ("key", "seed", "n", "message")])


def changed_sides(
    views: dict[str, Any], sent: Any, everything: bool
) -> tuple[Any, dict[str, str], list[str]]:
    """The COMPARE_VIEWS output for a page that holds the views `sent` names: all of it
    (`everything`: a new comparison) or a Patch of the sides that changed (a side joining
    the common scale changes the other's layouts); no_update if none did. Also the new
    SENT store and the sides re-sent whole."""
    tags = {side: _tag(views[side]) for side in SIDES}
    sent = sent if isinstance(sent, dict) else {}
    if everything or not all(isinstance(sent.get(s), str) for s in SIDES):
        return views, tags, list(SIDES)
    changed = [side for side in SIDES if sent[side] != tags[side]]
    if not changed:
        return no_update, tags, []
    patch = Patch()
    for side in SIDES:
        if side in changed:
            patch[side] = views[side]
        elif all(views[s].get("n") for s in SIDES):  # now on one scale: its axes may move
            patch[side]["layouts"] = views[side]["layouts"]
    return patch, tags, changed


@callback(
    Output(ids.COMPARE_VIEWS, "data"),
    Output(ids.COMPARE_POLL, "disabled"),
    Output(ids.COMPARE_STATUS, "children"),
    Output(ids.COMPARE_LEFT_SEED, "options"),
    Output(ids.COMPARE_LEFT_SEED, "value"),
    Output(ids.COMPARE_RIGHT_SEED, "options"),
    Output(ids.COMPARE_RIGHT_SEED, "value"),
    Output(ids.COMPARE_SENT, "data"),
    Input(ids.COMPARE_URL, "search"),
    Input(ids.COMPARE_POLL, "n_intervals"),
    State(ids.CLIENT, "data"),
    State(ids.COMPARE_SENT, "data"),
)
def load_pair(search: str | None, _n: Any, client: Any, sent: Any = None):
    """Serve both runs, training what is missing; poll until both are done. Each side shows
    the seed its link asks for, else its best; both are drawn on one scale once in. A poll
    sends only the sides that changed since the last answer (`changed_sides`); finished
    runs are decoded once per web process (`app.streams.finished_run`)."""
    left, right, errors = side_configs(search)
    asked, seed_errors = side_seeds(search, (left, right))
    errors += seed_errors
    queue = job_queue()
    views: dict[str, Any] = {}
    menus: dict[str, tuple[list, int | None]] = {side: ([], None) for side in SIDES}
    lines, pending = [], False
    for side, config in zip(SIDES, (left, right), strict=True):
        status = queue.status(config.key)
        if status is None or status.state in (JobState.FAILED, JobState.CANCELLED):
            try:
                status = submit(config, client)
            except TempsupError as exc:
                lines.append(f"{side}: refused: {exc}")
                views[side] = empty_view(str(exc))
                continue
        run = finished_run(queue, config, status) if status.state == JobState.DONE else None
        if run is None:
            pending = True
            views[side] = empty_view(f"{side}: {describe(status)}")
            lines.append(f"{side} ({_describe(config)}): {describe(status)}")
        else:
            seed = run.best if asked[side] is None else asked[side]
            views[side] = full_view(run, seed)
            menus[side] = (seed_options(run), seed)
            lines.append(f"{side}: {_describe(config)}")
    if not pending and _both_in(views):
        own = own_scales(views)
        lines.append("both sides on one scale" + (
            f", but each side's {' and '.join(own)} panel on its own (their symmetric-log"
            " bands differ: one height is another loss on each side)" if own else ""))  # fmt: skip
    text = " · ".join(lines + [f"ignored: {e}" for e in errors])
    everything = ctx.triggered_id != ids.COMPARE_POLL
    data, tags, resent = changed_sides(common_scale(views), sent, everything)
    kept = (no_update, no_update)
    menu_out = [v for side in SIDES for v in (menus[side] if side in resent else kept)]
    return (data, not pending, text, *menu_out, tags)


@callback(
    Output(ids.COMPARE_URL, "search", allow_duplicate=True),
    Input(ids.COMPARE_LEFT_SEED, "value"),
    Input(ids.COMPARE_RIGHT_SEED, "value"),
    State(ids.COMPARE_URL, "search"),
    State(ids.COMPARE_VIEWS, "data"),
    prevent_initial_call=True,
)
def pick_seeds(left: Any, right: Any, search: str | None, views: Any):
    """A seed picked in a side's menu goes into the link (`left_seed`, `right_seed`), which
    redraws that side; the seed a side shows by default (its best) stays out of it."""
    params = dict(parse_qsl(search.lstrip("?") if isinstance(search, str) else ""))
    views = views if isinstance(views, dict) else {}
    changed = False
    for side, value in zip(SIDES, (left, right), strict=True):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 10_000:
            continue
        key, view = f"{side}_seed", views.get(side)
        drawn = view.get("seed") if isinstance(view, dict) else None
        if params.get(key) == str(value) or (key not in params and drawn == value):
            continue
        params[key] = str(value)
        changed = True
    if not changed:
        return no_update
    try:
        return "?" + urlencode(params)
    except UnicodeError:  # a query no URL can carry: leave the page's as it is
        return no_update


@callback(
    Output(ids.player(ids.FRAME, ids.COMPARE), "value", allow_duplicate=True),
    Input(ids.COMPARE_URL, "search"),
    prevent_initial_call="initial_duplicate",
)
def open_at(search: str | None):
    """The scrubber opens where the link says (`at`); a bad value is named by `load_pair`."""
    at, _ = compare_at(search)
    return no_update if at is None else at


# the link to this comparison at the scrubber's place
clientside_callback(
    js("compare_link"),
    Output(ids.COMPARE_SHARE, "href"),
    Input(ids.COMPARE_URL, "search"),
    Input(ids.player(ids.FRAME, ids.COMPARE), "value"),
)

# one scrubber (the shared player's row: play, step, ticks) over both runs
clientside_callback(
    js("render_pair"),
    Output(ids.compare_graph(ALL, ALL), "figure"),
    Output(ids.COMPARE_LABEL, "children"),
    Input(ids.player(ids.FRAME, ids.COMPARE), "value"),
    Input(ids.COMPARE_VIEWS, "data"),
)

register("/compare", "Compare", layout, order=3)
