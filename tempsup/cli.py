"""`tempsup` command line: train, sweep, inspect, export — the library without a browser.

Thin by design: parse flags into a `RunConfig`, call the library, print. Every
config field has a flag named after it (`seq_len` → `--seq-len`); those names
are a public contract. Errors a user can cause print one line and exit 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from tempsup.core.progress import StepBar
from tempsup.errors import TempsupError
from tempsup.model.config import DEFAULTS, MODEL_NAMES, MULTI_DELAY_TASKS, RunConfig

# Help text for each config flag; the defaults' reasons live in config.py.
FLAG_HELP = {
    "model": (
        "linear | ssm (linear recurrence, ReLU readout) | rnn (ReLU RNN) | gru | lstm | "
        "lru (complex diagonal) | selective (input-dependent step); the last four with a "
        "ReLU readout"
    ),
    "k": "delay: the target is the input k steps back",
    "sparsity": "S = 1 - p, the probability that an input is silent",
    "hidden": "hidden size N_h",
    "inputs": "input dimension N_x (features A, B, C, ...)",
    "seq_len": "sequence length T",
    "batch": "sequences per optimizer step",
    "steps": "optimizer steps",
    "lr": "Adam learning rate",
    "schedule": "cosine | constant learning-rate schedule",
    "min_lr": "the cosine schedule's floor (torch's eta_min)",
    "seeds": "models trained side by side; the best is reported",
    "seed": "base seed for init and data",
    "tied": "tie the readout to the output direction, W_y := W_h^k W_x (default)",
    "bias": "add a readout bias b_y",
    "importance": "feature i weighs importance**i in the loss",
    "input_dist": "uniform | constant | exponential: law of active input values",
    "snapshot_every": "steps between frames",
    "curriculum": "start at this sparsity and move linearly to --sparsity by mid-training",
    "warm_start": "run file whose best seed's final weights start every seed",
    "objective": "sampled (Adam on batches, as the paper) | expected (E[L]: linear, ssm)",
    "task": (
        "recall (y_t = x_{t-k}) | multi (every delay of --k 2,5 at once) | sum (the --window "
        "inputs from age k on) | cued (the delay of --delays 1,3,5 a cue names at each step)"
    ),
    "ks": "the delays of multi and cued, comma-separated (same as --delays; or --k 2,5)",
    "window": "task sum: how many ages from k on are summed (1 is recall)",
    "persistence": "q in [0, 1): an input repeats its previous value with probability q",
}
DELAYS_HELP = "task cued (or multi): the delays, comma-separated, e.g. 1,3,5"


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_config_flags(parser: argparse.ArgumentParser, lists: Sequence[str] = ()) -> None:
    """One flag per RunConfig field; fields in `lists` take comma-separated values.

    --k takes one delay or, for multi and cued, several (2,5: `config_from_args` makes them
    ks); --delays is --ks by the issue's name."""
    kinds: dict[str, Callable[[str], Any]] = {"curriculum": float, "ks": delays}
    if "k" not in lists:
        kinds["k"] = delays
    _add_field_flags(parser, DEFAULTS, FLAG_HELP, lists, kinds=kinds)
    parser.add_argument(
        "--free-readout", dest="tied", action="store_false", help="same as --no-tied"
    )
    parser.add_argument("--delays", dest="ks", type=_typed(delays, "--delays"), help=DELAYS_HELP)


def config_from_args(args: argparse.Namespace, **override: Any) -> RunConfig:
    values = _task_values({**_field_values(args, RunConfig), **override})
    if "snapshot_every" not in values and "steps" in values:  # short runs: fewer frames
        values["snapshot_every"] = min(DEFAULTS.snapshot_every, values["steps"])
    return RunConfig(**values)


def delays(text: str) -> tuple[int, ...]:
    """Delays as typed after --k, --ks or --delays: "3" or "2,5" (whole numbers)."""
    try:
        out = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(text) from None
    if not out:
        raise ValueError(text)
    return out


def _task_values(values: dict[str, Any]) -> dict[str, Any]:
    """--k as the config reads it: one delay is k; several (2,5) are the ks of multi and
    cued, refused for the one-delay tasks; --k and --delays may not say two things."""
    k = values.get("k")
    if not isinstance(k, tuple):
        return values
    task = values.get("task", DEFAULTS.task)
    if task in MULTI_DELAY_TASKS:
        ks = values.get("ks")
        if ks is not None and ks != k:
            raise TempsupError(f"--k {_text(k)} and --delays {_text(ks)} name different delays")
        return {**{n: v for n, v in values.items() if n != "k"}, "ks": k}
    if len(k) != 1:
        raise TempsupError(
            f"--k: task {task!r} has one delay, got {_text(k)} (several delays: --task multi)"
        )
    return {**values, "k": k[0]}


