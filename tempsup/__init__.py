"""tempsup: explore temporal superposition in recurrent networks (Sharma et al., ICLR 2026).

The Python API (README, "Python API"), named as the command line names things:

    config = tempsup.RunConfig(model="ssm", sparsity=0.9)
    run = tempsup.train(config)            # every seed, with a progress bar
    run.summary()                          # what `tempsup inspect --json` prints
    run.figure("eigen"); run.animation()   # Plotly figures, inline in Jupyter
    run.save("run.npz"); tempsup.load("run.npz"); run.export_html("run.html")
    tempsup.sweep(config, sparsity=[0.3, 0.9])
    tempsup.from_weights(W_x, W_h, W_y, model="rnn", k=3)   # your own weights
    tempsup.from_torch(rnn, readout, k=3)                   # your torch.nn.RNN
    tempsup.bows.train(tempsup.bows.BowsConfig(m=4))        # the correlations lab

The names are loaded on first use, so `import tempsup` stays light (torch is
imported only when something trains). `__all__` is the public surface; every
other module is internal and may change.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "RunConfig": "tempsup.model.config",
    "Run": "tempsup.io.run",
    "train": "tempsup.api",
    "sweep": "tempsup.api",
    "load": "tempsup.api",
    "from_weights": "tempsup.io.imported",
    "from_torch": "tempsup.io.imported",
    "TempsupError": "tempsup.errors",
}
_SUBPACKAGES = ("bows",)

__all__ = [
    "Run",
    "RunConfig",
    "TempsupError",
    "__version__",
    "bows",
    "from_torch",
    "from_weights",
    "load",
    "sweep",
    "train",
]

if TYPE_CHECKING:
    from tempsup import bows
    from tempsup.api import load, sweep, train
    from tempsup.errors import TempsupError
    from tempsup.io.imported import from_torch, from_weights
    from tempsup.io.run import Run
    from tempsup.model.config import RunConfig


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'tempsup' has no attribute {name!r}")
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
