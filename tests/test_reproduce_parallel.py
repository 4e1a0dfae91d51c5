"""`tempsup reproduce --jobs N`: batches trained in worker processes, longest first,
give the report of one process (tempsup.paper.parallel).

The two tests that train spawn two worker processes each (a few seconds: each
imports torch); the runs are tiny stand-ins for the presets, trained for 4 steps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tempsup.paper.preset as pr
import tempsup.paper.reproduce as rp
from tempsup.errors import TempsupError
from tempsup.io.run import Run
from tempsup.model.config import RunConfig
from tempsup.paper.parallel import Schedule, batch_cost, priorities, width
from tempsup.paper.presets import preset_configs

BASE = RunConfig(model="rnn", steps=4, snapshot_every=2, batch=8, seeds=2, seq_len=8)


def test_longest_chain_first_on_the_full_presets() -> None:
    groups = rp.batches(preset_configs(quick=False))
    order = Schedule(groups).order()
    first, second = (groups[i][0] for i in order[:2])
    # the large preset's chain starts at once: its SSM, then the N_h = 100 ReLU RNN
    # warm-started from it (the dearest batch by far)
    assert (first.model, first.hidden, second.model, second.hidden) == ("ssm", 100, "rnn", 100)
    assert second.warm_start == first.key
    cost = [batch_cost(g) for g in groups]
    assert max(cost) == cost[order[1]]
    rest = [cost[i] for i in order[2:]]
    assert rest == sorted(rest, reverse=True)  # then the others, dearest first
    assert width(groups) == len(groups) - 2  # two batches are warm-start sources


def test_a_cheap_source_of_a_dear_batch_goes_first() -> None:
    cheap = BASE.replace(steps=10)
    medium = BASE.replace(model="ssm", steps=200)
    dear = BASE.replace(steps=1000, tied=False, warm_start=cheap.key)
    groups = [[medium], [cheap], [dear]]
    assert priorities(groups)[1] > priorities(groups)[0] > batch_cost([cheap])
    assert Schedule(groups).order() == [1, 2, 0]
    schedule = Schedule(groups)
    assert [schedule.next(), schedule.next(), schedule.next()] == [1, 0, None]  # dear waits
    schedule.finish(1)
    assert schedule.next() == 2


def tiny_preset(monkeypatch) -> list[RunConfig]:
    """Three batches, two of them independent: a sparsity/k batch, an SSM, and a
    free readout warm-started from the first; the claim reports every seed's final
    loss and weights at full precision."""
    src = BASE.replace(sparsity=0.5)
    configs = [
        src,
        BASE.replace(k=2),
        BASE.replace(model="ssm"),
        BASE.replace(tied=False, warm_start=src.key),
    ]
    labels = ("a", "b", "ssm", "warm")

    def checker(runs: dict[str, Run]) -> list[pr.ClaimResult]:
        measured = {
            label: {
                "final_loss": [float(x) for x in runs[label].final_loss],
                "W_h": np.asarray(runs[label].weights(-1)["W_h"]).ravel().tolist(),
            }
            for label in labels
        }
        return [pr.ClaimResult("the loss is finite", measured, 2, 2, True)]

    tiny = pr.Preset(
        name="tiny", title="Tiny", claim="A stand-in.", configs=tuple(configs),
        labels=labels, recipe=("four steps",), main="a", checker=checker,
    )  # fmt: skip
    monkeypatch.setattr(rp, "preset_configs", lambda quick=False: configs)
    monkeypatch.setattr(rp, "presets", lambda quick=False: [tiny])
    return configs


def test_two_processes_write_the_report_of_one(tmp_path: Path, monkeypatch) -> None:
    configs = tiny_preset(monkeypatch)
    assert width(rp.batches(configs)) == 2
    seen: list[tuple[str, float]] = []
    texts, data = [], []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        progress = (lambda msg, f: seen.append((msg, f))) if jobs == 2 else None
        path = rp.reproduce(quick=True, out_dir=out, figures=False, jobs=jobs, on_progress=progress)
        text = path.read_text()
        assert text.count(rp.TIMING_HEADING) == 1
        head, timing = text.split(rp.TIMING_HEADING)
        assert f"{jobs} process(es)" in timing and "load average before training" in timing
        texts.append(head)
        report = json.loads((out / "report.json").read_text())
        assert report["jobs"] == jobs and len(report["load_average"]["after"]) == 3
        data.append({k: v for k, v in report.items() if k not in rp.TIMING_KEYS})
    assert texts[0] == texts[1]  # byte for byte, every number at full precision
    assert data[0] == data[1]
    assert "W_h" in texts[0] and "final_loss" in texts[0]
    # progress from both workers, rising to 1
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    labels = {msg.split(" (+")[0] for msg, _ in seen}
    assert labels == {rp._batch_label(g) for g in rp.batches(configs)}


def test_a_failing_worker_names_its_batch(tmp_path: Path) -> None:
    wrong = rp.train_configs([BASE.replace(hidden=3, seeds=1)])  # N_h = 3: no source for N_h = 2
    (source,) = wrong.values()
    broken = BASE.replace(tied=False, warm_start=source.config.key)
    other = BASE.replace(model="ssm")
    with pytest.raises(TempsupError) as info:
        rp.train_configs([other, broken], done=wrong, jobs=2)
    message = str(info.value)
    assert f"run keys {broken.key}" in message and "warm_start: W_x has shape" in message
    assert "Traceback" in "".join(info.value.__notes__)  # the worker's own, as a note
