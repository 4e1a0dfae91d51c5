"""Links without a browser: the feature in a share link, the phase page's query, and which
links train (app/urlstate.py, app/controls.py, app/player.py)."""

from __future__ import annotations

import pytest

from app.urlstate import (
    feature_index,
    feature_name,
    names_a_config,
    phase_from_query,
    phase_query,
    view_from_query,
)
from tempsup.errors import TempsupError
from tempsup.model.config import RunConfig


def test_feature_names_are_the_menus_and_the_figures() -> None:
    from tempsup.figures._common import feature_name as figure_name

    assert [feature_name(i) for i in range(3)] == ["A", "B", "C"]
    assert all(feature_name(i) == figure_name(i) for i in range(40))
    assert feature_index("c", 3) == 2 and feature_index(" x27 ", 30) == 27


def test_the_feature_of_a_share_link() -> None:
    config = RunConfig(inputs=3, seeds=2, steps=100, snapshot_every=10)
    request, errors = view_from_query("?inputs=3&feature=C", config)
    assert request == {"key": config.key, "seed": None, "frame": None, "feature": 2}
    assert errors == []
    request, errors = view_from_query("?view_seed=1&frame=2&feature=b", config)
    assert request == {"key": config.key, "seed": 1, "frame": 1, "feature": 1}
    # a feature the config does not have: dropped, and named with what it has
    request, errors = view_from_query("?view_seed=1&feature=D", config)
    assert request == {"key": config.key, "seed": 1, "frame": None}
    assert errors == ["feature: expected one of A … C, got 'D'"]
    one = RunConfig(inputs=1)
    assert view_from_query("?feature=B", one) == (None, ["feature: expected one of A, got 'B'"])
    with pytest.raises(TempsupError, match="feature: expected one of A … C, got '1'"):
        feature_index("1", 3)


@pytest.mark.parametrize(
    ("search", "errors", "trains"),
    [
        ("", [], False),  # a bare page names no configuration
        ("?", [], False),
        ("?view_seed=1&frame=3", [], False),  # only a view
        ("?k=3", [], True),
        ("?model=rnn&sparsity=0.97", [], True),
        ("?k=3&sparsity=abc", ["sparsity: expected float, got 'abc'"], False),  # refused
    ],
)
def test_which_links_train(search: str, errors: list[str], trains: bool) -> None:
    from app.controls import link_autostart

    assert names_a_config(search) == (search.strip("?") not in ("", "view_seed=1&frame=3"))
    assert link_autostart(search, errors) is trains


def test_the_phase_query_round_trip() -> None:
    link = phase_query("linear", (0.3, 0.9), (2, 4), 2, 60, 3)
    assert link == "?model=linear&sparsities=0.3,0.9&k=2,4&seeds=2&steps=60&hidden=3"
    values, errors = phase_from_query(link)
    assert errors == []
    assert values == {"model": "linear", "sparsities": "0.3, 0.9", "k": "2, 4", "seeds": 2,
                      "steps": 60, "hidden": 3}  # fmt: skip
    # the values the page's build_spec takes: the same sweep
    from app.pages.phase import FRESH, build_spec

    spec = build_spec(*({**FRESH, **values}[name] for name in FRESH))
    assert spec.sparsities == (0.3, 0.9) and spec.ks == (2, 4) and spec.base.model == "linear"
    assert phase_from_query("") == ({}, [])


def test_a_phase_link_names_each_refused_value() -> None:
    values, errors = phase_from_query("?model=foo&sparsities=abc&k=2&seeds=0&steps=x&hidden=99")
    assert values == {"k": "2"}
    assert errors == [
        "model: expected one of linear, ssm, rnn, gru, lstm, lru, selective, got 'foo'",
        "sparsities: expected comma-separated numbers, got 'abc'",
        "seeds: expected an integer in [1, 64], got '0'",
        "steps: expected an integer in [1, 200000], got 'x'",
        "hidden: expected an integer in [1, 16], got '99'",
    ]


def test_the_feature_menu_opens_on_the_links_feature() -> None:
    from app.controls import config_store
    from app.player import update_features

    config = RunConfig(inputs=3)
    store = config_store(config, autostart=True)
    request = {"key": config.key, "seed": None, "frame": None, "feature": 2}
    assert update_features(store, 0, request)[2] == 2
    # a request for another config, or none: the chosen feature stays
    assert update_features(store, 1, {**request, "key": "0" * 16})[2] == 1
    assert update_features(store, 1, None)[2] == 1
    assert update_features(store, 1, {**request, "feature": 7})[2] == 1


def test_no_slider_mark_sits_within_a_label_of_another() -> None:
    """The marks' labels need room: on a 200 px track (a phone) two marks less than ~10 %
    of the range apart overlap (0.9 and 0.99 did); the browser test measures them."""
    from app.controls import SLIDERS

    for sl in SLIDERS:
        marks = sorted(sl.marks)
        gaps = [(b - a) / (sl.hi - sl.lo) for a, b in zip(marks, marks[1:], strict=False)]
        wide = [len(sl.marks[m]) for m in marks]
        for gap, a, b in zip(gaps, wide, wide[1:], strict=False):
            assert gap * 200 >= 4 * (a + b), (sl.field, sl.marks)
