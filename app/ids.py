"""Every component id of the app, in one place (style.md: never scattered literals).

Parts that several pages show alike — the job widget (`app/jobwidget.py`) and the player
(`app/player.py`) — have pattern-matching ids `{"type": part, "page": page}`, so each of
their callbacks is registered once (with `MATCH`) and serves every page; `job(part, page)`
and `player(part, page)` build them. Everything else has a plain string id.
"""

from __future__ import annotations

import json
from typing import Any

# The pages whose parts are matched by page (the "page" of a pattern-matching id).
EXPLORER = "explorer"
PHASE = "phase"
LAB = "lab"
LAB_SWEEP = "lab-sweep"  # the lab's sweep over m: a second job widget on the lab page
COMPARE = "compare"  # its player row only (one scrubber over the fraction of training)

# page and shared state
ROOT_URL = "root-url"  # routing: pathname picks the page
PAGE = "page-content"
PAGE_PATH = "page-path"  # the path whose page is shown (routing skips a re-render)
ALERT = "alert"  # one line for errors no panel owns (see app.report_error)
URL = "url"  # the explorer's config in the query string
CONFIG = "config-store"  # the validated config being viewed: {"config": {...}, "key": "..."}
CLIENT = "client-store"  # a random per-browser id for the per-client job limit

# controls (a slider and its number box edit one field; the box holds the exact value)
MODEL = "ctl-model"
K = "ctl-k"
SPARSITY = "ctl-sparsity"
HIDDEN = "ctl-hidden"
INPUTS = "ctl-inputs"
K_BOX = "ctl-k-box"
SPARSITY_BOX = "ctl-sparsity-box"
HIDDEN_BOX = "ctl-hidden-box"
INPUTS_BOX = "ctl-inputs-box"
STEPS = "ctl-steps"
LR = "ctl-lr"
SEEDS = "ctl-seeds"
SEED = "ctl-seed"
SEQ_LEN = "ctl-seq-len"
BATCH = "ctl-batch"
IMPORTANCE = "ctl-importance"
INPUT_DIST = "ctl-input-dist"
SNAPSHOT_EVERY = "ctl-snapshot-every"
CURRICULUM = "ctl-curriculum"
OPTIONS = "ctl-options"  # checklist: tied, bias
TASK = "ctl-task"  # recall, multi, sum, cued (issue 43)
DELAYS = "ctl-delays"  # the delays ks of multi and cued: "2, 5"
WINDOW = "ctl-window"  # sum's window w
PERSISTENCE = "ctl-persistence"  # q: an input repeats its previous value with probability q
DELAYS_ROW = "ctl-delays-row"  # shown for the tasks that have delays
WINDOW_ROW = "ctl-window-row"  # shown for sum
CONFIG_ERROR = "config-error"  # what a link or a control had refused (in the notice)
NOTICE_CLOSE = "notice-close"  # × on the notice fixed at the top of the window
LINK_NOTE = "link-note"  # under the job bar: "training started from the link"

# ---- the job widget (app/jobwidget.py): one per job a page runs --------------------------
# parts: the buttons, the progress bar and status line, the error line, and the stores
RUN = "job-run"  # Train / Run sweep
CANCEL = "job-cancel"
EXPORT = "job-export"  # Export HTML of the job on screen (where the page has one)
DOWNLOAD = "job-download"
BAR = "job-bar"  # the progress bar's filled part
TEXT = "job-text"  # the status line
ERROR = "job-error"  # what was wrong with the request (the controls, a link)
STORE = "job-store"  # {"key", …}: the job on screen (the explorer adds state, cursor, seed)
STATUS = "job-status-store"  # {"key", "text", "pct", "active"}: drawn by the browser
POLL = "job-poll"  # interval reading the job's progress while it is active


def job(part: str, page: Any) -> dict[str, Any]:
    """The id of one part of a page's job widget (`page` may be `MATCH`)."""
    return {"type": part, "page": page}


# ---- the player (app/player.py): one scrubber over a view store ---------------------------
VIEW = "player-view"  # per-frame figure data streamed from the server (app/view.py)
REQUEST = "player-request"  # {"key", "seed", "frame"}: the view a link asks for, until shown
FRAME = "player-frame"  # the scrubber: frame index
PLAY = "player-play"
PREV = "player-prev"
NEXT = "player-next"
TICK = "player-tick"  # interval advancing the frame while playing
FRAME_LABEL = "player-label"
GRAPH = "panel-graph"  # one per panel: {"type": GRAPH, "page": page, "panel": name}


