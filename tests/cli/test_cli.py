import json
import shutil
import subprocess

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.cli._arguments import (
    DATASET_NAMES,
    DATASETS_BY_TASK,
    MODEL_NAMES,
    MODELS_BY_TASK,
)
from kerasformer.datasets import LOADERS
from kerasformer.export import ExportedClassifier, load_keras_model
from kerasformer.models import MODELS, attention_weights
from kerasformer.training.tasks import TASKS
from tests.helpers.cli import run_cli, run_cli_expecting_exit
from tests.helpers.pictures import assert_not_blank, read_png


def test_cli_names_match_the_registries():
    assert set(DATASETS_BY_TASK["classification"]) == set(LOADERS)
    assert set(MODELS_BY_TASK["classification"]) == set(MODELS)
    assert DATASETS_BY_TASK == {name: task.datasets for name, task in TASKS.items()}
    assert MODELS_BY_TASK == {name: task.models for name, task in TASKS.items()}
    assert set(DATASET_NAMES) == {name for task in TASKS.values() for name in task.datasets}
    assert set(MODEL_NAMES) == {name for task in TASKS.values() for name in task.models}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--epochs", "0"], "argument --epochs: expected a whole number >= 1, got 0"),
        (["train", "--dataset", "imdb"], "argument --dataset: invalid choice: 'imdb'"),
        (["train", "--dropout", "2"], "argument --dropout: expected a number in [0, 1), got 2.0"),
        (["distill"], "the following arguments are required: --teacher"),
        (["predict"], "the following arguments are required: MODEL"),
        (["fly"], "invalid choice: 'fly'"),
        (["train", "--input-pipeline", "fast"], "argument --input-pipeline: invalid choice"),
    ],
)
def test_bad_arguments_are_one_line(capsys, argv, message):
    code, out, err = run_cli_expecting_exit(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("command", ["predict", "translate", "generate", "answer"])
def test_a_command_given_no_input_says_how_to_give_one(capsys, tmp_path, command):
    code, out, err = run_cli(capsys, command, str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (
        "kerasformer: error: nothing to read: give the inputs as arguments, '-' for "
        "standard input, or --input-file FILE.\n"
    )


def test_missing_data_dir_is_one_line(capsys, tmp_path):
    code, _, err = run_cli(
        capsys, "train", "--dataset", "ag_news", "--data-dir", str(tmp_path / "nope"),
        "--export-dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 2
    assert err == (
        f"kerasformer: error: AG News folder {tmp_path / 'nope'} does not exist; pass "
        "--data-dir with train.csv and test.csv in the original AG News CSV layout.\n"
    )


def test_missing_model_is_one_line(capsys, tmp_path):
    code, _, err = run_cli(capsys, "predict", str(tmp_path), "hello")
    assert code == 2 and err.count("\n") == 1 and "is not an exported model" in err


@pytest.mark.slow
def test_train_then_evaluate_and_predict(capsys, tiny_ag_news_dir, tmp_path):
    export_dir = tmp_path / "ag"
    code, out, err = run_cli(
        capsys, "train", "--dataset", "ag_news", "--data-dir", str(tiny_ag_news_dir),
        "--epochs", "2", "--batch-size", "32", "--maxlen", "32", "--vocab-size", "500",
        "--embed-dim", "16", "--num-heads", "2", "--norm-first", "--position", "rotary",
        "--export-dir", str(export_dir),
    )  # fmt: skip
    assert code == 0, err
    metrics = json.loads((export_dir / "metrics.json").read_text())
    assert metrics["config"]["model_options"] == {
        "vocab_size": 500, "maxlen": 32, "embed_dim": 16, "num_heads": 2, "norm_first": True,
        "position": "rotary",
    }  # fmt: skip
    assert f"{metrics['test']['accuracy']:.4f}".rstrip("0") in out
    assert "Exported to" in out
    assert_not_blank(read_png(export_dir / "history.png"))

    code, out, err = run_cli(
        capsys, "evaluate", str(export_dir), "--dataset", "ag_news",
        "--data-dir", str(tiny_ag_news_dir), "--output", str(tmp_path / "eval.json"),
    )  # fmt: skip
    assert code == 0, err
    evaluated = json.loads((tmp_path / "eval.json").read_text())
    # The SavedModel path agrees with the Keras model's own test metrics.
    assert evaluated["accuracy"] == pytest.approx(metrics["test"]["accuracy"], abs=1e-9)
    assert evaluated["confusion_matrix"] == metrics["test"]["confusion_matrix"]
    assert "confusion matrix" in out and "Sci/Tech" in out
    default_picture = export_dir / "confusion_matrix-ag_news-test.png"
    assert f"Confusion matrix drawn in {default_picture}" in out
    assert_not_blank(read_png(default_picture))

    code, out, err = run_cli(
        capsys, "predict", str(export_dir), "--json", "team goal season", "bank shares"
    )
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["text"] for row in rows] == ["team goal season", "bank shares"]
    for row in rows:
        assert set(row["probabilities"]) == {"World", "Sports", "Business", "Sci/Tech"}
        assert row["class"] == max(row["probabilities"], key=row["probabilities"].get)
        assert sum(row["probabilities"].values()) == pytest.approx(1, abs=1e-3)


def test_evaluate_refuses_a_dataset_with_other_classes(capsys, trained_bbc, tiny_ag_news_dir):
    code, _, err = run_cli(
        capsys, "evaluate", str(trained_bbc.export_dir), "--dataset", "ag_news",
        "--data-dir", str(tiny_ag_news_dir),
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert "the model predicts business, entertainment" in err


def test_evaluate_on_bbc_prints_per_class_report(capsys, trained_bbc):
    code, out, _ = run_cli(capsys, "evaluate", str(trained_bbc.export_dir), "--dataset", "bbc_news")
    assert code == 0
    accuracy = trained_bbc.metrics["test"]["accuracy"]
    assert f"accuracy: {accuracy:.4f}" in out
    for name in trained_bbc.data.class_names:
        assert name in out


def test_evaluate_reads_your_own_test_file_with_class_names_as_labels(
    capsys, trained_bbc, tmp_path
):
    """BBC's test split written as your own CSV (labels by name, rows reversed) scores what
    training measured on it."""
    import csv

    test = trained_bbc.data.splits["test"]
    names = trained_bbc.data.class_names
    path = tmp_path / "mine.csv"
    with open(path, "w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["article", "section"])
        writer.writerows((text, names[label]) for text, label in reversed(list(zip(
            test.texts, test.labels, strict=True))))  # fmt: skip
    code, out, err = run_cli(
        capsys, "evaluate", str(trained_bbc.export_dir), "--test-file", str(path),
        "--text-column", "article", "--label-column", "section",
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith(f"mine ({len(test)} examples)\n")
    assert f"accuracy: {trained_bbc.metrics['test']['accuracy']:.4f}" in out
    (tmp_path / "odd.csv").write_text("article,section\nrain all day,weather\n", "utf-8")
    code, _, err = run_cli(
        capsys, "evaluate", str(trained_bbc.export_dir), "--test-file", str(tmp_path / "odd.csv"),
        "--text-column", "article", "--label-column", "section",
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert "odd.csv:2: label 'weather' is not in the classes of" in err
    code, _, err = run_cli(capsys, "evaluate", str(trained_bbc.export_dir))
    assert code == 2 and "--dataset NAME (with --split), or --test-file PATH" in err


def test_console_script_errors_have_no_traceback(trained_bbc, tmp_path):
    exe = shutil.which("kerasformer")
    assert exe, "pip install -e . puts the kerasformer command on PATH"
    empty = subprocess.run(
        [exe, "predict", str(trained_bbc.export_dir), "fine", "-"],
        input="",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert empty.returncode == 2
    # One line: no traceback, and none of TensorFlow's log lines either.
    assert empty.stderr.startswith(
        "kerasformer: error: '-' reads inputs from standard input, but it was empty"
    )
    assert empty.stderr.count("\n") == 1
    existing = subprocess.run(
        [exe, "train", "--export-dir", str(trained_bbc.export_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert existing.returncode == 2 and "already exists; pass --overwrite" in existing.stderr
    assert "Traceback" not in existing.stderr


def test_predict_reads_texts_from_stdin_one_record_per_line(capsys, monkeypatch, trained_bbc):
    import io

    lines = b"Shares rose sharply\n\nThe striker scored\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(lines)))
    code, out, err = run_cli(capsys, "predict", str(trained_bbc.export_dir), "--json", "-")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["text"] for r in records] == ["Shares rose sharply", "", "The striker scored"]
    assert [r["status"] for r in records] == ["ok", "warning", "ok"]
    assert [r["class"] for r in records[::2]] == ["business", "sports"]


@pytest.mark.slow
def test_convert_bert_then_train_bert_from_local_handles(
    capsys, tiny_bert_checkpoint, tiny_ag_news_dir, tmp_path
):
    """The README's BERT path from the command line: convert a checkpoint, train on it.

    Slow (about 40 s): the conversion and the BERT training are what is checked.
    """
    hub_dir = tmp_path / "hub"
    code, out, err = run_cli(
        capsys,
        "convert-bert",
        str(tiny_bert_checkpoint),
        "--out",
        str(hub_dir),
        "--seq-length",
        "24",
    )
    assert code == 0, err
    assert f"--preprocess {hub_dir / 'preprocess'} --encoder {hub_dir / 'encoder'}" in out
    code, out, err = run_cli(
        capsys, "train", "--model", "bert", "--recipe", "frozen-then-unfrozen",
        "--preprocess", str(hub_dir / "preprocess"), "--encoder", str(hub_dir / "encoder"),
        "--dataset", "ag_news", "--data-dir", str(tiny_ag_news_dir), "--epochs", "1",
        "--batch-size", "32", "--export-dir", str(tmp_path / "bert"),
    )  # fmt: skip
    assert code == 0, err
    assert "Phase 'frozen'" in out and "Phase 'unfrozen'" in out
    assert "Trainable params: 68" in out  # the head only, while frozen
    metrics = json.loads((tmp_path / "bert" / "metrics.json").read_text())
    assert metrics["config"]["recipe"] == "frozen-then-unfrozen"
    assert_not_blank(read_png(tmp_path / "bert" / "history.png"))
    texts = ["team goal season", "bank shares profit"]
    reloaded = load_keras_model(tmp_path / "bert")
    np.testing.assert_allclose(
        reloaded.predict(tf.constant(texts), verbose=0),
        ExportedClassifier(tmp_path / "bert").predict_proba(texts),
        atol=1e-5,
    )
    picture = tmp_path / "bert-attention.png"
    code, out, err = run_cli(
        capsys, "attention", str(tmp_path / "bert"), "team goal", "--out", str(picture)
    )
    assert code == 0, err
    assert "4 tokens: [CLS] team goal [SEP]" in out
    assert_not_blank(read_png(picture))


def test_options_of_the_other_model_are_refused(capsys):
    code, _, err = run_cli(capsys, "train", "--model", "bert", "--maxlen", "64")
    assert code == 2 and "--maxlen do(es) not apply to --model bert" in err
    code, _, err = run_cli(capsys, "train", "--label-smoothing", "0.1")
    assert code == 2 and err.count("\n") == 1
    assert "--label-smoothing do(es) not apply to --model transformer" in err
    code, _, err = run_cli(capsys, "train", "--task", "translation", "--tie-embeddings")
    assert code == 2 and err.count("\n") == 1
    assert "only subwords give; add --tokenizer sentencepiece" in err


def test_an_input_pipeline_the_task_cannot_use_is_refused(capsys):
    code, _, err = run_cli(capsys, "train", "--task", "translation", "--input-pipeline", "strings")
    assert code == 2 and err.count("\n") == 1
    assert "translation models always read token ids in length buckets" in err


def test_evaluate_draws_the_confusion_matrix_where_asked(capsys, trained_bbc, tmp_path):
    picture = tmp_path / "pictures" / "bbc.png"
    code, out, err = run_cli(
        capsys, "evaluate", str(trained_bbc.export_dir), "--dataset", "bbc_news",
        "--split", "validation", "--confusion-matrix", str(picture),
    )  # fmt: skip
    assert code == 0, err
    assert f"Confusion matrix drawn in {picture}" in out
    assert_not_blank(read_png(picture))


def test_attention_draws_the_heads_of_an_exported_model(capsys, trained_bbc, tmp_path):
    picture = tmp_path / "attention.png"
    text = "time flies like an arrow"
    code, out, err = run_cli(
        capsys, "attention", str(trained_bbc.export_dir), text, "--out", str(picture)
    )
    assert code == 0, err
    # The model reloaded from model.keras sees the same tokens as the one in memory.
    tokens, weights = attention_weights(trained_bbc.model, text)
    assert f"{len(tokens)} tokens: {' '.join(tokens)}" in out
    assert f"Self-attention, layer 0, every head, written to {picture}" in out
    pixels = read_png(picture)
    assert_not_blank(pixels)
    assert pixels.shape[1] > pixels.shape[0] >= 300  # heads side by side


@pytest.mark.parametrize(
    "extra, message",
    [
        (["?!"], "has no words after lower-casing"),
        (["time flies", "--block", "1"], "has 1 layer(s), so there is no layer 1"),
        (["time flies", "--head", "2"], "has 2 head(s) a layer, so there is no head 2"),
        (["time flies", "--second", "a pair"], "a second text is for BERT models"),
        (
            ["time flies", "--attention", "cross"],
            "no cross-attention; choose --attention from: self",
        ),
        (["time flies", "--out", "attention.xyz"], "unknown format 'xyz'"),
    ],
)
def test_attention_errors_are_one_line(capsys, trained_bbc, tmp_path, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "attention", str(trained_bbc.export_dir), *extra)
    assert code == 2 and err.count("\n") == 1 and message in err


def test_attention_needs_an_exported_model(capsys, tmp_path):
    code, _, err = run_cli(capsys, "attention", str(tmp_path), "time flies")
    assert code == 2 and err.count("\n") == 1
    assert f"{tmp_path} is not an exported classifier (no assets/class_names.txt)" in err
