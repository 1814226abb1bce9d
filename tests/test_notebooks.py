"""Every notebook runs from top to bottom on a small slice, as CI's parameter asks."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
SMOKE_VARIABLE = "KERASFORMER_NOTEBOOK_SMOKE"


def test_the_seven_notebooks_are_there():
    assert [path.name[:3] for path in NOTEBOOKS] == [f"{n:02}_" for n in range(1, 8)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_committed_without_outputs_and_reads_the_smoke_parameter(path):
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.outputs and cell.execution_count is None for cell in code)
    parameters = [cell for cell in code if "parameters" in cell.metadata.get("tags", [])]
    assert len(parameters) == 1 and SMOKE_VARIABLE in parameters[0].source


def given_parameters(notebook, parameters: dict) -> None:
    """Set ``parameters`` in a cell after the notebook's "parameters" cell, as papermill
    does."""
    cells = notebook.cells
    at = next(i for i, cell in enumerate(cells) if "parameters" in cell.metadata.get("tags", []))
    lines = [f"{name} = {value!r}" for name, value in parameters.items()]
    cells.insert(at + 1, nbformat.v4.new_code_cell("\n".join(lines)))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_on_a_small_slice(path, monkeypatch, tmp_path, request):
    """Slow (15 s to a minute each): a fresh kernel runs every cell, training included."""
    monkeypatch.setenv(SMOKE_VARIABLE, "1")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    notebook = nbformat.read(path, as_version=4)
    if path.stem == "02_bert_through_tf_hub":
        # Given no handles, it converts and fine-tunes the real MiniLM (a minute here);
        # every cell runs alike on the suite's tiny BERT, and `convert-bert` of MiniLM is
        # tested end to end by tests/cli/test_minilm_end_to_end.py.
        bert = request.getfixturevalue("tiny_hub_bert")
        given_parameters(
            notebook, {"PREPROCESS": str(bert.preprocess), "ENCODER": str(bert.encoder)}
        )
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
