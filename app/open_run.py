"""The explorer's "Open a run file": a network trained elsewhere, under the same panels.

The file is checked and read by `tempsup.io.upload` (a tempsup run file, or a state dict
read with the data law of the controls on screen), kept in the job store under its
content digest (`tempsup.io.upload.store_run`, for `KEEP_S`), and the page is loaded again
at the run's link: the explorer's query for the run's config plus `run=<digest>`. That
link is what the share link copies, so anyone opening it on this server sees the same
run, at the link's frame, seed and feature; opening it never trains (`page`).

A file above the size limit is refused in the browser before it is read or sent
(`dcc.Upload`'s `max_size`; assets/open_run.js says why), and again here.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from typing import Any
from urllib.parse import parse_qsl, urlencode

from dash import Input, Output, State, callback, dcc, html, no_update

from app import ids
from app.jobwidget import job_key
from app.services import job_queue
from app.urlstate import config_from_query, query_from_config, view_from_query
from app.view import choose_seed, empty_view, full_view, seed_options
from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.io.upload import (
    KEEP_S,
    MAX_BYTES,
    StateLaw,
    open_run,
    store_run,
    stored_run,
    too_large,
)
from tempsup.model.config import DEFAULTS, RunConfig

RUN_PARAM = "run"  # the link's name for an opened run: ?…&run=<sha256 of its content>
GONE = (
    "This link names a run opened from a file that this server no longer has (opened runs "
    f"are kept {KEEP_S // 86400} days): open the file again with “Open a run file”."
)


def card() -> html.Div:
    """The upload box, what it takes, and the line where a refusal is said."""
    return html.Div(
        className="card open-run",
        children=[
            html.H2("Open a run file", className="open-run-title"),
            # the wrapper gives assets/open_run.js the limit and where to say a refusal
            html.Div(
                **{"data-max-bytes": str(MAX_BYTES), "data-message": ids.OPEN_RUN_MESSAGE},
                children=html.Label(
                    dcc.Upload(
                        id=ids.OPEN_RUN_UPLOAD,
                        children=html.Div(["drop or ", html.A("choose a file")]),
                        className="upload",
                        max_size=MAX_BYTES,
                    )
                ),
            ),
            html.P(
                [
                    "A tempsup run file (.npz), or a state dict (.safetensors, .pt, .npz) of "
                    "W_x, W_h, W_y, b_y or of a torch.nn.RNN, GRU or LSTM + nn.Linear "
                    "(rnn.weight_ih_l0, rnn.weight_hh_l0, readout.weight, readout.bias). ",
                    html.Strong("A state dict is read with the model, k, sparsity"),
                    f" and data settings set above. At most {MAX_BYTES / 1e6:.0f} MB; kept "
                    f"{KEEP_S // 86400} days on this server for its share link.",
                ],
                className="hint",
            ),
            html.Div(
                role="radiogroup",
                **{"aria-labelledby": f"{ids.OPEN_RUN_ACT}-label"},
                children=[
                    html.Span(
                        "A torch RNN's nonlinearity ",
                        id=f"{ids.OPEN_RUN_ACT}-label",
                        className="label",
                    ),
                    dcc.RadioItems(
                        id=ids.OPEN_RUN_ACT,
                        options=[
                            {"label": "ReLU (the paper's ReLU RNN)", "value": "relu"},
                            {"label": "tanh (read linearised)", "value": "tanh"},
                        ],
                        value="relu",
                        className="radios",
                    ),
                ],
            ),  # fmt: skip
            html.Div(id=ids.OPEN_RUN_MESSAGE, className="error", role="alert"),
            dcc.Location(id=ids.OPEN_RUN_GO, refresh=True),
        ],
    )


def run_link(run: Run, digest: str) -> str:
    """The explorer's link for an opened run: its config's query, then `run=`."""
    pairs = parse_qsl(query_from_config(run.config).lstrip("?"))
    return "/?" + urlencode([*pairs, (RUN_PARAM, digest)])


def link_digest(query: str | None) -> str | None:
    """The `run=` of a link, or None when it names no opened run."""
    if not isinstance(query, str):
        return None
    value = dict(parse_qsl(query.lstrip("?"))).get(RUN_PARAM)
    return value[:80] if isinstance(value, str) else None


def page(query: str | None) -> tuple[RunConfig, dict[str, Any], dict[str, Any] | None] | None:
    """(config, stores, request) of the explorer opened at an opened run's link, or None
    when the link names none. The stores hold the whole run (no training, no callback
    before it shows), at the link's seed, frame and feature; a run this server does not
    have leaves the panels empty with a message saying so."""
    digest = link_digest(query)
    if digest is None:
        return None
    link_config, _ = config_from_query(query)
    try:
        run = stored_run(job_queue().store, digest)
    except TempsupError:  # the job store is unreachable
        run = None
    if run is None:
        key = link_config.key
        job = {"key": key, "state": "none", "cursor": 0, "seed": None, "picked": False}
        status = {"key": key, "text": GONE, "pct": 0.0, "active": False}
        return link_config, {"job": job, "view": empty_view(GONE), "status": status,
                             "options": [], "seed": None}, None  # fmt: skip
    config = run.config
    request, _ = view_from_query(query, config)
    seed = request.get("seed") if request else None
    feature = request.get("feature", 0) if request else 0
    return config, shown(run, digest, seed, feature), request


def shown(run: Run, digest: str, seed: Any, feature: int) -> dict[str, Any]:
    """The explorer's stores for an opened run (the JOB store says which: `opened`)."""
    best = choose_seed(run, seed if isinstance(seed, int) else None)
    picked = isinstance(seed, int) and best == seed
    key = run.config.key
    job = {"key": key, "state": "done", "cursor": run.n_frames, "seed": best,
           "picked": picked, "view_feature": feature, "opened": digest}  # fmt: skip
    text = (
        f"Opened from a file ({digest[:12]}): not trained here. Train trains tempsup's own "
        "run of these settings."
    )
    return {
        "job": job,
        "view": full_view(run, best, feature, content=digest),
        "status": {"key": key, "text": text, "pct": 100.0, "active": False},
        "options": seed_options(run, best if picked else None),
        "seed": best,
    }