def _text(delays: tuple[int, ...]) -> str:
    return ",".join(str(d) for d in delays)


def _add_field_flags(
    parser: argparse.ArgumentParser,
    defaults: Any,
    helps: dict[str, str],
    lists: Sequence[str],
    kinds: dict[str, Callable[[str], Any]] | None = None,
) -> None:
    """One flag per field of the config `defaults`, parsed like its default value (a
    field whose default is None names its parser in `kinds`; else it takes text)."""
    for f in dataclasses.fields(defaults):
        default = getattr(defaults, f.name)
        help_ = f"{helps[f.name]} (default: {default})"
        if isinstance(default, bool):
            parser.add_argument(
                flag(f.name), action=argparse.BooleanOptionalAction, default=default, help=help_
            )
            continue
        kind = (kinds or {}).get(f.name) or {int: int, float: float}.get(type(default), str)
        if f.name in lists:
            parser.add_argument(flag(f.name), type=_list_of(kind, flag(f.name)), help=help_)
        else:
            parser.add_argument(flag(f.name), type=_typed(kind, flag(f.name)), help=help_)


def _field_values(args: argparse.Namespace, config_type: type) -> dict[str, Any]:
    """The config fields given on the command line (flags left out are None)."""
    names = [f.name for f in dataclasses.fields(config_type)]
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def _typed(kind: Callable[[str], Any], name: str) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {getattr(kind, '__name__', 'a value')}, got {text!r}"
            ) from None

    parse.__name__ = getattr(kind, "__name__", name)
    return parse


def _list_of(kind: Callable[[str], Any], name: str) -> Callable[[str], list[Any]]:
    one = _typed(kind, name)

    def parse(text: str) -> list[Any]:
        return [one(part) for part in text.split(",") if part.strip()]

    return parse


# ---- commands --------------------------------------------------------------------


def load_warm_start(ref: str | None) -> dict[str, np.ndarray] | None:
    """Final weights of the best seed of the run file `ref`."""
    if ref is None:
        return None
    from tempsup.io.run import Run

    return Run.load(ref).weights(-1)


def cmd_train(args: argparse.Namespace) -> int:
    from tempsup.analysis.sweeps import train_runs

    config = config_from_args(args)
    init = load_warm_start(config.warm_start)
    label = f"{config.model} k={config.k} S={config.sparsity}"
    with StepBar(config.steps, label, not args.quiet) as bar:
        (run,) = train_runs([config], init=init, on_step=bar)
    out = Path(args.out or f"{config.key}.npz")
    run.save(out)
    summary = {**run.summary(), "file": str(out)}
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{MODEL_NAMES[config.model]}: best loss {summary['loss']:.4g} "
            f"(seed {summary['seed']}), {summary['successes']}/{summary['seeds']} seeds succeeded, "
            f"kθ = {summary['swept_angle_deg']:.1f}°, ρ(W_h) = {summary['spectral_radius']:.3f}, "
            f"‖w_0‖ = {summary['w0_norm']:.3f} (kθ, ‖w_0‖: minimum-norm gauge) -> {out}"
        )
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from tempsup.analysis.sweeps import sweep_configs, table_row, train_runs, write_table

    sparsities = args.sparsity or [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95]
    ks = args.k or [DEFAULTS.k]
    base = config_from_args(args, sparsity=sparsities[0], k=ks[0])
    configs = sweep_configs(base, sparsities, ks)
    init = load_warm_start(base.warm_start)
    label = f"sweep of {len(configs)} points x {base.seeds} seeds"
    with StepBar(base.steps, label, not args.quiet) as bar:
        runs = train_runs(configs, init=init, on_step=bar)
    out_dir = Path(args.out_dir)
    rows = []
    for run in runs:
        path = run.save(out_dir / f"{run.config.key}.npz")
        rows.append(table_row(run, file=path.name))
    table = write_table(rows, out_dir / "sweep.csv")
    if args.json:
        print(json.dumps({"table": str(table), "rows": rows}))
    else:
        for row in rows:
            print(
                f"k={row['k']} S={row['sparsity']:<5} kθ={row['swept_angle_deg']:7.1f}° "
                f"ρ={row['spectral_radius']:.3f} ‖w0‖={row['w0_norm']:.3f} "
                f"loss={row['loss']:.4g} success {row['successes']}/{row['seeds']}"
            )
        print("kθ and ‖w0‖ in the minimum-norm gauge (tempsup inspect); ρ, loss: gauge-free")
        print(f"table -> {table}")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    """One seed at one frame of a run file: gauge-free numbers, and the rest in the
    canonical gauge (`tempsup.io.describe`)."""
    from tempsup.io.describe import describe, lines
    from tempsup.io.run import Run

    summary = describe(Run.load(args.run), args.seed, args.frame)
    if args.json:
        print(json.dumps(summary))
    else:
        print("\n".join(lines(summary)))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """The explorer's standalone animation of a run file (the app's Export HTML)."""
    from tempsup.core.frames import stop_note
    from tempsup.figures import export_html
    from tempsup.io.describe import seed_index
    from tempsup.io.run import Run

    run = Run.load(args.run)
    seed = seed_index(run, args.seed)
    n_x = run.config.inputs
    if not 0 <= args.feature < n_x:
        raise TempsupError(f"--feature: expected an integer in [0, {n_x - 1}], got {args.feature}")
    out = Path(args.html)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(export_html(run, seed, feature=args.feature), encoding="utf-8")
    stopped = stop_note(int(run["step"][-1]), run.config.steps)
    print(f"seed {seed} of run {run.config.key}{f' ({stopped})' if stopped else ''} -> {out}")
    return 0


