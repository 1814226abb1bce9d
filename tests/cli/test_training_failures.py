"""What `kerasformer train` and `convert-bert` do with destinations and settings that would
lose work or train something useless: one line on stderr, before anything heavy, and
nothing on disk touched. Each case runs the real command line in a child process."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kerasformer.files.staged_directory import MARKER_FILE
from tests.helpers.cli import assert_one_line_error
from tests.helpers.data import write_synthetic_squad
from tests.helpers.processes import run_cases

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow


def snapshot(directory: Path) -> dict:
    return {
        str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None
        for p in sorted(directory.rglob("*"))
    }


def tiny_training(data_dir: Path, *extra: str) -> list[str]:
    return [
        "train", "--dataset", "ag_news", "--data-dir", str(data_dir), "--epochs", "1",
        "--batch-size", "32", "--vocab-size", "200", "--maxlen", "32", "--embed-dim", "8",
        *extra,
    ]  # fmt: skip


@pytest.fixture
def workplace(tmp_path):
    """A working directory with a user's files and a folder of two exports."""
    work = tmp_path / "work"
    (work / "notes").mkdir(parents=True)
    (work / "notes" / "thesis.txt").write_text("three years of work")
    (work / "data.csv").write_text("1,a,b\n")
    for name in ("bbc_news-transformer", "ag_news-transformer"):
        export = work / "saved_models" / name
        export.mkdir(parents=True)
        (export / MARKER_FILE).write_text("{}")
        (export / "saved_model.pb").write_bytes(b"model " + name.encode())
    return work


def test_overwrite_never_deletes_what_kerasformer_did_not_write(
    workplace, tiny_ag_news_dir, tiny_bert_checkpoint
):
    before = snapshot(workplace)
    ckpt = str(tiny_bert_checkpoint)

    def train_into(destination, cwd=workplace):
        argv = tiny_training(tiny_ag_news_dir, "--export-dir", destination, "--overwrite")
        return {"cwd": str(cwd), "argv": argv}

    def convert_into(destination):
        argv = ["convert-bert", ckpt, "--out", destination, "--overwrite"]
        return {"cwd": str(workplace), "argv": argv}

    results = run_cases(
        [
            train_into("."),
            train_into("saved_models"),
            train_into("..", cwd=workplace / "notes"),
            train_into("notes"),
            convert_into("."),
            convert_into("saved_models"),
        ]
    )
    assert_one_line_error(results[0], "would delete .", "holds the working directory")
    assert_one_line_error(results[1], "saved_models is not one (no kerasformer.json)")
    assert_one_line_error(results[2], "would delete ..", "holds the working directory")
    assert_one_line_error(results[3], "notes is not one (no kerasformer.json)", "--export-dir")
    assert_one_line_error(results[4], "would delete .", "--out")
    assert_one_line_error(results[5], "saved_models is not one", "--out")
    assert snapshot(workplace) == before


def test_unwritable_destinations_and_impossible_sizes_are_refused_before_training(
    tiny_ag_news_dir, tmp_path
):
    huge = "100000000000000000000"
    out = str(tmp_path / "out")

    def case(*argv):
        return {"cwd": str(tmp_path), "argv": list(argv)}

    def train_with(*extra):
        return case(*tiny_training(tiny_ag_news_dir, *extra))

    results = run_cases(
        [
            train_with("--export-dir", "/proc/kerasformer/model"),
            train_with("--export-dir", "/sys/kerasformer-model"),
            train_with("--batch-size", huge, "--export-dir", out),
            train_with("--epochs", huge, "--export-dir", out),
            case("train", "--model", "bert", "--epochs", huge, "--export-dir", out),
            train_with("--maxlen", "100000000", "--export-dir", out),
            train_with("--learning-rate", "inf", "--export-dir", out),
        ]
    )
    assert_one_line_error(results[0], "cannot write to /proc", "choose a writable --export-dir")
    assert_one_line_error(results[1], "cannot write to /sys", "choose a writable --export-dir")
    assert_one_line_error(results[2], "batch_size must be a whole number from 1 to 1,000,000")
    assert_one_line_error(results[3], "epochs must be a whole number from 1 to 100,000")
    assert_one_line_error(results[4], "epochs must be a whole number from 1 to 100,000")
    assert_one_line_error(results[5], "maxlen 100,000,000", "choose smaller sizes")
    assert_one_line_error(results[6], "--learning-rate: expected a positive finite number")
    assert not Path(out).exists()


def test_a_loss_that_becomes_nan_stops_training_and_exports_nothing(tiny_ag_news_dir, tmp_path):
    out = tmp_path / "out"
    # Adam's first steps move every weight by about the learning rate: float32 overflows.
    argv = tiny_training(tiny_ag_news_dir, "--learning-rate", "1e38", "--epochs", "3")
    (result,) = run_cases([{"cwd": str(tmp_path), "argv": [*argv, "--export-dir", str(out)]}])
    assert result["code"] == 2, result
    errors = [line for line in result["stderr"].splitlines() if line.startswith("kerasformer:")]
    assert len(errors) == 1, result["stderr"]
    assert re.search(r"the training loss became (nan|inf) in epoch 1, batch \d+", errors[0])
    assert "lower the learning rate (--learning-rate" in errors[0]
    assert "Traceback" not in result["stderr"]
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no export, no backups


