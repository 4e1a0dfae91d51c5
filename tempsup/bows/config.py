"""`BowsConfig`: one run of the correlated-features lab, validated and hashed.

The lab trains tied-weight autoencoders x̂ = σ(WᵀWx + b), W ∈ R^{m×d}, on data
whose features are correlated (science.md §2; Prieto, Stevinson, Barsbey et
al., "From Data Statistics to Feature Geometry", arXiv 2603.09972). A config
names the data (a synthetic structure or a text file), the model and the
training recipe. Like `tempsup.model.config.RunConfig` it is the unit every layer
speaks: validated once here (messages name field, value and allowed range),
hashed into `.key` (with the kind tag "bows", so it never collides with an
RNN run), stored as JSON in run files.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from tempsup.core.specs import Config, check_choice, check_float, check_int
from tempsup.errors import TempsupError

SHA256 = re.compile(r"[0-9a-f]{64}")  # a text named by its content

STRUCTURES = ("circular", "figure8", "sphere", "iid", "text")
STRUCTURE_NAMES = {
    "circular": "circle of features (the authors' synthetic data)",
    "figure8": "figure-8 of features (two loops sharing a crossing)",
    "sphere": "sphere of features",
    "iid": "independent features (control: same mean activation as the circle)",
    "text": "bag of words of a text",
}
MODELS = ("linear", "relu")
MODEL_NAMES = {"linear": "linear tied autoencoder", "relu": "ReLU tied autoencoder"}
VALUES = ("binary", "uniform")
# "epoch-cosine": torch's CosineAnnealingLR(T_max=epochs, eta_min=min_lr) stepped once per
# epoch (the authors'); "cosine": decay to 0 at every optimizer step; "constant".
SCHEDULES = ("epoch-cosine", "cosine", "constant")
# "mean": squared error averaged over features and batch (torch's MSELoss, the authors');
# "sum": summed over features, averaged over the batch.
REDUCTIONS = ("mean", "sum")
# "torch": nn.Linear's default init, W ~ U(±1/√d) (the authors'); "xavier": N(0, 2/(m + d)).
INITS = ("torch", "xavier")

# Bump when the meaning of a config changes (recipe, data, init), so cached
# results computed under the old meaning are never served again.
SCHEMA_VERSION = 2  # 2: the authors' recipe (binary data, held-out split, epoch-cosine, mean loss)
# Largest job: steps * batch * seeds * 4md multiply-adds (forward and backward
# of both matmuls). 2e12 is tens of minutes on two cores.
MAX_WORK = 2e12
MAX_FEATURES = 10_000  # the paper's vocabulary size; also the synthetic limit


@dataclass(frozen=True)
class BowsConfig(Config):
    """One run of `seeds` tied autoencoders on one data set (science.md §2).

    Defaults are the authors' synthetic recipe (LucasPrietoAl/correlations-feature-geometry,
    `synthetic_bows/`): 12 circular features, binary values, sharpness 10, base
    log-odds 0, no noise; 10,000 samples of which a random 8,000 train; a ReLU
    model initialised as torch's nn.Linear; AdamW lr 1e-2 with the cosine schedule
    stepped once per epoch down to 1e-9, weight decay 1, gradient clipping 1.0,
    batch 256, 200 epochs, the mean squared error as the loss. Only `seeds` (4,
    the best shown) and the data seed are the lab's own.
    """

    kind: ClassVar[str] = "bows"

    structure: str = "circular"  # the authors' synthetic data: the PCA circle is the story
    n_features: int = 12  # d for synthetic data: 12 directions, like the months
    sharpness: float = 10.0  # logit = sharpness·cos(θ − φ_i) + base; the authors' default
    base_log_odds: float = 0.0  # the authors' default: each feature on half of the time
    noise: float = 0.0  # std (radians) of the latent angle's jitter; the authors' default is none
    values: str = "binary"  # an active feature's value: 1 (the authors') or uniform[0,1]
    m: int = 2  # bottleneck; 2 shows the covariance's PCA circle directly in the plane
    model: str = "relu"  # the paper's interesting case: linear and nonlinear superposition
    weight_decay: float = 1.0  # AdamW's decoupled decay; the authors use 1 (and 6)
    lr: float = 0.01  # AdamW; the authors' value
    schedule: str = "epoch-cosine"  # cosine stepped once per epoch, the authors' recipe
    min_lr: float = 1e-9  # the cosine's floor (torch's eta_min); the authors' value
    epochs: int = 200  # the authors' value
    batch: int = 256  # the authors' value
    grad_clip: float = 1.0  # max gradient norm per model (0 = off); the authors' value
    n_samples: int = 8000  # training samples (one epoch); the authors' value
    n_heldout: int = 2000  # synthetic: samples generated beyond them and held out (10,000 in all)
    reduction: str = "mean"  # the loss: mean over features (torch's MSELoss) or their sum
    init: str = "torch"  # W's initialisation: torch's nn.Linear default, or Xavier normal
    seeds: int = 4  # models trained side by side; the lowest final loss is shown
    seed: int = 0  # base seed: the data set, its shuffling and every model's init
    snapshot_every: int = 64  # steps between frames (2 epochs): 101 frames for the default run
    # structure "text": the sha256 of the UTF-8 text (the content, never a path: the
    # key hashes it, and a job's worker reads the text from the job store by it)
    text_sha256: str | None = None
    vocab: int = 1000  # structure "text": the most frequent words kept as features
    window: int = 20  # structure "text": consecutive non-empty lines per sample (paper: 20)

    def __post_init__(self) -> None:
        check_choice("structure", self.structure, STRUCTURES)
        check_choice("model", self.model, MODELS)
        check_choice("values", self.values, VALUES)
        check_choice("schedule", self.schedule, SCHEDULES)
        check_choice("reduction", self.reduction, REDUCTIONS)
        check_choice("init", self.init, INITS)
        lo = 4 if self.structure == "sphere" else 2
        check_int("n_features", self.n_features, lo, MAX_FEATURES)
        check_float("sharpness", self.sharpness, 0.0, 100.0)
        check_float("base_log_odds", self.base_log_odds, -30.0, 30.0)
        check_float("noise", self.noise, 0.0, 2 * math.pi)
        check_int("vocab", self.vocab, 2, MAX_FEATURES)
        check_int("window", self.window, 1, 100_000)
        check_int("m", self.m, 1, self.d, hint=f"the bottleneck is at most the {self.d} features")
        check_float("weight_decay", self.weight_decay, 0.0, 100.0)
        check_float("lr", self.lr, 0.0, 10.0, lo_open=True)
        check_float("min_lr", self.min_lr, 0.0, self.lr)  # at most lr
        check_int("epochs", self.epochs, 1, 100_000)
        check_int("batch", self.batch, 1, 65_536)
        check_float("grad_clip", self.grad_clip, 0.0, 1e6)
        check_int("n_samples", self.n_samples, 1, 10_000_000)
        check_int("n_heldout", self.n_heldout, 0, 10_000_000)
        check_int("seeds", self.seeds, 1, 256)
        check_int("seed", self.seed, 0, 2**31 - 1)
        check_int("snapshot_every", self.snapshot_every, 1, self.steps, hint="at most `steps`")
        if self.structure == "text":
            digest = self.text_sha256
            if not (isinstance(digest, str) and SHA256.fullmatch(digest)):
                raise TempsupError(
                    "text_sha256: structure 'text' needs the sha256 of an uploaded text "
                    f"(64 hex digits), got {str(digest)[:80]!r}"
                )
        elif self.text_sha256 is not None:
            raise TempsupError(
                "text_sha256: only structure 'text' reads a text, got "
                f"{str(self.text_sha256)[:80]!r} with structure {self.structure!r}"
            )
        if self.batch * self.seeds * self.d * max(self.m, 1) > 2.5e8:
            raise TempsupError(
                f"run too large: batch*seeds*d*m = {self.batch * self.seeds * self.d * self.m:.3g} "
                "exceeds 2.5e8 (it would exhaust memory); lower batch, seeds or m"
            )
        if self.work > MAX_WORK:
            raise TempsupError(
                f"run too long: steps*batch*seeds*4*m*d = {self.work:.3g} exceeds "
                f"{MAX_WORK:.3g} (hours of training); lower epochs, n_samples, seeds or m"
            )

    # ---- derived quantities -------------------------------------------------

    @property
    def d(self) -> int:
        """Number of features: n_features, or (at most) the vocabulary for text."""
        return self.vocab if self.structure == "text" else self.n_features

    @property
    def steps_per_epoch(self) -> int:
        return -(-self.n_samples // self.batch)  # the last, partial batch counts

    @property
    def steps(self) -> int:
        """Optimizer steps of the whole run: epochs × ⌈n_samples / batch⌉."""
        return self.epochs * self.steps_per_epoch

    @property
    def n_snapshots(self) -> int:
        from tempsup.model.config import snapshot_steps

        return len(snapshot_steps(self.steps, self.snapshot_every))

    def learning_rate(self, step: int) -> float:
        """The learning rate of optimizer step `step` (1 … steps).

        "epoch-cosine" is torch's CosineAnnealingLR(T_max=epochs, eta_min=min_lr)
        stepped after every epoch, as the authors' loop does: epoch e (from 0)
        trains at min_lr + (lr − min_lr)(1 + cos(πe/epochs))/2.
        """
        if self.schedule == "epoch-cosine":
            epoch = (step - 1) // self.steps_per_epoch
            return self.min_lr + (self.lr - self.min_lr) * 0.5 * (
                1.0 + math.cos(math.pi * epoch / self.epochs)
            )
        if self.schedule == "cosine":
            return self.lr * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / self.steps))
        return self.lr

    @property
    def relu(self) -> bool:
        return self.model == "relu"

    @property
    def work(self) -> float:
        """Multiply-adds of the whole run, the unit of the size limit."""
        return float(self.steps) * self.batch * self.seeds * 4 * self.m * self.d

    # ---- identity (JSON, key, strict from_dict and replace: `tempsup.core.specs.Config`) ----

    def _key_payload(self) -> dict[str, Any]:
        """The fields, tagged with the kind and the schema version.

        A text run hashes its text's content (`text_sha256`). The digest is hashed
        under the field's first name, `text_path` (None for every other structure),
        so that the keys of synthetic runs, and the links to them, stay as they were.
        """
        fields = self.to_dict()
        fields["text_path"] = fields.pop("text_sha256")
        return {"kind": self.kind, "v": SCHEMA_VERSION, **fields}

    @classmethod
    def from_dict(cls, data: Any) -> BowsConfig:
        """Build from JSON-like data, strictly (`Config.from_dict`); a "kind" entry is
        accepted if it says "bows" (so tagged JSON, as in run files, round-trips)."""
        if isinstance(data, dict) and "kind" in data:
            data = dict(data)
            kind = data.pop("kind")
            if kind != cls.kind:
                raise TempsupError(f"config: expected kind {cls.kind!r}, got {kind!r}")
        return super().from_dict(data)


FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(BowsConfig))
DEFAULTS = BowsConfig()
