"""Train any task: ask it for data, model and plan, fit by recipe, evaluate, export.

The trainer knows no task, model or dataset by name: `kerasformer.registry` names
them and the task (`kerasformer.training.tasks.base.Task`) answers for its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from kerasformer.backend import keras
from kerasformer.files.staged_directory import require_replaceable
from kerasformer.training.acceleration import building_scope, is_chief, make_strategy
from kerasformer.training.config import MAX_BATCH_SIZE, MAX_EPOCHS, TrainingConfig
from kerasformer.training.fit_loop import EpochLog, run_recipe, steps_per_epoch
from kerasformer.training.non_finite import (
    NonFiniteLoss,
    StopOnNonFiniteLoss,
    StopOnNonFiniteWeights,
)
from kerasformer.training.reproducibility import make_reproducible
from kerasformer.training.run_directory import (
    RunBackups,
    chief_run_directory,
    require_settings_of_the_chief,
)
from kerasformer.training.run_export import (
    HISTORY_FILE,
    HISTORY_PLOT_FILE,
    METRICS_FILE,
    describe_error,
    export_trained,
    keep_model_somewhere,
    write_json,
)
from kerasformer.training.tasks import task_named
from kerasformer.training.tensorboard import tensorboard_callbacks


@dataclass
class TrainingResult:
    model: keras.Model  # the task's model object: a Keras classifier, a Translator ...
    data: object  # the task's data object: TextClassificationData, TranslationData ...
    history: dict[str, list[float]]
    metrics: dict[str, dict]
    export_dir: Path | None
    interrupted: bool = False
    fit_model: keras.Model | None = None  # what model.fit trained: model, or a part of it
    train_seconds: float = 0.0  # wall time from building the input pipeline to the last epoch


def train(
    config: TrainingConfig,
    export: bool = True,
    verbose: int = 1,
    data=None,
) -> TrainingResult:
    """Run one training job as configured and return the trained model and its metrics.

    ``data`` trains on your own splits instead of loading ``config.dataset``, which
    then only names the export directory.

    Example:

    >>> result = train(TrainingConfig(dataset="bbc_news"))
    >>> result.metrics["test"]["accuracy"] > 0.9
    True
    """
    # Settings and the export directory are refused before any work.
    task = task_named(config.task)
    task.validate(config)
    export_dir = task.export_dir(config) if export else None
    if export_dir is not None:
        require_replaceable(export_dir, config.overwrite, "--export-dir", task.export_kind)

    make_reproducible(config.seed, deterministic_ops=config.deterministic)
    if data is None:
        data = task.load_data(config)
    data = task.as_trained_on(data)
    task.require_trainable(data)
    if verbose:
        print(task.describe(data))
    strategy = make_strategy(config.strategy)
    chief = is_chief(strategy)
    building = building_scope(strategy, config.mixed_precision)
    with RunBackups(export_dir, config, data, chief) as backups:
        with building:
            model, plan = task.build(config, data)
        summary = task.report_data(model, data, verbose)
        run = backups.for_training()
        started = time.perf_counter()
        callbacks = tensorboard_callbacks(config, chief)
        history, interrupted = run_recipe(plan, data, config, verbose, run, callbacks)
        train_seconds = time.perf_counter() - started
        backups.interrupted = interrupted
        metrics = task.evaluate(model, data, config)
        result = TrainingResult(
            task.result_model(model), data, history, metrics, export_dir, interrupted,
            plan.fit_model, train_seconds,
        )  # fmt: skip
        if export_dir is not None:
            export_trained(task, model, data, config, history, metrics, interrupted,
                           export_dir, chief, data_summary=summary)  # fmt: skip
    return result


__all__ = [  # the names this module had before it was split, for one release
    "HISTORY_FILE", "HISTORY_PLOT_FILE", "MAX_BATCH_SIZE", "MAX_EPOCHS", "METRICS_FILE",
    "EpochLog", "NonFiniteLoss", "StopOnNonFiniteLoss", "StopOnNonFiniteWeights",
    "TrainingConfig", "TrainingResult", "chief_run_directory", "describe_error",
    "export_trained", "keep_model_somewhere", "require_settings_of_the_chief", "run_recipe",
    "steps_per_epoch", "train", "write_json",
]  # fmt: skip
