"""Every server-side Dash callback of the app fed malformed values: never an exception.

The callbacks are driven exactly as a browser (or a crafted request) drives
them: a POST to `/_dash-update-component` with the JSON the renderer sends,
built from the app's own `/_dash-dependencies`, through Flask's test client
(no server, no workers; jobs land in a temporary diskcache queue). Each
callback gets plausible values for all its inputs and states, then one
argument at a time (and then all at once) is replaced by a malformed value:
wrong types, huge numbers, NaN and infinities (Python's JSON reader accepts
them), long strings, path-like strings, odd unicode, malformed stores. The
answer must be a normal one (200, or 204 = no update); an exception is
reported with the callback's module, function, argument and value.

Callbacks in `KNOWN_FAILURES` raised when this test was written and were
reported to their owners; they are expected to fail (not strictly, so a fix
simply turns them into XPASS) until the entry is removed.
"""

from __future__ import annotations

import base64
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from app import ids
from tempsup.analysis.sweeps import SweepSpec, train_runs
from tempsup.model.config import RunConfig

CONFIG = RunConfig(steps=20, batch=16, seeds=2, snapshot_every=10)
SWEEP = SweepSpec(CONFIG, sparsities=(0.5, 0.9))
BIG = 10**30
# The lab's controls as the page sends them (a short run: 1 epoch, 2 seeds)
LAB = {"structure": "circular", "m": 2, "model": "relu", "wd": 1.0, "sharpness": 10.0,
       "epochs": 1, "seeds": 2}  # fmt: skip
LAB_MS, LAB_WDS = "2, 6", "0, 1"
TEXT = "the cat sat on the mat\nthe dog ran to the cat\na bird sang on the mat\n" * 10

# "module.function" -> what raised when this test was written (reported, not fixed here)
KNOWN_FAILURES: dict[str, str] = {}

BAD_VALUES: list[Any] = [
    None, True, 0, -1, 2**31, BIG, -BIG, 1e308, math.nan, math.inf, -math.inf, 0.5,
    "", "x" * 100_000, "../../../../etc/passwd", "/etc/passwd", "C:\\Windows\\win.ini",
    "file:///etc/passwd", "?model=rnn&k=99999999999999999999&warm_start=../../etc/passwd",
    "<script>alert(1)</script>", "\udcff\u0000\u202e", "0123456789abcdef",
    [], [None, "x", 1e308, {"a": []}], {}, {"config": "x"}, {"config": {"k": math.nan}},
    {"config": {**CONFIG.to_dict(), "warm_start": "/etc/passwd"}, "autostart": True},
    {"config": {**CONFIG.to_dict(), "steps": BIG}, "key": "x", "autostart": "yes"},
    {"key": "../../x", "cursor": -5, "seed": 1e308, "state": "done"},
    {"key": ["a"], "cursor": "7", "seed": math.inf, "state": None},
    {"key": "x" * 10_000, "cursor": BIG},
    {"points": [{"customdata": math.inf}]}, {"points": [{"customdata": "../x"}]},
    {"points": "x"},
]  # fmt: skip


def widget_id(part: str, page: str, prop: str) -> str:
    """ "id.property" of a part of a page's job widget, as Dash names it in a request."""
    return f"{ids.text(ids.job(part, page))}.{prop}"


# A callback registered once for every page (pattern-matching ids, `MATCH`) is fuzzed on
# each page, with that page's ids.
PAGES = (ids.EXPLORER, ids.PHASE, ids.LAB, ids.LAB_SWEEP)
MATCH = '["MATCH"]'


def concrete(dep: dict[str, Any], page: str | None) -> dict[str, Any]:
    """`dep` with its `MATCH` ids made `page`'s ("output" stays: it names the callback)."""
    if page is None:
        return dep

    def fix(items):
        return [{**i, "id": i["id"].replace(MATCH, json.dumps(page))} for i in items]

    fixed = {**dep, "inputs": fix(dep["inputs"]), "state": fix(dep["state"])}
    fixed["outputs_text"] = dep["output"].replace(MATCH, json.dumps(page))
    return fixed


def lab_config():
    from app.pages.lab import build_config

    return build_config(*LAB.values(), None)


