"""Every notebook runs from top to bottom on a small slice, as CI's parameter asks."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
SMOKE_VARIABLE = "KERASFORMER_NOTEBOOK_SMOKE"


def test_the_five_notebooks_are_there():
    assert [path.name[:3] for path in NOTEBOOKS] == ["01_", "02_", "03_", "04_", "05_"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_committed_without_outputs_and_reads_the_smoke_parameter(path):
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.outputs and cell.execution_count is None for cell in code)
    parameters = [cell for cell in code if "parameters" in cell.metadata.get("tags", [])]
    assert len(parameters) == 1 and SMOKE_VARIABLE in parameters[0].source


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_on_a_small_slice(path, monkeypatch, tmp_path):
    """Slow (15 s to a minute each): a fresh kernel runs every cell, training included."""
    monkeypatch.setenv(SMOKE_VARIABLE, "1")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    notebook = nbformat.read(path, as_version=4)
    # Raises CellExecutionError, with the failing cell and its traceback, if any cell fails.
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": path.parent}}
    ).execute()
    errors = [
        output
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors
