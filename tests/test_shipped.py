"""The full presets' runs that ship with the package (`tempsup.paper.shipped`).

They must be complete (a file for every full preset config, each exactly its
config), be what training gives today (two configs are retrained and compared,
one of them warm-started from a shipped run), go into an empty store once, and
make a new server's gallery show every card's picture and claims without
training anything.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from tempsup.jobs import JobQueue
from tempsup.jobs.record import JobState
from tempsup.paper import shipped
from tempsup.paper.presets import preset, preset_configs, presets
from tempsup.paper.reproduce import train_configs

SIZE_BUDGET_MB = 12.0  # what the package may carry (README, "A gallery ready at once")


def test_every_full_preset_config_ships_and_nothing_else() -> None:
    configs = preset_configs(quick=False)
    files = {f.stem for f in shipped.DIRECTORY.glob("*.npz")}
    assert files == {c.key for c in configs}, "run `tempsup presets ship` after changing a preset"
    for config in configs:
        run = shipped.load(config)
        assert run is not None and run.config == config
    size = sum(f.stat().st_size for f in shipped.DIRECTORY.glob("*.npz")) / 1e6
    assert size < SIZE_BUDGET_MB, f"shipped runs {size:.1f} MB"


@pytest.mark.parametrize(
    ("name", "label"),
    [("spiral-sink", "linear"), ("relu-rnn-sharp-forgetting", "free readout")],
)
def test_a_shipped_run_is_what_training_gives_today(name: str, label: str) -> None:
    """Retrained here (a warm start from its shipped source run), the run equals the file."""
    p = preset(name, quick=False)
    config = p.configs[p.labels.index(label)]
    source = {}
    if config.warm_start is not None:
        src = next(c for c in p.configs if c.key == config.warm_start)
        source = {src.key: shipped.load(src)}
    fresh = train_configs([config], done=source)[config.key]
    stored = shipped.load(config)
    assert stored is not None
    np.testing.assert_array_equal(fresh["step"], stored["step"])
    for name_ in ("W_x", "W_h", "W_y", "loss"):
        np.testing.assert_allclose(fresh[name_], stored[name_], rtol=1e-4, atol=1e-5, err_msg=name_)
    assert fresh.best == stored.best


def test_install_fills_an_empty_store_once_and_passes_over_damaged_files(tmp_path) -> None:
    p = preset("ssm-dense-vs-sparse", quick=False)
    directory = tmp_path / "runs"
    directory.mkdir()
    good, bad = p.configs
    shipped.path(good.key, directory).write_bytes(shipped.path(good.key).read_bytes())
    shipped.path(bad.key, directory).write_bytes(b"not a run file")
    queue = JobQueue(tmp_path / "jobs")
    try:
        assert shipped.install(queue, p.configs, directory) == [good.key]
        assert queue.status(good.key).state == JobState.DONE
        assert queue.status(bad.key) is None  # it trains like any other config
        assert queue.run(good.key).config == good
        assert shipped.install(queue, p.configs, directory) == []  # already done
    finally:
        queue.close()


@pytest.mark.browser
def test_a_new_server_shows_every_card_at_once(tmp_path) -> None:
    """An empty store, the full presets: every card has its picture and its claims, and
    no preset job was queued (all of them shipped)."""
    from tests.browser import app_server, make_driver

    cache = tmp_path / "jobs"
    driver = make_driver(tmp_path)
    try:
        with app_server(cache, env={"TEMPSUP_PRESETS": "full"}) as url:
            start = time.monotonic()
            driver.get(f"{url}/gallery")
            n = len(presets(quick=False))
            deadline = start + 120  # the bound: 2 minutes on 2 cores
            while time.monotonic() < deadline:
                cards = driver.find_elements("css selector", ".preset")
                pictures = driver.find_elements("css selector", ".preset .thumb .js-plotly-plot")
                claims = driver.find_elements("css selector", ".preset .claims")
                if len(cards) == len(pictures) == len(claims) == n:
                    break
                time.sleep(0.5)
            else:
                raise AssertionError(f"{len(pictures)} pictures, {len(claims)} claim lists of {n}")
            queue = JobQueue(cache)
            try:
                states = {queue.status(c.key).state for c in preset_configs(quick=False)}
            finally:
                queue.close()
            assert states == {JobState.DONE}
    finally:
        driver.quit()
