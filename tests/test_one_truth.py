"""One truth: the phase-transition story is computed once and every surface says it.

The ssm-jump claim's check measures where the best seed switches basin and whether
seeds move themselves; its own function writes that as one sentence. The gallery card,
lesson step 4, the phase page and the claims table (docs/science.md) must carry that
sentence, and its numbers must be the check's. The lesson's other steps must say what
their claims measured (step 1: k·arg λ beside the kθ its panel prints; step 6: the
verdicts as checked).

The surfaces are rendered as Python objects (no browser) from a job store holding the
shipped preset runs, as a full-preset server has them.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from dash import html

from tempsup.paper import shipped
from tempsup.paper.presets import preset
from tempsup.teaching import lesson

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("spiral-sink", "ssm-dense-vs-sparse", "ssm-jump", "vector-all-or-none")


def _texts(component) -> list[str]:
    if isinstance(component, str):
        return [component]
    if isinstance(component, (list, tuple)):
        return [t for c in component for t in _texts(c)]
    children = getattr(component, "children", None)
    return _texts(children) if children is not None else []


def _text(component) -> str:
    return " ".join(" ".join(_texts(component)).split())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    """A fresh job store holding the shipped runs of the presets the surfaces read."""
    from app import services

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TEMPSUP_CACHE", str(tmp_path_factory.mktemp("jobs")))
        mp.setenv("TEMPSUP_PRESETS", "full")
        services.settings.cache_clear()
        services.job_queue.cache_clear()
        configs = [c for name in NAMES for c in preset(name).configs]
        installed = shipped.install(services.job_queue(), configs)
        assert len(set(installed)) == len({c.key for c in configs})
        yield services.job_queue()
        services.settings.cache_clear()
        services.job_queue.cache_clear()


@cache
def _checked(name: str) -> list:
    """The preset's claims checked on its shipped runs (the check itself, nothing cached)."""
    p = preset(name)
    return p.check([shipped.load(c) for c in p.configs])


@pytest.fixture(scope="module")
def jump():
    """The ssm-jump claim measured on the shipped runs."""
    return _checked("ssm-jump")[0]


def test_the_jump_claim_says_what_its_count_counts(jump) -> None:
    """A count of 0 must not sit beside "kθ jumps": the claim is about the best seed, the
    count about seeds that switch themselves, and the sentence says both with the check's
    numbers."""
    m = jump.measured
    assert "kθ jumps" not in jump.claim and "best seed" in jump.claim
    assert jump.counted == "seeds switch basin themselves"
    assert (
        jump.count_text == f"{m['seeds_switching']} of {m['seeds']} seeds switch basin themselves"
    )
    assert jump.held == (m["jump_best"] is not None)
    lo, hi = m["jump_best"]["between"]
    assert f"The best seed switches basin between S = {lo:g} and {hi:g}" in jump.statement
    i = m["sparsity"].index(lo)
    th = m["k_theta_deg_best"]
    assert f"from {th[i]:.0f}° to {th[i + 1]:.0f}°" in jump.statement
    moved = m["seeds_switching"]
    kept = m["seeds_in_one_regime_at_every_sparsity"]
    if moved == 0:
        assert f"Individual seeds do not move: 0 of {m['seeds']} switch" in jump.statement
    assert f"{kept} of {m['seeds']} keep one basin at every sparsity" in jump.statement
    # the per-seed regimes agree with the counts
    assert kept == sum(len(set(r)) == 1 for r in m["regimes_per_seed"])
    assert moved == sum(j is not None for j in m["jump_per_seed"])


def test_every_surface_carries_the_same_jump_sentence(store) -> None:
    """Gallery card, lesson step 4 (revealed), the phase page and the claims table say where the
    best seed switches basin and how many seeds switch themselves, as the check measured it
    — in one sentence, the same everywhere."""
    from app import preset_runs
    from app.pages import gallery, phase
    from app.pages import lesson as lesson_page

    (claim,) = _checked("ssm-jump")
    m = claim.measured
    lo, hi = m["jump_best"]["between"]
    where = f"The best seed switches basin between S = {lo:g} and {hi:g}"
    n = len(m["regimes_per_seed"])
    moved = sum(j is not None for j in m["jump_per_seed"])
    seeds = f"{moved} of {n} switch basin themselves"
    statement = getattr(claim, "statement", None)

    p = preset_runs.by_name("ssm-jump")
    card = _text(gallery.card(p, False, preset_runs.ready(p)))
    number = next(i for i, s in enumerate(lesson.STEPS, start=1) if s.slug == "phase-transition")
    _, right = lesson.shown_choices(lesson.step(number))
    step4 = _text(html.Div(lesson_page.reveal(number, right)))
    page = _text(phase.layout())
    science = (ROOT / "docs" / "science.md").read_text(encoding="utf-8")
    begin, end = science.find("<!-- claims:begin -->"), science.find("<!-- claims:end -->")
    table = science[begin:end] if 0 <= begin < end else ""
    row = next((x for x in table.splitlines() if x.startswith("| ssm-jump |")), "")

    for surface, text in (("gallery", card), ("lesson step 4", step4), ("phase page", page),
                          ("claims table", row)):  # fmt: skip
        assert where in text and seeds in text, f"{surface}: {text[:300]}"
        assert statement in text, surface
    assert f"({claim.count_text})" in card and f"| {claim.count_text} |" in row
    assert "a jump rather than a drift" not in step4
    assert "gallery's ssm-jump sweep" in page  # said to be about the preset's sweep


