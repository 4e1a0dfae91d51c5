"""`RunConfig`: everything that defines one training run, validated and hashed.

A config is the unit the whole system speaks: the CLI builds one from flags,
the app from its controls and URL, the job queue keys its cache on
`config.key`, and a run file stores it as JSON. Validation happens here, once,
with messages that name the field, the value received and the allowed range,
so no later layer ever sees an impossible run (science.md §1).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from tempsup.core.specs import Config, check_bool, check_choice, check_float, check_int
from tempsup.errors import TempsupError
from tempsup.model import task_shapes as _tasks

# The paper's three models, then the gated and selective ones (tempsup.model.gated), which
# the lens sees through their linearisation at the silent state (tempsup.model.lens).
PAPER_MODELS = ("linear", "ssm", "rnn")
GATED_MODELS = ("gru", "lstm", "lru", "selective")
MODELS = PAPER_MODELS + GATED_MODELS
MODEL_NAMES = {
    "linear": "linear RNN",
    "ssm": "SSM (linear recurrence, ReLU readout)",
    "rnn": "nonlinear ReLU RNN",
    "gru": "GRU (ReLU readout)",
    "lstm": "LSTM (ReLU readout)",
    "lru": "LRU (complex diagonal, ReLU readout)",
    "selective": "selective SSM (input-dependent step, ReLU readout)",
}
SCHEDULES = ("cosine", "constant")
INPUT_DISTS = ("uniform", "constant", "exponential")
OBJECTIVES = ("sampled", "expected")

# Bump when the meaning of a config changes (training recipe, data, init), so
# cached results computed under the old meaning are never served again.
SCHEMA_VERSION = 2  # 2: a run's loss terms for ReLU readouts are exact to second order

# Fields added after the first configs were keyed: each stays out of the key while it has
# its default, so every config made before it keeps its key (caches, links, shipped runs).
LATER_FIELDS = ("objective", "task", "ks", "window", "persistence")
_FIRST_DEFAULTS: dict[str, Any] = {
    "objective": "sampled", "task": "recall", "ks": None, "window": 1, "persistence": 0.0,
}  # fmt: skip
# Tasks with several delays (ks): k is derived from them and the readout is free.
MULTI_DELAY_TASKS = ("multi", "cued")

# Fields that may differ between the configs of one batch (a sweep).
SWEEPABLE = ("sparsity", "k", "curriculum")
# ... and between runs a worker trains together (`batch_key`): configs of different base
# seeds draw from their own data streams (tempsup.training.trainer), so each run is
# what it is alone.
BATCHABLE = (*SWEEPABLE, "seed")

# Fraction of training over which a sparsity curriculum reaches its target.
CURRICULUM_FRACTION = 0.5

# The largest job a config may describe: about steps*T*M*B*(N_h^2 + N_h*N_x)
# multiply-adds. 2e13 is roughly half an hour on two cores; anything larger is
# a typo, not an experiment.
MAX_WORK = 2e13
# Multiply-adds per step of a gated model relative to the plain recurrence (its gates).
GATE_WORK = {"gru": 3, "lstm": 4, "selective": 2, "lru": 2}
# Activations kept for backprop: T*M*B*max(N_h, N_x) floats (~4 GB at 1e9).
MAX_ACTIVATIONS = 2.5e8


@dataclass(frozen=True)
class RunConfig(Config):
    """One training run of `seeds` models (science.md §1).

    Defaults reproduce the paper's setting as measured in science.md §1b:
    N_h = 2, k = 3, T = 20, uniform[0,1] inputs, Adam with cosine decay,
    tied readout, best of 8 seeds. JSON both ways, `key`, `from_dict` and
    `replace` come from `tempsup.core.specs.Config`, shared with the bows lab.
    """

    model: str = "ssm"  # the paper's most telling case: linear recurrence, ReLU readout
    k: int = 3  # delay: y_t = x_{t-k}
    sparsity: float = 0.9  # S = 1 - p; sparse enough for the interference-free packing
    hidden: int = 2  # N_h; 2 can be drawn directly
    inputs: int = 1  # N_x; 1 = scalar input, one feature direction per age s
    seq_len: int = 20  # T; long enough that old features must be forgotten (T >> k)
    batch: int = 512  # sequences per step; the loss is a sum over T, mean over batch
    steps: int = 2000  # enough for every staircase step at lr 1e-2
    lr: float = 0.01  # Adam; 1e-2 learned every preset in §1b
    schedule: str = "cosine"  # cosine decay to 0 settles the final geometry
    seeds: int = 8  # models trained side by side; the best is shown (§1b: best of 8)
    seed: int = 0  # base seed: init of every model and the data stream
    tied: bool = True  # W_y := W_{s=k}, the paper's default; fixes the gauge
    bias: bool = False  # readout bias b_y; removes the mean-correction term
    importance: float = 0.7  # feature i weighs importance**i in the loss (N_x > 1)
    input_dist: str = "uniform"  # law of U in x = B*U: uniform[0,1], constant 1, exponential(1)
    snapshot_every: int = 20  # steps between frames: 100 frames for the default run
    curriculum: float | None = (
        None  # sparsity at step 0, moved linearly to `sparsity` by mid-training
    )
    warm_start: str | None = None  # a run file (or run key) whose final weights start every seed
    # sampled: Adam on batches, as the paper trained; expected: gradient flow on the
    # expected loss (noise-free curves): exact for the linear model, to second order in p
    # for the SSM (science.md §1c); not for the ReLU RNN
    objective: str = "sampled"
    # issue 43 (tempsup.model.tasks): what the network is asked to output. recall: y_t =
    # x_{t−k}; multi: every delay of `ks` at once; sum: Σ of the `window` inputs from age k
    # on; cued: the delay of `ks` a cue channel names at each step. For multi and cued k is
    # derived, the oldest delay max(ks) (the k < T check and the geometry's k-th projection
    # keep their meaning), and the readout is free (tied = False: a tie W_y := W_{s=k}
    # would give one delay's direction to every output)
    task: str = "recall"
    ks: tuple[int, ...] | None = None  # the delays of multi and cued (recall and sum use k)
    window: int = 1  # sum only: how many ages from k on are summed (1 is recall)
    persistence: float = 0.0  # q: an input repeats its previous value with probability q

    def __post_init__(self) -> None:
        self._check_task()
        check_choice("model", self.model, MODELS)
        check_choice("schedule", self.schedule, SCHEDULES)
        check_choice("input_dist", self.input_dist, INPUT_DISTS)
        check_choice("objective", self.objective, OBJECTIVES)
        if self.objective == "expected" and self.model not in ("linear", "ssm"):
            raise TempsupError(
                "objective: 'expected' needs model 'linear' (exact) or 'ssm' (second order in "
                f"p), got model {self.model!r} (its recurrence has no such form); use objective "
                "'sampled'"
            )
        if self.objective == "expected" and not self.plain_task:
            raise TempsupError(
                "objective: 'expected' is gradient flow on today's expected loss (recall, inputs "
                f"independent in time), got task {self.task!r} with persistence "
                f"{self.persistence:g}; use objective 'sampled'"
            )
        if self.objective == "expected" and self.model == "ssm" and self.bias:
            raise TempsupError(
                "objective: 'expected' for the SSM needs no readout bias (bias = false)"
            )
        check_int("hidden", self.hidden, 1, 256)
        if self.model == "lru" and self.hidden % 2:
            raise TempsupError(
                f"hidden: the lru needs an even hidden size (N_h/2 complex modes), got "
                f"{self.hidden}"
            )
        check_int("inputs", self.inputs, 1, 128)
        check_int("seq_len", self.seq_len, 2, 500)
        if self.ks is not None and self.k >= self.seq_len:
            raise TempsupError(
                f"ks: every delay must be smaller than seq_len (T) = {self.seq_len}, got "
                f"{list(self.ks)}"
            )
        check_int("k", self.k, 0, self.seq_len - 1, hint="k must be smaller than seq_len (T)")
        if self.task == "sum" and self.k + self.window > self.seq_len:
            raise TempsupError(
                f"window: k + window − 1 = {self.k + self.window - 1} must be smaller than "
                f"seq_len (T) = {self.seq_len} (the oldest summed input would never enter)"
            )
        check_int("batch", self.batch, 1, 65536)
        check_int("steps", self.steps, 1, 200_000)
        check_int("seeds", self.seeds, 1, 256)
        check_int("seed", self.seed, 0, 2**31 - 1)
        check_int("snapshot_every", self.snapshot_every, 1, self.steps, hint="at most `steps`")
        check_float("sparsity", self.sparsity, 0.0, 1.0, hi_open=True)
        check_float("lr", self.lr, 0.0, 10.0, lo_open=True)
        check_float("importance", self.importance, 0.0, 1.0, lo_open=True)
        if self.curriculum is not None:
            check_float("curriculum", self.curriculum, 0.0, 1.0, hi_open=True)
        check_bool("tied", self.tied)
        check_bool("bias", self.bias)
        # JSON writes 0.0 as 0: store floats as floats so equal configs hash alike
        for name in ("sparsity", "lr", "importance", "curriculum", "persistence"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, float(value))
        if self.warm_start is not None and (
            not isinstance(self.warm_start, str) or not self.warm_start.strip()
        ):
            raise TempsupError(
                f"warm_start: expected a run file path or run key, got {self.warm_start!r}"
            )
        n = self.seq_len * self.seeds * self.batch
        if n * max(self.hidden, self.inputs) > MAX_ACTIVATIONS:
            raise TempsupError(
                f"run too large: seq_len*seeds*batch*max(hidden, inputs) = "
                f"{n * max(self.hidden, self.inputs):.3g} exceeds {MAX_ACTIVATIONS:.3g} "
                "(it would exhaust memory); lower batch or seeds"
            )
        if self.work > MAX_WORK:
            raise TempsupError(
                f"run too long: steps*seq_len*seeds*batch*(hidden^2 + hidden*inputs) = "
                f"{self.work:.3g} exceeds {MAX_WORK:.3g} (hours of training); "
                "lower steps, batch or seeds"
            )

    def _check_task(self) -> None:
        """The task's fields (`tempsup.model.tasks`'s checks): ks only for multi and cued,
        a window only for sum, a persistence in [0, 1); sets k = max(ks) and tied = False
        for multi and cued, and stores ks as a tuple (JSON gives a list)."""
        check_choice("task", self.task, _tasks.TASKS)
        if self.task in MULTI_DELAY_TASKS:
            if self.ks is None:
                raise TempsupError(
                    f"ks: task {self.task!r} needs its delays, e.g. ks = (2, 5) "
                    f"({'--k 2,5' if self.task == 'multi' else '--delays 1,3,5'})"
                )
            if isinstance(self.ks, (str, bytes)):
                raise TempsupError(f"ks: expected a list of delays, got {self.ks!r}")
            delays = _tasks.task_delays(self.task, self.ks, self.window)
            object.__setattr__(self, "ks", delays)
            object.__setattr__(self, "k", max(delays))
            object.__setattr__(self, "tied", False)
        else:
            if self.ks is not None:
                raise TempsupError(
                    f"ks: task {self.task!r} has one delay, k; ks (several delays) is for "
                    f"multi and cued, got {self.ks!r}"
                )
            if isinstance(self.k, int) and not isinstance(self.k, bool):
                _tasks.task_delays(self.task, max(self.k, 0), self.window)
        check_float("persistence", self.persistence, 0.0, 1.0, hi_open=True)

    # ---- derived quantities -------------------------------------------------

    @property
    def delays(self) -> tuple[int, ...]:
        """The task's delays: ks for multi and cued, (k,) for recall and sum."""
        return self.ks if self.ks is not None else (self.k,)

    @property
    def n_in(self) -> int:
        """Input channels the model sees: N_x, plus one cue channel per delay for cued."""
        return _tasks.n_inputs(self.task, self.delays, self.inputs)

    @property
    def n_out(self) -> int:
        """Outputs of the readout: one per (delay, feature) for multi, N_x otherwise."""
        return _tasks.n_outputs(self.task, self.delays, self.inputs)

    @property
    def plain_task(self) -> bool:
        """Today's task: recall of one delay from inputs independent in time (q = 0), the
        one every fast loss path, the second-order theory and the panels were built for."""
        return self.task == "recall" and self.persistence == 0.0

    def output_block(self) -> slice:
        """The readout columns the geometry reads: the outputs of delay k (for multi, the
        oldest delay's block of N_x outputs; every output otherwise)."""
        if self.task != "multi":
            return slice(0, self.inputs)
        i = self.delays.index(self.k)
        return slice(i * self.inputs, (i + 1) * self.inputs)

    @property
    def p(self) -> float:
        """Probability that an input is active at a time step (p = 1 - S)."""
        return 1.0 - self.sparsity

    def p_at(self, step: int) -> float:
        """The input probability in force at optimizer step `step` (0: the initial batch).

        Without a curriculum it is `p`; with one, p moves linearly from
        1 − curriculum to p over the first CURRICULUM_FRACTION of training.
        The trainer and the loss terms of a frame both read it from here.
        """
        start = 1.0 - (self.curriculum if self.curriculum is not None else self.sparsity)
        return start + (self.p - start) * curriculum_progress(self.steps, step)

    @property
    def relu_readout(self) -> bool:
        return self.model != "linear"

    @property
    def readout_bias(self) -> bool:
        """Whether a bias acts at the readout: the config's b_y, or a gated model's readout
        at rest (its linearisation's bias, nonzero without b_y: tempsup.model.lens)."""
        return self.bias or self.gated

    @property
    def gated(self) -> bool:
        """A gated or selective model: the lens reads its linearisation at the silent state
        (the run's W_x, W_h, W_y, b_y are J_x, J_h, the readout and the resting bias)."""
        return self.model in GATED_MODELS

    @property
    def state_size(self) -> int:
        """Width of the recurrent state the lens sees: the LSTM's is (h, c), 2 N_h."""
        return 2 * self.hidden if self.model == "lstm" else self.hidden

    @property
    def relu_hidden(self) -> bool:
        return self.model == "rnn"

    @property
    def n_snapshots(self) -> int:
        """Frames a full run yields: step 0, every `snapshot_every`, and the last."""
        return len(snapshot_steps(self.steps, self.snapshot_every))

    @property
    def work(self) -> float:
        """Multiply-adds of the whole run, the unit of the size limits."""
        per = self.hidden * self.hidden + self.hidden * self.inputs
        per *= GATE_WORK.get(self.model, 1)
        return float(self.steps) * self.seq_len * self.seeds * self.batch * per

    # ---- identity -------------------------------------------------------------

    def _key_payload(self) -> dict[str, Any]:
        """The fields and the schema version, which invalidates old caches.

        A field added later stays out while it has its default, so the keys of
        every config that existed before it (cached runs, shared links) hold.
        """
        fields = self.to_dict()
        for name in LATER_FIELDS:
            if fields[name] == _FIRST_DEFAULTS[name]:
                del fields[name]
        if fields.get("ks") is not None:
            fields["ks"] = list(fields["ks"])
        return {"v": SCHEMA_VERSION, **fields}

    # ---- from what people type ----------------------------------------------

    @classmethod
    def field_value(cls, name: str, value: Any) -> Any:
        """One field's value as a person typed it — text from a link or a flag, a number
        from a box — in the field's type: "1"/"true"/"yes"/"on" and "0"/"false"/"no"/"off"
        for the switches, "" / "none" / "off" for no curriculum or warm start, a whole
        float such as 8.0 for an integer field. What no field could hold raises a
        TempsupError naming the field and the value; ranges are checked by the config.
        """
        kinds = {f.name: f.type for f in dataclasses.fields(cls)}
        if name not in kinds:
            raise TempsupError(
                f"{name}: not a setting of a run (expected one of {', '.join(kinds)})"
            )
        kind = _TYPES[str(kinds[name]).split("|")[0].strip()]
        optional = "None" in str(kinds[name])
        if kind is tuple:
            return _delays(name, value)
        if isinstance(value, str):
            text = value.strip()
            if optional and text.lower() in ("", "none", "off"):
                return None
            try:
                return _from_text(kind, text)
            except ValueError:
                expected = "true/false" if kind is bool else kind.__name__
                raise TempsupError(f"{name}: expected {expected}, got {value!r}") from None
        if kind is int and isinstance(value, float) and value.is_integer():
            return int(value)
        return value


