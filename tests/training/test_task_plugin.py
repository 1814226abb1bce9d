"""A new task is one registry entry and one Task class: the trainer trains it unchanged."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from kerasformer import registry
from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.training import TrainingConfig, train
from kerasformer.training import tasks as training_tasks
from kerasformer.training.config import default_setting
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.tasks.base import Task


@dataclass(frozen=True)
class Numbers:
    """A split of the toy task: rows of numbers and their sums."""

    inputs: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.inputs)


@dataclass(frozen=True)
class SumData:
    name: str
    splits: dict

    def sizes(self) -> dict[str, int]:
        return {name: len(part) for name, part in self.splits.items()}


def load_sums(data_dir=None, validation_fraction=0.1, split_seed=0) -> SumData:
    rng = np.random.default_rng(split_seed)
    splits = {}
    for name, count in (("train", 256), ("validation", 64), ("test", 64)):
        inputs = rng.normal(size=(count, 3)).astype("float32")
        splits[name] = Numbers(inputs, inputs.sum(axis=1, keepdims=True))
    return SumData("sums", splits)


@dataclass(frozen=True)
class SumSettings:
    scale: float = 1.0

    def validate(self) -> None:
        if self.scale <= 0:
            raise KerasformerError(f"scale must be positive, got {self.scale}.")


class SumTask(Task):
    """Learns to add three numbers: a task no kerasformer module knows by name."""

    settings_class = SumSettings
    example_noun = "rows"

    def build(self, config, data):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, name="sum")])

        def batches(part, batch_size, shuffle_seed):
            pairs = tf.data.Dataset.from_tensor_slices((part.inputs, part.targets))
            if shuffle_seed is not None:
                pairs = pairs.shuffle(len(part), seed=shuffle_seed)
            return pairs.batch(batch_size)

        return model, FitPlan(model, model, False, batches, loss="mse", metrics=["mae"])

    def evaluate(self, model, data, config):
        scale = self.settings(config).scale
        return {
            split: {"mae": scale * float(np.mean(np.abs(
                model.predict(data.splits[split].inputs, verbose=0) - data.splits[split].targets
            )))}
            for split in ("validation", "test")
        }  # fmt: skip

    def write_export(self, model, data, directory):
        weights = model.get_layer("sum").get_weights()[0][:, 0]
        (directory / "weights.json").write_text(json.dumps(weights.tolist()))

    def keras_model(self, model):
        return model


ENTRY = registry.TaskEntry(
    "sums",
    f"{__name__}:SumTask",
    datasets=(registry.DatasetEntry("sums", f"{__name__}:load_sums"),),
    models=(registry.ModelEntry("dense", frozenset()),),
    export_kind="classifier",
    headline_metrics=("mae",),
)


@pytest.fixture
def sums_task(monkeypatch):
    monkeypatch.setitem(registry.TASKS, ENTRY.name, ENTRY)
    monkeypatch.setitem(training_tasks.TASKS, ENTRY.name, SumTask(ENTRY))


def sums_config(**settings) -> TrainingConfig:
    return TrainingConfig(
        task="sums", model="dense", dataset="sums", epochs=40, batch_size=32,
        learning_rate=0.05, **settings,
    )  # fmt: skip


def test_a_task_added_by_registry_entry_trains_evaluates_and_exports(sums_task, tmp_path):
    config = sums_config(export_dir=str(tmp_path / "sums"), task_options={"scale": 2.0})
    result = train(config, verbose=0)
    # Adding is what a Dense layer learns exactly: weights near 1 and a small error.
    weights = json.loads((tmp_path / "sums" / "weights.json").read_text())
    np.testing.assert_allclose(weights, [1.0, 1.0, 1.0], atol=0.05)
    assert result.metrics["test"]["mae"] < 0.1
    metrics = json.loads((tmp_path / "sums" / "metrics.json").read_text())
    assert metrics["config"]["task"] == "sums" and metrics["config"]["scale"] == 2.0
    assert len(json.loads((tmp_path / "sums" / "history.json").read_text())["loss"]) == 40
    assert default_setting("epochs") != 40  # the run's own setting, not the default


def test_a_new_task_gets_the_same_checks_as_every_task(sums_task):
    with pytest.raises(KerasformerError, match="model 'transformer' does not fit task 'sums'"):
        train(TrainingConfig(task="sums", dataset="sums"), export=False, verbose=0)
    with pytest.raises(KerasformerError, match="scale must be positive, got -1"):
        train(sums_config(task_options={"scale": -1}), export=False, verbose=0)
    with pytest.raises(KerasformerError, match="teacher is for distillation only"):
        train(sums_config(teacher="x"), export=False, verbose=0)
    with pytest.raises(KerasformerError, match="--input-pipeline chooses how classifiers"):
        train(sums_config(input_pipeline="padded"), export=False, verbose=0)
    with pytest.raises(KerasformerError, match="--task sums does not read your own files yet"):
        train(sums_config(train_file="sums.csv"), export=False, verbose=0)
    with pytest.raises(KerasformerError, match="--task sums does not read TensorFlow Datasets"):
        config = sums_config()
        config.dataset = "tfds:imdb_reviews"
        train(config, export=False, verbose=0)
    empty = load_sums()
    empty.splits["validation"] = Numbers(np.zeros((0, 3)), np.zeros((0, 1)))
    with pytest.raises(KerasformerError, match="the validation split of sums has no rows"):
        train(sums_config(), export=False, verbose=0, data=empty)


def test_the_trainer_compares_no_task_or_model_name():
    import inspect

    from kerasformer.training import trainer

    source = inspect.getsource(trainer)
    for name in (*registry.TASKS, *registry.MODEL_NAMES):
        assert f'"{name}"' not in source and f"'{name}'" not in source
