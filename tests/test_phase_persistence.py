"""The phase diagram over (S, q) (issue 43 part 4): a sweep over persistences is one job
whose points train one batch per q, its link carries the q list (a q = 0 sweep keeps the
link and key it always had), its diagram is a map over (S, q) and a clicked cell opens
that point's run, persistence and all, in the explorer."""

from __future__ import annotations

import numpy as np
import pytest

from app.urlstate import config_from_query, phase_from_query, phase_query, query_from_config
from tempsup.analysis import sweeps
from tempsup.analysis.sweeps import SweepSpec
from tempsup.errors import TempsupError
from tempsup.model.config import RunConfig

BASE = RunConfig(model="ssm", k=3, seeds=2, steps=200, snapshot_every=20)
GRID = (0.5, 0.9)
QS = (0.0, 0.5)


def test_a_persistence_sweep_round_trips_and_a_q0_sweep_is_the_old_one() -> None:
    spec = SweepSpec(BASE, (0.9, 0.5), (), (0.5, 0.0))
    assert spec.persistences == QS and spec.two_d
    assert [(c.persistence, c.sparsity) for c in spec.configs] == [
        (0.0, 0.5), (0.0, 0.9), (0.5, 0.5), (0.5, 0.9),
    ]  # fmt: skip
    again = SweepSpec.from_json(spec.to_json())
    assert again == spec and again.key == spec.key
    plain = SweepSpec(BASE, GRID)
    assert plain.persistences == (0.0,) and not plain.two_d
    assert "persistences" not in plain.to_dict()  # the JSON (and key) it always had
    assert SweepSpec(BASE, GRID, (), (0.0,)).key == plain.key
    assert SweepSpec.from_dict(plain.to_dict()) == plain
    with pytest.raises(TempsupError, match="persistences expected distinct values"):
        SweepSpec(BASE, GRID, (), (0.5, 0.5))
    with pytest.raises(TempsupError, match="persistence"):
        SweepSpec(BASE, GRID, (), (0.0, 1.0))
    with pytest.raises(TempsupError, match="persistences × ks × sparsities"):
        SweepSpec(BASE, tuple(np.linspace(0.1, 0.9, 10).round(2)), (), (0.0, 0.3, 0.5, 0.7, 0.9))


def test_the_phase_link_carries_q_and_a_q0_link_is_unchanged() -> None:
    plain = phase_query("ssm", GRID, (3,), 2, 200, 2)
    assert plain == "?model=ssm&sparsities=0.5,0.9&k=3&seeds=2&steps=200&hidden=2"
    assert phase_query("ssm", GRID, (3,), 2, 200, 2, (0.0,)) == plain
    link = phase_query("ssm", GRID, (3,), 2, 200, 2, QS)
    assert link == plain.replace("k=3&", "k=3&persistence=0.0,0.5&")
    values, errors = phase_from_query(link)
    assert errors == [] and values["persistence"] == "0.0, 0.5"
    from app.pages.phase import FRESH, build_spec

    spec = build_spec(*({**FRESH, **values}[name] for name in FRESH))
    assert spec.persistences == QS and spec.sparsities == GRID
    assert build_spec(*FRESH.values()).persistences == (0.0,)  # the fresh page: no q sweep
    _, errors = phase_from_query("?persistence=abc")
    assert errors == ["persistence: expected comma-separated numbers, got 'abc'"]


@pytest.fixture(scope="module")
def trained() -> tuple[SweepSpec, sweeps.SweepResult]:
    """A 2 × 2 sweep over (S, q), trained through the job's own functions."""
    spec = SweepSpec(BASE, GRID, (), QS)
    kept = list(sweeps.stream_sweep(spec))
    return spec, sweeps.sweep_result(spec, kept)


def test_each_q_trains_as_its_own_batch_and_each_point_is_what_it_is_alone(trained) -> None:
    spec, result = trained
    assert [r.config for r in result.runs] == spec.configs
    assert [row["persistence"] for row in result.rows] == [0.0, 0.0, 0.5, 0.5]
    alone = sweeps.train_runs([spec.configs[3]])[0]
    np.testing.assert_allclose(result.runs[3]["W_h"], alone["W_h"], rtol=1e-5, atol=1e-6)
    assert result.arrays["swept_angle_deg"].shape == (spec.n_snapshots, 4)


