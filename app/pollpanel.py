"""The class poll on the lesson page: the teacher's class, the students' predictions.

A teacher presses "Start a class poll": the page shows the class code, the
short link `/lesson?class=CODE` and its QR code (drawn here by segno as SVG;
no network), and — refreshed every 2 s while that view is open — how the
class predicted the step on screen, as counts and bars, before the teacher
reveals the answer. The class's secret key stays in that browser tab
(session storage). A student who opens the link sees which class they are in;
"Send my prediction" (or Reveal, if they skip it) sends the prediction
(`tempsup.teaching.poll.Poll.vote`) under a random id their browser made and keeps
(local storage), so one browser counts once per step; the answer stays theirs
to reveal, after the teacher has shown the class's counts. The lesson's step
links keep the class (`step_href`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import segno
from dash import Input, Output, State, callback, clientside_callback, ctx, dcc, html, no_update

from app import ids
from app.pollapi import class_poll, client_address
from tempsup.errors import TempsupError
from tempsup.teaching import lesson
from tempsup.teaching.poll import CODE, PollRefused, Results, choice_identity, normal_code

PATH = "/lesson"
REFRESH_MS = 2000

# 128 random bits from the browser's own generator (works without https too), kept.
clientside_callback(
    """function (_path, current) {
        if (typeof current === "string" && /^[0-9a-f]{32}$/.test(current)) {
            return window.dash_clientside.no_update;
        }
        const bytes = new Uint8Array(16);
        window.crypto.getRandomValues(bytes);
        return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    }""",
    Output(ids.POLL_BROWSER, "data"),
    Input(ids.ROOT_URL, "pathname"),
    State(ids.POLL_BROWSER, "data"),
)


def class_of(search: str | None) -> str | None:
    """The class a lesson URL names (`?class=…`, as typed), or None."""
    if not isinstance(search, str):
        return None
    raw = parse_qs(search.lstrip("?")[:400]).get("class", [None])[0]
    return raw.strip()[:40] if raw and raw.strip() else None


def step_href(number: int, search: str | None = None) -> str:
    """The link to lesson step `number`, in the class the current URL names (if any)."""
    code = class_of(search)
    try:
        query = {"step": number, "class": normal_code(code)} if code else {"step": number}
    except PollRefused:
        query = {"step": number}
    return f"{PATH}?{urlencode(query)}"


def class_link(href: Any, code: str) -> str:
    """The full link students open: this page's origin and `/lesson?class=CODE`."""
    url = urlsplit(href if isinstance(href, str) else "")
    origin = f"{url.scheme}://{url.netloc}" if url.scheme and url.netloc else ""
    return f"{origin}{PATH}?class={code}"


def qr_code(link: str) -> html.Img:
    """The link's QR code as an SVG image (dark on white, readable in dark mode too)."""
    uri = segno.make(link, error="m").svg_data_uri(scale=6, border=2, dark="#000", light="#fff")
    return html.Img(src=uri, alt=f"QR code of the class link {link}", className="poll-qr")


def starter() -> list[Any]:
    return [
        html.P(
            [
                html.Strong("Teaching a class? "),
                "Start a class poll: students open the lesson on their phones with a code, "
                "and you see how the class predicted each step before you reveal it. "
                "Anonymous, no accounts; a class lasts a day.",
            ],
            className="explain",
        ),
        html.Button("Start a class poll", id=ids.POLL_START, className="secondary"),
    ]


def student(code_text: str) -> list[Any]:
    try:
        code = normal_code(code_text)
        running = class_poll().exists(code)
    except TempsupError as exc:  # a mistyped code; the store out of reach
        return [html.P(str(exc), className="error")]
    if not running:
        return [
            html.P(
                f"Class {code} is not running: it ended (a class lasts a day) or the code is "
                "mistyped. Ask your teacher for the current link; the lesson works without it.",
                className="error",
            )
        ]
    return [
        html.P(
            [
                "You are in class ",
                html.Strong(code, className="poll-code"),
                "; your prediction is counted anonymously when you send it (one per step).",
            ],
            className="poll-student",
        )
    ]


