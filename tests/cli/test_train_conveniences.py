"""`train`'s conveniences: --early-stopping, --tensorboard and --config, end to end."""

import hashlib
import json

import numpy as np
import pytest

from tests.helpers.cli import assert_refused_in_one_line, run_cli
from tests.helpers.data import topic_rows, write_topic_csv
from tests.helpers.processes import run_commands

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

TINY = ["--batch-size", "16", "--vocab-size", "200", "--maxlen", "16", "--embed-dim", "8",
        "--num-heads", "1", "--ff-dim", "8"]  # fmt: skip
VALIDATION = [("Goal in the cup", "sport"), ("Flights to Lisbon", "travel"),
              ("A record final lap", "sport"), ("Night trains to Rome", "travel")]  # fmt: skip
OWN_FILES = ["--train-file", "train.csv", "--validation-file", "valid.csv", "--test-file",
             "valid.csv", "--text-column", "body", "--label-column", "topic"]  # fmt: skip


def write_files(root):
    write_topic_csv(root / "train.csv", topic_rows(copies=8))
    write_topic_csv(root / "valid.csv", VALIDATION)


def cross_entropy(probabilities, labels):
    """Keras's validation loss, written out: the mean of -log p(true class)."""
    picked = probabilities[np.arange(len(labels)), labels]
    return float(-np.mean(np.log(np.clip(picked, 1e-7, 1.0))))


def test_early_stopping_keeps_the_best_epoch_and_tensorboard_lists_its_scalars(
    capsys, tmp_path, monkeypatch
):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from kerasformer.loading.exported_classifier import ExportedClassifier

    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    code, out, err = run_cli(
        capsys, "train", *OWN_FILES, *TINY, "--epochs", "8", "--learning-rate", "0.03",
        "--early-stopping", "1", "--tensorboard", "tb", "--tensorboard-update-freq", "1",
        "--export-dir", "exp",
    )  # fmt: skip
    assert code == 0, err[-3000:]
    history = json.loads((tmp_path / "exp" / "history.json").read_text())
    losses = history["val_loss"]
    best = history["best_epoch"]
    assert best == int(np.argmin(losses)) + 1
    assert len(losses) == 8 or len(losses) - best == 1  # ran out, or stopped by patience 1
    assert json.loads((tmp_path / "exp" / "metrics.json").read_text())["best_epoch"] == best
    # The export holds the best epoch's weights: its loss on validation is that epoch's.
    served = ExportedClassifier(tmp_path / "exp")
    labels = np.array([served.class_names.index(label) for _, label in VALIDATION])
    probabilities = served.predict_proba([text for text, _ in VALIDATION])
    assert cross_entropy(probabilities, labels) == pytest.approx(losses[best - 1], rel=1e-3)
    # TensorBoard's own reader finds the epoch scalars, the learning rate, batch scalars
    # and the graph.
    train_events = EventAccumulator(str(tmp_path / "tb" / "train")).Reload()
    tags = set(train_events.Tags()["scalars"]) | set(train_events.Tags()["tensors"])
    assert {"epoch_loss", "epoch_accuracy", "epoch_learning_rate"} <= tags
    assert any(tag.startswith("batch_") for tag in tags)
    assert train_events.Tags()["graph"]
    validation_events = EventAccumulator(str(tmp_path / "tb" / "validation")).Reload()
    assert "epoch_loss" in set(validation_events.Tags()["tensors"]) | set(
        validation_events.Tags()["scalars"]
    )
    assert history["learning_rate"] == pytest.approx([0.03] * len(losses))  # float32


