"""The tasks and persistence in the explorer's link (issue 43; app/urlstate.py): a task's
fields are in the query only when not default, so every older link is unchanged; each task
round-trips; and an invalid link's fallback keeps a task with its delays or window."""

from __future__ import annotations

import pytest

from app.urlstate import config_from_query, query_from_config
from tempsup.model.config import DEFAULTS, RunConfig

TASK_CONFIGS = {
    "recall": RunConfig(),
    "recall-q": RunConfig(persistence=0.5),
    "multi": RunConfig(task="multi", ks=(2, 5)),
    "multi-q": RunConfig(task="multi", ks=(2, 5), persistence=0.5, model="linear"),
    "sum": RunConfig(task="sum", window=3),
    "cued": RunConfig(task="cued", ks=(1, 3), model="rnn"),
}


@pytest.mark.parametrize("name", list(TASK_CONFIGS))
def test_every_task_round_trips_through_its_link(name: str) -> None:
    config = TASK_CONFIGS[name]
    query = query_from_config(config)
    back, errors = config_from_query(query)
    assert errors == [] and back == config and back.key == config.key, query


def test_the_default_task_stays_out_of_the_link() -> None:
    """Recall at q = 0 writes none of the new fields: every existing link holds."""
    assert query_from_config(DEFAULTS) == "?model=ssm&k=3&sparsity=0.9&hidden=2&inputs=1"
    for name in ("task", "ks", "window", "persistence"):
        assert f"{name}=" not in query_from_config(RunConfig(model="rnn", k=5, sparsity=0.97))
    assert "ks=2%2C5" in query_from_config(TASK_CONFIGS["multi"])
    assert "window=3" in query_from_config(TASK_CONFIGS["sum"])
    assert "persistence=0.5" in query_from_config(TASK_CONFIGS["recall-q"])


def test_an_invalid_link_keeps_its_task_with_its_delays() -> None:
    """The fallback applies task, ks and window together: task=multi was dropped when it
    was tried before its ks (each is refused alone)."""
    config, errors = config_from_query("?task=multi&ks=2,5&sparsity=1.5")
    assert (config.task, config.ks, config.k) == ("multi", (2, 5), 5)
    assert len(errors) == 1 and errors[0].startswith("sparsity")
    config, errors = config_from_query("?ks=2,5&task=multi&steps=0")  # ks named first
    assert (config.task, config.ks) == ("multi", (2, 5)) and len(errors) == 1
    config, errors = config_from_query("?task=sum&window=4&hidden=0")
    assert (config.task, config.window) == ("sum", 4) and errors[0].startswith("hidden")
    # a later field bounded by the task's (k < T) keeps the task and is refused alone
    config, errors = config_from_query("?task=multi&ks=2,5&seq_len=20&persistence=1.5")
    assert (config.task, config.ks, config.persistence) == ("multi", (2, 5), 0.0)
    assert errors and errors[0].startswith("persistence")


def test_a_refused_task_is_named_and_the_rest_kept() -> None:
    config, errors = config_from_query("?task=multi&k=4&sparsity=0.8")
    assert config == RunConfig(k=4, sparsity=0.8)  # multi without its delays: refused
    assert len(errors) == 1 and errors[0].startswith("ks: task 'multi' needs its delays")
    config, errors = config_from_query("?task=cued&ks=2,x&model=rnn")
    assert config == RunConfig(model="rnn")
    assert errors[0].startswith("ks: expected delays as whole numbers")
    config, errors = config_from_query("?task=multi&ks=3,30&seq_len=20")
    assert config.task == "recall" and config.seq_len == 20
    assert any("smaller than seq_len" in e for e in errors)
