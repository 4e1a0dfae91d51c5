"""How a web process collects its garbage: the start-up heap left alone, young objects
collected in larger batches.

A poll allocates thousands of short-lived containers (traces, patches, request objects),
so CPython's default thresholds (700, 10, 10) run a young collection every few
requests and, every hundred or so, a full one. A full collection walks every tracked
object: the ~120,000 that importing Dash, Plotly and the app leave behind, and the
frames and views the caches of `app.streams`, `app.view` and `app.answers` hold. In the
classroom benchmark (60 viewers of one stream and 10 trainers, 60 s, both web
processes) collections took 2.7 s of the web's 24.6 s of CPU, 2.2 s of it in 23 full
collections of about 0.1 s each, every one of which held the GIL while it ran.

`settle()` moves what start-up made into the permanent generation (`gc.freeze`: never
walked again) and raises the thresholds, so a process collects young cycles every
YOUNG allocations and rarely walks the old ones. Measured in the same class: 0.25 s in
21 collections, none full, and 22.5 s of web CPU; each process's peak memory was 172 to
174 MB against 178 to 181 MB with the defaults (what a poll leaves is freed by
reference counting; the cycles a request makes are young and collected as before).
"""

from __future__ import annotations

import gc

YOUNG = 20_000  # allocations between young collections (CPython's default: 700)
MIDDLE = 50  # young collections between middle ones (default 10)
OLD = 100  # middle collections between full ones (default 10; CPython also waits until
# the objects that survived since the last full one are a quarter of those it walked)


def settle() -> None:
    """Call once the app is imported, before serving (a web process's start-up)."""
    gc.collect()  # what importing left as garbage is freed, not frozen
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, OLD)


__all__ = ["MIDDLE", "OLD", "YOUNG", "settle"]
