"""The lesson on a server whose presets are off: it says so, as the gallery does, and
offers to train the step's runs; it never says they are training when nobody started them.

In-process (no server, no browser): the page's functions over a fresh job store, with
`TEMPSUP_PRESETS=off`. The step's runs are queued through the job queue as the explorer's
Train queues a run (this browser's jobs, within the server's limits); once they are in
the store, the answer carries their numbers and animations.
"""

from __future__ import annotations

import pytest
from dash import dcc, html

from app import ids, preset_runs
from tempsup.analysis.sweeps import train_runs
from tempsup.jobs.record import JobState
from tempsup.teaching import lesson

STEP = 1  # the spiral sink: one run, the linear RNN


def _texts(component) -> str:
    if isinstance(component, str):
        return component
    if isinstance(component, (list, tuple)):
        return " ".join(_texts(c) for c in component)
    children = getattr(component, "children", None)
    return _texts(children) if children is not None else ""


def _find(component, kind) -> list:
    found = [component] if isinstance(component, kind) else []
    children = getattr(component, "children", None)
    for c in children if isinstance(children, (list, tuple)) else [children]:
        if c is not None and not isinstance(c, str):
            found += _find(c, kind)
    return found


@pytest.fixture
def presets_off(tmp_path, monkeypatch):
    """The app over an empty job store, its presets switched off (its settings and store
    read anew, and again after)."""
    from app import services

    def reopen() -> None:
        services.settings.cache_clear()
        services.job_queue.cache_clear()

    monkeypatch.setenv("TEMPSUP_CACHE", str(tmp_path / "jobs"))
    monkeypatch.setenv("TEMPSUP_PRESETS", "off")
    monkeypatch.delenv("TEMPSUP_REDIS_URL", raising=False)
    reopen()
    yield services.job_queue()
    reopen()


def test_the_lesson_says_what_the_gallery_says_and_offers_to_train(presets_off) -> None:
    from app.pages import gallery
    from app.pages import lesson as page

    (said,), pending = gallery.cards()
    assert _texts(said) == preset_runs.OFF and not pending
    for number in range(1, len(lesson.STEPS) + 1):
        out = html.Div(page.reveal(number, 0))
        text = _texts(out)
        assert preset_runs.OFF in text, number
        assert "still training" not in text and "training on the server" not in text, text
        assert lesson.MISSING not in text and "{" not in text, text
        assert "tempsup reproduce" in text
        (button,) = _find(out, html.Button)
        assert button.id == ids.lesson_part(ids.LESSON_TRAIN, number)
        assert not _find(out, dcc.Graph), "an animation of a run that is not here"


def test_train_queues_the_steps_runs_and_the_answer_fills_in(presets_off) -> None:
    from app.pages import lesson as page

    preset = preset_runs.by_name(lesson.step(STEP).preset)
    text, poll_off = page.queue_runs(STEP, "a-browser")
    assert text.startswith(f"Queued {len(preset.configs)} of the {len(preset.configs)}")
    assert not poll_off
    states = [presets_off.status(c.key) for c in preset.configs]
    assert all(s is not None and s.state == JobState.QUEUED for s in states), states
    body, status, done = page.progress(STEP)
    assert status.startswith("Training on this server: 0 of 1 ready (queued") and not done
    # the runs trained (as a worker would), the poll shows the whole answer
    for run in train_runs(preset.configs):
        presets_off.put_run(run)
    body, status, done = page.progress(STEP)
    assert done and status == ""
    text = _texts(html.Div(body))
    assert "agree" in text and lesson.MISSING not in text, text
    (graph,) = _find(html.Div(body), dcc.Graph)
    assert graph.figure["frames"], "the run is not animated"
