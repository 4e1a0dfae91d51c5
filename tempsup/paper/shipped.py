"""The full presets' runs as they ship with the package, so a new server's gallery is ready.

Training every full preset run takes about 12 minutes on one core (the N_h = 100
and the vector-input ReLU RNNs dominate), so a server started on an empty job
store would show empty cards for minutes. The package therefore carries the
finished runs, one run file per config named by its key (`runs/<key>.npz`),
and a server copies the ones its store lacks into the store before it queues
anything (`install`): the gallery, the lesson and the explorer's preset links
open them at once, and only configs without a shipped file are trained.

A shipped file is an ordinary run file of exactly the config its name says:
the key hashes the whole config and the schema version, so a changed preset
(or schema) has a new key, finds no file, and trains as before. `write`
regenerates the files (`tempsup presets ship`); tests/test_shipped.py checks
that every full preset config has one and that retraining one gives the same
run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.jobs.record import JobState
from tempsup.model.config import RunConfig

if TYPE_CHECKING:
    from tempsup.jobs.queue import BaseQueue

DIRECTORY = Path(__file__).with_name("runs")


def path(key: str, directory: Path = DIRECTORY) -> Path:
    return directory / f"{key}.npz"


def load(config: RunConfig, directory: Path = DIRECTORY) -> Run | None:
    """The shipped run of `config`, or None when none ships (or its file is not this config's)."""
    file = path(config.key, directory)
    if not file.is_file():
        return None
    run = Run.from_bytes(file.read_bytes(), source=str(file.name))
    return run if run.config.key == config.key else None


def available(configs: Sequence[RunConfig], directory: Path = DIRECTORY) -> dict[str, Run]:
    """The shipped runs of `configs`, by key; a damaged file is passed over (that config
    then trains like any other)."""
    out = {}
    for config in configs:
        try:
            run = load(config, directory)
        except TempsupError:
            continue
        if run is not None:
            out[config.key] = run
    return out


def install(
    queue: BaseQueue, configs: Sequence[RunConfig], directory: Path = DIRECTORY
) -> list[str]:
    """Store the shipped run of every config the store does not hold as done; their keys."""
    todo = []
    for config in configs:
        status = queue.status(config.key)
        if status is None or status.state != JobState.DONE:
            todo.append(config)
    runs = available(todo, directory)
    for run in runs.values():
        queue.put_run(run)
    return list(runs)


def write(runs: Iterable[Run], directory: Path = DIRECTORY) -> list[Path]:
    """Write each run as `<key>.npz` in `directory`, removing files of keys not among them."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for run in runs:
        file = path(run.config.key, directory)
        file.write_bytes(run.to_bytes())
        written.append(file)
    for old in set(directory.glob("*.npz")) - set(written):
        old.unlink()
    return written
