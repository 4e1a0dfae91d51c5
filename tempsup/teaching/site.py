"""The static site: the gallery, one page per preset, the lesson and the report as plain files.

`build(out_dir, quick)` writes a folder that opens from `file://` with no
server and no network and can be put on any static host:

    index.html          the gallery: every preset as a card (picture, claims, numbers)
    <preset>.html       the preset's claims, its summary figure and every run animated
    lesson.html         the lesson (`tempsup.teaching.lesson`), a step a section (#step-3); it says
                        that the class poll needs the app (no server here)
    report.html         the reproduction report (`report.md` beside it)
    plotly.min.js       loaded once by every page (relative path)
    site.css

Runs come from a job store when one is given (what the gallery trained) and
are trained otherwise — and stored there, so a second build is instant.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempsup.figures._animation import HEAD, stdlib_json
from tempsup.io.run import Run
from tempsup.model.config import MODEL_NAMES, query_string
from tempsup.paper.preset import ClaimResult, Preset, format_measured
from tempsup.paper.presets import card_picture, preset_configs
from tempsup.teaching import lesson

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from tempsup.jobs.queue import BaseQueue

PLOTLY_JS = "plotly.min.js"
CSS = "site.css"
JS = "site.js"
ProgressFn = Callable[[str, float], None]

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
       color: #1d2430; background: #fbfbfc; margin: 0 auto; max-width: 1300px;
       padding: 1rem; line-height: 1.5; }
a { color: #2f6fde; }
nav a { margin-right: 1rem; }
.lesson-runs { display: grid;
  grid-template-columns: repeat(auto-fit, minmax(min(100%, 560px), 1fr)); }
.lesson-runs figure { margin: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(22rem, 100%), 1fr));
         gap: 1rem; }
.plot { max-width: 100%; }
.captions { display: grid; gap: 0 1.5rem;
  grid-template-columns: repeat(auto-fit, minmax(min(100%, 280px), 1fr)); }
.captions > h3 { grid-column: 1 / -1; margin-bottom: 0; }
.panel-caption h4 { margin: 0.6rem 0 0.1rem; } .caption .headline { margin: 0.1rem 0; }
@media (max-width: 600px) {
  body { padding: 0.6rem; } nav { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; }
  nav a { margin-right: 0; padding: 0.35rem 0; } table { display: block; overflow-x: auto; }
}
.card { background: #fff; border: 1px solid #e3e6ea; border-radius: 8px; padding: 1rem;
        overflow-wrap: anywhere; }
.held { color: #1a7f37; } .not-held { color: #b3261e; }
table { border-collapse: collapse; } td, th { border-bottom: 1px solid #e4e4e4;
        padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
pre { white-space: pre-wrap; font-size: 0.8rem; background: #f6f6f6; padding: 0.5rem; }
fieldset { border: 1px solid #e3e6ea; border-radius: 6px; }
button { font: inherit; padding: 0.3rem 1rem; }
:focus-visible { outline: 3px solid #2f6fde; outline-offset: 2px; }
@media (prefers-color-scheme: dark) {
  body { background: #15181d; color: #e6e8eb; }
  .card { background: #1d2127; border-color: #333a44; }
  a { color: #8ab4ff; } pre { background: #22272e; } .held { color: #6fdd8b; }
  .not-held { color: #ff8a80; } td, th { border-color: #333a44; }
}
"""

PAGE = (
    HEAD
    + """<title>{title} · tempsup</title>
<link rel="stylesheet" href="{css}">
<script src="{plotly}"></script>
<script src="{js}" defer></script>
</head>
<body>
<nav aria-label="site"><a href="index.html">Gallery</a><a href="lesson.html">Lesson</a>\
<a href="report.html">Report</a></nav>
<main>
<h1>{title}</h1>
{body}
</main>
</body>
</html>
"""
)