def add_file_parsers(sub: Any) -> None:
    """`tempsup inspect` and `tempsup export`: read a run file, train nothing."""
    inspect_p = sub.add_parser(
        "inspect", help="one run's summary: gauge-free and canonical numbers"
    )
    export_p = sub.add_parser("export", help="a run file as the explorer's standalone animation")
    for p in (inspect_p, export_p):
        p.add_argument("run", help="run file (.npz) written by train, sweep or the app")
        p.add_argument(
            "--seed", default="best", help="seed index, or best (default: best final loss)"
        )
    inspect_p.add_argument(
        "--frame",
        type=int,
        default=-1,
        help="frame, numbered from 1 as in the app and its share links "
        "(default: -1, the last; -n counts from the end)",
    )
    inspect_p.add_argument("--json", action="store_true", help="print the summary as JSON")
    export_p.add_argument("--html", required=True, help="the page to write (plotly.js inlined)")
    export_p.add_argument(
        "--feature", type=int, default=0, help="input feature to draw (default 0)"
    )
    inspect_p.set_defaults(func=cmd_inspect, torch=False)
    export_p.set_defaults(func=cmd_export, torch=False)


def _queue(cache: str | None) -> Any:
    """The job store a command works on: `--cache DIR`, else the configured one (trusted:
    the command line may warm-start from files)."""
    from tempsup.jobs import JobQueue, open_queue

    return JobQueue(cache) if cache else open_queue(settings(), trust_specs=True)


def settings() -> Any:
    from tempsup.settings import Settings

    return Settings.from_env(os.environ)


def cmd_worker(args: argparse.Namespace) -> int:
    from tempsup.jobs.worker import serve

    threads = args.threads or settings().threads
    return serve(_queue(args.cache), n=args.workers, threads=threads, once=args.once)


def _fraction_bar(enabled: bool) -> Callable[[str, float], None]:
    """on_progress(message, fraction) for reproduce / presets fill: one redrawn line."""

    def show(message: str, fraction: float) -> None:
        if enabled:
            sys.stderr.write(f"\r[{'#' * int(30 * fraction):<30}] {100 * fraction:3.0f}% {message}")
            sys.stderr.write("\n" if fraction >= 1 else "\033[K")
            sys.stderr.flush()

    return show


def _jobs(args: argparse.Namespace) -> int:
    """`--jobs`, else every core this process may use."""
    from tempsup.paper.parallel import available_cores

    return available_cores() if args.jobs is None else args.jobs