def test_average_last_exports_the_mean_of_the_last_epochs_weights(tmp_path, monkeypatch):
    from kerasformer.loading.keras_model import load_keras_model

    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    # Seeded, deterministic and at a constant rate, a 3-epoch run's first 2 epochs are
    # the 2-epoch run: the two exports hold the weights of epochs 2 and 3.
    same = [*OWN_FILES, *TINY, "--seed", "5", "--deterministic", "--learning-rate", "0.03"]
    two, three, averaged = run_commands(
        ["train", *same, "--epochs", "2", "--export-dir", "two"],
        ["train", *same, "--epochs", "3", "--export-dir", "three"],
        ["train", *same, "--epochs", "3", "--average-last", "2", "--export-dir", "averaged"],
        timeout=600,
    )
    for result in (two, three, averaged):
        assert result["code"] == 0, result["stderr"][-3000:]
    metrics = json.loads((tmp_path / "averaged" / "metrics.json").read_text())
    assert metrics["averaged_epochs"] == [2, 3]
    assert json.loads((tmp_path / "averaged" / "config.json").read_text())["average_last"] == 2
    epoch_2, epoch_3, mean = (
        load_keras_model(tmp_path / name).get_weights() for name in ("two", "three", "averaged")
    )
    learnt = [i for i, weight in enumerate(mean) if weight.dtype.kind == "f"]
    assert learnt and all(epoch_2[i].shape == mean[i].shape for i in learnt)
    assert not np.allclose(epoch_2[learnt[0]], epoch_3[learnt[0]])  # so the mean is new
    for i in learnt:
        np.testing.assert_allclose(mean[i], (epoch_2[i] + epoch_3[i]) / 2, rtol=1e-5, atol=1e-6)