def player(part: str, page: Any) -> dict[str, Any]:
    """The id of one part of a page's player (`page` may be `MATCH`)."""
    return {"type": part, "page": page}


def graph(page: Any, panel: Any) -> dict[str, Any]:
    """The graph of one panel on a page: the browser reads the panel's name from it."""
    return {"type": GRAPH, "page": page, "panel": panel}


def text(id_: Any) -> str:
    """An id as Dash writes it in the page and in its requests (a dict: sorted, compact JSON)."""
    return json.dumps(id_, sort_keys=True, separators=(",", ":")) if isinstance(id_, dict) else id_


# the explorer's player row
SEED_PICK = "seed-pick"
FEATURE_PICK = "feature-pick"


def lab_explain(panel: str) -> str:
    """The caption under one of the lab's panels (each follows the model: its registry)."""
    return f"lab-explain-{panel}"


def explain(panel: str) -> str:
    """The caption under a panel (each follows the config: `tempsup.analysis.captions`)."""
    return f"explain-{panel}"


def headline(panel: str) -> str:
    """A caption's headline: the run's numbers once one shows (`app.panels`)."""
    return f"explain-{panel}-headline"


def why(panel: str) -> str:
    """A caption's explanation, inside its "Why?" disclosure."""
    return f"explain-{panel}-why"


CAPTIONS = "captions"  # the captions of the config on screen, before its run shows


# export
EXPORT_HTML = "btn-export-html"
EXPORT_NPZ = "btn-export-npz"
SHARE_LINK = "share-link"  # the link to exactly this view (config, seed, frame); a click copies it
SHARE_FEEDBACK = "share-feedback"  # "copied" after a click (assets/tempsup.js)

# "Open a run file" on the explorer (app/open_run.py)
OPEN_RUN_UPLOAD = "open-run-upload"
OPEN_RUN_ACT = "open-run-act"  # a torch RNN's nonlinearity (a state dict does not say it)
OPEN_RUN_MESSAGE = "open-run-message"  # what was wrong with the file (role="alert")
OPEN_RUN_GO = "open-run-go"  # a Location: the opened run's link, loaded as a new page

# phase diagram page
PHASE_MODEL = "phase-model"
PHASE_K = "phase-k"
PHASE_SPARSITIES = "phase-sparsities"
PHASE_PERSISTENCE = "phase-persistence"  # the persistences q swept ("0": none)
PHASE_SEEDS = "phase-seeds"
PHASE_STEPS = "phase-steps"
PHASE_HIDDEN = "phase-hidden"
PHASE_GRAPH = "phase-graph"
PHASE_URL = "phase-url"  # the sweep shown, in the query string (a reload re-opens it)
PHASE_NOTE = "phase-note"  # "sweep started from the link"
PHASE_LINK_ERROR = "phase-link-error"  # what a link had refused (in the page's notice)
PHASE_NOTICE_CLOSE = "phase-notice-close"
PHASE_STORY = "phase-story"  # where the best seed switches basin: the preset's sweep, then this one

# compare page
COMPARE_URL = "compare-url"
COMPARE_LEFT = "compare-left"  # link inputs
COMPARE_RIGHT = "compare-right"
COMPARE_GO = "compare-go"
COMPARE_VIEWS = "compare-views"  # {"left": view, "right": view}
COMPARE_SENT = "compare-sent"  # what each side of COMPARE_VIEWS holds: a poll re-sends no more
COMPARE_POLL = "compare-poll"
COMPARE_STATUS = "compare-status"
COMPARE_ERROR = "compare-error"  # what is wrong with a pasted link
COMPARE_LABEL = "compare-label"
COMPARE_SHARE = "compare-share"  # the link to this comparison at the scrubber's position
COMPARE_SHARE_FEEDBACK = "compare-share-feedback"  # "copied" after a click
COMPARE_LEFT_SEED = "compare-left-seed"  # each side's seed menu (in the link: left_seed, …)
COMPARE_RIGHT_SEED = "compare-right-seed"


