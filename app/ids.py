"""Every component id of the app, in one place (style.md: never scattered literals)."""

# page and shared state
ROOT_URL = "root-url"  # routing: pathname picks the page
PAGE = "page-content"
PAGE_PATH = "page-path"  # the path whose page is shown (routing skips a re-render)
ALERT = "alert"  # one line for errors no panel owns (see app.report_error)
URL = "url"  # the explorer's config in the query string
CONFIG = "config-store"  # the validated config being viewed: {"config": {...}, "key": "..."}
JOB = "job-store"  # {"key", "state", "cursor", "seed"}: what the poller needs
JOB_STATUS = "job-status-store"  # {"key", "text", "pct", "active"}: drawn by the browser
VIEW = "view-store"  # per-frame figure data streamed from the server (see app/explorer.py)
REQUEST = "view-request-store"  # {"key", "seed", "frame"}: the view a link asks for, until shown
CLIENT = "client-store"  # a random per-browser id for the per-client job limit
POLL = "poll-interval"

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
CONFIG_ERROR = "config-error"

# job controls
TRAIN = "btn-train"
CANCEL = "btn-cancel"
PROGRESS_BAR = "job-progress-bar"
STATUS = "job-status"

# player
FRAME = "player-frame"  # the scrubber: frame index
PLAY = "btn-play"
PREV = "btn-prev"
NEXT = "btn-next"
TICK = "player-tick"  # interval advancing the frame while playing
FRAME_LABEL = "player-label"
SEED_PICK = "seed-pick"
FEATURE_PICK = "feature-pick"

# panels
GRAPH_DIRECTIONS = "graph-directions"
GRAPH_LOSS = "graph-loss"
GRAPH_PROJECTIONS = "graph-projections"
GRAPH_EIGEN = "graph-eigen"


def explain(panel: str) -> str:
    """The caption under a panel (the directions one follows the config)."""
    return f"explain-{panel}"


# export
EXPORT_HTML = "btn-export-html"
EXPORT_NPZ = "btn-export-npz"
DOWNLOAD = "download"
SHARE_LINK = "share-link"  # the link to exactly this view (config, seed, frame); a click copies it
SHARE_FEEDBACK = "share-feedback"  # "copied" after a click (assets/tempsup.js)

# phase diagram page
PHASE_MODEL = "phase-model"
PHASE_K = "phase-k"
PHASE_SPARSITIES = "phase-sparsities"
PHASE_SEEDS = "phase-seeds"
PHASE_STEPS = "phase-steps"
PHASE_HIDDEN = "phase-hidden"
PHASE_RUN = "phase-run"
PHASE_CANCEL = "phase-cancel"
PHASE_JOB = "phase-job"  # {"key": sweep key}
PHASE_STATUS = "phase-status-store"  # same shape as JOB_STATUS
PHASE_STATUS_TEXT = "phase-status"
PHASE_BAR = "phase-bar"
PHASE_POLL = "phase-poll"
PHASE_GRAPH = "phase-graph"
PHASE_ERROR = "phase-error"

# compare page
COMPARE_URL = "compare-url"
COMPARE_LEFT = "compare-left"  # link inputs
COMPARE_RIGHT = "compare-right"
COMPARE_GO = "compare-go"
COMPARE_VIEWS = "compare-views"  # {"left": view, "right": view}
COMPARE_POLL = "compare-poll"
COMPARE_STATUS = "compare-status"
COMPARE_ERROR = "compare-error"  # what is wrong with a pasted link
COMPARE_FRAC = "compare-fraction"  # the linked scrubber: fraction of training
COMPARE_PLAY = "compare-play"
COMPARE_TICK = "compare-tick"
COMPARE_LABEL = "compare-label"


def compare_graph(side: str, panel: str) -> str:
    return f"compare-{side}-{panel}"


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
LAB_TRAIN = "lab-train"
LAB_CANCEL = "lab-cancel"
LAB_JOB = "lab-job"  # {"key"}
LAB_STATUS = "lab-status-store"
LAB_STATUS_TEXT = "lab-status"
LAB_BAR = "lab-bar"
LAB_POLL = "lab-poll"
LAB_VIEW = "lab-view"
LAB_FRAME = "lab-frame"
LAB_PLAY = "lab-play"
LAB_TICK = "lab-tick"
LAB_LABEL = "lab-label"
LAB_ERROR = "lab-error"
LAB_EXPORT = "lab-export"
LAB_DOWNLOAD = "lab-download"


def lab_graph(panel: str) -> str:
    return f"lab-{panel}"


# lab sweep: the sweep over the bottleneck m (and weight decay) on the lab page
LAB_SWEEP_MS = "lab-sweep-ms"
LAB_SWEEP_WDS = "lab-sweep-wds"
LAB_SWEEP_RUN = "lab-sweep-run"
LAB_SWEEP_CANCEL = "lab-sweep-cancel"
LAB_SWEEP_EXPORT = "lab-sweep-export"
LAB_SWEEP_DOWNLOAD = "lab-sweep-download"
LAB_SWEEP_JOB = "lab-sweep-job"  # {"key": bows-sweep key}
LAB_SWEEP_STATUS = "lab-sweep-status-store"  # same shape as LAB_STATUS
LAB_SWEEP_STATUS_TEXT = "lab-sweep-status"
LAB_SWEEP_BAR = "lab-sweep-bar"
LAB_SWEEP_POLL = "lab-sweep-poll"
LAB_SWEEP_GRAPH = "lab-sweep-graph"
LAB_SWEEP_ERROR = "lab-sweep-error"

# gallery page
GALLERY_CARDS = "gallery-cards"
GALLERY_POLL = "gallery-poll"
