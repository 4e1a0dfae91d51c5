"""Reproduce the paper: train every preset, check its claims, write the report.

`reproduce(quick, out_dir)` trains the runs of `tempsup.paper.presets` — configs that
differ only in sparsity, k or curriculum (and share a warm start) as one
batch, warm starts after the run they start from — then runs each preset's
`check` and writes `report.md` (a summary table, then every claim with the
numbers behind it, its seed success rate and whether it held) plus one HTML
page of figures per preset (the four panels of every run, and the preset's own
summary figure). `fill_cache(queue)` trains the same runs into a
job store, so the gallery opens them instantly on a fresh start.

The quick form (`quick=True`) is the test suite's: fewer steps and seeds and a
N_h = 20, 15-feature stand-in for the large preset. The full form is what the
README reports.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.jobs.record import JobState
from tempsup.model.config import MODEL_NAMES, SWEEPABLE, RunConfig, shape_key
from tempsup.paper.parallel import PROGRESS_EVERY, batch_cost, train_batches, width
from tempsup.paper.preset import ClaimResult, Preset, format_measured
from tempsup.paper.presets import preset_configs, presets

if TYPE_CHECKING:
    from tempsup.jobs.queue import JobQueue

# on_progress(message, fraction done in [0, 1])
ProgressFn = Callable[[str, float], None]
# The report's last section and report.json's keys that say how long training took: the
# only parts that differ between two runs of the same form (whatever `jobs`).
TIMING_HEADING = "## Training time"
TIMING_KEYS = ("train_seconds", "jobs", "load_average")


# ---- training every preset run ----------------------------------------------------------


def batches(configs: Sequence[RunConfig]) -> list[list[RunConfig]]:
    """Group configs that can train as one batch: equal but for SWEEPABLE fields.

    Groups keep the order of their first member; since a warm start is part of
    the grouping (every member shares the same init) and `configs` lists
    sources before the runs they start, every group comes after its source.
    """
    groups: dict[str, list[RunConfig]] = {}
    for cfg in configs:
        groups.setdefault(shape_key(cfg, SWEEPABLE), []).append(cfg)
    return list(groups.values())


def train_configs(
    configs: Sequence[RunConfig],
    done: dict[str, Run] | None = None,
    lookup: Callable[[str], Run | None] | None = None,
    on_progress: ProgressFn | None = None,
    on_run: Callable[[Run], None] | None = None,
    timings: dict[str, float] | None = None,
    jobs: int = 1,
) -> dict[str, Run]:
    """Train every config not in `done` (by key), in batches; return all runs by key.

    A warm start's source run is taken from `done`, the runs trained here, or
    `lookup(key)` (a job store); its best seed's final weights start every
    seed. `on_run(run)` is called as each run finishes (to store it);
    `timings`, if given, receives the seconds each batch took, by batch label, in
    batch order. `jobs` > 1 trains independent batches in that many worker
    processes of one torch thread each, longest first (`tempsup.paper.parallel`):
    the same runs, sooner.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise TempsupError(f"jobs: expected an integer >= 1, got {jobs!r}")
    runs: dict[str, Run] = dict(done or {})
    groups = batches([c for c in configs if c.key not in runs])
    labels = [_batch_label(g) for g in groups]
    cost = [batch_cost(g) for g in groups]
    total = sum(cost) or 1.0
    fraction = [0.0] * len(groups)  # of each batch's steps done
    seconds: dict[int, float] = {}

    def init_for(i: int) -> dict[str, Any] | None:
        src = groups[i][0].warm_start
        if src is None:
            return None
        source = runs.get(src) or (lookup(src) if lookup is not None else None)
        if source is None:
            raise TempsupError(
                f"warm_start: run {src} must be trained before {groups[i][0].key}; "
                "it is neither in this batch nor in the job store"
            )
        return source.weights(-1)

    def on_step(i: int, step: int) -> None:
        fraction[i] = step / groups[i][0].steps
        if on_progress is not None:
            running = sum(0 < f < 1 for f in fraction) - (0 < fraction[i] < 1)
            more = f" (+{running} more running)" if running else ""
            done_cost = sum(c * f for c, f in zip(cost, fraction, strict=True))
            on_progress(labels[i] + more, done_cost / total)

    def on_done(i: int, trained: list[Run], sec: float) -> None:
        seconds[i] = sec
        for run in trained:
            runs[run.config.key] = run
            if on_run is not None:
                on_run(run)

    processes = min(jobs, width(groups))
    if processes > 1:
        train_batches(groups, labels, processes, init_for, on_step, on_done)
    else:
        from tempsup.analysis.sweeps import train_runs

        for i, group in enumerate(groups):
            steps = group[0].steps

            def step_cb(step: int, i: int = i, steps: int = steps) -> None:
                if step % PROGRESS_EVERY == 0 or step == steps:
                    on_step(i, step)

            init = init_for(i)
            t0 = time.monotonic()
            trained = train_runs(group, init=init, on_step=step_cb)
            on_done(i, trained, time.monotonic() - t0)
    if timings is not None:
        timings.update({labels[i]: seconds[i] for i in sorted(seconds)})
    return runs