def compare_graph(side: Any, panel: Any) -> dict[str, Any]:
    """One panel of one side: the browser reads the side and the panel from the id."""
    return {"type": "compare-graph", "side": side, "panel": panel}


# correlated-features lab page
LAB_STRUCTURE = "lab-structure"
LAB_M = "lab-m"
LAB_MODEL = "lab-model"
LAB_WD = "lab-wd"
LAB_SHARPNESS = "lab-sharpness"
LAB_EPOCHS = "lab-epochs"
LAB_SEEDS = "lab-seeds"
LAB_UPLOAD = "lab-upload"
LAB_TEXT = "lab-text"  # store: server path of the uploaded text
LAB_FILE = "lab-file"  # store: the uploaded text's file name (shown, and kept in the link)
LAB_UPLOAD_NAME = "lab-upload-name"  # the uploaded file's name and size in words, under the box
LAB_TEXT_WARNING = "lab-text-warning"  # a text too short for the lab's statistics, before Train
LAB_URL = "lab-url"  # the lab's view in the address bar (controls, shown run and sweep)
LAB_LINK = "lab-link"  # store: what the opened link asked to show (run, sweep), read once
LAB_NOTE = "lab-note"  # what a link had ignored or started, at the top of the controls

# the authors' grid: WᵀW/‖W‖² of three models at nine m, the lab's first picture
LAB_GRID = "lab-grid"  # its job widget (Train grid)
LAB_GRID_GRAPH = "lab-grid-graph"  # the wide arrangement (rows = models)
LAB_GRID_GRAPH_NARROW = "lab-grid-graph-narrow"  # a phone's (rows = m)
LAB_GRID_TEXT = "lab-grid-text"  # what the grid shows at each m, measured

# lab sweep: the sweep over the bottleneck m (and weight decay) on the lab page
LAB_SWEEP_MS = "lab-sweep-ms"
LAB_SWEEP_WDS = "lab-sweep-wds"
LAB_SWEEP_GRAPH = "lab-sweep-graph"
LAB_SWEEP_TABLE = "lab-sweep-table"  # the switch's table under the sweep figure

# gallery page
GALLERY_CARDS = "gallery-cards"
GALLERY_POLL = "gallery-poll"

# lesson page (the step itself lives in the URL: /lesson?step=3)
LESSON_BODY = "lesson-body"
LESSON_STEP = "lesson-step"  # the step shown (1-based)
LESSON_SHOWN = "lesson-shown"  # the step and class the body was drawn for
LESSON_CHOICE = "lesson-choice"
LESSON_REVEAL = "lesson-reveal"
LESSON_ANSWER = "lesson-answer"  # the verdict and, under it, the details
LESSON_VERDICT = "lesson-verdict"  # a status region: the verdict is what is announced
LESSON_DETAILS = "lesson-details"  # the explanation, the animations, the links
# a revealed step whose runs this server lacks: its answer until they are in, Train, what
# was queued and how far it is, and the interval reading it (`lesson_part(part, step)`)
LESSON_UNTRAINED = "lesson-untrained"
LESSON_TRAIN = "lesson-train"
LESSON_TRAINING = "lesson-training"
LESSON_TRAIN_POLL = "lesson-train-poll"


def lesson_part(part: str, step: Any) -> dict[str, Any]:
    """The id of one part of a revealed step's Train (`step` may be `MATCH`): the answer
    draws them, so its callbacks are matched by step."""
    return {"type": part, "step": step}


# the class poll on the lesson page (app/pollpanel.py)
POLL_PANEL = "poll-panel"
POLL_SHOWN = "poll-shown"  # what the poll panel was drawn for (teacher, student, offer)
POLL_BROWSER = "poll-browser"  # local store: this browser's random id (one vote per step)
POLL_TEACHER = "poll-teacher"  # session store: {"code", "key"} of the class this tab runs
POLL_START = "poll-start"  # Start a class poll
POLL_END = "poll-end"  # End the poll
POLL_TICK = "poll-tick"  # interval refreshing the teacher's counts
POLL_RESULTS = "poll-results"  # the teacher's counts of the step shown
POLL_SEND = "poll-send"  # a student's Send my prediction
POLL_NOTE = "poll-note"  # under it: whether the prediction was counted
