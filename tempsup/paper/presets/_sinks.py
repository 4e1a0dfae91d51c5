"""Spiral sinks of several runs side by side, for the claims that compare them.

linear-any-sparsity compares the linear RNN's best seeds across sparsity and
relu-rnn-dense the dense ReLU RNN's best seed with the linear RNN's: both read each run's
leading eigenvalue (`tempsup.analysis.measures.spiral`, gauge free) and its kernel
a_s = w_yᵀw_s over s ≤ 2k, the window on which two solutions' kernels are compared
(science.md §1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tempsup.analysis.measures import kernel, spiral
from tempsup.io.run import Run


@dataclass(frozen=True)
class Sinks:
    """The runs in `labels` order with their `spiral` numbers and kernels, computed once."""

    runs: dict[str, Run]
    labels: list[str]
    spirals: dict[str, dict[str, np.ndarray]]  # per run: lam, abs, arg, sink, each (M,)
    kernels: dict[str, np.ndarray]  # per run: a_s per seed, (M, T)

    @classmethod
    def of(cls, runs: dict[str, Run], labels: Sequence[str]) -> Sinks:
        labels = list(labels)
        spirals = {lab: spiral(runs[lab]) for lab in labels}
        return cls(runs, labels, spirals, {lab: kernel(runs[lab]) for lab in labels})

    @property
    def k(self) -> int:
        """The task's k, the same in every run compared (the first run's)."""
        return self.runs[self.labels[0]].config.k

    def at_best(self, name: str) -> np.ndarray:
        """(L,) the `spiral` number `name` of each run's best seed, in `labels` order."""
        return np.array([self.spirals[lab][name][self.runs[lab].best] for lab in self.labels])

    def window(self) -> np.ndarray:
        """(L, 2k + 1) each run's best-seed a_0 … a_2k: where two solutions' kernels are
        compared (beyond 2k both have died away)."""
        n = 2 * self.k + 1
        return np.array([self.kernels[lab][self.runs[lab].best, :n] for lab in self.labels])
