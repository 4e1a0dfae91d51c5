"""The example notebooks run, cell by cell, in a Jupyter kernel of this environment.

`examples/*.ipynb` is kept without outputs; here each is executed by nbclient in a
kernel started from this interpreter (its own kernel spec in a temporary Jupyter
path, so no kernel installed elsewhere is picked up), and a cell that errors fails
the test. The API notebook's outputs are checked for what a reader is promised:
figures, the numbers table, and a progress bar drawn as a notebook widget rather
than terminal control codes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.ipynb"))
KERNEL = "tempsup-tests"
WIDGET = "application/vnd.jupyter.widget-view+json"
PLOTLY = "application/vnd.plotly.v1+json"

pytestmark = pytest.mark.slow


def test_examples_are_stored_without_outputs() -> None:
    import nbformat

    assert EXAMPLES, "no example notebook in examples/"
    for path in EXAMPLES:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """A Jupyter path holding one kernel spec: this interpreter, one torch thread."""
    jupyter = tmp_path_factory.mktemp("jupyter")
    spec = jupyter / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "tempsup tests", "language": "python"})
    )
    return {"JUPYTER_PATH": str(jupyter), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def execute(path: Path, cwd: Path, env: dict[str, str]):
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    old = dict(os.environ)
    os.environ.update(env)  # the kernel process inherits it; put back below
    try:
        client = nbclient.NotebookClient(
            nb, kernel_name=KERNEL, timeout=900, resources={"metadata": {"path": str(cwd)}}
        )
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    return nb


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_notebook_runs(path: Path, kernel_env, tmp_path: Path) -> None:
    nb = execute(path, tmp_path, kernel_env)  # a cell that raises fails here, naming it
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    if path.name != "python_api.ipynb":
        return
    figures = [o for o in outputs if PLOTLY in o.get("data", {})]
    assert len(figures) >= 3, "two animations and the loss panel"
    animations = [f for f in figures if f["data"][PLOTLY].get("frames")]
    assert len(animations) == 2
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "dense S = 0.3" in text and "sparse S = 0.9" in text
    assert any(WIDGET in o.get("data", {}) for o in outputs), "progress is a notebook widget"
    assert "\r" not in text and "\x1b" not in text, "no terminal control codes"
    assert (tmp_path / "sparse.npz").exists() and (tmp_path / "sparse.html").exists()
