"""The presets' runs as this server has them: which are trained, and their claims.

Shared by the pages that show preset runs without training anything of their
own (the gallery, the lesson). Runs never change once finished, so a claim
check is cached per web process by the runs' keys.
"""

from __future__ import annotations

from functools import lru_cache

from app.services import job_queue, preset_mode
from tempsup.io.run import Run
from tempsup.jobs.record import ACTIVE, JobState
from tempsup.paper.presets import ClaimResult, Preset, presets

# what a page that shows preset runs says when this server trains none (the gallery's
# cards, a lesson step's missing runs)
OFF = "Presets are switched off on this server (TEMPSUP_PRESETS=off)."


def off() -> bool:
    """Whether this server's presets are switched off (`$TEMPSUP_PRESETS=off`): nothing
    trains their runs unless someone asks for them."""
    return preset_mode() == "off"


def quick() -> bool:
    """Whether this server serves the quick presets (`$TEMPSUP_PRESETS=quick`)."""
    return preset_mode() == "quick"


def by_name(name: str) -> Preset:
    return next(p for p in presets(quick()) if p.name == name)


def ready(preset: Preset) -> dict[str, Run]:
    """The preset's finished runs, by label."""
    queue = job_queue()
    out = {}
    for label, cfg in zip(preset.labels, preset.configs, strict=True):
        status = queue.status(cfg.key)
        if status is not None and status.state == JobState.DONE:
            run = queue.run(cfg.key)
            if run is not None:
                out[label] = run
    return out


def training(preset: Preset) -> int:
    """How many of the preset's runs are queued or training on this server now."""
    queue = job_queue()
    states = (queue.status(cfg.key) for cfg in preset.configs)
    return sum(1 for status in states if status is not None and status.state in ACTIVE)


@lru_cache(maxsize=16)
def checked(name: str, quick: bool, keys: tuple[str, ...]) -> tuple[ClaimResult, ...]:
    """A preset's claims measured once per web process (its runs never change)."""
    preset = next(p for p in presets(quick) if p.name == name)
    runs = {label: job_queue().run(key) for label, key in zip(preset.labels, keys, strict=True)}
    return tuple(preset.check(runs))


def claim_dicts(name: str) -> list[dict] | None:
    """Every claim of the preset called `name` as plain dicts (`ClaimResult.to_dict`), when
    all its runs are ready on this server; None while some still train (a lesson step that
    cites another preset's claim reads it here)."""
    preset = by_name(name)
    if len(ready(preset)) < len(preset.configs):
        return None
    return [c.to_dict() for c in checked(preset.name, quick(), preset.keys)]
