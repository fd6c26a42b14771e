"""The notebooks in examples/notebooks/: committed without outputs, and they run."""

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "examples" / "notebooks").glob("*.ipynb"))


def test_there_is_a_notebook():
    assert NOTEBOOKS, "examples/notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_committed_notebook_has_no_outputs(path):
    """Outputs are stripped before committing (they would go stale, and bloat the diffs)."""
    notebook = json.loads(path.read_text())
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert cell.get("outputs") == [], f"{path.name}: cell {index} has outputs"
        assert cell.get("execution_count") is None, (
            f"{path.name}: cell {index} has an execution count")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # A kernel of this very interpreter (a "python3" kernelspec may name another python on
    # PATH), importing the package of this checkout; its plots go through the kernel's inline
    # backend, as in Jupyter.
    # One BLAS thread: small diffprivlib fits run several times slower with more on few cores.
    kernel_dir = tmp_path / "kernels" / "skdptune-tests"
    kernel_dir.mkdir(parents=True)
    (kernel_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "skdptune tests",
        "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.delenv("MPLBACKEND", raising=False)
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "1")

    notebook = nbformat.read(path, as_version=4)
    # No timeout: a cell's time depends on the machine and its load, and a test must not
    # fail for being slow (issue 33); a hung kernel is CI's job timeout's to catch.
    client = nbclient.NotebookClient(
        notebook, timeout=None, kernel_name="skdptune-tests",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error
    # The walkthrough ends by evaluating the released model on the test split.
    outputs = [output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs if output.get("output_type") == "stream"]
    assert any("held-out accuracy" in text for text in outputs)
    images = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.outputs if "image/png" in output.get("data", {})]
    assert len(images) >= 2  # the privacy budget and the selection trace
