"""The loss panel in a real browser: at most five curves drawn, every legend entry on screen.

One server (with one training worker: tests/conftest.py's `server`) and one headless
Chromium serve every test in this module. Each test opens a run by its link and reads
the figure Plotly drew from the page (`_fullData`, `_fullLayout`): what a reader sees,
not what the server meant to send. The runs are the paper's sparse settings: the
default SSM (S = 0.9) and a shortened ReLU RNN (S = 0.97), where composition
interference is negative at every late frame (a log axis drew nothing of it), and a
ReLU RNN with N_h = N_x = 10, whose terms are not computed (`tempsup.theory.budget`).
"""

from __future__ import annotations

import math

import pytest

from app import ids
from tempsup.core.palette import EXPECTED
from tempsup.io.run import TERM_NAMES
from tempsup.model.config import DEFAULTS, RunConfig, query_string
from tests.browser import (
    click,
    css,
    driver_session,
    explorer_status,
    frame_count,
    settled,
    wait_for,
)

pytestmark = pytest.mark.browser

LOSS = css(ids.graph(ids.EXPLORER, "loss"))
CAPTION = css(ids.explain("loss"))
TRAIN = css(ids.job(ids.RUN, ids.EXPLORER))

# the default SSM (the server trains it at start-up anyway) and the ReLU RNN at S = 0.97,
# shorter (fewer steps, seeds and frames)
SSM = DEFAULTS
RNN = RunConfig(model="rnn", sparsity=0.97, steps=300, seeds=3, batch=256, snapshot_every=30)
WIDE = RunConfig(model="rnn", hidden=10, inputs=10, steps=10, batch=64, snapshot_every=5)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with driver_session(tmp_path_factory.mktemp("downloads")) as driver:
        yield driver


def open_run(browser, server: str, config: RunConfig) -> dict:
    """Open the config's link, train it if the page asks for Train, and return the loss
    figure as drawn once the job is done and its last frame shown: legend traces, the y
    range, the caption."""
    browser.get(f"{server}/{query_string(config)}")

    def done() -> bool:
        text = explorer_status(browser)
        if "press Train" in text:  # one click, then what it does
            click(browser, TRAIN)
            wait_for(lambda: "press Train" not in explorer_status(browser), what="Train taken")
        return "Done" in text

    wait_for(done, what="the run trained")
    n = config.n_snapshots
    wait_for(lambda: frame_count(browser) == (n, n), what=f"frame {n} of {n} shown")
    return settled(lambda: _drawn(browser), what="the loss panel drawn")


def _drawn(browser) -> dict | None:
    return browser.execute_script(
        """
        const g = document.querySelector(arguments[0] + ' .js-plotly-plot');
        if (!g || !g._fullData || !g._fullData.length) return null;
        const legend = Array.from(g.querySelectorAll('.legend .traces .legendtext'))
          .map((e) => e.textContent);
        return {
          traces: g._fullData.map((t) => ({
            name: t.name, showlegend: t.showlegend, visible: t.visible, y: t.y,
            customdata: t.customdata, color: t.line ? t.line.color : null})),
          range: g._fullLayout.yaxis.range,
          log: g._fullLayout.yaxis.type === 'log',
          legend: legend,
          // the headline and the explanation behind "Why?" (closed: textContent, not innerText)
          caption: document.querySelector(arguments[1]).textContent,
        };
        """,
        LOSS,
        CAPTION,
    )


DRAWN_AT_MOST = 5  # curves drawn when the panel opens; the rest one click away in the legend


def legend_traces(fig: dict) -> list[dict]:
    """The traces in the legend: drawn, or one click away there ("legendonly")."""
    return [t for t in fig["traces"] if t["showlegend"] and t["visible"] in (True, "legendonly")]


def drawn_traces(fig: dict) -> list[dict]:
    return [t for t in legend_traces(fig) if t["visible"] is True]


def inside(fig: dict, ys: list) -> list[float]:
    """The points of a curve that are finite and inside the y axis's range (a log axis's
    range is in decades, and it cannot place a value ≤ 0)."""
    lo, hi = fig["range"]
    if fig["log"]:
        ys = [math.log10(y) if y is not None and y > 0 else None for y in ys]
    return [y for y in ys if y is not None and math.isfinite(y) and lo <= y <= hi]


@pytest.mark.parametrize("config", [SSM, RNN], ids=["ssm", "rnn"])
def test_five_curves_drawn_every_entry_on_screen_and_composition_below_zero(
    server, browser, config
):
    fig = open_run(browser, server, config)
    shown = legend_traces(fig)
    assert fig["legend"] == [t["name"] for t in shown]  # the legend is these traces
    drawn = [t["name"] for t in drawn_traces(fig)]
    assert len(drawn) <= DRAWN_AT_MOST, drawn
    assert any(n.startswith("measured loss") for n in drawn), drawn
    for t in shown:  # drawn or not yet, each curve lies inside the axis once clicked
        assert inside(fig, t["y"]), f"{t['name']}: no finite point inside {fig['range']}"
    (comp,) = [t for t in shown if t["name"] == "composition interference"]
    drawn = inside(fig, comp["y"][-5:])
    assert len(drawn) == 5, f"composition at the last 5 frames: {comp['y'][-5:]}, {drawn}"
    late = comp["customdata"][-5:]
    assert max(late) < 0, late  # negative at every late frame, as measured
    assert max(drawn) < 0  # and drawn below the zero line
    names = [t["name"] for t in shown]
    for name in TERM_NAMES:  # each term under its own name (not "|mean correction|")
        assert name in names, (name, names)
    # the caption names the colours really used, e.g. E[L] is vermillion (not "purple")
    from tempsup.core.palette import COLOR_NAMES

    (expected,) = [t for t in shown if t["name"] == "expected loss E[L]"]
    assert expected["color"] == EXPECTED
    assert f"expected loss E[L] ({COLOR_NAMES[EXPECTED]}" in fig["caption"]
    assert "purple curve is the expected loss" not in fig["caption"]


def test_terms_not_computed_are_not_in_the_legend(server, browser):
    fig = open_run(browser, server, WIDE)
    names = [t["name"] for t in legend_traces(fig)]
    assert not set(names) & {*TERM_NAMES, "sum of the four terms", "remainder (3+ inputs)"}
    assert fig["legend"] == names
    assert any(n.startswith("measured loss") for n in names)
    for t in legend_traces(fig):
        assert inside(fig, t["y"]), t["name"]
    assert "four terms are not computed" in fig["caption"]