def test_config_json_trains_the_same_run_again_and_flags_win(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    first, again, shorter = run_commands(
        ["train", *OWN_FILES, *TINY, "--epochs", "2", "--seed", "3", "--export-dir", "exp"],
        ["train", "--config", "exp/config.json", "--export-dir", "again"],
        ["train", "--config", "exp/config.json", "--export-dir", "shorter", "--epochs", "1",
         "--task", "classification", "--seed", "0"],
        timeout=600,
    )  # fmt: skip
    for result in (first, again, shorter):
        assert result["code"] == 0, result["stderr"][-3000:]
    settings = json.loads((tmp_path / "exp" / "config.json").read_text())
    train_hash = hashlib.sha256((tmp_path / "train.csv").read_bytes()).hexdigest()
    assert settings["data_files"]["train_file"] == {
        "path": "train.csv", "absolute": str((tmp_path / "train.csv").resolve()),
        "sha256": train_hash,
    }  # fmt: skip
    assert settings["recipe"] == "from-scratch" and settings["input_pipeline"] == "bucketed"
    assert settings["model_options"]["maxlen"] == 16  # given
    assert settings["model_options"]["dense_units"] == 20  # resolved: the default
    metrics = {name: json.loads((tmp_path / name / "metrics.json").read_text())
               for name in ("exp", "again", "shorter")}  # fmt: skip
    assert metrics["again"]["validation"] == metrics["exp"]["validation"]
    assert metrics["again"]["test"] == metrics["exp"]["test"]
    history = {name: json.loads((tmp_path / name / "history.json").read_text())
               for name in ("exp", "again", "shorter")}  # fmt: skip
    assert history["again"]["loss"] == history["exp"]["loss"]
    assert len(history["shorter"]["loss"]) == 1
    assert metrics["shorter"]["config"]["epochs"] == 1
    assert (metrics["again"]["config"]["seed"], metrics["shorter"]["config"]["seed"]) == (3, 0)


def test_a_yaml_config_and_a_changed_data_file_are_read(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    (tmp_path / "run.yaml").write_text(
        "train_file: train.csv\nvalidation_file: valid.csv\ntest_file: valid.csv\n"
        "data_options: {text_column: body, label_column: topic}\nepochs: 1\n"
        "model_options: {vocab_size: 200, maxlen: 16, embed_dim: 8, num_heads: 1, ff_dim: 8}\n"
        "data_files: {train_file: {path: train.csv, sha256: '0000'}}\n",
        "utf-8",
    )
    code, out, err = run_cli(capsys, "train", "--config", "run.yaml", "--export-dir", "y")
    assert code == 0, err[-3000:]
    assert "warning: train.csv (train_file) changed since that run (its SHA-256 differs)" in out
    assert json.loads((tmp_path / "y" / "metrics.json").read_text())["config"]["epochs"] == 1


def test_bad_settings_files_are_one_line(tmp_path):
    (tmp_path / "typo.json").write_text('{"epochz": 3}', "utf-8")
    (tmp_path / "list.json").write_text("[1, 2]", "utf-8")
    (tmp_path / "broken.json").write_text('{"epochs": ', "utf-8")
    (tmp_path / "options.json").write_text('{"model_options": [1, 2]}', "utf-8")
    (tmp_path / "colour.json").write_text('{"model_options": {"colour": 3}}', "utf-8")
    (tmp_path / "logs.txt").write_text("not a folder", "utf-8")
    (tmp_path / "loop.csv").symlink_to("loop.csv")
    cases = [
        (
            ["train", "--config", "options.json"],
            ("--config options.json: model_options holds a list, not options by name",),
        ),
        (
            ["train", "--config", "colour.json"],
            ("--model transformer of --task classification: unknown option 'colour'",),
        ),
        (["train", "--tensorboard", "logs.txt"], ("--tensorboard logs.txt is a file",)),
        (["train", "--tensorboard", ""], ("--tensorboard needs a folder for the logs",)),
        (
            ["train", "--train-file", "loop.csv"],
            ("--train-file loop.csv is a symbolic link that leads to no file",),
        ),
        (["train", "--config", "typo.json"], ("--config typo.json: unknown setting(s) epochz",)),
        (
            ["train", "--config", "list.json"],
            ("--config list.json holds a list, not settings by name",),
        ),
        (["train", "--config", "broken.json"], ("--config broken.json:1: not JSON",)),
        (["train", "--config", "missing.json"], ("--config missing.json is not a file",)),
        (["train", "--early-stopping", "0"], ("--early-stopping",)),
        (["train", "--average-last", "0"], ("--average-last",)),
        (
            ["train", "--tensorboard-update-freq", "5"],
            ("--tensorboard-update-freq goes with --tensorboard DIR",),
        ),
        (
            ["train", "--monitor", "val_accuracy"],
            ("--monitor goes with --early-stopping PATIENCE",),
        ),
    ]
    assert_refused_in_one_line(cases, cwd=tmp_path)


def test_a_config_of_another_task_says_which_of_its_settings_are_left_out(tmp_path):
    from tests.helpers.processes import run_commands

    settings = {"task": "ner", "model": "rnn", "recipe": "from-scratch",
                "model_options": {"units": 8, "char_filters": 4}}  # fmt: skip
    (tmp_path / "ner.json").write_text(json.dumps(settings), "utf-8")
    # The missing file stops the run before TensorFlow loads, once the note is out.
    (result,) = run_commands(
        ["train", "--config", "ner.json", "--task", "translation", "--train-file", "x.tsv"],
        cwd=tmp_path,
    )
    assert result["code"] == 2
    assert (
        "note: --config ner.json trained --task ner --model rnn; its model_options, recipe "
        "are left out for --task translation --model rnn" in result["stdout"]
    )


def test_a_config_reruns_from_another_folder_reading_the_files_that_run_read(tmp_path):
    from kerasformer.training.run_settings import file_hash
    from tests.helpers.processes import run_commands

    first, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (first / "data").mkdir(parents=True)
    elsewhere.mkdir()
    data = first / "data" / "train.csv"
    data.write_text("text,label\ngoal,sport\nbank,news\n", "utf-8")
    record = {"path": "data/train.csv", "absolute": str(data), "sha256": file_hash(data)}
    settings = {"task": "classification", "train_file": "data/train.csv",
                "data_files": {"train_file": record}}  # fmt: skip
    (first / "config.json").write_text(json.dumps(settings), "utf-8")
    # The empty --tensorboard stops the run before TensorFlow loads, once the note is out.
    (result,) = run_commands(
        ["train", "--config", str(first / "config.json"), "--tensorboard", ""], cwd=elsewhere
    )
    assert result["code"] == 2 and "--tensorboard needs a folder" in result["stderr"]
    assert (
        f"train_file data/train.csv is not in {elsewhere}; reading {data}, where that run "
        "read it" in result["stdout"]
    )
    assert "gone since that run" not in result["stdout"]
    data.unlink()  # now it is gone, and the warning says where that run read it
    (result,) = run_commands(
        ["train", "--config", str(first / "config.json"), "--tensorboard", ""], cwd=elsewhere
    )
    assert (
        f"data/train.csv (train_file) is gone since that run, which read {data}"
        in (result["stdout"])
    )
