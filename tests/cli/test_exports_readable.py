"""Every export that training writes is readable by every command, and a damaged one
is named in one line.

Each command runs in a fresh interpreter, as a user's would: there, nothing has imported
tensorflow_text or kerasformer's layers before the command does. One driver process
runs several commands in turn to pay TensorFlow's start-up once (`run_commands`).
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from kerasformer.backend import keras
from kerasformer.datasets import load_dataset
from kerasformer.export import export_classifier
from kerasformer.models import build_bert_classifier, build_classifier
from tests.helpers.processes import run_commands

REEXPORT = "re-export the model with `kerasformer train`."
TEXTS = ["team goal striker", "bank shares profit"]


def fit_one_epoch(model: keras.Model, data) -> keras.Model:
    train = data.split("train")
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(train.texts, train.labels, batch_size=32, epochs=1, verbose=0)
    return model


@pytest.fixture(scope="module")
def ag_news(tiny_ag_news_dir):
    return load_dataset("ag_news", tiny_ag_news_dir)


# --- BERT exports: predict and evaluate ---------------------------------------------


@pytest.fixture(scope="module")
def bert_commands(tiny_hub_bert, tiny_ag_news_dir, ag_news, tmp_path_factory):
    """A BERT export, its Keras model, and what predict and evaluate made of it."""
    model = build_bert_classifier(4, tiny_hub_bert.preprocess, tiny_hub_bert.encoder)
    fit_one_epoch(model, ag_news)
    root = tmp_path_factory.mktemp("bert_export")
    export_dir = export_classifier(model, ag_news.class_names, root / "bert")
    predicted, evaluated = run_commands(
        ["predict", export_dir, "--json", *TEXTS],
        ["evaluate", export_dir, "--dataset", "ag_news", "--data-dir", tiny_ag_news_dir,
         "--output", root / "metrics.json", "--confusion-matrix", root / "confusion.png"],
    )  # fmt: skip
    return model, root, predicted, evaluated


@pytest.mark.slow
def test_predict_serves_a_bert_export(bert_commands, ag_news):
    model, _, predicted, _ = bert_commands
    assert predicted["code"] == 0, predicted["stderr"][-3000:]
    rows = [json.loads(line) for line in predicted["stdout"].splitlines()]
    served = np.array(
        [[row["probabilities"][name] for name in ag_news.class_names] for row in rows]
    )
    expected = model.predict(np.array(TEXTS), verbose=0)
    np.testing.assert_allclose(served, expected, atol=1e-4)  # predict prints 4 decimals


@pytest.mark.slow
def test_evaluate_measures_a_bert_export(bert_commands, ag_news):
    model, root, _, evaluated = bert_commands
    assert evaluated["code"] == 0, evaluated["stderr"][-3000:]
    test = ag_news.split("test")
    predictions = model.predict(test.texts, verbose=0).argmax(axis=1)
    metrics = json.loads((root / "metrics.json").read_text())
    assert metrics["accuracy"] == pytest.approx(np.mean(predictions == test.labels))


# --- damaged exports: one line naming the broken file --------------------------------


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def empty(path: Path) -> None:
    path.write_bytes(b"")


def drop_last_line(path: Path) -> None:
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))


DATA_SHARD = "variables/variables.data-00000-of-00001"
CLASS_NAMES = "assets/class_names.txt"
# case: (what breaks the export, which file, the command that reads it)
DAMAGES = {
    "saved_model.pb truncated": (truncate, "saved_model.pb", "predict"),
    "saved_model.pb empty": (empty, "saved_model.pb", "predict"),
    "variables.index truncated": (truncate, "variables/variables.index", "predict"),
    "variables.index missing": (Path.unlink, "variables/variables.index", "predict"),
    "variables data truncated": (truncate, DATA_SHARD, "predict"),
    "variables data missing": (Path.unlink, DATA_SHARD, "predict"),
    "class_names.txt missing": (Path.unlink, CLASS_NAMES, "predict"),
    "class_names.txt one line short": (drop_last_line, CLASS_NAMES, "predict"),
    "model.keras truncated": (truncate, "model.keras", "attention"),
}


@pytest.fixture(scope="module")
def damaged_commands(ag_news, tmp_path_factory):
    """The from-scratch export, damaged one way per case, and what each command said."""
    model = build_classifier(
        "transformer", 4, ag_news.split("train").texts, vocab_size=200, maxlen=32, embed_dim=8
    )
    fit_one_epoch(model, ag_news)
    root = tmp_path_factory.mktemp("damaged_exports")
    good = export_classifier(model, ag_news.class_names, root / "good")
    commands, broken_files = [], {}
    for number, (case, (damage, relative, command)) in enumerate(DAMAGES.items()):
        export_dir = root / f"case{number}"
        shutil.copytree(good, export_dir)
        damage(export_dir / relative)
        broken_files[case] = export_dir / relative
        commands.append([command, export_dir, "team goal"])
    return dict(zip(DAMAGES, run_commands(*commands), strict=True)), broken_files


@pytest.mark.parametrize("case", DAMAGES)
def test_a_damaged_export_is_one_line_naming_the_file(damaged_commands, case):
    results, broken_files = damaged_commands
    result = results[case]
    assert result["code"] == 2 and result["stdout"] == "", result["stderr"][-3000:]
    assert result["stderr"].count("\n") == 1, result["stderr"][-3000:]
    assert result["stderr"].startswith(f"kerasformer: error: {broken_files[case]} ")
    assert result["stderr"].rstrip("\n").endswith(REEXPORT)
