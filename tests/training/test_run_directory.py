"""The run directory beside an export: its lock, when it is written, and what --resume checks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

import kerasformer.training.run_export as trainer
from kerasformer.backend import keras
from kerasformer.datasets import LabeledTexts, TextClassificationData
from kerasformer.errors import KerasformerError
from kerasformer.training import TrainingConfig, train
from kerasformer.training.run_directory import (
    CONFIG_FILE,
    DATA_FILE,
    EPOCHS_FILE,
    LOCK_FILE,
    RUN_LOCK_FILE,
    RunDirectory,
    data_fingerprint,
    run_directory_for,
)
from kerasformer.training.run_settings import compared_settings
from kerasformer.training.tasks import task_named
from tests.helpers.data import QA_WINDOWS, TOPIC_WORDS, write_synthetic_squad


def tiny_config(export_dir: Path, **overrides) -> TrainingConfig:
    settings = dict(
        dataset="ag_news", epochs=1, batch_size=16, seed=3, export_dir=str(export_dir),
        model_options=dict(vocab_size=100, maxlen=16, embed_dim=8, num_heads=2, ff_dim=8),
    )  # fmt: skip
    return TrainingConfig(**{**settings, **overrides})


def topic_texts(count: int, seed: int) -> LabeledTexts:
    rng = np.random.default_rng(seed)
    labels = np.arange(count) % 4
    texts = [" ".join(rng.choice(TOPIC_WORDS[label + 1].split(), 5)) for label in labels]
    return LabeledTexts(np.array(texts, dtype=object), labels.astype(np.int64))


def tiny_data(train_size: int = 64, seed: int = 0) -> TextClassificationData:
    splits = {"train": topic_texts(train_size, seed), "validation": topic_texts(16, seed + 1),
              "test": topic_texts(16, seed + 2)}  # fmt: skip
    return TextClassificationData("tiny", ("world", "sports", "business", "tech"), splits)


# A run that trains: it holds the run directory's lock until it is killed.
HOLDS_THE_LOCK = """
import sys, time
import filelock
lock = filelock.FileLock(sys.argv[1], thread_local=False)  # released once collected
lock.acquire()
print("locked", flush=True)
time.sleep(120)
"""


@pytest.fixture
def lock_holder():
    """Starts a process of this host that takes a run directory's lock and keeps it."""
    children = []

    def hold(path: Path) -> subprocess.Popen:
        path.mkdir(parents=True, exist_ok=True)
        child = subprocess.Popen(
            [sys.executable, "-c", HOLDS_THE_LOCK, str(path / RUN_LOCK_FILE)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        children.append(child)
        assert child.stdout.readline().strip() == "locked"
        return child

    yield hold
    for child in children:
        child.kill()
        child.wait()


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def write_run(path: Path, config: TrainingConfig, epochs: int, lock: dict | None = None,
              fingerprint: dict | None = None) -> None:  # fmt: skip
    """A run directory as a run of ``config`` leaves it after ``epochs`` epochs."""
    path.mkdir(parents=True, exist_ok=True)
    (path / CONFIG_FILE).write_text(json.dumps(compared_settings(config)))
    records = [{"epoch": epoch, "phase": "from-scratch", "loss": 1.0} for epoch in range(epochs)]
    (path / EPOCHS_FILE).write_text(json.dumps(records))
    if lock is not None:
        (path / LOCK_FILE).write_text(json.dumps(lock))
    if fingerprint is not None:
        (path / DATA_FILE).write_text(json.dumps(fingerprint))


def lock_of(pid: int, host: str | None = None) -> dict:
    """``lock.json`` as a run of process ``pid`` writes it."""
    return {"pid": pid, "host": host or socket.gethostname(), "started": "earlier"}


# The lock.


@pytest.mark.parametrize("epochs", [0, 2])
def test_a_run_in_progress_is_refused_naming_its_process(tmp_path, lock_holder, epochs):
    config = tiny_config(tmp_path / "export")
    path = run_directory_for(tmp_path / "export")
    holder = lock_holder(path)
    write_run(path, config, epochs, lock=lock_of(holder.pid))
    before = sorted(p.name for p in path.iterdir())
    for resume in (False, True):
        with pytest.raises(KerasformerError) as caught:
            RunDirectory(path, compared_settings(config), resume=resume, start=False)
        message = str(caught.value)
        assert f"a run is in progress (PID {holder.pid} on {socket.gethostname()})" in message
        assert "\n" not in message
    assert sorted(p.name for p in path.iterdir()) == before  # its first epoch is not removed


def test_the_lock_ends_with_the_process_that_held_it(tmp_path, lock_holder):
    """Killed, it cannot release anything itself: the kernel lets the lock go, and its
    ``lock.json`` names a process that is gone."""
    config = tiny_config(tmp_path / "export")
    path = run_directory_for(tmp_path / "export")
    holder = lock_holder(path)
    write_run(path, config, 1, lock=lock_of(holder.pid))
    with pytest.raises(KerasformerError, match="a run is in progress"):
        RunDirectory(path, compared_settings(config), resume=True, start=False)
    holder.kill()
    holder.wait()
    run = RunDirectory(path, compared_settings(config), resume=True)  # started: locked
    assert json.loads((path / LOCK_FILE).read_text())["pid"] == os.getpid()
    run.close()
    assert not (path / LOCK_FILE).exists() and (path / EPOCHS_FILE).is_file()


def test_a_second_run_in_the_same_place_is_refused(tmp_path):
    config = tiny_config(tmp_path / "export")
    path = run_directory_for(tmp_path / "export")
    first = RunDirectory(path, compared_settings(config), resume=False)  # started: holds the lock
    assert json.loads((path / LOCK_FILE).read_text())["pid"] == os.getpid()
    with pytest.raises(KerasformerError, match=r"a run is in progress \(PID \d+ on "):
        RunDirectory(path, compared_settings(config), resume=True, start=False)
    # Two runs checked while neither had started: the second to start is refused.
    first.close()
    assert not path.exists()  # it completed no epoch
    one = RunDirectory(path, compared_settings(config), resume=False, start=False)
    other = RunDirectory(path, compared_settings(config), resume=False, start=False)
    one.start()
    with pytest.raises(KerasformerError, match="a run is in progress"):
        other.start()
    one.close()


def test_a_stale_lock_is_an_interrupted_run(tmp_path):
    config = tiny_config(tmp_path / "export")
    path = run_directory_for(tmp_path / "export")
    write_run(path, config, 1, lock=lock_of(dead_pid()))
    with pytest.raises(KerasformerError, match=r"interrupted training run \(1 epoch\(s\) done\)"):
        RunDirectory(path, compared_settings(config), resume=False, start=False)
    run = RunDirectory(path, compared_settings(config), resume=True, start=False)
    run.start()
    assert json.loads((path / LOCK_FILE).read_text()) == run.lock.holder
    run.close()
    assert not (path / LOCK_FILE).exists() and (path / EPOCHS_FILE).is_file()  # kept to resume


def test_a_lock_record_naming_a_live_process_that_holds_no_lock_is_stale(tmp_path):
    """The PID is alive (this process, as after the PID was reused), but the lock is free."""
    config = tiny_config(tmp_path / "export")
    path = run_directory_for(tmp_path / "export")
    write_run(path, config, 1, lock=lock_of(os.getpid()))
    (path / RUN_LOCK_FILE).touch()
    RunDirectory(path, compared_settings(config), resume=True, start=False)  # not refused


def test_a_lock_taken_on_another_host_is_refused_naming_the_host(tmp_path):
    config = tiny_config(tmp_path / "export")
    path = run_directory_for(tmp_path / "export")
    write_run(path, config, 1, lock=lock_of(12345, host="gpu-node-7"))
    with pytest.raises(KerasformerError) as caught:
        RunDirectory(path, compared_settings(config), resume=True, start=False)
    message = str(caught.value)
    assert "locked by a run on gpu-node-7 (PID 12345" in message
    assert f"delete {path / LOCK_FILE}" in message


# When the directory is written, and what is left of it.


def test_nothing_is_written_until_the_run_starts_and_nothing_left_without_an_epoch(tmp_path):
    config = tiny_config(tmp_path / "models" / "export")
    path = run_directory_for(tmp_path / "models" / "export")
    run = RunDirectory(path, compared_settings(config), resume=False, start=False)
    assert not path.exists()
    run.start()
    assert {p.name for p in path.iterdir()} == {CONFIG_FILE, LOCK_FILE, RUN_LOCK_FILE}
    run.close()  # failed in its first epoch
    assert list(tmp_path.iterdir()) == []  # nor the models/ folder made for it


def test_a_run_directory_with_no_completed_epoch_does_not_block_a_rerun(tmp_path):
    earlier = tiny_config(tmp_path / "export", seed=99, batch_size=8)
    path = run_directory_for(tmp_path / "export")
    write_run(path, earlier, 0, lock=lock_of(dead_pid()))
    (path / "phase-0").mkdir()
    config = tiny_config(tmp_path / "export")
    for resume in (False, True):
        RunDirectory(
            path, compared_settings(config), resume=resume, start=False
        )  # other settings: fine
        assert not path.exists()
        write_run(path, earlier, 0)


def test_a_directory_kerasformer_did_not_write_is_left_alone(tmp_path):
    path = run_directory_for(tmp_path / "export")
    path.mkdir()
    (path / "notes.txt").write_text("mine")
    with pytest.raises(KerasformerError, match="holds no kerasformer training run"):
        RunDirectory(path, asdict(tiny_config(tmp_path / "export")), resume=True)
    assert (path / "notes.txt").read_text() == "mine"


# The data --resume continues on.


def test_the_fingerprint_tells_the_size_and_contents_of_each_split():
    data = tiny_data()
    fingerprint = data_fingerprint(data)
    assert fingerprint == data_fingerprint(tiny_data())
    assert {name: part["examples"] for name, part in fingerprint.items()} == {
        "train": 64, "validation": 16, "test": 16, "class_names": 4,
    }  # fmt: skip
    validation = data.splits["validation"]
    relabelled = LabeledTexts(validation.texts, np.roll(validation.labels, 1))
    other = data_fingerprint(replace(data, splits={**data.splits, "validation": relabelled}))
    assert other["validation"]["sha256"] != fingerprint["validation"]["sha256"]
    assert other["train"] == fingerprint["train"]
    # Texts that join to the same characters still differ.
    a = LabeledTexts(np.array(["ab", "c"], dtype=object), np.array([0, 1]))
    b = LabeledTexts(np.array(["a", "bc"], dtype=object), np.array([0, 1]))
    one, two = (data_fingerprint(replace(data, splits={"train": p})) for p in (a, b))
    assert one["train"]["sha256"] != two["train"]["sha256"]


def test_the_fingerprint_reads_every_task_s_data_quickly():
    from kerasformer.datasets.sentence_pairs import SentencePairs, TranslationData
    from kerasformer.datasets.wikitext import LanguageModelData

    words = tuple(f"word{i % 5000}" for i in range(100_000))
    started = time.perf_counter()
    tokens = data_fingerprint(LanguageModelData("wiki", {"train": words, "test": words[:10]}))
    texts = np.array([" ".join(words[i : i + 8]) for i in range(100_000)], dtype=object)
    pairs = SentencePairs(texts, texts[::-1].copy())
    translation = data_fingerprint(TranslationData("pairs", "en", "es", {"train": pairs}))
    assert time.perf_counter() - started < 10
    assert tokens["train"]["examples"] == 100_000 and translation["train"]["examples"] == 100_000
    swapped = SentencePairs(pairs.targets, pairs.sources)
    assert data_fingerprint(TranslationData("pairs", "en", "es", {"train": swapped})) != translation


def test_resume_with_other_training_data_is_refused_naming_the_split(tmp_path, monkeypatch):
    export_dir = tmp_path / "export"
    config = tiny_config(export_dir, resume=True)
    path = run_directory_for(export_dir)
    write_run(path, config, 1, fingerprint=data_fingerprint(tiny_data(64)))
    monkeypatch.setattr(keras.Model, "fit", lambda *a, **k: pytest.fail("trained anyway"))
    with pytest.raises(KerasformerError) as caught:
        train(config, verbose=0, data=tiny_data(68))
    message = str(caught.value)
    assert "the training data changed since the run started (train: 64 → 68 examples)" in message
    assert "delete that directory to start over" in message

    other_validation = tiny_data(64)
    other_validation.splits["validation"] = topic_texts(16, seed=42)
    with pytest.raises(KerasformerError, match=r"\(validation: same size, different contents\)"):
        train(config, verbose=0, data=other_validation)
    assert (path / EPOCHS_FILE).is_file() and not (path / LOCK_FILE).exists()


# Through the trainer.


class LockWatch(keras.callbacks.Callback):
    """Notes, in every epoch, who holds the lock of each run directory in ``root``."""

    def __init__(self, root: Path):
        super().__init__()
        self.root = root
        self.holders = []

    def on_epoch_end(self, epoch, logs=None):
        for lock_file in self.root.glob(f"*.training/{LOCK_FILE}"):
            self.holders.append(json.loads(lock_file.read_text())["pid"])


def watch_the_lock(monkeypatch, root: Path) -> LockWatch:
    watch = LockWatch(root)
    task = task_named("classification")
    build = type(task).build

    def build_and_watch(self, config, data):
        model, plan = build(self, config, data)
        return model, replace(plan, callbacks=[*plan.callbacks, watch])

    monkeypatch.setattr(type(task), "build", build_and_watch)
    return watch


@pytest.mark.slow
def test_the_lock_is_held_while_training_and_released_after_success_or_failure(
    tmp_path, monkeypatch
):
    export_dir = tmp_path / "export"
    path = run_directory_for(export_dir)
    watch = watch_the_lock(monkeypatch, tmp_path)
    train(tiny_config(export_dir), verbose=0, data=tiny_data())
    assert watch.holders == [os.getpid()]
    assert (export_dir / "saved_model.pb").is_file() and not path.exists()

    # The export fails after an epoch: the backups stay for --resume, the lock does not.
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(trainer, "staged_directory", disk_full)
    other = tmp_path / "other"
    with pytest.raises(KerasformerError, match="could not export"):
        train(tiny_config(other), verbose=0, data=tiny_data())
    other_run = run_directory_for(other)
    assert (other_run / EPOCHS_FILE).is_file() and not (other_run / LOCK_FILE).exists()
    assert watch.holders == [os.getpid()] * 2


@pytest.mark.slow
def test_a_run_refused_or_failing_before_its_first_epoch_leaves_nothing(tmp_path, monkeypatch):
    export_dir = tmp_path / "saved_models" / "tiny"
    task = task_named("classification")

    def bad_teacher(self, config, data):
        raise KerasformerError("the teacher predicts other classes")

    monkeypatch.setattr(type(task), "build", bad_teacher)
    with pytest.raises(KerasformerError, match="the teacher predicts"):
        train(tiny_config(export_dir), verbose=0, data=tiny_data())
    assert not run_directory_for(export_dir).exists()
    monkeypatch.undo()

    class FailInFirstEpoch(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            raise RuntimeError("out of memory")

    fit = keras.Model.fit

    def failing_fit(self, *args, callbacks=(), **kwargs):
        return fit(self, *args, callbacks=[*callbacks, FailInFirstEpoch()], **kwargs)

    monkeypatch.setattr(keras.Model, "fit", failing_fit)
    with pytest.raises(RuntimeError, match="out of memory"):
        train(tiny_config(export_dir), verbose=0, data=tiny_data())
    assert not (tmp_path / "saved_models").exists()
    monkeypatch.undo()

    # Ctrl-C in the first epoch: the export says so, and no backup is left to resume.
    class InterruptInFirstEpoch(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            raise KeyboardInterrupt

    def interrupted_fit(self, *args, callbacks=(), **kwargs):
        return fit(self, *args, callbacks=[*callbacks, InterruptInFirstEpoch()], **kwargs)

    monkeypatch.setattr(keras.Model, "fit", interrupted_fit)
    result = train(tiny_config(export_dir), verbose=0, data=tiny_data())
    assert result.interrupted and not run_directory_for(export_dir).exists()


def test_question_answering_windows_are_checked_before_anything_is_built(
    tiny_hub_bert, tmp_path, monkeypatch
):
    import kerasformer.training.tasks.question_answering as question_answering
    from kerasformer.models.encoder_positions import encoder_positions

    assert encoder_positions(str(tiny_hub_bert.encoder)) == 64
    squad = write_synthetic_squad(tmp_path / "squad", articles=10, per_article=2)
    export_dir = tmp_path / "qa"

    def qa_config(**windows):
        return TrainingConfig(
            task="question-answering", model="bert", dataset="squad", epochs=1,
            data_dir=str(squad), export_dir=str(export_dir),
            model_options={"preprocess": str(tiny_hub_bert.preprocess),
                           "encoder": str(tiny_hub_bert.encoder), **QA_WINDOWS, **windows},
        )  # fmt: skip

    monkeypatch.setattr(keras.Model, "fit", lambda *a, **k: pytest.fail("trained anyway"))
    with pytest.raises(KerasformerError, match="doc_stride 1000 is longer than"):
        train(qa_config(doc_stride=1000), verbose=0)
    assert not run_directory_for(export_dir).exists()

    built = []
    monkeypatch.setattr(question_answering, "build_bert_question_answerer", built.append)
    with pytest.raises(KerasformerError) as caught:
        train(qa_config(seq_length=100_000), verbose=0)
    assert str(caught.value) == (
        f"seq_length 100,000 is longer than the encoder {tiny_hub_bert.encoder} can read (its "
        "position embeddings cover 64 tokens); pass --seq-length 64 or less."
    )
    assert built == [] and not run_directory_for(export_dir).exists()


def test_a_run_kept_before_the_optimizer_settings_existed_resumes(tmp_path):
    config = tiny_config(tmp_path / "export", task="language-model", dataset="wikitext2",
                         model="transformer", model_options=dict(maxlen=16))  # fmt: skip
    path = run_directory_for(tmp_path / "export")
    write_run(path, config, 1)
    saved = json.loads((path / CONFIG_FILE).read_text())
    for name in ("weight_decay", "clip_norm", "lr_schedule"):
        del saved[name]
    del saved["model_options"]["tie_embeddings"]
    (path / CONFIG_FILE).write_text(json.dumps(saved))
    RunDirectory(path, compared_settings(config), resume=True, start=False)  # not refused
    tied = replace(config, model_options={**config.model_options, "tie_embeddings": True})
    with pytest.raises(KerasformerError, match=r"other settings \(model_options\)"):
        RunDirectory(path, compared_settings(tied), resume=True, start=False)