def lab_sweep():
    from app.pages.lab import build_sweep

    return build_sweep(*LAB.values(), None, LAB_MS, LAB_WDS)


def plausible(run_key: str) -> dict[str, Any]:
    """A value the page itself would send, per "id.property" (others: None): complete for
    every page, so that one malformed argument is met by valid others and reaches the
    code behind the first checks (the lab's config and sweep, the job queue)."""
    store = {"config": CONFIG.to_dict(), "key": CONFIG.key, "autostart": False}
    job = {"key": CONFIG.key, "state": "done", "cursor": 0, "seed": None}
    upload = "data:text/plain;base64," + base64.b64encode(TEXT.encode()).decode()
    return {
        "lab-structure.value": LAB["structure"],
        "lab-m.value": LAB["m"],
        "lab-model.value": LAB["model"],
        "lab-wd.value": LAB["wd"],
        "lab-sharpness.value": LAB["sharpness"],
        "lab-epochs.value": LAB["epochs"],
        "lab-seeds.value": LAB["seeds"],
        "lab-text.data": None,
        "lab-upload.contents": upload,
        "lab-upload.filename": "corpus.txt",
        widget_id(ids.RUN, ids.LAB, "n_clicks"): 1,
        widget_id(ids.POLL, ids.LAB, "n_intervals"): 1,
        widget_id(ids.CANCEL, ids.LAB, "n_clicks"): 1,
        widget_id(ids.EXPORT, ids.LAB, "n_clicks"): 1,
        widget_id(ids.STORE, ids.LAB, "data"): {"key": lab_config().key},
        "lab-sweep-ms.value": LAB_MS,
        "lab-sweep-wds.value": LAB_WDS,
        widget_id(ids.RUN, ids.LAB_SWEEP, "n_clicks"): 1,
        widget_id(ids.POLL, ids.LAB_SWEEP, "n_intervals"): 1,
        widget_id(ids.CANCEL, ids.LAB_SWEEP, "n_clicks"): 1,
        widget_id(ids.EXPORT, ids.LAB_SWEEP, "n_clicks"): 1,
        widget_id(ids.STORE, ids.LAB_SWEEP, "data"): {"key": lab_sweep().key},
        "ctl-k-box.value": CONFIG.k,
        "ctl-sparsity-box.value": CONFIG.sparsity,
        "ctl-hidden-box.value": CONFIG.hidden,
        "ctl-inputs-box.value": CONFIG.inputs,
        widget_id(ids.RUN, ids.EXPLORER, "n_clicks"): 1,
        widget_id(ids.CANCEL, ids.EXPLORER, "n_clicks"): 1,
        "btn-export-html.n_clicks": None,
        "btn-export-npz.n_clicks": 1,
        widget_id(ids.POLL, ids.EXPLORER, "n_intervals"): 1,
        widget_id(ids.RUN, ids.PHASE, "n_clicks"): 1,
        widget_id(ids.POLL, ids.PHASE, "n_intervals"): 1,
        widget_id(ids.CANCEL, ids.PHASE, "n_clicks"): 1,
        "compare-url.search": f"?a={CONFIG.key}&b={CONFIG.key}",
        "compare-left.value": CONFIG.key,
        "compare-right.value": CONFIG.key,
        "compare-go.n_clicks": 1,
        "compare-poll.n_intervals": 1,
        "gallery-poll.n_intervals": 1,
        "root-url.pathname": "/",
        "url.search": "?model=ssm&k=3&sparsity=0.9&hidden=2&inputs=1&steps=20&batch=16",
        "ctl-model.value": CONFIG.model,
        "ctl-k.value": CONFIG.k,
        "ctl-sparsity.value": CONFIG.sparsity,
        "ctl-hidden.value": CONFIG.hidden,
        "ctl-inputs.value": CONFIG.inputs,
        "ctl-steps.value": CONFIG.steps,
        "ctl-lr.value": CONFIG.lr,
        "ctl-seeds.value": CONFIG.seeds,
        "ctl-seed.value": CONFIG.seed,
        "ctl-seq-len.value": CONFIG.seq_len,
        "ctl-batch.value": CONFIG.batch,
        "ctl-importance.value": CONFIG.importance,
        "ctl-input-dist.value": CONFIG.input_dist,
        "ctl-snapshot-every.value": CONFIG.snapshot_every,
        "ctl-curriculum.value": None,
        "ctl-options.value": ["tied"],
        "config-store.data": store,
        widget_id(ids.STORE, ids.EXPLORER, "data"): job,
        "client-store.data": "fuzz-client",
        "feature-pick.value": 0,
        "seed-pick.value": 1,
        "share-link.href": "http://localhost/?model=ssm",
        "phase-model.value": "ssm",
        "phase-sparsities.value": "0.5, 0.9",
        "phase-k.value": "3",
        "phase-seeds.value": 2,
        "phase-steps.value": 20,
        "phase-hidden.value": 2,
        widget_id(ids.STORE, ids.PHASE, "data"): {"key": run_key},
        "phase-graph.clickData": {"points": [{"customdata": 0}]},
    }