def _batch_label(group: Sequence[RunConfig]) -> str:
    cfg = group[0]
    varied = [name for name in SWEEPABLE if len({getattr(c, name) for c in group}) > 1]
    what = ", ".join(
        f"{name} = {', '.join(str(getattr(c, name)) for c in group)}" for name in varied
    )
    return (
        f"{cfg.model} N_h={cfg.hidden} N_x={cfg.inputs}"
        + (f" ({what})" if what else f" k={cfg.k} S={cfg.sparsity:g}")
        + f": {len(group)} run(s) x {cfg.seeds} seeds, {cfg.steps} steps"
    )


def fill_cache(
    queue: JobQueue, quick: bool = False, on_progress: ProgressFn | None = None, jobs: int = 1
) -> list[str]:
    """Train every preset run that the job store does not hold as DONE and store it.

    Returns the keys trained. Runs already done are reused as warm-start
    sources. Each run is stored (`queue.put_run`) as soon as its batch ends;
    `jobs` as in `train_configs`.
    """
    configs = preset_configs(quick)
    done_keys = set()
    for cfg in configs:
        st = queue.status(cfg.key)
        if st is not None and st.state == JobState.DONE:
            done_keys.add(cfg.key)
    todo = [c for c in configs if c.key not in done_keys]
    if not todo:
        return []

    def lookup(key: str) -> Run | None:
        return queue.run(key)

    train_configs(todo, lookup=lookup, on_progress=on_progress, on_run=queue.put_run, jobs=jobs)
    return [c.key for c in todo]


# ---- the report -------------------------------------------------------------------------


def check_presets(
    runs: dict[str, Run], quick: bool = False
) -> list[tuple[Preset, list[ClaimResult]]]:
    """Every preset with its claims measured on `runs` (by key)."""
    return [(p, p.check({c.key: runs[c.key] for c in p.configs})) for p in presets(quick)]