# Draws each figure the first time it is on screen (a hidden one, e.g. a lesson answer
# not revealed yet, waits until it is shown); frames are added for the play button.
LAZY_JS = """
"use strict";
function drawPlot(div) {
  if (div.dataset.drawn) { return; }
  div.dataset.drawn = "1";
  var fig = JSON.parse(document.getElementById(div.id + "-figure").textContent);
  var config = div.dataset.static ? {staticPlot: true} : {responsive: true, displaylogo: false};
  Plotly.newPlot(div, fig.data, fig.layout || {}, config).then(function () {
    if (fig.frames && fig.frames.length) { return Plotly.addFrames(div, fig.frames); }
  }).then(function () { div.dataset.ready = "1"; });
}
var observer = new IntersectionObserver(function (entries) {
  entries.forEach(function (e) { if (e.isIntersecting) { drawPlot(e.target); } });
}, {rootMargin: "200px"});
document.querySelectorAll("div.plot").forEach(function (div) { observer.observe(div); });
"""

REVEAL_JS = """
<script>
document.querySelectorAll("section.step").forEach(function (step) {
  step.querySelector("button.reveal").addEventListener("click", function () {
    var picked = step.querySelector("input:checked");
    var verdict = step.querySelector(".verdict");
    if (!picked) { verdict.textContent = "Pick an answer first: the point is to predict."; return; }
    var right = picked.value === step.dataset.answer;
    verdict.textContent = right ? "\\u2713 Right." :
      "\\u2717 Not quite: the answer is \\u201c" + step.dataset.answerText + "\\u201d.";
    verdict.className = "verdict " + (right ? "held" : "not-held");
    var answer = step.querySelector(".answer");
    answer.hidden = false;
  });
});
</script>
"""


def collect_runs(
    quick: bool, queue: BaseQueue | None = None, on_progress: ProgressFn | None = None
) -> dict[str, Run]:
    """Every preset run by key: finished ones from `queue`, then those that ship with the
    package (`tempsup.paper.shipped`), the rest trained (and stored)."""
    from tempsup.jobs.record import JobState
    from tempsup.paper import shipped
    from tempsup.paper.reproduce import train_configs

    configs = preset_configs(quick)
    done: dict[str, Run] = {}
    if queue is not None:
        for cfg in configs:
            status = queue.status(cfg.key)
            if status is not None and status.state == JobState.DONE:
                run = queue.run(cfg.key)
                if run is not None:
                    done[cfg.key] = run
    done = {**shipped.available([c for c in configs if c.key not in done]), **done}
    return train_configs(
        configs,
        done=done,
        lookup=queue.run if queue is not None else None,
        on_progress=on_progress,
        on_run=queue.put_run if queue is not None else None,
    )


def build(
    out_dir: str | Path,
    quick: bool = False,
    queue: BaseQueue | None = None,
    on_progress: ProgressFn | None = None,
    app_url: str | None = None,
) -> Path:
    """Write the site into `out_dir`; return the path of its index page.

    `app_url` (a running tempsup server, e.g. a public demo) makes "try it
    yourself" a link into its explorer; without it the lesson names the
    explorer query to open.
    """
    from tempsup.paper.reproduce import check_presets, render_report

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    runs = collect_runs(quick, queue, on_progress)
    results = check_presets(runs, quick)
    write_assets(out)
    _write(out / "index.html", "The paper's claims", index_body(results, runs))
    for p, res in results:
        write_preset(out, p, res, runs)
    _write(out / "lesson.html", "Lesson", lesson_body(results, runs, app_url))
    report = render_report(results, runs, quick, time.monotonic() - start, {},
                           {p.name: f"{p.name}.html" for p, _ in results})  # fmt: skip
    (out / "report.md").write_text(report)
    _write(out / "report.html", "Reproduction report", report_body(report))
    return out / "index.html"


def write_assets(out: Path) -> None:
    """What every page loads: plotly.js, the style sheet and the script, which shows each
    figure as the screen asks (`tempsup.figures.view`, as in the app and the export) and
    draws it when it scrolls into view."""
    import plotly.offline

    from tempsup.figures import view

    (out / PLOTLY_JS).write_text(plotly.offline.get_plotlyjs())
    (out / CSS).write_text(STYLE)
    (out / JS).write_text(view.script_text() + "\n" + LAZY_JS)


def write_preset(out: Path, p: Preset, res: list[ClaimResult], runs: dict[str, Run]) -> Path:
    """The preset's page (`<preset>.html`): claims, summary figure, every run animated."""
    path = out / f"{p.name}.html"
    _write(path, p.title, preset_body(p, res, runs))
    return path