def kill_during_second_epoch(command: list[str], run_dir: Path) -> None:
    """Start training in a child, SIGKILL it once an epoch is backed up and the next began."""
    child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )  # fmt: skip
    deadline = time.monotonic() + 300
    epochs_file = run_dir / "epochs.json"
    while time.monotonic() < deadline and child.poll() is None:
        if epochs_file.is_file() and len(json.loads(epochs_file.read_text())) == 1:
            child.send_signal(signal.SIGKILL)
            break
        time.sleep(0.05)
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stdout.read()[-3000:]


# Training whose batches take a moment each, so that a kill lands inside an epoch.
SLOW_TRAINING = r"""
import sys, time
from kerasformer.backend import keras
from kerasformer.cli.main import main

class Slow(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        time.sleep(0.3)

fit = keras.Model.fit

def slow_fit(self, *args, callbacks=(), **kwargs):
    return fit(self, *args, callbacks=[*callbacks, Slow()], **kwargs)

keras.Model.fit = slow_fit
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_run_resumes_where_its_backups_end(tiny_ag_news_dir, tmp_path):
    export_dir = tmp_path / "saved_models" / "tiny"
    run_dir = tmp_path / "saved_models" / "tiny.training"
    argv = tiny_training(tiny_ag_news_dir, "--epochs", "3", "--export-dir", str(export_dir))
    kill_during_second_epoch([sys.executable, "-c", SLOW_TRAINING, *argv, "--resume"], run_dir)
    first_epoch = json.loads((run_dir / "epochs.json").read_text())
    assert not export_dir.exists() and [r["epoch"] for r in first_epoch] == [0]

    without_resume, again = run_cases(
        [{"cwd": str(tmp_path), "argv": argv}, {"cwd": str(tmp_path), "argv": [*argv, "--resume"]}]
    )
    assert_one_line_error(without_resume, "holds an interrupted training run (1 epoch(s) done)",
                          "pass --resume")  # fmt: skip
    assert again["code"] == 0, again["stderr"][-3000:]
    assert "Epoch 2/3" in again["stdout"] and "Epoch 1/3" not in again["stdout"]
    history = json.loads((export_dir / "history.json").read_text())
    assert len(history["loss"]) == 3
    assert history["loss"][0] == first_epoch[0]["loss"]  # the killed run's epoch, kept
    assert json.loads((export_dir / "metrics.json").read_text())["interrupted"] is False
    assert not run_dir.exists()


def wait_for_file(path: Path, child: subprocess.Popen, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not path.is_file():
        assert child.poll() is None, child.stdout.read()[-3000:]
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.1)


def test_a_second_run_while_the_first_trains_is_refused_naming_its_process(
    tiny_ag_news_dir, tmp_path
):
    export_dir = tmp_path / "saved_models" / "tiny"
    run_dir = tmp_path / "saved_models" / "tiny.training"
    argv = tiny_training(tiny_ag_news_dir, "--epochs", "200", "--export-dir", str(export_dir))
    first = subprocess.Popen(
        [sys.executable, "-c", SLOW_TRAINING, *argv], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )  # fmt: skip
    try:
        wait_for_file(run_dir / "lock.json", first)
        results = run_cases(
            [{"cwd": str(tmp_path), "argv": [*argv, *extra]}
             for extra in ((), ("--resume",), ("--resume", "--overwrite"))]
        )  # fmt: skip
        assert first.poll() is None, "the first run ended before the others were refused"
    finally:
        first.kill()
        first.wait()
    for result in results:
        assert_one_line_error(
            result, f"a run is in progress (PID {first.pid} on ", str(run_dir), "wait for it"
        )
    assert not export_dir.exists()


def test_question_answering_settings_that_cannot_work_leave_nothing_behind(tiny_hub_bert, tmp_path):
    data = write_synthetic_squad(tmp_path / "squad", articles=10, per_article=2)
    export_dir = tmp_path / "saved_models" / "qa"

    def qa_training(*windows):
        argv = [
            "train", "--task", "question-answering", "--data-dir", str(data),
            "--preprocess", str(tiny_hub_bert.preprocess), "--encoder", str(tiny_hub_bert.encoder),
            "--epochs", "1", "--batch-size", "8", "--export-dir", str(export_dir), *windows,
        ]  # fmt: skip
        return {"cwd": str(tmp_path), "argv": argv}

    too_long, stride, corrected = run_cases(
        [
            qa_training("--seq-length", "100000"),
            qa_training("--seq-length", "32", "--doc-stride", "1000"),
            qa_training("--seq-length", "32", "--doc-stride", "8"),
        ]
    )
    assert_one_line_error(too_long, "seq_length 100,000 is longer than the encoder",
                          "pass --seq-length 64 or less")  # fmt: skip
    assert "Model:" not in too_long["stdout"]  # refused before anything was built
    assert_one_line_error(stride, "doc_stride 1000 is longer than")
    assert corrected["code"] == 0, corrected["stderr"][-3000:]
    assert (export_dir / "saved_model.pb").is_file()
    assert sorted(p.name for p in export_dir.parent.iterdir()) == ["qa"]