def test_the_map_over_s_and_q_and_a_click_opens_the_run_with_its_persistence(
    trained, monkeypatch
) -> None:
    from app.pages import phase

    spec, result = trained
    arrays = {n: [row[n] for row in result.rows] for n in phase.SUMMARY_COLUMNS}
    fig = phase.summary_figure(spec, arrays, "t")
    maps = [t for t in fig.data if t.type == "heatmap"]
    assert len(maps) == 2  # |kθ| and ρ(W_h), one k
    top = maps[0]
    assert list(top.x) == ["0.5", "0.9"] and list(top.y) == ["0", "0.5"]
    index = np.asarray(top.customdata)
    for r, q in enumerate(QS):
        for c, s in enumerate(GRID):
            cfg = spec.configs[int(index[r, c])]
            assert (cfg.persistence, cfg.sparsity) == (q, s)
            assert top.z[r][c] == pytest.approx(
                abs(result.rows[int(index[r, c])]["swept_angle_deg"])
            )
    rnn = phase.summary_figure(SweepSpec(BASE.replace(model="rnn"), GRID, (), QS), arrays, "")
    assert "half-space" in rnn.layout.annotations[1].text

    class Queue:
        def spec(self, key: str) -> SweepSpec | None:
            return spec if key == spec.key else None

    monkeypatch.setattr(phase, "job_queue", Queue)
    click = {"points": [{"customdata": int(index[1, 1])}]}
    href = phase.open_point(click, {"key": spec.key})
    assert href == "/" + query_from_config(spec.configs[3]) and "persistence=0.5" in href
    config, errors = config_from_query(href[1:])
    assert errors == [] and config == spec.configs[3]
    q0 = phase.open_point({"points": [{"customdata": int(index[0, 0])}]}, {"key": spec.key})
    assert "persistence" not in q0  # a q = 0 point's link is the one it always was


# ---- in a real browser: a link names a sweep over (S, q), a cell opens its run ----------

CELL_PIXEL = """
const gd = document.querySelector(arguments[0] + ' .js-plotly-plot');
const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
const box = gd.getBoundingClientRect();
return [xa._offset + xa.c2p(arguments[1]) - box.width / 2,
        ya._offset + ya.c2p(arguments[2]) - box.height / 2];
"""


@pytest.mark.browser
def test_a_persistence_link_draws_the_map_and_a_cell_opens_its_run(server, browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    from app import ids
    from tests.browser import css, find, open_page, text_of, url_query, wait_for

    link = phase_query("ssm", GRID, (3,), 1, 40, 2, QS)
    open_page(browser, f"{server}/phase{link}")
    status = css(ids.job(ids.TEXT, ids.PHASE))
    wait_for(lambda: "Done" in text_of(browser, status), what="the linked sweep done")
    graph = f"#{ids.PHASE_GRAPH}"
    kinds = "return document.querySelector(arguments[0] + ' .js-plotly-plot').data.map(t => t.type)"
    wait_for(lambda: browser.execute_script(kinds, graph) == ["heatmap"] * 2, what="the map")
    assert find(browser, f"#{ids.PHASE_PERSISTENCE}").get_attribute("value") == "0.0, 0.5"
    story = wait_for(lambda: text_of(browser, f"#{ids.PHASE_STORY}"), what="the story")
    assert "This sweep: q = 0: " in story and "q = 0.5: " in story, story
    dx, dy = browser.execute_script(CELL_PIXEL, graph, 1, 1)  # S = 0.9, q = 0.5
    plot = find(browser, f"{graph} .js-plotly-plot")
    ActionChains(browser).move_to_element_with_offset(plot, int(dx), int(dy)).click().perform()
    wait_for(lambda: "/phase" not in browser.current_url, what="the explorer opened")
    query = url_query(browser)
    assert query["persistence"] == ["0.5"] and query["sparsity"] == ["0.9"], query