def teacher(data: dict[str, Any], href: Any) -> list[Any]:
    code = data["code"]
    link = class_link(href, code)
    return [
        html.H2(["Class poll ", html.Span(code, className="poll-code")]),
        html.Div(
            className="poll-join",
            children=[
                qr_code(link),
                html.Div(
                    [
                        html.P(["Class code ", html.Strong(code, className="poll-code")]),
                        html.P(html.A(link, href=link, className="poll-link")),
                        html.P(
                            "Students open the link or scan the code; each browser's "
                            "prediction counts once per step, anonymously. The class ends in "
                            "a day.",
                            className="explain",
                        ),
                    ]
                ),
            ],
        ),
        html.Div(id=ids.POLL_RESULTS, className="poll-results"),
        dcc.Interval(id=ids.POLL_TICK, interval=REFRESH_MS),
        html.Button("End the poll", id=ids.POLL_END, className="secondary"),
    ]


def _teaching(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("code"), str)
        and bool(CODE.match(data["code"]))
    )


def shown(search: str | None, data: Any = None) -> str:
    """What the panel shows for this query and tab: the teacher's class, a student's
    class, or the offer. The same answer means the same panel, so it is not redrawn
    (a redraw would undo a click made on it meanwhile)."""
    if _teaching(data):
        return f"teacher:{data['code']}"
    code = class_of(search)
    return f"student:{code}" if code else "offer"


def content(search: str | None, data: Any = None, href: Any = None) -> list[Any]:
    """The panel: the teacher's class (this tab made one), a student's class, or the offer."""
    if _teaching(data):
        return teacher(data, href)
    code = class_of(search)
    return student(code) if code else starter()


def panel(search: str | None) -> html.Section:
    """The poll's part of the lesson page (drawn for a student's link at once)."""
    return html.Section(
        className="card poll",
        **{"aria-label": "class poll"},
        children=[
            dcc.Store(id=ids.POLL_BROWSER, storage_type="local"),
            dcc.Store(id=ids.POLL_TEACHER, storage_type="session"),
            dcc.Store(id=ids.POLL_SHOWN, data=shown(search)),
            html.Div(id=ids.POLL_PANEL, children=content(search)),
        ],
    )


def vote_part(search: str | None) -> html.Div:
    """Above a step's Reveal, in a class: Send my prediction, and whether it was counted.

    Out of a class the part is there but hidden (its callback needs its button)."""
    return html.Div(
        className="poll-send",
        hidden=class_of(search) is None,
        children=[
            html.Button("Send my prediction", id=ids.POLL_SEND, className="primary"),
            html.Div(id=ids.POLL_NOTE, className="poll-note", **{"aria-live": "polite"}),
        ],
    )


def results_view(res: Results) -> list[Any]:
    rows = res.shown()
    total = res.total
    items = []
    for choice, count in rows:
        pct = round(100 * count / total) if total else 0
        items.append(
            html.Li(
                className="poll-row",
                **{"data-count": str(count)},
                children=[
                    html.Span(choice, className="poll-choice"),
                    html.Span(f"{count} ({pct} %)", className="poll-count"),
                    html.Div(
                        className="poll-bar",
                        **{"aria-hidden": "true"},
                        children=html.Div(className="poll-fill", style={"width": f"{pct}%"}),
                    ),
                ],
            )
        )
    said = "prediction" if total == 1 else "predictions"
    return [
        html.H3(f"Step {res.step}: {total} {said}", className="poll-total"),
        html.Ol(items, className="poll-rows"),
        html.P(
            f"{res.browsers} {'browser' if res.browsers == 1 else 'browsers'} in the class so "
            "far. Updated live; the answer is not marked here — reveal it when the class "
            "has predicted.",
            className="explain",
        ),
    ]


