"""Every task of issue 43 in the panels, captions, exports, links and the explorer's menus.

Each task (and q = 0.5 for one) trains a tiny run with `tempsup.train`; then every panel's
figure builds (a multi run draws its delay-k readout, a cued run its feature channels),
the headlines are one short sentence saying the task's own (which E[L], the delays, the
window, the cued linear model's limit), the HTML export builds, and the link round-trips.
In a real browser, the explorer's menus train multi with delays 2, 5 at q = 0.5 and draw
all four panels, and a bad delays entry is a message, never a traceback.
"""

from __future__ import annotations

import pytest

import tempsup
from app.controls import config_from_controls, control_values
from app.urlstate import config_from_query, query_from_config
from tempsup.analysis.captions import HEADLINE_WORDS, words
from tempsup.figures import export_html
from tempsup.figures.rnn import PANELS, panel_captions, run_captions
from tempsup.model.config import RunConfig

TINY = {"steps": 100, "seeds": 2, "batch": 64, "snapshot_every": 20}
# (config fields, words the loss headline must hold, words the directions' why must hold)
TASKS = {
    "multi-q": (
        {"task": "multi", "ks": (2, 5), "persistence": 0.5, "model": "linear"},
        ("closed-form E[L]", "temporal term", "delays 2,5"),
        ("delay-5 output",),
    ),
    "sum": ({"task": "sum", "window": 3}, ("Monte Carlo E[L]", "±", "window of 3"), ("sum",)),
    "cued-linear": (
        {"task": "cued", "ks": (1, 3), "model": "linear"},
        ("Monte Carlo E[L]", "cannot select by cue"),
        ("cue channels", "cannot select by cue"),
    ),
    "cued-rnn": ({"task": "cued", "ks": (1, 3), "model": "rnn"}, ("cued delays 1,3",), ()),
    "recall-q": ({"persistence": 0.5}, ("Monte Carlo E[L]", "q = 0.5"), ("q = 0.5",)),
}


@pytest.fixture(scope="module")
def runs() -> dict[str, tempsup.Run]:
    return {
        name: tempsup.train(RunConfig(**TINY, **fields), progress=False).with_gauge()
        for name, (fields, _, _) in TASKS.items()
    }


@pytest.mark.parametrize("name", list(TASKS))
def test_every_panel_caption_and_export_of_a_task(runs, name: str) -> None:
    run, (_, loss_words, why_words) = runs[name], TASKS[name]
    for panel in PANELS:
        assert run.figure(panel)["data"], (name, panel)
    captions = run_captions(run)
    for panel, caption in {**captions, **panel_captions(run.config)}.items():
        assert words(caption.headline) <= HEADLINE_WORDS, (name, panel, caption.headline)
    for text in loss_words:
        assert text in captions["loss"].headline, (name, captions["loss"].headline)
    assert "n/a" not in captions["loss"].headline
    for text in why_words:
        assert text in captions["directions"].why, (name, captions["directions"].why)
    page = export_html(run, run.best)
    assert "<html" in page.lower() and captions["loss"].headline.split(" against")[0] in page


@pytest.mark.parametrize("name", list(TASKS))
def test_a_tasks_link_and_controls_round_trip(name: str) -> None:
    config = RunConfig(**TINY, **TASKS[name][0])
    assert config_from_query(query_from_config(config)) == (config, [])
    *values, options = control_values(config)
    assert config_from_controls(values, options) == config


def test_a_hidden_task_box_is_not_read() -> None:
    """The delays box of a recall config (hidden) holds a suggestion, never read; an empty
    or malformed one for multi is refused in words naming ks."""
    from app.controls import FIELD_CONTROLS

    names = [field for _, field in FIELD_CONTROLS]
    *values, options = control_values(RunConfig())
    values[names.index("ks")] = "not delays"
    assert config_from_controls(values, options) == RunConfig()
    values[names.index("task")] = "multi"
    with pytest.raises(tempsup.TempsupError, match="^ks: expected delays"):
        config_from_controls(values, options)
    values[names.index("ks")] = " "
    with pytest.raises(tempsup.TempsupError, match="^ks: enter the delays"):
        config_from_controls(values, options)
    values[names.index("ks")] = "2, 5"
    assert config_from_controls(values, options).ks == (2, 5)


# ---- in a real browser --------------------------------------------------------------------

BROWSER_TINY = "k=2&sparsity=0.9&hidden=2&inputs=1&steps=60&batch=64&seeds=2&snapshot_every=20"


def _type(browser, selector: str, text: str) -> None:
    """Replace a debounced box's text and commit it (Enter)."""
    from selenium.webdriver.common.keys import Keys

    from tests.browser import find

    box = find(browser, selector)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(text, Keys.ENTER)


@pytest.mark.browser
def test_multi_at_q_half_trains_from_the_menus_and_draws_every_panel(server, browser):
    from app import ids
    from tests.browser import click, css, find, frame_count, n_traces, text_of, url_query, wait_for
    from tests.browser import explorer_status as status_text

    ex = ids.EXPLORER
    browser.get(f"{server}/?{BROWSER_TINY}")
    wait_for(lambda: "Done" in status_text(browser), what="the linked recall run")
    assert find(browser, f"#{ids.DELAYS_ROW}").get_attribute("hidden") is not None
    click(browser, f"#{ids.TASK} input[value='multi']")
    wait_for(lambda: find(browser, f"#{ids.DELAYS_ROW}").is_displayed(), what="the delays box")
    _type(browser, f"#{ids.DELAYS}", "2, 5")
    _type(browser, f"#{ids.PERSISTENCE}", "0.5")
    wait_for(lambda: url_query(browser).get("persistence") == ["0.5"], what="q in the link")
    assert url_query(browser).get("task") == ["multi"] and url_query(browser)["ks"] == ["2,5"]
    wait_for(lambda: "press Train" in status_text(browser), what="the Train hint")
    click(browser, css(ids.job(ids.RUN, ex)))
    wait_for(lambda: "Done" in status_text(browser), what="multi trained")
    wait_for(lambda: frame_count(browser) == (4, 4), what="its 4 frames")
    for panel in PANELS:
        graph = css(ids.graph(ex, panel))
        wait_for(lambda g=graph: n_traces(browser, g) > 0, what=f"{panel} drawn")
    loss = wait_for(
        lambda: (
            "delays 2,5" in text_of(browser, f"#{ids.headline('loss')}")
            and text_of(browser, f"#{ids.headline('loss')}")
        ),
        what="the loss headline of multi",
    )
    assert "Monte Carlo" in loss, loss
    # a bad delays entry: a message naming ks, the delays on screen kept
    _type(browser, f"#{ids.DELAYS}", "2, x")
    message = wait_for(lambda: text_of(browser, f"#{ids.CONFIG_ERROR}"), what="a message")
    assert message.startswith("Not applied: ks:") and "kept ks = 2, 5" in message, message
    wait_for(
        lambda: find(browser, f"#{ids.DELAYS}").get_attribute("value") == "2, 5",
        what="the delays back at 2, 5",
    )
    assert "Traceback" not in browser.page_source
