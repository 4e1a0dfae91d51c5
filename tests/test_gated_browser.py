"""Gated and selective models from the explorer's menu, in a real browser.

Each of gru, lstm, lru and selective is picked from the model menu (not a link), trained
with Train through the server's job queue and worker, and then shows every panel drawn,
each panel's headline written for that model with the run's numbers (no "n/a" standing
in for a number the run has), and the status line under the player.
"""

from __future__ import annotations

import pytest

from app import ids
from tempsup.model.config import GATED_MODELS
from tests.browser import click, css, find, frame_count, n_traces, wait_for
from tests.browser import explorer_status as status_text

pytestmark = pytest.mark.browser

EX = ids.EXPLORER
TRAIN = css(ids.job(ids.RUN, EX))
PANELS = ("directions", "loss", "projections", "eigen")
# tiny runs so the worker answers in seconds; hidden = 2 suits the LRU (one complex mode)
TINY = "k=2&sparsity=0.9&hidden=2&inputs=1&steps=60&batch=64&seeds=2&snapshot_every=20"


def test_every_gated_model_trains_from_the_menu_and_shows_all_panels(server, browser):
    browser.get(f"{server}/?model=ssm&{TINY}")
    wait_for(lambda: "Done" in status_text(browser), what="the linked ssm run")
    for model in GATED_MODELS:
        click(browser, f"#ctl-model input[value='{model}']")
        wait_for(lambda: "press Train" in status_text(browser), what=f"{model}: Train hint")
        click(browser, TRAIN)
        wait_for(lambda: "Done" in status_text(browser), what=f"{model} trained")
        wait_for(lambda: frame_count(browser) == (4, 4), what=f"{model}: its 4 frames")
        for panel in PANELS:
            graph = css(ids.graph(EX, panel))
            wait_for(lambda g=graph: n_traces(browser, g) > 0, what=f"{model}: {panel} drawn")
        heads = {p: find(browser, f"#{ids.headline(p)}").text for p in PANELS}
        assert all(heads.values()), heads
        assert not any("n/a" in h for h in heads.values()), heads
        if model != "lru":  # the LRU's memory is linear: its caption says so, no distance
            assert "%" in heads["projections"], heads  # how nonlinear the memory is
        assert "Traceback" not in browser.page_source