def reproduce(
    quick: bool = False,
    out_dir: str | Path = "reports",
    on_progress: ProgressFn | None = None,
    figures: bool = True,
    done: dict[str, Run] | None = None,
    jobs: int = 1,
) -> Path:
    """Train every preset, check its claims, write `report.md` (and figures); return its path.

    `done` holds runs already trained (by key), which are used instead of training
    them again (the test suite trains the quick form once for several test files).
    `jobs`: worker processes (`train_configs`). The report is the same for any
    `jobs` but for its last section, `TIMING_HEADING`, and the `TIMING_KEYS` of
    `report.json`: how long training took, on how many processes, at what load.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    load = {"before": _load_average()}
    start = time.monotonic()
    runs = train_configs(
        preset_configs(quick), done=done, on_progress=on_progress, timings=timings, jobs=jobs
    )
    train_s = time.monotonic() - start
    load["after"] = _load_average()
    results = check_presets(runs, quick)
    pages = write_pages(results, runs, out) if figures else {}
    text = render_report(results, runs, quick, train_s, timings, pages, jobs=jobs, load=load)
    path = out / "report.md"
    path.write_text(text)
    (out / "report.json").write_text(
        json.dumps(
            {
                "quick": quick,
                "train_seconds": round(train_s, 1),
                "jobs": jobs,
                "load_average": load,
                "presets": [
                    {"name": p.name, "claims": [r.to_dict() for r in res]} for p, res in results
                ],
            },
            indent=1,
        )
    )
    return path


def summary_rows(results: Iterable[tuple[Preset, list[ClaimResult]]]) -> list[dict[str, Any]]:
    """One row per claim: preset, claim, held, success rate — the report's first table."""
    return [
        {
            "preset": p.name,
            "claim": r.claim,
            "held": r.held,
            "successes": r.successes,
            "seeds": r.seeds,
            "count": r.count_text,
        }
        for p, res in results
        for r in res
    ]


def render_report(
    results: list[tuple[Preset, list[ClaimResult]]],
    runs: dict[str, Run],
    quick: bool,
    train_s: float,
    timings: dict[str, float],
    pages: dict[str, str],
    jobs: int = 1,
    load: dict[str, list[float] | None] | None = None,
) -> str:
    """The Markdown report: summary table, then each preset's claims and numbers, then
    (`TIMING_HEADING`) the training time: `jobs` processes, the `load` average
    ("before" and "after" training: [1, 5, 15 min])."""
    n_claims = sum(len(res) for _, res in results)
    n_held = sum(r.held for _, res in results for r in res)
    lines = [
        f"# Reproduction report{' (quick form)' if quick else ''}",
        "",
        "Claims of *Temporal superposition* (Sharma, Proca, Prieto, Mediano — ICLR 2026), "
        "checked on runs trained by `tempsup reproduce"
        + (" --quick" if quick else "")
        + '`. "Held" is the verdict on the best seed of each run (lowest expected loss); '
        "the success rate counts every seed. Conventions (tolerances, recall, alive seeds) "
        "are in `tempsup/analysis/measures.py`.",
        "",
        f"**{n_held} of {n_claims} claims held.**",
        "",
        "| preset | claim | held | seeds |",
        "|---|---|---|---|",
    ]
    for row in summary_rows(results):
        claim = row["claim"].replace("|", "\\|")  # a pipe would end the table cell
        lines.append(
            f"| {row['preset']} | {claim} | {'yes' if row['held'] else '**no**'} | {row['count']} |"
        )
    for p, res in results:
        lines += ["", f"## {p.title}", "", f"*{p.claim}*", "", "Recipe:", ""]
        lines += [f"- {step}" for step in p.recipe]
        lines += ["", "Runs:", ""]
        for label, cfg in zip(p.labels, p.configs, strict=True):
            run = runs[cfg.key]
            lines.append(
                f"- {label}: {MODEL_NAMES[cfg.model]}, key `{cfg.key}`, best seed {run.best} "
                f"({run.best_seed.reason}"
                + (f"; {run.best_seed.tie_text}" if run.best_seed.tied else "")
                + f"), final loss {float(run.final_loss[run.best]):.4g}"
            )
        if p.name in pages:
            lines += ["", f"Figures: [{pages[p.name]}]({pages[p.name]})"]
        for r in res:
            lines += [
                "",
                f"### {'Held' if r.held else 'Not held'}: {r.claim}",
                "",
                f"Seeds satisfying it: **{r.successes} of {r.seeds}**"
                + (f" ({r.counted})" if r.counted != "seeds" else "")
                + f". Criterion: {r.criterion}.",
                "",
                *([f"Measured: {r.statement}", ""] if r.statement else []),
                "```",
                format_measured(r.measured),
                "```",
            ]
    threads = 1 if jobs > 1 else _threads()
    lines += [
        "",
        TIMING_HEADING,
        "",
        f"Training took {train_s:.0f} s of wall clock ({platform.machine()}, "
        f"{jobs} process(es) of {threads} torch thread(s)"
        + "".join(
            f"; load average {when} training {', '.join(f'{x:.2f}' for x in value)}"
            for when, value in (load or {}).items()
            if value is not None
        )
        + "). This section is all that differs between two runs of the same form.",
        "",
        "| batch | seconds |",
        "|---|---|",
    ]
    lines += [f"| {label} | {sec:.1f} |" for label, sec in timings.items()]
    return "\n".join(lines) + "\n"


