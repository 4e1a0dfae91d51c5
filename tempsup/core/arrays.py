"""Input checks of the numeric API (`tempsup.theory.geometry`, `tempsup.theory.closed_form`),
once for both.

Both modules take array-likes with any leading (snapshot, seed, …) axes and
plain integers (k, n, T) from callers outside tempsup as well as inside, so
they validate at the boundary; these are the checks they share. Each error
says what was expected and what was received (a TempsupError, like every
error a user can cause). Unlike a config's fields (`tempsup.core.specs`), counts
here may be numpy integers: they often come out of arrays.
"""

from __future__ import annotations

import numpy as np

from tempsup.errors import TempsupError


def as_float(name: str, x: object, min_ndim: int) -> np.ndarray:
    """`x` as a float array with at least `min_ndim` dimensions."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TempsupError(f"{name}: expected a numeric array, got {type(x).__name__}") from None
    if arr.ndim < min_ndim:
        raise TempsupError(
            f"{name}: expected at least {min_ndim} dimension(s), got shape {arr.shape}"
        )
    return arr


def check_count(name: str, value: object, lo: int, hint: str = "") -> None:
    """An integer (Python or numpy, not a bool) of at least `lo`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        extra = f" ({hint})" if hint else ""
        raise TempsupError(f"{name}: expected an integer >= {lo}, got {value!r}{extra}")