@callback(
    Output(ids.POLL_PANEL, "children"),
    Output(ids.POLL_SHOWN, "data"),
    Input(ids.ROOT_URL, "search"),
    Input(ids.POLL_TEACHER, "data"),
    State(ids.ROOT_URL, "pathname"),
    State(ids.ROOT_URL, "href"),
    State(ids.POLL_SHOWN, "data"),
)
def on_panel(search: str | None, data: Any, pathname: str | None, href: str | None, drawn: Any):
    """Redraw the panel when what it shows changes (the page's URL is read on load:
    the same panel again would draw over a click on Start made meanwhile)."""
    now = shown(search, data)
    if pathname != PATH or now == drawn:
        return no_update, no_update
    return content(search, data, href), now


@callback(
    Output(ids.POLL_TEACHER, "data", allow_duplicate=True),
    Input(ids.POLL_START, "n_clicks"),
    prevent_initial_call=True,
)
def on_start(clicks: int | None):
    """Start a class; its key stays in this tab. A refusal shows in the page's alert line."""
    if not clicks:
        return no_update  # the button drawn anew, not pressed
    made = class_poll().create(client_address())
    return {"code": made.code, "key": made.key}


@callback(
    Output(ids.POLL_TEACHER, "data"),
    Input(ids.POLL_END, "n_clicks"),
    State(ids.POLL_TEACHER, "data"),
    prevent_initial_call=True,
)
def on_end(clicks: int | None, data: Any):
    """End the class: its code stops working and its votes are deleted."""
    if not clicks:
        return no_update
    if isinstance(data, dict):
        class_poll().end(data.get("code"), data.get("key"), client_address())
    return None


@callback(
    Output(ids.POLL_RESULTS, "children"),
    Input(ids.POLL_TICK, "n_intervals"),
    Input(ids.LESSON_STEP, "data"),
    State(ids.POLL_TEACHER, "data"),
)
def on_tick(_n: int | None, step: Any, data: Any):
    if not isinstance(data, dict):
        return no_update
    try:
        res = class_poll().results(data.get("code"), data.get("key"), step, client_address())
    except PollRefused as exc:
        return html.P(str(exc), className="error")
    return results_view(res)


@callback(
    Output(ids.POLL_NOTE, "children"),
    Input(ids.POLL_SEND, "n_clicks"),
    Input(ids.LESSON_REVEAL, "n_clicks"),
    State(ids.LESSON_CHOICE, "value"),
    State(ids.LESSON_STEP, "data"),
    State(ids.ROOT_URL, "search"),
    State(ids.POLL_BROWSER, "data"),
    prevent_initial_call=True,
)
def on_vote(
    sent: int | None, revealed: int | None, picked: Any, step: Any, search: Any, browser: Any
):
    """A student in a class sends their prediction (Send, or Reveal if they skip it)."""
    code = class_of(search)
    by_reveal = ctx.triggered_id == ids.LESSON_REVEAL
    if code is None or not (revealed if by_reveal else sent):
        return no_update
    if picked is None:
        return no_update if by_reveal else html.P("Pick an answer first.", className="error")
    try:
        if not isinstance(picked, int) or isinstance(step, bool) or not isinstance(step, int):
            raise PollRefused("expected a step and one of its choices")
        identity = choice_identity(lesson.step_number(f"step={step}"), picked)
        count = class_poll().vote(code, step, browser, identity, client_address())
    except PollRefused as exc:
        if by_reveal and exc.status == 409:
            return no_update  # sent before revealing: the note says so already
        return html.P(f"Not counted: {exc}.", className="error")
    so_far = "the first" if count == 1 else f"{count} so far"
    return html.P(
        f"✓ Counted: your prediction for step {step} went to the teacher anonymously ({so_far}).",
        className="held",
    )