def opened(job: Any) -> tuple[Run, str] | None:
    """The opened run on screen (and its digest), if the JOB store says one is shown."""
    digest = job.get("opened") if isinstance(job, dict) and job_key(job) else None
    if not isinstance(digest, str):
        return None
    run = stored_run(job_queue().store, digest)
    return None if run is None else (run, digest)


def _law(store: Any, act: Any) -> StateLaw:
    """The data law of the controls on screen (the CONFIG store), the nonlinearity picked."""
    act = act if act in ("relu", "tanh") else "relu"
    try:
        return StateLaw.of(RunConfig.from_dict(store["config"]), act)
    except (TempsupError, KeyError, TypeError):
        return StateLaw.of(DEFAULTS, act)


@callback(
    Output(ids.OPEN_RUN_GO, "href"),
    Output(ids.OPEN_RUN_MESSAGE, "children"),
    Input(ids.OPEN_RUN_UPLOAD, "contents"),
    State(ids.OPEN_RUN_UPLOAD, "filename"),
    State(ids.CONFIG, "data"),
    State(ids.OPEN_RUN_ACT, "value"),
    prevent_initial_call=True,
)
def open_file(contents: Any, filename: Any, store: Any, act: Any) -> tuple[Any, str]:
    """Check the file, keep its run, and load the page at the run's link; or say, in one
    line, what is wrong with the file."""
    name = str(filename)[:80] if isinstance(filename, str) and filename else "the file"
    if not isinstance(contents, str) or "," not in contents:
        return no_update, f"{name}: could not be read"
    body = contents.split(",", 1)[1]
    if len(body) * 3 // 4 > MAX_BYTES + 3:  # never decode more than the limit
        return no_update, too_large(name, len(body) * 3 // 4)
    try:
        data = b64decode(body, validate=False)
    except (ValueError, binascii.Error):
        return no_update, f"{name}: could not be read"
    try:
        run = open_run(data, name, _law(store, act))
        digest = store_run(job_queue().store, run)
    except TempsupError as exc:
        return no_update, str(exc)
    except Exception as exc:  # noqa: BLE001 — a file from elsewhere: one line, never a traceback
        return no_update, f"{name}: could not be read as a run ({type(exc).__name__})"
    return run_link(run, digest), ""
