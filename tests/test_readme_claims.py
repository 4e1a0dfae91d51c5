"""The claims table is generated from the shipped runs, and says what the checks say.

Every number about a claim is computed once (the presets' checks); the table on the
documentation's science page (docs/science.md) is written by `scripts/readme_claims` from
them. These tests fail when the page and the generated text differ, and name the command
that regenerates it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempsup.paper import claims_table
from tempsup.paper.presets import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGE = ROOT / "docs" / "science.md"  # where the generated table lives


def _generated_part(text: str) -> str:
    start, end = text.index(claims_table.BEGIN), text.index(claims_table.END)
    return text[start : end + len(claims_table.END)]


def test_the_claims_table_is_the_generated_one() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert claims_table.BEGIN in text and claims_table.END in text, (
        f"docs/science.md has no generated claims table: add the markers {claims_table.BEGIN} "
        f"and {claims_table.END} and run {claims_table.COMMAND}"
    )
    want = claims_table.block(claims_table.shipped_claims())
    assert _generated_part(text) == want, (
        f"docs/science.md's claims table differs from what the presets' checks give on the "
        f"shipped runs: run {claims_table.COMMAND}"
    )


def test_every_claim_has_one_row_with_its_sentence_and_count() -> None:
    """Each claim of each full preset appears once, with its verdict, its count (what it
    counts included) and its own sentence, not a list of raw numbers."""
    part = _generated_part(PAGE.read_text(encoding="utf-8"))
    rows = [line for line in part.splitlines() if line.startswith("| ") and "---" not in line]
    results = claims_table.shipped_claims()
    assert len(rows) - 1 == sum(len(res) for _, res in results)  # less the header row
    assert [p.name for p, _ in results] == [p.name for p in REGISTRY.presets()]
    for preset, res in results:
        for r in res:
            row = next(x for x in rows if f"| {preset.name} | {claims_table._cell(r.claim)} |" in x)
            assert f"| {r.count_text} |" in row
            assert claims_table._cell(r.statement) in row
            assert ("| yes |" in row) == r.held


@pytest.mark.parametrize(
    "path",
    [README, *sorted((ROOT / "docs").rglob("*.md"))],
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_no_hand_typed_claim_numbers_outside_the_table(path: Path) -> None:
    """The tables of the past ("measured before issue 9") and locations typed into prose
    are gone: the jump's location appears only inside the generated part."""
    text = path.read_text(encoding="utf-8")
    outside = text.replace(_generated_part(text), "") if claims_table.BEGIN in text else text
    assert "before the claims of issue 9" not in outside
    assert "| claim | held | seeds | measured (best seed) |" not in outside
    assert not re.search(r"between S = 0\.\d+ and 0\.\d+", outside), (
        f"a jump location typed into {path.name}'s prose: read it from the ssm-jump claim"
    )
    assert "seeds succeeded" not in outside


def test_the_command_rewrites_only_the_generated_part(tmp_path: Path) -> None:
    """`rewrite` replaces the part between the markers and nothing else; without markers it
    says what it expected."""
    text = "before\n" + claims_table.BEGIN + "\nstale\n" + claims_table.END + "\nafter\n"
    out = claims_table.rewrite(text, claims_table.BEGIN + "\nnew\n" + claims_table.END)
    assert out == "before\n" + claims_table.BEGIN + "\nnew\n" + claims_table.END + "\nafter\n"
    with pytest.raises(Exception, match="expected the markers"):
        claims_table.rewrite("no markers here", "x")


def test_the_regeneration_command_exists() -> None:
    """The command the failure message names is there, executable, and writes through
    `claims_table.update` (the only writer of the table) into docs/science.md."""
    script = ROOT / claims_table.COMMAND
    assert script.is_file() and script.stat().st_mode & 0o111
    text = script.read_text(encoding="utf-8")
    assert "claims_table import update" in text
    assert 'update(Path("docs/science.md"))' in text