def cmd_reproduce(args: argparse.Namespace) -> int:
    from tempsup.paper.reproduce import reproduce

    start = time.monotonic()
    path = reproduce(
        quick=args.quick,
        out_dir=args.out_dir,
        on_progress=_fraction_bar(not args.quiet),
        jobs=_jobs(args),
    )
    report = json.loads((path.parent / "report.json").read_text())
    claims = [c for p in report["presets"] for c in p["claims"]]
    held = sum(c["held"] for c in claims)
    for p in report["presets"]:
        for c in p["claims"]:
            mark = "held" if c["held"] else "NOT held"
            print(f"{p['name']}: {mark} ({c['successes']}/{c['seeds']} seeds): {c['claim']}")
    load = ", ".join(
        f"{' '.join(f'{x:.2f}' for x in value)} {when}"
        for when, value in report["load_average"].items()
        if value is not None
    )
    print(
        f"{held} of {len(claims)} claims held in {time.monotonic() - start:.0f} s "
        f"(training {report['train_seconds']:.0f} s, {report['jobs']} process(es)"
        + (f"; load average {load}" if load else "")
        + f") -> {path}"
    )
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    from tempsup.paper.presets import presets

    if args.presets_command == "list":
        items = presets(quick=args.quick)
        if args.json:
            print(json.dumps([p.to_dict() for p in items]))
            return 0
        for p in items:
            print(f"{p.name}: {p.title}\n  {p.claim}")
            for label, cfg in zip(p.labels, p.configs, strict=True):
                warm = f", warm start from {cfg.warm_start}" if cfg.warm_start else ""
                print(f"  - {label}: {cfg.model}, key {cfg.key}, {cfg.seeds} seeds{warm}")
        return 0
    from tempsup.paper.reproduce import fill_cache

    queue = _queue(args.cache)
    quick = getattr(args, "quick", False)  # `ship` writes the full presets only
    trained = fill_cache(
        queue, quick=quick, on_progress=_fraction_bar(not args.quiet), jobs=_jobs(args)
    )
    print(f"trained and stored {len(trained)} preset run(s) in {queue!r}")
    if args.presets_command == "ship":
        from tempsup.paper import shipped
        from tempsup.paper.presets import preset_configs

        out = args.out or shipped.DIRECTORY
        files = shipped.write([queue.run(c.key) for c in preset_configs(quick=False)], out)
        size = sum(f.stat().st_size for f in files)
        print(f"wrote {len(files)} run file(s), {size / 1e6:.1f} MB, to {out}")
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    from tempsup.teaching.site import build

    start = time.monotonic()
    queue = None if args.no_store else _queue(args.cache)
    index = build(args.out_dir, quick=args.quick, queue=queue,
                  on_progress=_fraction_bar(not args.quiet), app_url=args.app_url)  # fmt: skip
    print(f"wrote the site in {time.monotonic() - start:.0f} s -> {index} (open it in a browser)")
    return 0


def add_reproduce_parsers(sub: Any) -> None:
    """`tempsup reproduce`, `tempsup presets list|fill` and `tempsup site` (the paper's presets)."""
    repro_p = sub.add_parser("reproduce", help="train every preset, check the paper's claims")
    repro_p.add_argument("--quick", action="store_true", help="the small form the tests use")
    repro_p.add_argument("--out-dir", default="reports", help="folder for report.md and pages")
    repro_p.set_defaults(func=cmd_reproduce)
    presets_p = sub.add_parser("presets", help="the gallery's preset runs: list, fill a job store")
    presets_sub = presets_p.add_subparsers(dest="presets_command", required=True)
    list_p = presets_sub.add_parser("list", help="print every preset and its runs' keys")
    list_p.add_argument("--json", action="store_true", help="print them as JSON")
    fill_p = presets_sub.add_parser("fill", help="train the preset runs missing from a job store")
    fill_p.add_argument("--cache", help="job directory (default: the app's configured store)")
    ship_p = presets_sub.add_parser(
        "ship", help="write the full presets' runs that ship with the package (trains missing ones)"
    )
    ship_p.add_argument("--cache", help="job directory (default: the app's configured store)")
    ship_p.add_argument("--out", type=Path, default=None, help="folder (default: the package's)")
    site_p = sub.add_parser("site", help="write the gallery, lesson and report as a static site")
    site_p.add_argument("out_dir", help="folder to write (index.html, one page per preset, …)")
    site_p.add_argument("--cache", help="job store to read runs from and store trained ones in")
    site_p.add_argument("--no-store", action="store_true", help="train everything, store nothing")
    site_p.add_argument("--app-url", help="a tempsup server for the lesson's 'try it' links")
    site_p.set_defaults(func=cmd_site)
    for p in (repro_p, list_p, fill_p, ship_p, site_p):
        if p not in (repro_p, ship_p):
            p.add_argument("--quick", action="store_true", help="the small form the tests use")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        p.add_argument("--threads", type=int, default=None, help="torch threads (default: 1)")
        if p in (repro_p, fill_p, ship_p):
            p.add_argument(
                "--jobs",
                type=int,
                default=None,
                help="train independent batches in N processes of one torch thread each "
                "(default: the number of cores; 1: in this process, with --threads)",
            )
        if p is not site_p:
            p.set_defaults(func=cmd_reproduce if p is repro_p else cmd_presets)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `tempsup: error: ...` and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