def _write(path: Path, title: str, body: str) -> None:
    path.write_text(
        PAGE.format(title=html.escape(title), css=CSS, plotly=PLOTLY_JS, js=JS, body=body)
    )


def _figure(
    fig: go.Figure | dict[str, Any], div_id: str, height: int | None = None, static: bool = False
) -> str:
    """A figure drawn when it scrolls into view (`site.js`): a preset page holds a
    dozen animated grids, and drawing them all at load took seconds per grid. An animation
    comes as plain JSON (`animation_json`: its frames are not validated again)."""
    import plotly.io

    fig = fig if isinstance(fig, dict) else fig.to_plotly_json()
    if height is not None:
        fig = {**fig, "layout": {**fig.get("layout", {}), "height": height}}
    with stdlib_json():
        data = plotly.io.to_json(fig, validate=False).replace("</", "<\\/")
    flag = ' data-static="1"' if static else ""
    return (
        f'<div class="plot" id="{div_id}"{flag} '
        f'style="min-height:{fig["layout"].get("height") or 450}px"></div>'
        f'<script type="application/json" id="{div_id}-figure">{data}</script>'
    )


def panel_captions_html(run: Run) -> str:
    """What each panel of a run's animation (its best seed) shows, under the figure: the
    explorer's captions, written for this run by the same function as the export's
    (`tempsup.figures.animation.panel_captions_html`, the panel registry's), each
    headline visible and its explanation under a "Why?" disclosure."""
    from tempsup.figures.animation import panel_captions_html as captions_html

    return captions_html(run, level=3)


def claims_html(results: list[ClaimResult]) -> str:
    """Each claim: the verdict, the seeds that agree, the numbers and the criterion."""
    rows = []
    for r in results:
        mark = "✓ held" if r.held else "✗ did not hold"
        rows.append(
            f'<li class="{"held" if r.held else "not-held"}"><strong>{mark}</strong> — '
            f"{html.escape(r.claim)} ({html.escape(r.count_text)})"
            f"<br><small>measured: {html.escape(r.statement)}</small>"
            f"<details><summary>numbers</summary><pre>{html.escape(format_measured(r.measured))}"
            f"</pre><small>{html.escape(r.criterion)}</small></details></li>"
        )
    return "<ul>" + "".join(rows) + "</ul>"


def index_body(results: list[tuple[Preset, list[ClaimResult]]], runs: dict[str, Run]) -> str:
    cards = []
    for p, res in results:
        import plotly.graph_objects as go

        picture, notes = card_picture(p, runs)
        fig = _figure(go.Figure(picture), f"thumb-{p.name}", static=True)
        fig += "".join(f'<p class="caption">{html.escape(n)}</p>' for n in notes)
        cards.append(
            f'<article class="card" id="preset-{p.name}"><h2>{html.escape(p.title)}</h2>{fig}'
            f"<p>{html.escape(p.claim)}</p>{claims_html(res)}"
            f'<p><a href="{p.name}.html">every run, animated →</a></p></article>'
        )
    return (
        "<p>Every claim of <em>Temporal superposition and feature geometry of RNNs under memory "
        "demands</em> (Sharma, Proca, Prieto, Mediano, ICLR 2026), measured on runs trained by "
        "tempsup. Each card shows the verdict, how many seeds agree and the numbers.</p>"
        f'<div class="cards">{"".join(cards)}</div>'
    )


