"""What a preset is, what a measured claim is, and the registry that lists and orders them.

A `Preset` is data (science.md §1 "What training should show", §1b for the
measured recipes): a slug, a title, one sentence of what to look for, the
`RunConfig`s it trains (a preset may be several runs: dense vs sparse, k =
0..4, N_h ∈ {2, 5, 10}), the recipe in words, a `check(runs)` that measures
the claim on trained runs and returns one `ClaimResult` per claim, and an
optional summary figure across its runs. Each claim is one function of its
preset's module (its test, numbers and criterion, with the function writing its
sentence, `said_*`, right after it); `check` only composes them. "Held" is judged on the best seed
(`Run.best`: the lowest expected loss) of each run — the paper's best-of-n protocol — and the
success rate counts every seed, so a card can say "held, 4 of 16 seeds".

Warm starts reference runs by key: a config's `warm_start` is the `key` of
the config it starts from. `Registry.configs()` lists every config of every
preset once, each after the one it starts from (`graphlib`), so training them
in that order always finds the source finished.

Each preset lives in one module of `tempsup.paper.presets` (its builder, its
checks, its figure); the one registry of them, in gallery order, is
`tempsup.paper.presets.REGISTRY`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from graphlib import CycleError, TopologicalSorter
from typing import Any

import numpy as np

from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.ties import said_ties

Checker = Callable[[dict[str, Run]], list["ClaimResult"]]
Figure = Callable[[dict[str, Run]], Any]  # runs by label -> a plotly Figure
Builder = Callable[[bool], "Preset"]  # quick -> the preset


# ---- results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimResult:
    """One claim measured on trained runs.

    `successes` of `seeds` seeds satisfy it (for claims spanning several runs,
    `seeds` counts every seed of every run examined: see `criterion`); `counted`
    names what the count counts when "seeds" alone would mislead (e.g. "seeds
    switch basin on their own" beside a claim about the best seed); `held` is the
    verdict on the best seed(s); `measured` holds the numbers behind it (plain
    JSON: floats, ints, strings, lists) and `statement` is the one sentence that
    says them, written by the claim's own function in its preset module (and closed by
    the best seeds' tie note, where there is one), so the gallery, the lesson, the report
    and the README say the same words.
    """

    claim: str
    measured: dict[str, Any]
    successes: int
    seeds: int
    held: bool
    criterion: str = ""
    statement: str = ""
    counted: str = "seeds"

    @property
    def rate(self) -> float:
        return self.successes / self.seeds if self.seeds else 0.0

    @property
    def rate_text(self) -> str:
        return f"{self.successes} of {self.seeds}"

    @property
    def count_text(self) -> str:
        """The seed count with what it counts: "3 of 16 seeds"."""
        return f"{self.successes} of {self.seeds} {self.counted}"

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain JSON: claim, measured, successes, seeds, held, criterion."""
        return asdict(self)


Said = Callable[[dict[str, Any]], str]  # a claim's measured numbers -> its one sentence


def result(
    claim: str,
    ok: np.ndarray,
    held: bool,
    measured: dict[str, Any],
    criterion: str,
    said: Said | None = None,
    counted: str = "seeds",
) -> ClaimResult:
    """A claim from its per-seed verdicts `ok` (any shape), the verdict on the best seed(s),
    the numbers behind it and `said`, the claim's function writing them as one sentence
    (without one, the numbers are listed as `name = value` items). A sentence closes with
    the tie note of the best seeds, where the numbers carry one (`tempsup.paper.ties`)."""
    ok = np.asarray(ok, dtype=bool).ravel()
    if said is not None:
        statement = said(measured) + said_ties(measured)
    else:
        statement = "; ".join(measured_items(measured))
    return ClaimResult(
        claim, measured, int(ok.sum()), int(ok.size), bool(held), criterion, statement, counted
    )


def measured_items(measured: dict[str, Any], prefix: str = "") -> list[str]:
    """A claim's numbers as short `name = value` items (nested names joined by spaces;
    floats to 4 significant digits, long lists shortened)."""
    out = []
    for key, value in measured.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out += measured_items(value, name + " ")
        else:
            out.append(f"{name} = {_short(value)}")
    return out


def _short(value: Any, limit: int = 8) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        shown = [_short(v) for v in value[:limit]]
        return "[" + ", ".join(shown) + (", …" if len(value) > limit else "") + "]"
    return str(value)


def num(x: float | None, digits: int = 3) -> str:
    """A number for a sentence: `digits` significant digits, a true minus sign, "—" for None."""
    if x is None:
        return "—"
    text = f"{float(x):.{digits}g}"
    return text.replace("-", "−")


def fixed(x: float | None, decimals: int = 3) -> str:
    """A number for a sentence with a fixed number of decimals (losses: 1.300, not 1.3)."""
    if x is None:
        return "—"
    text = f"{float(x):.{decimals}f}"
    return (text.lstrip("-") if float(text) == 0 else text).replace("-", "−")


def deg(x: float | None, decimals: int = 0) -> str:
    """An angle for a sentence, e.g. "−108°" or (decimals = 1) "90.9°"."""
    return "—" if x is None else f"{float(x):.{decimals}f}°".replace("-", "−")


def listed(values: Sequence[Any], decimals: int = 2) -> str:
    """Numbers for a sentence, comma separated: whole numbers as they are, others with
    `decimals` decimals."""
    return ", ".join(str(v) if isinstance(v, (int, str)) else fixed(v, decimals) for v in values)


def rounded(x: Any, digits: int = 3) -> Any:
    """Round numbers (and lists of them) for the measured dicts."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return [rounded(v, digits) for v in np.asarray(x).tolist()]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if x is None:
        return None
    return round(float(x), digits)


def format_measured(measured: dict[str, Any], indent: int = 0) -> str:
    """A claim's measured numbers as indented `key: value` lines (report, gallery)."""
    out = []
    pad = "  " * indent
    for key, value in measured.items():
        if isinstance(value, dict):
            out.append(f"{pad}{key}:")
            out.append(format_measured(value, indent + 1))
        else:
            out.append(f"{pad}{key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(out)


# ---- a preset ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Preset:
    """One gallery card: the runs to train, the claim to check on them, a summary figure.

    `configs[i]` is labelled `labels[i]` (e.g. "dense", "k=2", "N_h=5");
    `main` is the label of the run a card opens first. `recipe` lists the
    recipe steps in words (seeds, curriculum, warm start) for the card and the
    report. `check(runs)` takes the trained runs, in the order of `configs` or
    as a mapping from label or config key to `Run`; `figure(runs)` draws
    them by label, where one picture across the runs says more than the panels.
    """

    name: str
    title: str
    claim: str
    configs: tuple[RunConfig, ...]
    labels: tuple[str, ...]
    recipe: tuple[str, ...]
    main: str
    checker: Checker = field(repr=False, compare=False)
    figure: Figure | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.configs) != len(self.labels) or len(set(self.labels)) != len(self.labels):
            raise TempsupError(
                f"preset {self.name}: expected one distinct label per config, "
                f"got {len(self.labels)} labels for {len(self.configs)} configs"
            )
        if self.main not in self.labels:
            raise TempsupError(f"preset {self.name}: main {self.main!r} is not one of its labels")

    @property
    def keys(self) -> tuple[str, ...]:
        """Run keys of the configs, in order (the job store's ids)."""
        return tuple(c.key for c in self.configs)

    @property
    def main_key(self) -> str:
        return self.config(self.main).key

    def config(self, label: str) -> RunConfig:
        try:
            return self.configs[self.labels.index(label)]
        except ValueError:
            raise TempsupError(
                f"preset {self.name}: expected a label in {', '.join(self.labels)}, got {label!r}"
            ) from None

    def runs_by_label(self, runs: Sequence[Run] | Mapping[str, Run]) -> dict[str, Run]:
        """Match runs to labels: a sequence in config order, or a mapping by label or key."""
        if isinstance(runs, Mapping):
            out = {}
            for label, cfg in zip(self.labels, self.configs, strict=True):
                run = runs.get(label, runs.get(cfg.key))
                if run is None:
                    raise TempsupError(
                        f"preset {self.name}: no run for {label!r} (key {cfg.key}); "
                        f"train it first (tempsup presets fill)"
                    )
                out[label] = run
        else:
            runs = list(runs)
            if len(runs) != len(self.configs):
                raise TempsupError(
                    f"preset {self.name}: expected {len(self.configs)} runs "
                    f"({', '.join(self.labels)}), got {len(runs)}"
                )
            out = dict(zip(self.labels, runs, strict=True))
        for label, run in out.items():
            want = self.config(label)
            if run.config.key != want.key:
                raise TempsupError(
                    f"preset {self.name}: run for {label!r} has key {run.config.key}, "
                    f"expected {want.key}"
                )
        return out

    def check(self, runs: Sequence[Run] | Mapping[str, Run]) -> list[ClaimResult]:
        """Measure every claim of this preset on its trained runs."""
        return self.checker(self.runs_by_label(runs))

    def summary_figure(self, runs: Sequence[Run] | Mapping[str, Run]) -> Any:
        """The preset's figure across its runs, or None when it has none."""
        return None if self.figure is None else self.figure(self.runs_by_label(runs))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description for web pages (configs as dicts, with their keys)."""
        return {
            "name": self.name,
            "title": self.title,
            "claim": self.claim,
            "recipe": list(self.recipe),
            "main": self.main,
            "main_key": self.main_key,
            "runs": [
                {"label": label, "key": cfg.key, "config": cfg.to_dict()}
                for label, cfg in zip(self.labels, self.configs, strict=True)
            ],
        }


# ---- the registry ------------------------------------------------------------------------


class Registry:
    """The presets in gallery order, built from one builder per preset module."""

    def __init__(self, builders: Sequence[Builder]) -> None:
        self.builders = tuple(builders)

    def presets(self, quick: bool = False) -> list[Preset]:
        """The presets in gallery order (quick: the small, fast form used by the tests)."""
        return [build(quick) for build in self.builders]

    def preset(self, name: str, quick: bool = False) -> Preset:
        """The preset called `name` (its slug)."""
        found = {p.name: p for p in self.presets(quick)}
        if name not in found:
            raise TempsupError(f"preset: expected one of {', '.join(found)}, got {name!r}")
        return found[name]

    def configs(self, quick: bool = False) -> list[RunConfig]:
        """Every config of every preset, each once, in an order where warm starts come after
        the run they start from."""
        return training_order(c for p in self.presets(quick) for c in p.configs)


def training_order(configs: Iterable[RunConfig]) -> list[RunConfig]:
    """The configs, each key once, every warm start after its source (first-seen order
    among configs that are ready together)."""
    seen: dict[str, RunConfig] = {}
    for cfg in configs:
        seen.setdefault(cfg.key, cfg)
    graph: dict[str, set[str]] = {}
    for key, cfg in seen.items():
        src = cfg.warm_start
        if src is not None and src not in seen:
            raise TempsupError(
                f"presets: config {key} warm-starts from {src!r}, which is not a preset run"
            )
        graph[key] = set() if src is None else {src}
    try:
        return [seen[key] for key in TopologicalSorter(graph).static_order()]
    except CycleError as err:
        raise TempsupError(f"presets: warm-start cycle through {err.args[1][0]}") from None


def card(doc: str | None) -> tuple[str, str]:
    """A preset module's title and claim, read from its docstring: the first line (less its
    period) is the title, the paragraph after it the claim, so both are written once, at the
    top of the file, where a reader looks first."""
    paragraphs = [" ".join(p.split()) for p in (doc or "").strip().split("\n\n")]
    if len(paragraphs) < 2:
        raise TempsupError("preset module: expected a docstring of a title line and a claim")
    return paragraphs[0].removesuffix("."), paragraphs[1]