# ---- the correlated-features lab: tempsup bows train / sweep ------------------------

BOWS_FLAG_HELP = {
    "structure": "circular | figure8 | sphere | iid (control) | text (bag of words of --text-path)",
    "n_features": "number of synthetic features d",
    "sharpness": "feature i is on with probability sigmoid(sharpness*cos(θ-φ_i) + base)",
    "base_log_odds": "the base of that logit (negative: sparser features)",
    "noise": "std (radians) of the jitter of each sample's latent angle",
    "values": "uniform | binary: an active synthetic feature's value",
    "m": "bottleneck size (rows of W)",
    "model": "linear | relu: x̂ = σ(WᵀWx + b)",
    "weight_decay": "AdamW's decoupled weight decay",
    "lr": "AdamW learning rate",
    "schedule": "cosine | constant learning-rate schedule",
    "min_lr": "the cosine schedule's floor (torch's eta_min)",
    "epochs": "passes of n_samples samples",
    "batch": "samples per optimizer step",
    "grad_clip": "max gradient norm per model (0 = off)",
    "n_samples": "data set size (text: windows drawn per epoch)",
    "n_heldout": "synthetic: samples generated beyond n_samples and held out",
    "reduction": "mean | sum: the loss over features",
    "init": "W's initialisation: torch (nn.Linear's default) or xavier",
    "seeds": "models trained side by side; the lowest final loss is reported",
    "seed": "base seed for data, shuffling and init",
    "snapshot_every": "steps between frames",
    "text_sha256": "structure text: the text's sha256 (set by --text)",
    "vocab": "structure text: keep the most frequent words, at most this many",
    "window": "structure text: consecutive non-empty lines per sample",
}


def add_bows_flags(parser: argparse.ArgumentParser, lists: Sequence[str] = ()) -> None:
    """One flag per BowsConfig field; fields in `lists` take comma-separated values."""
    from tempsup.bows.config import DEFAULTS as BOWS_DEFAULTS

    _add_field_flags(parser, BOWS_DEFAULTS, BOWS_FLAG_HELP, lists)


def bows_config_from_args(args: argparse.Namespace, **override: Any) -> tuple[Any, str | None]:
    """The config of the flags, and the text `--text` names (its sha256 goes in the config)."""
    from tempsup.bows.config import BowsConfig
    from tempsup.bows.data import read_text, text_sha256

    text = read_text(args.text) if args.text else None
    if text is not None:
        override = {"text_sha256": text_sha256(text), **override}
    return BowsConfig(**{**_field_values(args, BowsConfig), **override}), text


def _bows_line(s: dict[str, Any]) -> str:
    return (
        f"m={s['m']} wd={s['weight_decay']:g}: loss {s['loss']:.4g} (seed {s['seed']}), "
        f"PCA overlap {s['pca_overlap']:.3f}, isolated antipodal pairs "
        f"{100 * s['paired_fraction']:.0f} %, circle score {s['circle_score']:.3f}, "
        f"R² linear/model {s['mean_r2_linear']:.2f}/{s['mean_r2_model']:.2f}"
    )


def cmd_bows_train(args: argparse.Namespace) -> int:
    from tempsup.bows.run import train_runs

    config, text = bows_config_from_args(args)
    label = f"bows {config.structure} m={config.m}"
    with StepBar(config.steps, label, not args.quiet) as bar:
        (run,) = train_runs([config], on_step=bar, text=text)
    out = run.save(args.out or f"{config.key}.npz")
    summary = {**run.summary(), "file": str(out)}
    if args.html:
        from tempsup.bows.figures import export_html

        Path(args.html).write_text(export_html(run), encoding="utf-8")
        summary["html"] = str(args.html)
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{config.model} autoencoder, {config.structure}: {_bows_line(summary)} -> {out}")
    return 0


