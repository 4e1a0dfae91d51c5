"""Progress of a training loop, for people watching: a bar that fits where it is drawn.

`tqdm.auto` draws a widget in a Jupyter notebook and a one-line text bar in a
terminal, so the command line and the Python API share one bar and a notebook
never receives terminal control codes. The bar is fed the training loop's
`on_step(step)` callback.
"""

from __future__ import annotations

from typing import Any


class StepBar:
    """`on_step` for a training loop of `total` steps: moves a bar labelled `label`
    (nothing at all when not `enabled`). Close it, or use it as a context manager."""

    def __init__(self, total: int, label: str, enabled: bool = True) -> None:
        self.total, self.step = int(total), 0
        self._bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=label, unit="step", leave=True)

    def __call__(self, step: int) -> None:
        step = min(int(step), self.total)
        if self._bar is not None and step > self.step:
            self._bar.update(step - self.step)
        self.step = max(self.step, step)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> StepBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
