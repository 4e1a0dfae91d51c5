"""Each preset's claims are one function each: `check` composes them, a claim function
builds exactly one `ClaimResult` and its sentence function (`said_*`) follows it (read
from the source with `ast`, fast)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tempsup.paper.presets import REGISTRY

MODULES = [sys.modules[build.__module__] for build in REGISTRY.builders]
LONGEST_CLAIM = 45  # lines: a claim's test, numbers and criterion, no more


def functions(module) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def calls(fn: ast.FunctionDef, name: str) -> int:
    return sum(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
        for n in ast.walk(fn)
    )


def said_of(fn: ast.FunctionDef) -> str | None:
    for n in ast.walk(fn):
        if isinstance(n, ast.keyword) and n.arg == "said" and isinstance(n.value, ast.Name):
            return n.value.id
    return None


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rpartition(".")[2])
def test_every_claim_is_one_function_with_its_sentence_beside_it(module) -> None:
    fns = functions(module)
    assert calls(fns["check"], "result") == 0, "check composes the claims, measures none"
    claims = [f for f in fns.values() if calls(f, "result")]
    assert claims, "no claim function"
    order = list(fns)
    for f in claims:
        assert calls(f, "result") == 1, f"{f.name} builds more than one claim"
        assert f.end_lineno - f.lineno + 1 <= LONGEST_CLAIM, f"{f.name} is long"
        said = said_of(f)
        assert said in fns, f"{f.name}: no sentence function"
        users = [g.name for g in claims if said_of(g) == said]
        assert order.index(said) == order.index(users[-1]) + 1, f"{said} should follow {users[-1]}"