def cmd_bows_sweep(args: argparse.Namespace) -> int:
    from tempsup.bows.config import DEFAULTS as BOWS_DEFAULTS
    from tempsup.bows.run import sweep_configs, table_row, train_runs, write_table

    base, text = bows_config_from_args(
        args, m=BOWS_DEFAULTS.m, weight_decay=BOWS_DEFAULTS.weight_decay
    )
    ms = args.m or [m for m in (2, 3, 4, 6, 8, 12) if m <= base.d]
    wds = args.weight_decay or [base.weight_decay]
    configs = sweep_configs(base, ms, wds)
    label = f"bows sweep of {len(configs)} points x {base.seeds} seeds"
    with StepBar(base.steps, label, not args.quiet) as bar:
        runs = train_runs(configs, on_step=bar, text=text)
    out_dir = Path(args.out_dir)
    rows = [table_row(r, file=r.save(out_dir / f"{r.config.key}.npz").name) for r in runs]
    table = write_table(rows, out_dir / "sweep.csv")
    if args.html:
        from tempsup.bows.figures import export_sweep_html

        (out_dir / "sweep.html").write_text(export_sweep_html(runs), encoding="utf-8")
    if args.json:
        print(json.dumps({"table": str(table), "rows": rows}))
    else:
        for run in runs:
            print(_bows_line(run.summary()))
        print(f"table -> {table}")
    return 0


def add_bows_parser(sub: Any) -> None:
    """`tempsup bows train|sweep`: the correlated-features lab (science.md §2)."""
    bows_p = sub.add_parser("bows", help="correlated-features lab: tied autoencoders")
    bows_sub = bows_p.add_subparsers(dest="bows_command", required=True)
    train_p = bows_sub.add_parser("train", help="train one config (all its seeds) into a run file")
    add_bows_flags(train_p)
    train_p.add_argument("--out", help="run file to write (default: <config key>.npz)")
    train_p.add_argument("--html", help="also write the animated standalone page here")
    sweep_p = bows_sub.add_parser("sweep", help="train a sweep over m (and weight decay)")
    add_bows_flags(sweep_p, lists=("m", "weight_decay"))
    sweep_p.add_argument("--out-dir", default="sweep", help="folder for sweep.csv and run files")
    sweep_p.add_argument("--html", action="store_true", help="also write sweep.html there")
    for p in (train_p, sweep_p):
        p.add_argument("--text", help="structure text: the UTF-8 text file to read")
    _add_training_flags(train_p, cmd_bows_train)
    _add_training_flags(sweep_p, cmd_bows_sweep)


def _add_training_flags(parser: argparse.ArgumentParser, func: Callable[..., Any]) -> None:
    """What every training command takes besides the config, and the function it runs."""
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: 1)")
    parser.set_defaults(func=func)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tempsup",
        description="Temporal superposition in RNNs: train, sweep, inspect, export.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    train_p = sub.add_parser("train", help="train one config (all its seeds) into a run file")
    add_config_flags(train_p)
    train_p.add_argument("--out", help="run file to write (default: <config key>.npz)")
    sweep_p = sub.add_parser("sweep", help="train a sparsity (and k) sweep as one batch")
    add_config_flags(sweep_p, lists=("sparsity", "k"))
    sweep_p.add_argument("--out-dir", default="sweep", help="folder for sweep.csv and run files")
    _add_training_flags(train_p, cmd_train)
    _add_training_flags(sweep_p, cmd_sweep)
    worker_p = sub.add_parser("worker", help="train jobs queued by the app (job-queue worker)")
    worker_p.add_argument("--cache", help="job directory (default: $TEMPSUP_CACHE or cache/jobs)")
    worker_p.add_argument("-n", "--workers", type=int, default=1, help="processes (default: 1)")
    worker_p.add_argument("--threads", type=int, default=None, help="torch threads per worker")
    worker_p.add_argument("--once", action="store_true", help="train at most one job, then exit")
    worker_p.set_defaults(func=cmd_worker)
    add_file_parsers(sub)
    add_bows_parser(sub)
    add_reproduce_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "torch", True):  # commands that only read files skip the torch import
            import torch

            torch.set_num_threads(max(1, args.threads or settings().threads))
        return args.func(args)
    except TempsupError as exc:
        print(f"tempsup: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tempsup: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
