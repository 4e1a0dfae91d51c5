"""A class watching one job: the classroom benchmark polls exactly what the page polls, and
a poll reads and sends only the frames the page lacks (issue 25, "Viewers that read only
what is new").

Driven as the browser drives the app: POSTs to `/_dash-update-component` through Flask's
test client, built by the benchmark's own `PageState` from `/_dash-dependencies`; the job
is fed by hand (the worker's `claim` and `put_frame`), so each poll's frame count is known.
"""

from __future__ import annotations

import copy
import json
from itertools import chain
from typing import Any

import pytest

from app import ids
from app.view import unpacked
from benchmarks.load_test import JOB, POLL, STATUS, DashCalls, PageState
from tempsup import figures
from tempsup.analysis.sweeps import train_runs
from tempsup.model.config import RunConfig
from tests.browser import comparable, merged_frames

CONFIG = RunConfig(steps=400, batch=16, seeds=2, snapshot_every=4)  # 101 frames
VIEW = ids.text(ids.player(ids.VIEW, ids.EXPLORER))


@pytest.fixture(scope="module")
def trained():
    (run,) = train_runs([CONFIG])
    return run


@pytest.fixture
def served(tmp_path, monkeypatch):
    """(Flask test client, the app, the job queue): a fresh store, fresh process caches."""
    monkeypatch.setenv("TEMPSUP_CACHE", str(tmp_path / "jobs"))
    monkeypatch.delenv("TEMPSUP_REDIS_URL", raising=False)
    monkeypatch.setenv("TEMPSUP_MAX_PER_MINUTE", "off")
    from app import app, services, streams

    # frames are fed by hand between polls: each poll reads what was fed (the tick that
    # coalesces a class's reads has its own test)
    monkeypatch.setattr(streams, "STREAM_TICK_S", 0.0)
    monkeypatch.setattr(streams, "READS_PER_POLL", float("inf"))  # however slow the polls
    services.job_queue.cache_clear()
    _forget()
    app.server.testing = True
    yield app.server.test_client(), app, services.job_queue()
    services.job_queue.cache_clear()
    _forget()


def _forget() -> None:
    """Forget what this process has decoded (keys repeat across the tests' stores)."""
    from importlib.util import find_spec

    if find_spec("app.streams") is not None:
        from app import streams

        streams.clear()
    if find_spec("app.audience") is not None:
        from app import audience

        audience.clear()  # pages counted by other tests (and their clocks) count not here


class Page(PageState):
    """The benchmark's page, which also keeps the view store as the renderer patches it."""

    def __init__(self, calls: DashCalls, client: str) -> None:
        super().__init__(calls, client)
        self.view: Any = None
        self.sizes: list[int] = []

    def send(self, http, body: dict[str, Any] | None) -> dict[str, Any]:
        assert body is not None, "the poll is disabled"
        response = http.post("/_dash-update-component", json=body)
        assert response.status_code in (200, 204), response.status_code
        payload = response.data
        self.sizes.append(len(payload))
        self.answer(payload)
        answer = json.loads(payload)["response"] if payload else {}
        value = answer.get(VIEW, {}).get("data")
        if isinstance(value, dict) and "__dash_patch_update" in value:
            for op in value["operations"]:
                _apply(self.view, op)
        elif value is not None:
            self.view = copy.deepcopy(value)
        return answer


def _apply(store: Any, op: dict[str, Any]) -> None:
    """One Dash patch operation, as the renderer applies it (the ones the app sends)."""
    *path, last = op["location"]
    for part in path:
        store = store[part]
    value = op["params"].get("value")
    if op["operation"] == "Assign":
        store[last] = value
    elif op["operation"] == "Extend":
        store[last].extend(value)
    elif op["operation"] == "Delete":
        del store[last]
    else:
        raise AssertionError(f"an operation the app does not send: {op['operation']}")


def _text(ident: Any) -> str:
    """A component id as `/_dash-dependencies` names it (a dict id by `ids.text`)."""
    return ids.text(ident) if isinstance(ident, dict) else ident


