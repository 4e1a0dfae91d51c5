"""Compile the fused time loop (rnn_loop.c) once per user and machine, and load it.

The library is built with the system's C compiler (`$CC`, else `cc`) into a
per-user cache directory (`$XDG_CACHE_HOME/tempsup`, else `~/.cache/tempsup`),
under a name that hashes the source, the flags and the machine, so a changed
source or another CPU architecture builds its own copy and an old one is never
loaded. Concurrent processes (two training workers starting at once) may both
compile: each writes a private file and renames it into place, so neither
reads a half-written library.

Flags: `-O2 -march=native`, the vectorizer's dynamic cost model and loop
unswitching (the ReLU and bias switches leave the inner loops). Tuning to
the CPU is safe because the library is built on the machine that runs it (never
shipped), and the cache name hashes the CPU's model and feature flags: a cache
directory shared by machines (a home directory on a network drive) holds one
copy per CPU, so no process loads code its CPU lacks instructions for. Measured
(N_h = 2, M = 8, batch 512, loss and gradients): plain `-O2` 1.5 ms, `-O2
-march=native` 0.56 ms, with the dynamic cost model 0.38 ms; at M = 64, batch
1024: 7.1 ms, unswitched 4.0 ms. `-fno-trapping-math` (nothing here reads the
floating-point exception flags; every result is the same) lets gcc vectorize the
readout's masked error, whose select it otherwise keeps as a branch: the forward
pass took 29 instructions a sample and step (callgrind), 15 with it. `-O3`
compiles 8x longer (17 s, which the first training step of a fresh install would
wait) and its backward pass is slower.
Compilers that reject a flag (not gcc or clang) fail the build: PyTorch's loop.

Where there is no compiler, or the build fails, `load` returns None and the
caller keeps PyTorch's time loop; `TEMPSUP_FUSED=0` asks for that path.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCES = ("rnn_loop.c", "rnn_loop.h", "gated_loop.h")
FLAGS = (
    "-O2",
    "-march=native",
    "-fvect-cost-model=dynamic",
    "-funswitch-loops",
    "-fno-trapping-math",
    "-std=c99",
    "-shared",
    "-fPIC",
    "-fvisibility=hidden",
)
# a compile that takes longer is stuck (it takes seconds)
TIMEOUT = 300


class BuildError(Exception):
    """The library could not be built or loaded; the message says why, in one line."""


def cache_dir() -> Path:
    """Where built libraries are kept: per user, outside the package (which may be read-only)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "tempsup"


def compiler() -> list[str]:
    """The C compiler's command: `$CC` (it may carry flags), else `cc`."""
    cc = os.environ.get("CC", "").strip()
    return shlex.split(cc) if cc else ["cc"]


def cpu_identity() -> str:
    """The CPU's model and feature flags (Linux), else its platform name: part of the cache key."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor()
    keep = [ln for ln in text.splitlines() if ln.startswith(("model name", "flags", "Features"))]
    return "\n".join(sorted(set(keep))) or platform.processor()


def library_path() -> Path:
    """The built library's path for this source, these flags, this compiler and machine."""
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for name in SOURCES:
        digest.update((here / name).read_bytes())
    for part in (*FLAGS, *compiler(), platform.system(), platform.machine(), cpu_identity()):
        digest.update(part.encode() + b"\0")
    suffix = ".dll" if platform.system() == "Windows" else ".so"
    return cache_dir() / f"rnn_loop-{digest.hexdigest()[:16]}{suffix}"


def build(path: Path) -> None:
    """Compile the sources into `path`, atomically; BuildError on any failure."""
    cmd = compiler()
    if shutil.which(cmd[0]) is None:
        raise BuildError(f"no C compiler found ({cmd[0]!r} is not on PATH; set CC to use another)")
    here = Path(__file__).resolve().parent
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp", dir=path.parent)
        os.close(fd)
    except OSError as exc:
        raise BuildError(f"cannot write to the cache directory: {exc}") from None
    try:
        done = subprocess.run(
            [*cmd, *FLAGS, "-o", tmp, str(here / "rnn_loop.c")],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise BuildError(f"{cmd[0]} failed (exit {done.returncode}): {last}")
        os.replace(tmp, path)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"{cmd[0]} could not run: {exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load() -> ctypes.CDLL:
    """The library, built first if this machine has no copy yet; BuildError if it cannot be."""
    path = library_path()
    if not path.is_file():
        build(path)
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise BuildError(f"cannot load {path.name}: {exc}") from None
    for suffix in ("f32", "f64"):
        fn = getattr(lib, f"tempsup_rnn_loss_{suffix}")
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p] * 13
    lib.tempsup_gated_loss_f32.restype = ctypes.c_int
    lib.tempsup_gated_loss_f32.argtypes = [ctypes.c_void_p] * 17
    return lib
