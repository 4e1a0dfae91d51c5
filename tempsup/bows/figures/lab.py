"""The correlations lab's four panels, in display order, behind the panel protocol
(`tempsup.figures.panel`, the same front-end as the RNN explorer's): the lab's one
registry of them (`PANEL_SET`: each panel's name, module and place in the animation),
and the line of numbers under the lab's player."""

from __future__ import annotations

from tempsup.bows.figures import columns, loss, matrices, r2
from tempsup.bows.figures._common import select
from tempsup.bows.run import BowsRun
from tempsup.figures.panel import PanelEntry, PanelSet, frame_index

# the summary's measures the line shows, with their words
MEASURES = (("pca_overlap", "PCA overlap"), ("paired_fraction", "antipodal pairs"))


def status_lines(
    run: BowsRun, seed: int | None = None, feature: int = 0, start: int = 0
) -> list[str]:
    """The line under the player for frames start … F-1: seed, loss and the claims'
    measures of that frame."""
    sel = select(run, seed, feature)
    return [_line(run, sel.seed, f) for f in range(frame_index(run, start), run.n_frames)]


def _line(run: BowsRun, seed: int, frame: int) -> str:
    s = run.summary(seed, frame)
    parts = [f"seed {seed}", f"loss {float(s.get('loss', float('nan'))):.4g}"]
    for name, label in MEASURES:
        if isinstance(s.get(name), (int, float)):
            parts.append(f"{label} {float(s[name]):.2f}")
    return " · ".join(parts)


# The registry of the lab's panels: each one's module and its box (x0, x1, y0, y1) in paper
# coordinates of the lab's animation (`tempsup.bows.figures.animation`, laid out by hand).
PANEL_SET = PanelSet(
    (
        PanelEntry("matrices", matrices, cell=(0.0, 0.9, 0.69, 1.0)),
        PanelEntry("columns", columns, cell=(0.0, 0.4, 0.3, 0.6)),
        PanelEntry("r2", r2, cell=(0.52, 1.0, 0.3, 0.6)),
        PanelEntry("loss", loss, cell=(0.0, 1.0, 0.0, 0.2)),
    ),
    select=select,
    status_lines=status_lines,
)
PANELS = PANEL_SET.names