# ---- figures: one HTML page per preset ---------------------------------------------------

PLOTLY_JS = "plotly.min.js"  # written once next to the pages, which load it relatively

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<script src="{plotly}"></script>
<style>body{{font-family:{font};margin:2em;max-width:1400px}}
.row{{display:flex;flex-wrap:wrap;gap:8px}}.row>div{{width:440px}}
table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}
pre{{margin:0;font-size:12px}}</style></head><body>
<h1>{title}</h1><p><em>{claim}</em></p>
<h2>Recipe</h2><ul>{recipe}</ul>
<h2>Claims</h2><table><tr><th>claim</th><th>held</th><th>seeds</th><th>measured</th></tr>{claims}</table>
{extra}
{runs}
</body></html>
"""


def write_pages(
    results: list[tuple[Preset, list[ClaimResult]]], runs: dict[str, Run], out: Path
) -> dict[str, str]:
    """Write `<preset>.html` per preset (and plotly.js once); return name -> file name."""
    import html

    import plotly.offline

    from tempsup.core.palette import FONT
    from tempsup.figures import PANELS, panel_figure

    (out / PLOTLY_JS).write_text(plotly.offline.get_plotlyjs())
    pages = {}
    for p, res in results:
        claims = "".join(
            f"<tr><td>{html.escape(r.claim)}<br><small>{html.escape(r.criterion)}</small></td>"
            f"<td>{'yes' if r.held else '<b>no</b>'}</td><td>{html.escape(r.count_text)}</td>"
            f"<td>{html.escape(r.statement)}"
            f"<pre>{html.escape(format_measured(r.measured))}</pre></td></tr>"
            for r in res
        )
        blocks = []
        for label, cfg in zip(p.labels, p.configs, strict=True):
            run = runs[cfg.key]
            figs = "".join(
                f"<div>{_fig_html(panel_figure(panel, run), 440, 440)}</div>" for panel in PANELS
            )
            blocks.append(
                f"<h2>{html.escape(label)}</h2><p>{html.escape(MODEL_NAMES[cfg.model])}, "
                f"key <code>{cfg.key}</code>, best seed {run.best} of {cfg.seeds}, "
                f"final loss {float(run.final_loss[run.best]):.4g}</p><div class='row'>{figs}</div>"
            )
        extra = p.summary_figure(runs)
        page = _PAGE.format(
            title=html.escape(p.title),
            plotly=PLOTLY_JS,
            font=FONT["family"].replace('"', "'"),
            claim=html.escape(p.claim),
            recipe="".join(f"<li>{html.escape(step)}</li>" for step in p.recipe),
            claims=claims,
            extra=f"<h2>Summary</h2>{_fig_html(extra, 700, 380)}" if extra is not None else "",
            runs="".join(blocks),
        )
        name = f"{p.name}.html"
        (out / name).write_text(page)
        pages[p.name] = name
    return pages


def _fig_html(fig: Any, width: int, height: int) -> str:
    from tempsup.figures._animation import stdlib_json

    fig.update_layout(width=width, height=height)
    with stdlib_json():
        return fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False})


def _load_average() -> list[float] | None:
    """The system's load average over 1, 5 and 15 min (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _threads() -> int:
    import torch

    return torch.get_num_threads()


__all__ = [
    "TIMING_HEADING",
    "TIMING_KEYS",
    "batches",
    "check_presets",
    "fill_cache",
    "render_report",
    "reproduce",
    "summary_rows",
    "train_configs",
]