def preset_body(p: Preset, res: list[ClaimResult], runs: dict[str, Run]) -> str:
    from tempsup.figures.animation import animation_json

    parts = [f"<p><em>{html.escape(p.claim)}</em></p>", "<h2>Claims</h2>", claims_html(res)]
    parts.append("<h2>Recipe</h2><ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in p.recipe))
    parts.append("</ul>")
    extra = p.summary_figure(runs)
    if extra is not None:
        parts.append("<h2>Summary</h2>" + _figure(extra, f"summary-{p.name}", 380))
    for i, (label, cfg) in enumerate(zip(p.labels, p.configs, strict=True)):
        run = runs[cfg.key]
        parts.append(
            f"<h2>{html.escape(label)}</h2><p>{html.escape(MODEL_NAMES[cfg.model])}, key "
            f"<code>{cfg.key}</code>, best seed {run.best} of {cfg.seeds} "
            f"({html.escape(run.best_seed.reason)}"
            + (f"; {html.escape(run.best_seed.tie_text)}" if run.best_seed.tied else "")
            + "), final loss "
            f"{float(run.final_loss[run.best]):.4g}. Press play or drag the slider.</p>"
        )
        parts.append(_figure(animation_json(run), f"run-{i}") + panel_captions_html(run))
    return "".join(parts)


# This site has no server, so it cannot count a class's predictions: it says where to.
POLL_NOTE = (
    '<p class="poll-note">Teaching a class? The class poll — students send their '
    "predictions from their phones with a code, and you see the class's counts live "
    "before you reveal each step — needs the app (<code>python -m app</code>, then "
    "<code>/lesson</code>).</p>"
)


def lesson_body(
    results: list[tuple[Preset, list[ClaimResult]]], runs: dict[str, Run], app_url: str | None
) -> str:
    from tempsup.figures.animation import animation_json, side_by_side

    by_name = {p.name: (p, res) for p, res in results}
    nav = " · ".join(
        f'<a href="#step-{i}">{i}. {html.escape(s.title)}</a>'
        for i, s in enumerate(lesson.STEPS, start=1)
    )
    sections = [f'<nav aria-label="lesson steps">{nav}</nav>', POLL_NOTE]
    for i, item in enumerate(lesson.STEPS, start=1):
        p, res = by_name[item.preset]
        cited = {n: [r.to_dict() for r in by_name[n][1]] for n in lesson.cited_presets(item)}
        choices, right = lesson.shown_choices(item)
        cfg = p.config(item.run)
        radios = "".join(
            f'<label style="display:block"><input type="radio" name="step-{i}" value="{j}"> '
            f"{html.escape(c)}</label>"
            for j, c in enumerate(choices)
        )
        query = query_string(cfg)
        if app_url:
            href = html.escape(app_url.rstrip("/") + "/" + query, quote=True)
            try_it = f'<a href="{href}">Try it yourself in the explorer</a>'
        else:
            try_it = (
                "Try it yourself: start tempsup and open the explorer at "
                f"<code>/{html.escape(query)}</code>."
            )
        nxt = f' · <a href="#step-{i + 1}">Next step →</a>' if i < len(lesson.STEPS) else ""
        narrow = side_by_side if len(item.shown) > 1 else dict
        figure = '<div class="lesson-runs">' + "".join(  # the runs its question compares
            f"<figure><figcaption>{html.escape(label)}</figcaption>"
            + _figure(narrow(animation_json(runs[key])), f"lesson-{i}-{j}")
            + "</figure>"
            for j, (label, key) in enumerate((lab, p.config(lab).key) for lab in item.shown)
        ) + "</div>"  # fmt: skip
        figure += panel_captions_html(runs[cfg.key])
        sections.append(
            f'<section class="step card" id="step-{i}" data-answer="{right}" '
            f'data-answer-text="{html.escape(choices[right], quote=True)}">'
            f"<h2>Step {i} of {len(lesson.STEPS)}: {html.escape(item.title)}</h2>"
            f"<fieldset><legend>{html.escape(item.question)}</legend>"
            f"<p>Predict first, then reveal.</p>{radios}</fieldset>"
            f'<p><button class="reveal" type="button">Reveal</button></p>'
            f'<p class="verdict" aria-live="polite"></p>'
            f'<div class="answer" hidden><p>'
            f"{html.escape(lesson.explanation(item, [r.to_dict() for r in res], cited))}</p>"
            f"{figure}<p>{try_it}{nxt}</p></div></section>"
        )
    return "".join(sections) + REVEAL_JS


def report_body(markdown_text: str) -> str:
    """The report's Markdown as HTML (tables included), with a link to the source."""
    import markdown

    body = markdown.markdown(markdown_text, extensions=["tables", "fenced_code"])
    return '<p><a href="report.md">report.md</a></p>' + body.split("</h1>", 1)[-1]


__all__ = ["build", "collect_runs", "write_assets", "write_preset"]