def _outputs(output: str) -> Any:
    def one(text: str) -> dict[str, str]:
        ident, prop = text.split(".", 1)
        # a pattern-matching id is sent as the object itself
        return {"id": json.loads(ident) if ident.startswith("{") else ident, "property": prop}

    if output.startswith(".."):
        return [one(part) for part in output.strip(".").split("...")]
    return one(output)


def _payload(dep: dict[str, Any], values: list[Any], trigger: str) -> dict[str, Any]:
    items = [*dep["inputs"], *dep["state"]]
    filled = [{**item, "value": v} for item, v in zip(items, values, strict=True)]
    n_in = len(dep["inputs"])
    return {
        "output": dep["output"],
        "outputs": _outputs(dep.get("outputs_text", dep["output"])),
        "inputs": filled[:n_in],
        "state": filled[n_in:],
        "changedPropIds": [trigger],
    }


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """The app's Flask test client over a temporary job store holding one DONE run
    and one DONE sweep (so export, seed switch and the phase page go deep)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TEMPSUP_CACHE", str(tmp_path_factory.mktemp("jobs")))
    mp.delenv("TEMPSUP_REDIS_URL", raising=False)
    mp.setenv("TEMPSUP_MAX_PER_MINUTE", "off")  # the fuzz submits many jobs from one client
    from app import app, services

    services.job_queue.cache_clear()
    queue = services.job_queue()
    (run,) = train_runs([CONFIG])
    queue.put_run(run)
    from tempsup.analysis.sweeps import stream_sweep, sweep_result

    queue.put_result(SWEEP, sweep_result(SWEEP, list(stream_sweep(SWEEP))))
    from tempsup.bows import sweeps as bows_sweep
    from tempsup.bows.run import train_runs as train_bows

    (lab_run,) = train_bows([lab_config()])
    queue.put_result(lab_run.config, lab_run)
    spec = lab_sweep()
    result = bows_sweep.sweep_result(spec, list(bows_sweep.stream_sweep(spec)))
    queue.put_result(spec, result)
    bows_sweep.store_points(queue, spec, result)
    app.server.testing = True  # exceptions reach the test instead of becoming a 500
    test_client = app.server.test_client()
    yield app, test_client
    services.job_queue.cache_clear()
    mp.undo()


def _callbacks() -> list[tuple[str, str | None]]:
    """Outputs of the app's server-side callbacks, and the page for those registered once
    for every page (the test ids)."""
    from app import app

    deps = app.server.test_client().get("/_dash-dependencies").get_json()
    out = [d["output"] for d in deps if not d.get("clientside_function")]
    return [(o, page) for o in out for page in (PAGES if MATCH in o else (None,))]


def _name(app, output: str) -> str:
    fn = app.callback_map[output]["callback"]
    fn = getattr(fn, "__wrapped__", fn)
    return f"{fn.__module__}.{fn.__name__}"


def _test_id(case: tuple[str, str | None]) -> str:
    output, page = case
    return (page + ":" if page else "") + output.strip(".").split(".")[0][:40]


@pytest.mark.parametrize("case", _callbacks(), ids=_test_id)
def test_callback_survives_malformed_values(client, case, request):
    output, page = case
    app, http = client
    name = _name(app, output)
    if name in KNOWN_FAILURES:
        request.applymarker(pytest.mark.xfail(reason=f"reported: {KNOWN_FAILURES[name]}"))
    deps = {d["output"]: d for d in http.get("/_dash-dependencies").get_json()}
    dep = concrete(deps[output], page)
    items = [*dep["inputs"], *dep["state"]]
    names = [f"{i['id']}.{i['property']}" for i in items]
    n_in = len(dep["inputs"])
    good = plausible(SWEEP.key if "phase" in output else CONFIG.key)
    base = [good.get(n) for n in names]
    # a state is fuzzed with the last input as the trigger (export: the cheap .npz one)
    trigger = names[n_in - 1]
    cases = [(f"plausible values, {n} changed", base, n) for n in names[:n_in]]
    for i, name in enumerate(names):
        for bad in BAD_VALUES:
            values = [*base[:i], bad, *base[i + 1 :]]
            cases.append((f"{name} = {_short(bad)}", values, name if i < n_in else trigger))
    for bad in BAD_VALUES[:24]:
        cases.append((f"every argument = {_short(bad)}", [bad] * len(names), trigger))

    failures = []
    for label, values, changed in cases:
        body = json.dumps(_payload(dep, values, changed))  # NaN/Infinity: JSON extensions
        try:
            response = http.post(
                "/_dash-update-component", data=body, content_type="application/json"
            )
            if response.status_code not in (200, 204):
                failures.append(f"{label}: HTTP {response.status_code}")
            elif _crashed(response):
                failures.append(f"{label}: unexpected exception (see app.report_error)")
        except Exception as exc:  # the point of the test: report, do not stop at the first
            failures.append(f"{label}: {type(exc).__name__}: {str(exc)[:200]}")
    assert not failures, f"{name} raised for {len(failures)} of {len(cases)} " + (
        "inputs:\n  " + "\n  ".join(failures)
    )


def _crashed(response: Any) -> bool:
    """app.report_error caught an exception that was not a TempsupError."""
    if response.status_code != 200:
        return False
    side = (response.get_json(silent=True) or {}).get("sideUpdate") or {}
    text = str((side.get("alert") or {}).get("children", ""))
    return text.startswith("Something went wrong")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---- crafted requests to the callbacks that build a job spec: refused, with a message -------


@pytest.fixture
def fresh_queue(client, tmp_path):
    """An empty job store for one test (the fuzz above fills the module's), so that a
    refusal is never one of the queue's limits."""
    from app import services

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TEMPSUP_CACHE", str(tmp_path / "jobs"))
        services.job_queue.cache_clear()
        try:
            yield services.job_queue()
        finally:
            services.job_queue.cache_clear()
    services.job_queue.cache_clear()


def _call(http, values: dict[str, Any], trigger: str) -> dict[str, Any]:
    """POST the server callback that `trigger` fires (a clientside one beside it runs in the
    browser only), with the page's plausible values but `values`; return the outputs it
    updated ({id: {property: value}})."""
    deps = http.get("/_dash-dependencies").get_json()
    (dep,) = [
        d
        for d in deps
        if not d.get("clientside_function")
        and any(f"{i['id']}.{i['property']}" == trigger for i in d["inputs"])
    ]
    names = [f"{i['id']}.{i['property']}" for i in [*dep["inputs"], *dep["state"]]]
    good = {**plausible(CONFIG.key), **values}
    body = json.dumps(_payload(dep, [good.get(n) for n in names], trigger))
    response = http.post("/_dash-update-component", data=body, content_type="application/json")
    assert response.status_code == 200, response.status_code
    assert not _crashed(response)
    return response.get_json()["response"]


def _message(outputs: dict[str, Any], where: str) -> str:
    ident, prop = where.split(".", 1)
    value = outputs.get(ident, {}).get(prop)
    if isinstance(value, dict):  # a job-status store: its message
        value = value.get("text")
    return value if isinstance(value, str) else ""


LAB_TRAIN, LAB_ERROR = (
    widget_id(ids.RUN, ids.LAB, "n_clicks"),
    widget_id(ids.ERROR, ids.LAB, "children"),
)
LAB_SWEEP = widget_id(ids.RUN, ids.LAB_SWEEP, "n_clicks")
LAB_SWEEP_ERROR = widget_id(ids.ERROR, ids.LAB_SWEEP, "children")
PHASE_RUN, PHASE_ERROR = (
    widget_id(ids.RUN, ids.PHASE, "n_clicks"),
    widget_id(ids.ERROR, ids.PHASE, "children"),
)
TRAIN, TRAIN_STATUS = (
    widget_id(ids.RUN, ids.EXPLORER, "n_clicks"),
    widget_id(ids.STATUS, ids.EXPLORER, "data"),
)


def _store(**changes: Any) -> dict[str, Any]:
    return {"config": {**CONFIG.to_dict(), **changes}, "key": CONFIG.key, "autostart": True}


CRAFTED = [
    (LAB_TRAIN, {"lab-m.value": BIG}, LAB_ERROR, "m: "),
    (LAB_TRAIN, {"lab-m.value": "/etc/passwd"}, LAB_ERROR, "m: "),
    (LAB_TRAIN, {"lab-epochs.value": BIG}, LAB_ERROR, "epochs: "),
    (LAB_TRAIN, {"lab-seeds.value": 1e308}, LAB_ERROR, "seeds: "),
    (LAB_TRAIN, {"lab-wd.value": math.nan}, LAB_ERROR, "weight_decay: "),
    (LAB_TRAIN, {"lab-structure.value": "file:///etc/passwd"}, LAB_ERROR, "structure: "),
    (LAB_TRAIN, {"lab-model.value": ["relu"]}, LAB_ERROR, "model: "),
    (LAB_TRAIN, {"lab-sharpness.value": {"x": 1}}, LAB_ERROR, "sharpness: "),
    (LAB_SWEEP, {"lab-sweep-ms.value": "2, 10000000000000"}, LAB_SWEEP_ERROR, "m: "),
    (LAB_SWEEP, {"lab-sweep-ms.value": "../../etc/passwd"}, LAB_SWEEP_ERROR, "bottlenecks m: "),
    (LAB_SWEEP, {"lab-sweep-wds.value": "nan, inf"}, LAB_SWEEP_ERROR, "weight_decays "),
    (LAB_SWEEP, {"lab-sweep-ms.value": ["2"]}, LAB_SWEEP_ERROR, "bottlenecks m: "),
    (LAB_SWEEP, {"lab-epochs.value": BIG}, LAB_SWEEP_ERROR, "epochs: "),
    (PHASE_RUN, {"phase-sparsities.value": "/etc/passwd"}, PHASE_ERROR, "sparsities: "),
    (PHASE_RUN, {"phase-steps.value": BIG}, PHASE_ERROR, "steps: "),
    (PHASE_RUN, {"phase-k.value": "http://example.com/x"}, PHASE_ERROR, "delays k: "),
    (PHASE_RUN, {"phase-seeds.value": -1}, PHASE_ERROR, "seeds: "),
    (PHASE_RUN, {"phase-hidden.value": [2]}, PHASE_ERROR, "hidden size"),
    (TRAIN, {"config-store.data": _store(warm_start="/etc/passwd")}, TRAIN_STATUS, "warm_start: "),
    (
        TRAIN,
        {"config-store.data": _store(warm_start="http://example.com/r.npz")},
        TRAIN_STATUS,
        "warm_start: ",
    ),
    (
        TRAIN,
        {"config-store.data": _store(warm_start="../../run.npz")},
        TRAIN_STATUS,
        "warm_start: ",
    ),
]


@pytest.mark.parametrize(
    ("trigger", "values", "where", "names"),
    CRAFTED,
    ids=[f"{t.split('.')[0]}-{'-'.join(v)}-{i}" for i, (t, v, _, _) in enumerate(CRAFTED)],
)
def test_crafted_job_requests_are_refused_with_a_message(
    client, fresh_queue, trigger, values, where, names
):
    """Paths, URLs, huge numbers and wrong types in the fields that reach a job spec: the
    page answers with a message naming the problem, and no job is queued."""
    _, http = client
    queue = fresh_queue
    before = (queue.queued(), queue.running())
    with _opened_files() as opened:
        outputs = _call(http, values, trigger)
    message = _message(outputs, where)
    assert message.strip(), f"no refusal message in {where}: {outputs}"
    assert names in message, f"the message does not name {names!r}: {message}"
    # refused for what it carries, not for the queue's limits
    assert not re.search(r"too many|queue full|job too large", message), message
    assert (queue.queued(), queue.running()) == before, "a job was queued"
    assert not [p for p in opened if "passwd" in p or p.endswith(".npz")], opened


# ---- no callback makes the server open a file a request names --------------------------

_OPENED: list[list[str]] = []  # the open() calls recorded by _opened_files, innermost last


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _OPENED and isinstance(args[0], (str, bytes, Path)):
        _OPENED[-1].append(str(Path(args[0] if not isinstance(args[0], bytes) else args[0].decode(
            errors="replace"))))  # fmt: skip


class _opened_files:  # noqa: N801 - used as a context manager
    """Record the files this process opens inside the block (an audit hook)."""

    installed = False

    def __enter__(self) -> list[str]:
        if not _opened_files.installed:
            sys.addaudithook(_audit)
            _opened_files.installed = True
        _OPENED.append([])
        return _OPENED[-1]

    def __exit__(self, *exc: object) -> None:
        _OPENED.pop()


@pytest.mark.parametrize(
    "crafted_text",
    [
        "{secret}",
        "file://{secret}",
        "../../{secret}",
        "a" * 64,
        10**30,
        ["{secret}"],
        {"path": "{secret}"},
    ],  # fmt: skip
    ids=["path", "url", "relative", "hash-never-uploaded", "huge", "list", "mapping"],
)
def test_a_crafted_lab_request_naming_a_server_file_is_refused_and_the_file_never_read(
    client, fresh_queue, tmp_path, crafted_text
):
    """One-way architecture: a job service without cycles, presets as a package, settings
    in one place, specs that carry no server paths, and a clean stop (issue 10).

    The lab's text store holds the sha256 of an upload, never a path; a crafted request
    that puts a path, a URL, a digest of nothing uploaded or a wrong type there is
    refused with a message, and neither the web process nor a worker opens the file."""
    from tempsup.jobs.worker import Worker

    _, http = client
    queue = fresh_queue
    secret = tmp_path / "outside-the-job-store" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(TEXT, encoding="utf-8")
    value = json.loads(json.dumps(crafted_text).replace("{secret}", str(secret)))
    crafted = {"lab-structure.value": "text", "lab-text.data": value}
    with _opened_files() as opened:
        train = _call(http, crafted, LAB_TRAIN)
        sweep = _call(http, crafted, LAB_SWEEP)
        worker = Worker(queue)  # a worker picks up whatever was queued
        for _ in range(4):
            if not worker.run(once=True):
                break
    assert not [p for p in opened if "secret" in p], "the server read a file named by a request"
    for outputs, where in ((train, LAB_ERROR), (sweep, LAB_SWEEP_ERROR)):
        message = _message(outputs, where)
        assert "text" in message, f"no refusal naming the text in {where}: {outputs}"
    assert queue.queued() == [] and queue.running() == []


def test_an_uploaded_text_trains_from_the_job_store_by_its_digest(client, fresh_queue):
    """The upload callback stores the content under its sha256 and the page keeps only
    that; the lab's Train then queues a job whose worker reads the text from the store."""
    from tempsup.bows.data import text_sha256
    from tempsup.jobs.worker import Worker

    _, http = client
    queue = fresh_queue
    upload = _call(http, {}, "lab-upload.contents")
    digest = upload["lab-text"]["data"]
    assert digest == text_sha256(TEXT) and queue.blob(digest) == TEXT.encode()
    train = _call(http, {"lab-structure.value": "text", "lab-text.data": digest}, LAB_TRAIN)
    assert not _message(train, LAB_ERROR).strip(), train
    (key,) = queue.queued()
    assert queue.spec(key).text_sha256 == digest
    assert Worker(queue).run(once=True) == 1
    assert queue.status(key).state.value == "done"
