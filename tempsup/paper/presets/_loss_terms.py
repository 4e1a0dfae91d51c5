"""The four loss terms against the measured loss, as the presets that judge them say it.

spiral-sink checks the linear RNN, whose four terms are its exact expected loss;
four-terms checks every model where second order in p suffices (science.md §1c). Both
read the losses late in training, over the same frames, and say the terms in the same
words, so the two cards cannot drift apart.
"""

from __future__ import annotations

from tempsup.analysis.measures import TERM_KEYS
from tempsup.io.run import Run
from tempsup.paper.preset import fixed


def late(run: Run) -> slice:
    """The last quarter of a run's frames (at least the last one): a frame's measured loss
    is one minibatch, so a claim averages it over these before comparing."""
    n = run.n_frames
    return slice(n - max(1, n // 4), None)


def terms_sentence(terms: dict[str, float], total: float, measured: float) -> str:
    """The four terms, their `total` and the `measured` loss: "task … + mean correction … +
    projection … + composition … = … against a measured …"."""
    parts = " + ".join(f"{key.replace('_', ' ')} {fixed(terms[key], 4)}" for key in TERM_KEYS)
    return f"{parts} = {fixed(total, 4)} against a measured {fixed(measured, 4)}"