_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "tuple[int, ...]": tuple}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _from_text(kind: type, text: str) -> Any:
    """`text` as a `kind` (ValueError when it is not one)."""
    if kind is bool:
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise ValueError(text)
    return kind(text)


def _delays(name: str, value: Any) -> tuple[int, ...] | None:
    """Delays as typed: "2,5" (or "2 5", "[2, 5]") or a list of numbers; ""/"none": None."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().strip("[]()")
        if text.lower() in ("", "none", "off"):
            return None
        value = [part for part in text.replace(",", " ").split() if part]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    try:
        out = []
        for part in value:
            number = float(part)
            if not number.is_integer() or isinstance(part, bool):
                raise ValueError(part)
            out.append(int(number))
    except (TypeError, ValueError):
        raise TempsupError(
            f"{name}: expected delays as whole numbers such as 2,5, got {value!r}"
        ) from None
    return tuple(out)


def curriculum_progress(steps: int, step: int) -> float:
    """Curriculum progress after `step` optimizer steps: 0 until step 1, 1 from the ramp end."""
    ramp = max(1, int(steps * CURRICULUM_FRACTION))
    return min(1.0, max(step - 1, 0) / ramp)


def importance_weights(config: RunConfig) -> list[float]:
    """I_i = importance**i: feature A matters most (Toy Models of Superposition)."""
    return [config.importance**i for i in range(config.inputs)]


def snapshot_steps(steps: int, every: int) -> list[int]:
    """Optimizer steps after which a frame is taken: 0, every, 2*every, ..., steps."""
    marks = list(range(0, steps, every))
    return marks + [steps]


FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RunConfig))
DEFAULTS = RunConfig()
# Always written in a link, so it states its main settings even when they are defaults.
MAIN_FIELDS = ("model", "k", "sparsity", "hidden", "inputs")


def query_string(config: RunConfig) -> str:
    """The explorer's link query for `config`: main fields plus every non-default one
    (short and stable; the app's link parser and the static site both use it)."""
    from urllib.parse import urlencode

    pairs = []
    for f in dataclasses.fields(RunConfig):
        value = getattr(config, f.name)
        if f.name in MAIN_FIELDS or value != getattr(DEFAULTS, f.name):
            pairs.append((f.name, _query_text(value)))
    return "?" + urlencode(pairs)


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):  # delays: "2,5", as `field_value` reads them
        return ",".join(str(v) for v in value)
    return str(value)


def shape_key(config: RunConfig, free: tuple[str, ...]) -> str:
    """Every field of `config` but the `free` ones, as text: configs with equal keys
    may train as one batch (`free` = SWEEPABLE for a sweep, BATCHABLE for a worker)."""
    shape = {k: v for k, v in config.to_dict().items() if k not in free}
    return json.dumps(shape, sort_keys=True)


def batch_key(config: RunConfig) -> str | None:
    """What runs a worker trains as one batch share (`shape_key` over BATCHABLE); None:
    trains alone.

    A warm start gives every model of a run its source's weights, so a run with
    one is not batched with others.
    """
    return None if config.warm_start is not None else shape_key(config, BATCHABLE)
