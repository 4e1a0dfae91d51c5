"""Keep the memory a training step frees for the next step, instead of giving it back.

Every optimizer step allocates the same large tensors again (the time loop's
hidden states and adjoints, the Toeplitz inputs and the readout's activations:
megabytes each) and frees them at its end. glibc's malloc serves blocks above
its mmap threshold (128 kB until its dynamic rule raises it) with fresh `mmap`
pages and trims freed memory at the top of the heap back to the kernel, so the
next step's first write to each page is a page fault and a page of zeros.
Measured on the ReLU RNN of `benchmarks/bench_train.py` (64 models, batch
1024, one thread): 54 ms a step with the defaults, 18 ms with both thresholds
raised; the numbers themselves do not change, only where the bytes live.

`keep_freed_memory` raises both thresholds once per process through
`mallopt`. Elsewhere than glibc (macOS, musl, Windows) it does nothing. The
price is that a process keeps up to `limit` bytes of freed heap mapped, which
a training worker would reuse at its next step or job anyway.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# glibc's <malloc.h>
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Blocks up to this size come from the heap and stay mapped when freed: above the
# largest per-step tensor of any run the config limits admit in practice (MAX_ACTIVATIONS
# floats are 1 GB, but a default run's largest tensor is under 10 MB).
DEFAULT_LIMIT = 256 * 2**20


def keep_freed_memory(limit: int = DEFAULT_LIMIT) -> bool:
    """Serve blocks below `limit` bytes from the heap and keep up to `limit` freed bytes.

    Returns whether the allocator took the setting (glibc only). Idempotent;
    cheap enough to call at the start of every training run.
    """
    if not sys.platform.startswith("linux"):
        return False
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    ok_mmap = libc.mallopt(_M_MMAP_THRESHOLD, ctypes.c_int(limit))
    ok_trim = libc.mallopt(_M_TRIM_THRESHOLD, ctypes.c_int(limit))
    return bool(ok_mmap and ok_trim)


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None or "musl" in name:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None
