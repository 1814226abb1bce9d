"""TrainingConfig: the run's settings, the task's own in task_options, saved flat."""

from __future__ import annotations

import dataclasses

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.training import TrainingConfig
from kerasformer.training.config import default_setting
from kerasformer.training.tasks import task_named


def test_distillation_keywords_go_to_the_task_options():
    config = TrainingConfig(task="distillation", teacher="exp/bert", temperature=3.0)
    assert config.task_options == {"teacher": "exp/bert", "temperature": 3.0}
    assert config.teacher == "exp/bert" and config.unlabelled_texts is None
    assert "teacher" not in {field.name for field in dataclasses.fields(config)}
    again = TrainingConfig(**{**dataclasses.asdict(config), "epochs": 2})
    assert again.task_options == config.task_options and again.epochs == 2


def test_the_record_is_the_run_then_the_tasks_settings_with_their_defaults():
    record = TrainingConfig(task="distillation", teacher="t").record()
    assert record["teacher"] == "t" and record["temperature"] == 2.0
    assert record["augmented_copies"] == 0 and "task_options" not in record
    plain = TrainingConfig().record()
    assert "teacher" not in plain and plain["epochs"] == default_setting("epochs") == 10


def test_another_tasks_setting_at_its_default_is_no_mistake():
    TrainingConfig(augmented_copies=0, teacher=None).validate()
    with pytest.raises(KerasformerError, match="augmented_copies is for distillation only"):
        TrainingConfig(augmented_copies=1).validate()
    with pytest.raises(KerasformerError, match="unknown setting 'colour'"):
        TrainingConfig(task_options={"colour": "red"}).validate()


@pytest.mark.parametrize(
    "settings, name",
    [
        ({"model": "bert", "recipe": "frozen"}, "bbc_news-bert-frozen"),
        ({"model": "bert", "recipe": "unfrozen"}, "bbc_news-bert"),
        ({"task": "distillation", "dataset": "ag_news"}, "ag_news-transformer-distilled"),
        ({"task": "translation", "model": "rnn", "dataset": "spa_eng"}, "spa_eng-rnn"),
    ],
)
def test_default_export_directories(settings, name):
    assert TrainingConfig(**settings).resolved_export_dir().name == name


def test_the_settings_an_export_saves_train_the_same_run():
    """config.json's resolved settings make a config that a resumed run or another worker
    counts as the same run as the one that wrote them."""
    from kerasformer.training.run_settings import (
        DATA_FILES,
        VERSION,
        compared_settings,
        run_settings,
    )

    config = TrainingConfig(model_options={"maxlen": 16}, early_stopping=2, seed=4)
    saved = run_settings(config)
    assert saved["recipe"] == "from-scratch" and saved["model_options"]["embed_dim"] == 32
    for name in (DATA_FILES, VERSION):
        saved.pop(name)
    again = TrainingConfig(**saved)
    assert compared_settings(again) == compared_settings(config)
    assert compared_settings(TrainingConfig(seed=5)) != compared_settings(config)


@pytest.mark.parametrize(
    "task, dataset",
    [("classification", "bbc_news"), ("translation", "spa_eng"),
     ("language-model", "wikitext2"), ("ner", "conll2003")],
)  # fmt: skip
def test_without_a_dataset_a_task_reads_its_own_first_one_as_the_command_line_does(task, dataset):
    config = TrainingConfig(task=task)
    assert config.dataset == dataset
    task_named(task).validate(config)  # the Python API's default no longer refused


def test_a_dataset_given_is_kept():
    assert TrainingConfig(task="translation", dataset="bbc_news").dataset == "bbc_news"