def _named(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(id, property) of request items or dependency items; a request must send a dict id
    as the object (the renderer does), a dependency lists it as text."""
    out = []
    for i in items:
        ident = i["id"]
        if isinstance(ident, str) and ident.startswith("{") and "value" in i:
            raise AssertionError(f"a dict id sent as text: {ident}")
        out.append((_text(json.loads(ident)) if isinstance(ident, str) and ident.startswith("{")
                    else _text(ident), i["property"]))  # fmt: skip
    return out


def _dep(deps: list[dict[str, Any]], output: str) -> dict[str, Any]:
    return next(d for d in deps if d["output"] == output)


def test_the_classroom_sends_the_requests_of_the_page_callbacks(served, trained):
    """Each request the benchmark sends names a callback the app registered (its outputs,
    inputs and states in the app's order, dict ids as objects, as the renderer sends
    them), carries the values the page holds after the previous answers, and gets a
    normal answer from the explorer's show_config and poll."""
    from app.controls import config_store

    http, app, queue = served
    deps = http.get("/_dash-dependencies").get_json()
    page = Page(DashCalls(deps), "viewer-00")
    body = page.open_link(CONFIG)
    dep = _dep(deps, body["output"])
    names = {d["output"]: getattr(app.callback_map[d["output"]]["callback"], "__wrapped__", None)
             for d in deps if not d.get("clientside_function")}  # fmt: skip
    assert names[body["output"]].__name__ == "show_config"
    assert _named(body["inputs"] + body["state"]) == _named(dep["inputs"] + dep["state"])
    values = {(_text(i["id"]), i["property"]): i["value"] for i in body["inputs"] + body["state"]}
    assert values[(ids.CONFIG, "data")] == config_store(CONFIG, autostart=True)
    assert values[(ids.CLIENT, "data")] == "viewer-00"
    assert body["changedPropIds"] == [f"{ids.CONFIG}.data"]
    answer = page.send(http, body)
    job = answer[JOB]["data"]
    assert job["key"] == CONFIG.key and job["state"] == "queued"  # joined: the link trains

    claim = queue.claim()
    for i, frame in enumerate(_frames(trained)[:3]):
        queue.put_frame(claim, i, frame)
    body = page.tick()
    assert body is not None and names[body["output"]].__name__ == "poll"
    dep = _dep(deps, body["output"])
    assert _named(body["inputs"] + body["state"]) == _named(dep["inputs"] + dep["state"])
    state = {(_text(i["id"]), i["property"]): i["value"] for i in body["state"]}
    assert state[(JOB, "data")] == job  # the job store, as the last answer left it
    assert state[(ids.CONFIG, "data")] == config_store(CONFIG, autostart=True)
    assert state[(ids.SEED_PICK, "value")] == answer[ids.SEED_PICK]["value"]
    assert body["changedPropIds"] == [f"{POLL}.n_intervals"]
    assert body["inputs"][0]["value"] == 1
    page.send(http, body)


def _frames(run) -> list[dict[str, Any]]:
    from tempsup.jobs.kinds import get_kind

    return get_kind("run").frames_of(run, 0)


def _class(http, queue, n: int) -> tuple[list[Page], list[list[Any]]]:
    """`n` pages that opened the link to CONFIG, and the list every read of frames from
    the store is appended to from now on."""
    deps = http.get("/_dash-dependencies").get_json()
    pages = [Page(DashCalls(deps), f"viewer-{i}") for i in range(n)]
    for page in pages:
        page.send(http, page.open_link(CONFIG))
    read: list[list[Any]] = []
    frames_of = queue.frames
    queue.frames = lambda key, start=0: read.append(out := frames_of(key, start)) or out
    return pages, read


def test_a_poll_reads_and_sends_only_the_frames_the_page_lacks(served, trained):
    """Three pages watch one job stream, polling at different moments. Each frame is read
    from the store about once in the web process (not once per poll and page, from frame
    0), a poll's answer does not grow with the frames the page already has, and what the
    patches build is the view of the whole stream."""
    from app.view import stream_view
    from tempsup.io.run import Run

    http, _, queue = served
    pages, read = _class(http, queue, 3)
    frames = _frames(trained)
    claim = queue.claim()
    one_new: dict[int, int] = {}  # frame count -> bytes of a poll that brought one frame
    for i, frame in enumerate(frames[:-1]):  # the job still runs: no final answer yet
        queue.put_frame(claim, i, frame)
        for p, page in enumerate(pages):
            if (i + p) % 3 == 0 or p == 0:
                page.send(http, page.tick())
                if p == 0:
                    one_new[i + 1] = page.sizes[-1]
    n = len(frames) - 1
    assert all(page.job["cursor"] == n for page in pages[:1])
    decoded = sum(len(r) for r in read)
    assert decoded <= 2 * n, f"{decoded} frames read from the store for {n} frames"
    early, late = one_new[5], one_new[n]
    assert late < 1.25 * early, f"a one-frame poll: {early} bytes at frame 5, {late} at {n}"
    part = Run(CONFIG, {k: v[:n] for k, v in trained.arrays.items()})
    for page in pages:
        page.send(http, page.tick())  # the last frames the slower pages lack
        want = stream_view(part, page.view["seed"], 0)
        got = page.view
        assert got["n"] == n and got["steps"] == want["steps"]
        assert got["summaries"] == want["summaries"]
        for key in ("layouts", "base", "moving"):
            assert got[key] == json.loads(json.dumps(want[key])), key
        for panel, per_frame in merged_frames(got).items():
            assert len(per_frame) == n
            assert [[comparable(panel, t) for t in f] for f in per_frame] == [
                [comparable(panel, t) for t in unpacked(f)] for f in want["frames"][panel]
            ], panel
        # lean: a frame carries what differs from the stream's first frame, not its styles
        sent, whole = (sum(map(len, chain(*v["frames"].values()))) for v in (got, want))
        assert sent < 0.5 * whole, f"streamed frames {sent} bytes, whole {whole}"


def test_pages_finding_the_whole_view_being_drawn_answer_at_once_and_get_it_next(
    served, trained, monkeypatch
):
    """When a class's job ends, every page asks for the same whole view at once: one
    request draws it; a page that asks meanwhile is answered at once (its streamed frames
    stay, the poll goes on) instead of holding a server thread, and gets the view on its
    next poll."""
    import threading

    from app import view as view_module
    from app.memo import Memo

    http, app, queue = served
    deps = http.get("/_dash-dependencies").get_json()
    first, second = (Page(DashCalls(deps), f"viewer-{i}") for i in range(2))
    for page in (first, second):
        page.send(http, page.open_link(CONFIG))
    claim = queue.claim()
    for i, frame in enumerate(_frames(trained)[:5]):
        queue.put_frame(claim, i, frame)
    for page in (first, second):
        page.send(http, page.tick())
        assert page.view["n"] == 5
    assert queue.finish(claim, trained)
    gate, drawing, draw = threading.Event(), threading.Event(), view_module._view

    def slow_draw(*args, **kwargs):
        drawing.set()
        assert gate.wait(30), "the test never let the drawing finish"
        return draw(*args, **kwargs)

    monkeypatch.setattr(view_module, "_view", slow_draw)
    monkeypatch.setattr(view_module, "_FULL_VIEWS", Memo(4))  # none drawn by other tests
    body = first.tick()
    other = threading.Thread(target=lambda: first.send(app.server.test_client(), body))
    other.start()
    try:
        assert drawing.wait(30), "the first page's poll did not draw the whole view"
        answer = second.send(http, second.tick())  # the drawing is not done: answered now
        assert VIEW not in answer and second.view["n"] == 5
        assert STATUS not in answer  # the job bar says done with the view that shows it
        assert answer[POLL]["disabled"] is False  # it asks again
    finally:
        gate.set()
        other.join(30)
    assert first.view["n"] == trained.n_frames and first.job["state"] == "done"
    second.send(http, second.tick())
    assert second.view == first.view and second.job["state"] == "done"
    assert second.values[f"{POLL}.disabled"] is True


def test_a_cancelled_run_opened_by_a_class_is_read_once(served, trained):
    """Ten pages open a cancelled job's kept frames: the web process reads them all once
    (then only the last, to check the job was not trained again)."""
    http, _, queue = served
    deps = http.get("/_dash-dependencies").get_json()
    queue.submit(CONFIG, client="teacher")
    claim = queue.claim()
    for i, frame in enumerate(_frames(trained)[:40]):
        queue.put_frame(claim, i, frame)
    queue.cancel(CONFIG.key)
    from tempsup.jobs.record import JobState

    queue.end(claim, JobState.CANCELLED, "cancelled")
    read = []
    frames_of = queue.frames
    queue.frames = lambda key, start=0: read.append(out := frames_of(key, start)) or out
    for i in range(10):
        page = Page(DashCalls(deps), f"viewer-{i}")
        page.send(http, page.open_link(CONFIG))
        assert page.view["n"] == 40 and page.job["state"] == "cancelled"
    assert sum(len(r) for r in read) <= 40 + 9


def test_a_compare_poll_resends_no_side_that_did_not_change(served, trained):
    """Compare polls while a side trains: a side already on the page is not sent again."""
    from app.pages.compare import changed_sides
    from app.view import empty_view, full_view

    done = full_view(trained, trained.best)
    views = {"left": done, "right": empty_view("right: queued")}
    first, tags, resent = changed_sides(views, None, everything=True)
    assert first is views and resent == ["left", "right"]
    again, tags2, resent2 = changed_sides(views, tags, everything=False)
    assert resent2 == [] and tags2 == tags
    from dash import no_update

    assert again is no_update
    views["right"] = empty_view("right: training 10%")
    patch, _, resent3 = changed_sides(views, tags, everything=False)
    ops = patch.to_plotly_json()["operations"]
    assert resent3 == ["right"] and all(op["location"][0] == "right" for op in ops)


def test_a_class_polling_within_the_tick_shares_one_read_of_new_frames(
    served, trained, monkeypatch
):
    """Frames arrive one at a time while five pages poll: within `STREAM_TICK_S` of a read,
    the web process neither reads the store again nor draws a new frame count (every page
    gets the frames it read last), and a poll after the tick brings every frame that
    arrived meanwhile. Nothing is lost: the last polls reach the job's frame count."""
    from app import streams

    http, _, queue = served
    clock = [1000.0]
    monkeypatch.setattr(streams.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(streams, "STREAM_TICK_S", 0.25)
    pages, read = _class(http, queue, 5)
    frames = _frames(trained)
    claim = queue.claim()
    queue.put_frame(claim, 0, frames[0])
    for page in pages:
        page.send(http, page.tick())  # the first frame: read at once
    assert [p.view["n"] for p in pages] == [1] * 5 and len(read) == 1
    for i in range(1, 11):  # ten frames within one tick, every page polling after each
        clock[0] += 0.02
        queue.put_frame(claim, i, frames[i])
        for page in pages:
            page.send(http, page.tick())
    assert len(read) == 1, "the store was read again within the tick"
    assert [p.view["n"] for p in pages] == [1] * 5
    clock[0] += 0.25  # the tick has passed: one read brings all ten
    for page in pages:
        page.send(http, page.tick())
    assert len(read) == 2 and [p.view["n"] for p in pages] == [11] * 5
    assert all(p.job["cursor"] == 11 for p in pages)


def test_a_page_last_answered_by_the_other_web_process_gets_the_changes_not_the_parts(
    served, trained
):
    """A page's cursor is the frame count of whichever web process answered it last; the
    processes read a stream at their own moments, so this one may never have drawn that
    count. Simulated by forgetting the shared parts this process drew: the next poll still
    sends only what changed (no layout or last frame whole, a few kB rather than the parts'
    tens), and the page's store is the view of the whole stream."""
    from app import streams
    from app.view import stream_view

    http, _, queue = served
    (page,), _ = _class(http, queue, 1)
    frames = _frames(trained)
    claim = queue.claim()
    sizes = {}
    for crossed in (False, True):
        for i in range(20 * crossed, 20 * crossed + 10):
            queue.put_frame(claim, i, frames[i])
        page.send(http, page.tick())
        for i in range(20 * crossed + 10, 20 * crossed + 20):
            queue.put_frame(claim, i, frames[i])
        if crossed:
            streams._stream(CONFIG).parts.clear()  # the counts this process drew: forgotten
        answer = page.send(http, page.tick())
        sizes[crossed] = page.sizes[-1]
        ops = answer[VIEW]["data"]["operations"]
        whole = [op["location"] for op in ops if op["location"][0] in ("layouts", "base")
                 and len(op["location"]) == 1]  # fmt: skip
        assert whole == [], f"parts sent whole: {whole}"
    assert sizes[True] < 1.3 * sizes[False], sizes
    part = trained.first_frames(40)
    want = stream_view(part, page.view["seed"], 0)
    assert page.view["n"] == 40
    for key in ("layouts", "base", "moving"):
        assert page.view[key] == json.loads(json.dumps(want[key])), key


def test_every_web_process_merges_its_frames_over_the_same_template():
    """Two web processes that first read a stream at different frame counts (simulated by
    forgetting everything between them) hold the same template, so a page that got its
    template from one and frames from the other draws each frame as it was drawn. The run
    is one whose panel square grows while it trains (its axes reach 1.4 at the first frame,
    3.6 at the last), and each frame is drawn from the frames up to it alone (`causal`):
    the first frame drawn with the whole run is the first frame drawn alone."""
    from app import streams
    from app.view import frame_data

    config = RunConfig(seed=78, steps=600, batch=16, seeds=2, snapshot_every=30)  # 21 frames
    (run,) = train_runs([config])

    held = {}
    for first in (1, 21):
        streams.clear()
        sel = streams._selection(streams._stream(config), run.first_frames(first), 0, 0)
        held[first] = json.loads(json.dumps(sel))
    streams.clear()
    assert held[1]["template"] == held[21]["template"]
    drawn = json.loads(json.dumps(frame_data(run, 0, 0, 0)))
    first = run.first_frames(1)
    alone = frame_data(first, 0, 0, 0)["directions"][0][0]  # the half-space, frame 0
    assert alone == drawn["directions"][0][0]  # drawn with the whole run: the same
    grown = [figures.panel_layout("directions", r, 0)["xaxis"]["range"][1] for r in (first, run)]
    assert grown[1] > 2 * grown[0]  # while the run's axes grew
    template = held[1]["template"]  # the page's, from the process that read 1 frame first
    for panel, frames in held[21]["frames"].items():
        merged = [[{**template[panel][j], **t} for j, t in enumerate(unpacked(f))]
                  for f in frames]  # fmt: skip
        assert merged == drawn[panel], panel


def test_identical_polls_within_a_tick_share_one_answer(served, trained, monkeypatch):
    """A class's pages poll with the same cursor, seed and feature: within
    `STREAM_TICK_S` the first poll's answer is every such poll's (the job store is not asked
    again, the bytes are the same, compressed once for a browser that takes brotli); a page
    asking for something else (another feature) gets its own answer, and after the tick
    a poll is answered afresh with the frames that arrived meanwhile."""
    import brotli

    from app import answers, streams

    http, _, queue = served
    clock = [2000.0]
    monkeypatch.setattr(streams.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(streams, "STREAM_TICK_S", 0.25)
    answers.clear()
    pages, _ = _class(http, queue, 4)
    frames = _frames(trained)
    claim = queue.claim()
    for i in range(3):
        queue.put_frame(claim, i, frames[i])
    asked = []
    status_of = queue.status
    queue.status = lambda key: asked.append(key) or status_of(key)
    first = pages[0].send(http, pages[0].tick())
    assert len(asked) == 1 and pages[0].view["n"] == 3
    bodies = [http.post("/_dash-update-component", json=page.tick()).data for page in pages[1:3]]
    for page in pages[1:3]:
        page.send(http, page.tick())
    assert len(asked) == 1, "an identical poll within the tick asked the job store"
    assert pages[1].view == pages[2].view == pages[0].view
    assert len(set(bodies)) == 1 and json.loads(bodies[0])["response"][VIEW] == first[VIEW]
    assert pages[1].view["n"] == 3
    # compressed once: the same brotli bytes for every page, which decompress to the answer
    packed = [http.post("/_dash-update-component", json=pages[3].tick(),
                        headers={"Accept-Encoding": "br"}) for _ in range(2)]  # fmt: skip
    assert all(r.headers.get("Content-Encoding") == "br" for r in packed)
    assert packed[0].data == packed[1].data and brotli.decompress(packed[0].data) == bodies[0]
    assert len(asked) == 1
    # another feature is another answer
    other = pages[3]
    other.values["feature-pick.value"] = 1
    other.send(http, other.tick())
    assert len(asked) == 2
    # after the tick: answered afresh, with the frames that arrived meanwhile
    for i in range(3, 8):
        queue.put_frame(claim, i, frames[i])
    clock[0] += 0.25
    pages[1].send(http, pages[1].tick())
    assert len(asked) == 3 and pages[1].view["n"] == 8
    answers.clear()


def test_a_class_polls_more_slowly_the_more_pages_poll_the_process(served, trained, monkeypatch):
    """Every poll says how often its page polls; a web process counts its pages from that
    (`app.audience`), shared answers included, and sets the period of the next ones by
    them (`app.jobfollow.poll_interval`): one page watching its job polls every POLL_MS,
    a class of three times FAST_PAGES three times slower (each page keeps its period
    while the new one is within `STEADY` of it), and a page that leaves stops counting once
    its last poll is `WINDOW_S` old."""
    from app import answers, audience, streams
    from app.jobfollow import FAST_PAGES, POLL_MS, STEADY, poll_interval

    http, _, queue = served
    clock = [5000.0]
    monkeypatch.setattr(audience.time, "monotonic", lambda: clock[0])  # streams' too
    monkeypatch.setattr(streams, "STREAM_TICK_S", 0.25)  # identical polls share answers
    answers.clear()
    audience.clear()
    n = 3 * FAST_PAGES
    pages, _ = _class(http, queue, n)
    frames = _frames(trained)
    claim = queue.claim()
    queue.put_frame(claim, 0, frames[0])

    def lecture(class_: list[Page], seconds: float) -> list[int]:
        """Each page polls at its period (the answers set it), one after another, for
        `seconds`; the periods the pages poll at then."""
        end = clock[0] + seconds
        while clock[0] < end:
            for page in class_:
                page.send(http, page.tick())
                clock[0] += page.values[f"{POLL}.interval"] / 1000 / len(class_)
        return sorted({page.values[f"{POLL}.interval"] for page in class_})

    assert lecture(pages[:1], 2 * audience.WINDOW_S) == [POLL_MS], "one page alone: full speed"
    assert audience.pages() == pytest.approx(1, abs=0.1)
    clock[0] += audience.WINDOW_S  # the page leaves; the class arrives
    assert audience.pages() == 0
    assert lecture(pages, 1.0) == [POLL_MS], "the count grows with the polls heard"
    periods = lecture(pages, 2 * audience.WINDOW_S)
    assert audience.pages() == pytest.approx(n, abs=1.0)
    target = poll_interval(queue.status(CONFIG.key), 1, n)
    assert target == 3 * POLL_MS
    assert all(abs(p - target) <= STEADY * p + 50 for p in periods), (periods, target)
    answers.clear()
    audience.clear()


def test_pages_polling_slowly_have_their_frames_read_a_third_of_their_period_apart(
    served, trained, monkeypatch
):
    """`streamed_run` reads a stream's new frames at most every `STREAM_TICK_S`, or every
    third of the period its pages poll at when that is longer: a class polling every
    1.5 s has the store read (and a frame count drawn) every 0.5 s, not every 0.25 s, and
    each page still gets frames at most a third of its period old."""
    from app import streams

    _, _, queue = served
    clock = [3000.0]
    monkeypatch.setattr(streams.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(streams, "STREAM_TICK_S", 0.25)
    monkeypatch.setattr(streams, "READS_PER_POLL", 3)
    queue.submit(CONFIG, client="teacher")
    claim = queue.claim()
    frames = _frames(trained)
    fed, reads = [0], []
    frames_of = queue.frames
    queue.frames = lambda key, start=0: reads.append(start) or frames_of(key, start)

    def poll_after(dt: float, period_ms: float) -> int:
        """A frame arrives, `dt` seconds pass, a page polling every `period_ms` polls:
        the frames the process then holds."""
        queue.put_frame(claim, fed[0], frames[fed[0]])
        fed[0] += 1
        clock[0] += dt
        status = queue.status(CONFIG.key)
        return streams.streamed_run(queue, CONFIG, status, period_ms).n_frames

    assert poll_after(0.0, 1500) == 1 and len(reads) == 1  # the first frame at once
    held = [poll_after(dt, 1500) for dt in (0.3, 0.1, 0.1, 0.3, 0.25)]
    assert held == [1, 1, 4, 4, 6] and len(reads) == 3  # 0.5 s apart
    assert poll_after(0.25, 300) == 7 and len(reads) == 4  # a page at 0.3 s: the tick


def test_when_a_class_job_ends_its_whole_view_is_compressed_once(served, trained, monkeypatch):
    """Pages that streamed a job to different frames poll differently, so their answers are
    not shared; when it ends each is sent the same whole view when its panels are drawn
    with the whole run (N_h = 3, say: not `causal`; a causal run's pages are sent what
    they lack), and a browser's brotli form of those bytes is made once (named by their
    digest) however many pages ask."""
    import brotli
    from flask_compress import flask_compress

    from app import answers, streams, view
    from app.memo import Memo
    from tempsup.figures import directions

    monkeypatch.setattr(directions, "causal", lambda config: False)
    monkeypatch.setattr(view, "_FULL_VIEWS", Memo(4))  # none drawn by other tests
    http, _, queue = served
    answers.clear()
    pages, _ = _class(http, queue, 3)
    claim = queue.claim()
    frames = _frames(trained)
    for n, page in zip((2, 4, 6), pages, strict=True):  # each page holds other frames
        for i in range(n - 2, n):
            queue.put_frame(claim, i, frames[i])
        page.send(http, page.tick())
    assert [p.view["n"] for p in pages] == [2, 4, 6]
    assert queue.finish(claim, trained)
    monkeypatch.setattr(streams, "STREAM_TICK_S", 0.25)  # answers are kept a tick
    made, compress = [], flask_compress.brotli.compress

    def counted(data: bytes, **options: Any) -> bytes:
        made.append(len(data))
        return compress(data, **options)

    monkeypatch.setattr(flask_compress.brotli, "compress", counted)
    sent = [http.post("/_dash-update-component", json=page.tick(),
                      headers={"Accept-Encoding": "br"}) for page in pages]  # fmt: skip
    assert [r.headers.get("Content-Encoding") for r in sent] == ["br"] * 3
    bodies = [brotli.decompress(r.data) for r in sent]
    assert bodies[0] == bodies[1] == bodies[2]
    assert json.loads(bodies[0])["response"][VIEW]["data"]["n"] == trained.n_frames
    assert len(made) == 1, f"the same answer compressed {len(made)} times"
    answers.clear()


def test_a_finished_view_takes_the_frames_its_stream_drew(trained, monkeypatch):
    """When a job a process streamed ends, the finished view is the one drawn from the
    run alone, byte for byte, but only the frames the stream had not drawn are drawn: each
    frame was drawn from the frames up to it (`PanelSet.causal`), so the streamed frames
    are the finished run's."""
    from app import streams, view

    streams.clear()
    view._FULL_VIEWS.clear()
    alone = json.dumps(view.full_view(trained, trained.best), sort_keys=True)
    view._FULL_VIEWS.clear()
    stream = streams._stream(CONFIG)
    frames = [{k: v[i] for k, v in trained.arrays.items()} for i in range(trained.n_frames)]
    for have in (1, 40, 97):  # three reads; the job ends before a fourth
        stream.frames = frames[:have]
        streams._selection(stream, trained.first_frames(have), trained.best, 0)
    drawn: list[int] = []
    real = view.frame_data

    def counted(run, seed, feature, start, *args, **kw):
        drawn.append(run.n_frames - start)
        return real(run, seed, feature, start, *args, **kw)

    monkeypatch.setattr(view, "frame_data", counted)
    taken = view.full_view(
        trained, trained.best, streamed=lambda: streams.drawing(trained, trained.best, 0)
    )
    assert json.dumps(taken, sort_keys=True) == alone
    assert drawn == [trained.n_frames - 97]  # the 4 frames after the last read, once
    # a stream of another job under the same key (trained again) is not taken
    stream.frames = [{**f, "loss": f["loss"] + 1} for f in frames[:97]]
    assert streams.drawing(trained, trained.best, 0) == (None, None)
    streams.clear()
    view._FULL_VIEWS.clear()


def test_a_page_that_watched_the_job_end_is_sent_only_what_it_lacks(served, trained):
    """A page streaming the class's job gets, when it ends, the frames after its cursor and
    the parts every frame shares: its store is then the finished view (as a page opening
    the link later gets it), and the answer a fraction of the whole view's size."""
    from app import view as views

    http, _, queue = served
    (page,) = _class(http, queue, 1)[0]
    claim = queue.claim()
    frames = _frames(trained)
    for i, frame in enumerate(frames[:97]):
        queue.put_frame(claim, i, frame)
        if i in (95, 96):  # the seed leading now may be another: the page picks the best
            page.send(http, page.tick())
            page.values["seed-pick.value"] = trained.best
    assert page.job["cursor"] == 97 and page.job["state"] == "running"
    assert page.job["seed"] == trained.best
    for i, frame in enumerate(frames[97:], start=97):
        queue.put_frame(claim, i, frame)
    assert queue.finish(claim, trained.with_gauge())
    sent = page.send(http, page.tick())[VIEW]["data"]
    assert "__dash_patch_update" in sent  # only what the page lacked
    assert page.job["state"] == "done" and page.job["cursor"] == trained.n_frames
    whole = json.loads(json.dumps(views.full_view(queue.run(CONFIG.key), trained.best)))
    assert page.view == whole
    assert page.sizes[-1] < len(json.dumps(whole)) / 3