def test_the_phase_sentence_of_a_sweep_is_the_claims_function(jump) -> None:
    """A finished sweep's sentence (the phase page's own) is written by the same function:
    on the preset's runs it is the claim's sentence."""
    from tempsup.paper.presets import ssm_jump

    runs = [shipped.load(c) for c in preset("ssm-jump").configs]
    assert ssm_jump.said_of_sweep(runs) == jump.statement
    two_k = ssm_jump.said_of_sweep([runs[0], runs[-1].__class__(runs[-1].config.replace(k=2),
                                                              runs[-1].arrays)])  # fmt: skip
    assert two_k.startswith("k = 2: one sparsity only") and "k = 3: one sparsity only" in two_k


def test_lesson_step_1_prints_the_angle_its_panel_shows(store) -> None:
    """Step 1 says k·arg λ (gauge free) and the kθ the panels print for the best seed, and
    how they differ — not k·arg λ alone beside a panel showing another angle."""
    from app.pages import lesson as lesson_page

    run = store.run(preset("spiral-sink").main_key)
    shown = run.summary()["swept_angle_deg"]  # what the status line and eigen panel print
    m = _checked("spiral-sink")[0].measured
    _, right = lesson.shown_choices(lesson.step(1))
    text = _text(html.Div(lesson_page.reveal(1, right)))
    assert f"k·arg λ = {m['k_arg_lambda_deg']:.1f}°" in text
    assert f"kθ = {shown:.1f}°" in text
    assert "canonical gauge" in text


def test_every_lesson_step_says_what_its_claims_measured(store) -> None:
    """Every step revealed on the shipped runs: no number missing, and where a step names a
    verdict (step 6), it is the check's verdict, held or not."""
    from app.pages import lesson as lesson_page

    for number, item in enumerate(lesson.STEPS, start=1):
        if item.preset not in NAMES:
            continue
        _, right = lesson.shown_choices(item)
        text = _text(html.Div(lesson_page.reveal(number, right)))
        assert lesson.MISSING not in text, (item.slug, text)
        claims = [c.to_dict() for c in _checked(item.preset)]
        for idx in item.claims:
            c = claims[idx]
            if c.get("statement") and f"c{item.claims.index(idx)}.statement" in item.why:
                assert c["statement"] in text, (item.slug, idx)
            if f"c{item.claims.index(idx)}.verdict" in item.why:
                said = "held" if c["held"] else "did not hold"
                assert re.search(rf"\b{said}\b", text), (item.slug, idx)
    step6 = next(i for i, s in enumerate(lesson.STEPS, start=1) if s.slug == "all-or-none")
    item = lesson.step(step6)
    _, right = lesson.shown_choices(item)
    text = _text(html.Div(lesson_page.reveal(step6, right)))
    claims = [c.to_dict() for c in _checked(item.preset)]
    if not claims[2]["held"]:  # "most important first" did not hold on these runs
        assert "Most important first did not hold" in text


@pytest.mark.browser
def test_the_phase_page_says_its_own_sweeps_sentence(tmp_path_factory) -> None:
    """In a real browser: before a sweep the sentence is the gallery's, said to be so; once
    the page's own sweep finishes, the sentence is that sweep's, written by the claim's
    function from the runs the worker stored."""

    from app.pages.phase import build_spec
    from tempsup.jobs import JobQueue
    from tempsup.model.config import DEFAULTS
    from tempsup.paper.presets import ssm_jump
    from tests.browser import app_server, make_driver
    from tests.helpers import wait_for

    cache = tmp_path_factory.mktemp("one-truth") / "jobs"
    with app_server(cache) as url:
        queue = JobQueue(cache)
        queue.cancel(DEFAULTS.key)  # the start-up example: not needed here
        driver = make_driver(tmp_path_factory.mktemp("dl"))
        try:
            driver.get(f"{url}/phase")
            story = wait_for("the phase sentence", lambda: _story(driver))
            assert story.startswith("The gallery's ssm-jump sweep") and "basin" in story
            driver.get(f"{url}/phase?model=ssm&sparsities=0.3,0.9&k=3&seeds=2&steps=40&hidden=2")
            mine = wait_for(
                "the sweep's own sentence",
                lambda: (t := _story(driver)) and t.startswith("This sweep:") and t,
                120,
            )
        finally:
            driver.quit()
        spec = build_spec("ssm", "0.3, 0.9", "3", 2, 40, 2)  # what the link names
        result = queue.result(spec.key)
        assert result is not None, "the page's sweep is not the one the link names"
        runs = [queue.run(k) for k in result.keys]
        assert mine == f"This sweep: {ssm_jump.said_of_sweep(runs)}"
        queue.close()


def _story(driver) -> str | None:
    """The phase page's sentence, or None while the page is not drawn yet."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    try:
        return driver.find_element(By.ID, "phase-story").text or None
    except WebDriverException:
        return None
