"""Words alone need no TensorFlow: help pages and refusals of bad arguments import no Keras.

Each command line runs, as the console script runs it, in a fresh interpreter; after
each, the modules it imported are read from ``sys.modules``. What a command costs to
start is timed in ``bench/command_start.py``, not here.
"""

from __future__ import annotations

import pytest

from kerasformer.cli.main import COMMANDS
from tests.helpers.processes import run_each_recording_imports

HEAVY = ("tensorflow", "keras", "tf_keras")


def run_each(command_lines: list[list[str]]) -> list[dict]:
    return run_each_recording_imports(command_lines, HEAVY)


def test_every_help_page_imports_no_tensorflow_or_keras():
    pages = [["--help"], *([command.name, "--help"] for command in COMMANDS)]
    results = run_each(pages)
    assert [result["argv"] for result in results] == pages
    for result in results:
        assert result["code"] == 0, result
        assert result["heavy"] == [], f"{result['argv']} imported {result['heavy']}"


@pytest.fixture
def not_an_export(tmp_path):
    directory = tmp_path / "not-an-export"
    directory.mkdir()
    (directory / "notes.txt").write_text("no model here\n")
    return str(directory)


def refusals(missing: str, not_an_export: str) -> list[tuple[list[str], str]]:
    """Command lines refused before any model or data file is read, each with a phrase
    of its one-line refusal."""
    return [
        (["train", "--epochs", "-1"], "--epochs"),
        (["train", "--model", "nope"], "invalid choice"),
        (["train", "--task", "nope"], "invalid choice"),
        (["train", "--learning-rate", "zero"], "--learning-rate"),
        (["train", "--train-file", missing], f"--train-file {missing} does not exist"),
        (["train", "--task", "translation", "--train-file", missing, "--test-file", missing],
         "does not exist"),
        (["train", "--config", missing], "is not a file"),
        (["distill", "--teacher", missing], "is not an exported model"),
        (["distill", "--teacher", not_an_export], "is not an exported model"),
        (["evaluate", not_an_export, "--test-file", missing], "--test-file"),
        (["evaluate", missing, "--dataset", "bbc_news"], "is not an exported model"),
        (["predict", missing, "hello"], "is not an exported model"),
        (["predict", not_an_export, "hello"], "is not an exported model"),
        (["predict", not_an_export], "nothing to read"),
        (["tag", not_an_export, "hello"], "is not an exported tagger"),
        (["translate", missing, "hello"], "is not a directory"),
        (["translate", not_an_export, "hello"], "kerasformer train"),
        (["generate", not_an_export, "Once"], "kerasformer train"),
        (["generate", not_an_export, "Once", "--top-p", "2"], "--top-p"),
        (["answer", not_an_export, "--question", "Who?", "--context", "Ann."], "kerasformer train"),
        (["attention", not_an_export, "hello"], "kerasformer train"),
        (["export-litert", not_an_export], "--out"),
        (["export-litert", not_an_export, "--out", "model.tflite"], "kerasformer train"),
        (["convert-bert", missing, "--out", "bert"], "is not a directory"),
    ]  # fmt: skip


def test_refusals_of_bad_arguments_import_no_tensorflow_or_keras(tmp_path, not_an_export):
    cases = refusals(str(tmp_path / "missing"), not_an_export)
    results = run_each([argv for argv, _ in cases])
    for (argv, phrase), result in zip(cases, results, strict=True):
        assert result["code"] == 2, result
        assert result["stderr"].count("\n") == 1 and phrase in result["stderr"], result
        assert result["heavy"] == [], f"{argv} imported {result['heavy']}"
