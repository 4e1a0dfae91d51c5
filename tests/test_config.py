"""RunConfig: validation messages, the stable key, JSON round trips (tempsup.model.config)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from tempsup.errors import TempsupError
from tempsup.model import config as config_module
from tempsup.model.config import DEFAULTS, FIELDS, RunConfig, snapshot_steps

# The key of the default config, pinned on purpose. The key is the job cache's
# key and the id in every share link: if this test fails, an edit changed the
# meaning or the serialisation of configs and every cached result and shared
# link is now orphaned. If that is intended, bump config.SCHEMA_VERSION
# deliberately and update this constant in the same commit.
DEFAULT_KEY = "dc5425a9b552301d"

# One valid non-default value per field: each must change the key.
OTHER_VALUES = {
    "model": "linear",
    "k": 2,
    "sparsity": 0.5,
    "hidden": 3,
    "inputs": 2,
    "seq_len": 21,
    "batch": 256,
    "steps": 1000,
    "lr": 0.02,
    "schedule": "constant",
    "seeds": 4,
    "seed": 1,
    "tied": False,
    "bias": True,
    "importance": 0.5,
    "input_dist": "constant",
    "snapshot_every": 10,
    "curriculum": 0.5,
    "warm_start": "run.npz",
    "objective": "expected",
    "task": "sum",
    "ks": (2, 5),
    "window": 2,
    "persistence": 0.5,
}


# Fields whose other value needs another field changed too (objective 'expected': linear only).
REQUIRES = {
    "objective": {"model": "linear"},
    "ks": {"task": "multi", "ks": (2, 3)},
    "window": {"task": "sum"},
}


def test_every_field_has_an_alternative_value() -> None:
    assert set(OTHER_VALUES) == set(FIELDS)


# ---- validation --------------------------------------------------------------------

# (changes, field named in the message, fragment of the allowed range or type)
BAD = [
    ({"k": 20}, "k", "[0, 19]"),  # k >= T
    ({"k": 5, "seq_len": 5}, "k", "[0, 4]"),
    ({"k": -1}, "k", "[0, 19]"),
    ({"k": True}, "k", "integer"),  # bool is not an int here
    ({"k": 3.0}, "k", "integer"),
    ({"sparsity": 1.0}, "sparsity", "[0, 1)"),
    ({"sparsity": -0.1}, "sparsity", "[0, 1)"),
    ({"sparsity": math.nan}, "sparsity", "[0, 1)"),
    ({"sparsity": math.inf}, "sparsity", "[0, 1)"),
    ({"sparsity": "0.9"}, "sparsity", "number"),  # str for float
    ({"sparsity": True}, "sparsity", "number"),  # bool for float
    ({"sparsity": None}, "sparsity", "number"),
    ({"hidden": 0}, "hidden", "[1, 256]"),
    ({"hidden": 257}, "hidden", "[1, 256]"),
    ({"hidden": True}, "hidden", "integer"),
    ({"hidden": 2.0}, "hidden", "integer"),
    ({"hidden": "2"}, "hidden", "integer"),
    ({"inputs": 0}, "inputs", "[1, 128]"),
    ({"seq_len": 1}, "seq_len", "[2, 500]"),
    ({"batch": 0}, "batch", "[1, 65536]"),
    ({"steps": 0}, "steps", "[1, 200000]"),
    ({"steps": -5}, "steps", "[1, 200000]"),
    ({"seeds": 0}, "seeds", "[1, 256]"),
    ({"seeds": "8"}, "seeds", "integer"),
    ({"seed": -1}, "seed", "[0, 2147483647]"),
    ({"lr": 0.0}, "lr", "(0, 10]"),
    ({"lr": math.nan}, "lr", "(0, 10]"),
    ({"lr": 11}, "lr", "(0, 10]"),
    ({"importance": 0}, "importance", "(0, 1]"),
    ({"importance": 1.5}, "importance", "(0, 1]"),
    ({"curriculum": 1.0}, "curriculum", "[0, 1)"),
    ({"curriculum": math.nan}, "curriculum", "[0, 1)"),
    ({"curriculum": "0.5"}, "curriculum", "number"),
    ({"snapshot_every": 0}, "snapshot_every", "[1, 2000]"),
    ({"snapshot_every": 2001}, "snapshot_every", "[1, 2000]"),
    ({"steps": 10}, "snapshot_every", "[1, 10]"),  # default every = 20 > steps
    ({"tied": 1}, "tied", "true or false"),
    ({"bias": "yes"}, "bias", "true or false"),
    ({"model": "transformer"}, "model", "linear, ssm, rnn, gru, lstm, lru, selective"),
    ({"schedule": "linear"}, "schedule", "cosine, constant"),
    ({"input_dist": "normal"}, "input_dist", "uniform, constant, exponential"),
    ({"warm_start": ""}, "warm_start", "run file"),
    ({"warm_start": "   "}, "warm_start", "run file"),
    ({"warm_start": 3}, "warm_start", "run file"),
]


@pytest.mark.parametrize(("changes", "field", "allowed"), BAD, ids=[repr(c) for c, _, _ in BAD])
def test_bad_value_names_field_and_range(changes: dict, field: str, allowed: str) -> None:
    with pytest.raises(TempsupError) as info:
        RunConfig(**changes)
    message = str(info.value)
    assert message.startswith(f"{field}:"), message
    assert allowed in message, message
    assert "got" in message, message  # and what was received
    assert "\n" not in message


@pytest.mark.parametrize(
    ("changes", "field", "allowed"), BAD[:12], ids=[repr(c) for c, _, _ in BAD[:12]]
)
def test_replace_and_from_dict_validate_too(changes: dict, field: str, allowed: str) -> None:
    with pytest.raises(TempsupError, match=f"^{field}:"):
        DEFAULTS.replace(**changes)
    with pytest.raises(TempsupError, match=f"^{field}:"):
        RunConfig.from_dict(changes)


def test_error_is_a_value_error() -> None:
    # callers that only know ValueError still catch configuration mistakes
    with pytest.raises(ValueError):
        RunConfig(k=99)


def test_boundary_values_are_accepted() -> None:
    RunConfig(k=19, seq_len=20)
    RunConfig(k=0)
    RunConfig(sparsity=0.0)
    RunConfig(sparsity=0.999)
    RunConfig(lr=10.0, importance=1.0, curriculum=0.0)
    RunConfig(steps=1, snapshot_every=1)
    RunConfig(hidden=256, inputs=128, seq_len=2, k=1, batch=1, seeds=1)


def test_absurd_memory_is_refused_as_too_large() -> None:
    with pytest.raises(TempsupError, match="too large") as info:
        RunConfig(hidden=256, seeds=256, batch=65536, seq_len=500)
    assert "batch" in str(info.value) and "seeds" in str(info.value)


def test_absurd_work_is_refused_as_too_long() -> None:
    # activations fit (20*8*8192*16 = 2e7) but the work is 7e13 multiply-adds
    with pytest.raises(TempsupError, match="too long") as info:
        RunConfig(steps=200_000, batch=8192, hidden=16, snapshot_every=1000)
    assert "steps" in str(info.value)


# ---- derived quantities ------------------------------------------------------------


def test_derived_quantities() -> None:
    assert DEFAULTS.p == pytest.approx(0.1)
    assert DEFAULTS.n_snapshots == 101  # 0, 20, ..., 2000
    assert RunConfig(model="linear").relu_readout is False
    assert RunConfig(model="ssm").relu_readout and not RunConfig(model="ssm").relu_hidden
    assert RunConfig(model="rnn").relu_readout and RunConfig(model="rnn").relu_hidden


@pytest.mark.parametrize(
    ("steps", "every", "marks"),
    [(10, 3, [0, 3, 6, 9, 10]), (9, 3, [0, 3, 6, 9]), (1, 1, [0, 1]), (5, 5, [0, 5])],
)
def test_snapshot_steps(steps: int, every: int, marks: list[int]) -> None:
    assert snapshot_steps(steps, every) == marks
    assert RunConfig(steps=steps, snapshot_every=every).n_snapshots == len(marks)


# ---- the key -------------------------------------------------------------------------


def test_default_key_is_pinned() -> None:
    assert RunConfig().key == DEFAULT_KEY, (
        "the default config's key changed: every cache entry and share link is invalidated; "
        "if intended, bump SCHEMA_VERSION and update DEFAULT_KEY"
    )


def test_key_is_stable_and_short_hex() -> None:
    a, b = RunConfig(model="rnn", sparsity=0.97), RunConfig(model="rnn", sparsity=0.97)
    assert a.key == b.key
    assert len(a.key) == 16 and all(c in "0123456789abcdef" for c in a.key)
    assert RunConfig.from_json(a.to_json()).key == a.key


@pytest.mark.parametrize("field", FIELDS)
def test_key_changes_with_every_field(field: str) -> None:
    base = DEFAULTS.replace(**REQUIRES.get(field, {}))  # DEFAULTS, key DEFAULT_KEY, for most
    assert base.replace(**{field: OTHER_VALUES[field]}).key != base.key


def test_keys_of_all_single_changes_are_distinct() -> None:
    keys = {DEFAULTS.replace(**{**REQUIRES.get(f, {}), f: v}).key for f, v in OTHER_VALUES.items()}
    assert len(keys) == len(OTHER_VALUES)


def test_key_depends_on_schema_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config_module, "SCHEMA_VERSION", config_module.SCHEMA_VERSION + 1)
    assert RunConfig().key != DEFAULT_KEY


def test_close_floats_have_different_keys() -> None:
    assert RunConfig(sparsity=0.9000001).key != DEFAULT_KEY


@pytest.mark.parametrize(
    "changes",
    [{"sparsity": (0, 0.0)}, {"lr": (1, 1.0)}, {"importance": (1, 1.0)}, {"curriculum": (0, 0.0)}],
    ids=lambda c: next(iter(c)),
)
def test_equal_configs_have_equal_keys(changes: dict) -> None:
    """An int where a float is expected (JSON from a browser writes 0.0 as 0) is accepted
    and compares equal, so it must hash alike, or the cache and share links split."""
    ((name, (as_int, as_float)),) = changes.items()
    a, b = RunConfig(**{name: as_int}), RunConfig(**{name: as_float})
    assert a == b
    assert a.key == b.key
    # the round trip through browser-style JSON (floats without ".0") keeps the key
    text = json.dumps(b.to_dict()).replace(f'"{name}": {as_float!r}', f'"{name}": {as_int!r}')
    assert RunConfig.from_json(text).key == b.key


# ---- JSON ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cfg",
    [
        RunConfig(),
        RunConfig(model="rnn", tied=False, bias=True, inputs=5, curriculum=0.5, seeds=3),
        RunConfig(warm_start="abcdef0123456789", input_dist="exponential", sparsity=0.0),
    ],
)
def test_json_round_trip(cfg: RunConfig) -> None:
    assert RunConfig.from_json(cfg.to_json()) == cfg
    assert RunConfig.from_dict(cfg.to_dict()) == cfg
    assert RunConfig.from_dict(json.loads(cfg.to_json())).key == cfg.key
    assert set(json.loads(cfg.to_json())) == set(FIELDS)


def test_from_dict_fills_defaults() -> None:
    assert RunConfig.from_dict({}) == DEFAULTS
    assert RunConfig.from_dict({"k": 2}) == DEFAULTS.replace(k=2)


def test_from_dict_refuses_unknown_fields() -> None:
    with pytest.raises(TempsupError, match="unknown field") as info:
        RunConfig.from_dict({"k": 3, "bogus": 1, "hiden": 2})
    message = str(info.value)
    assert "bogus" in message and "hiden" in message
    assert "hidden" in message  # lists the known fields


@pytest.mark.parametrize("data", [[1, 2], "k=3", None, 3])
def test_from_dict_refuses_non_mappings(data: object) -> None:
    with pytest.raises(TempsupError, match="mapping"):
        RunConfig.from_dict(data)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["{", "", "not json", "[1, 2]", "null", '{"k": 50}', "NaN"])
def test_from_json_refuses_garbage(text: str) -> None:
    with pytest.raises(TempsupError):
        RunConfig.from_json(text)


def test_from_json_nan_value_is_refused() -> None:
    with pytest.raises(TempsupError, match="^sparsity:"):
        RunConfig.from_json('{"sparsity": NaN}')


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULTS.k = 5  # type: ignore[misc]
