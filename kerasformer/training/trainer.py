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
    r"""What `train` returns: the trained model, its data, history and metrics.

    Args:
        model: The task's model object: a Keras classifier, a ``Translator`` ...
        data: The data it trained on: `TextClassificationData`, `TranslationData` ...
        history: Each epoch's loss and metrics by name (``loss``, ``val_loss``,
            ``accuracy`` ...), with its ``phase`` (the recipe's stage) and ``seconds``;
            ``best_epoch`` and ``averaged_epochs`` where early stopping or averaging
            chose the weights.
        metrics: The trained model's metrics on ``validation`` and ``test``, as
            ``metrics.json`` holds them.
        export_dir: Where the model was exported; None when `train` did not export.
        interrupted: Whether Ctrl-C stopped training (what was learned so far is kept).
        fit_model: What ``model.fit`` trained: ``model``, or a part of it.
        train_seconds: Wall time from building the input pipeline to the last epoch.

    Examples:
        >>> from pathlib import Path
        >>> rows = [f"Shares rose {i},business" for i in range(20)]
        >>> rows += [f"City won {i},sport" for i in range(20)]
        >>> _ = Path("headlines_tiny.csv").write_text("\n".join(["text,label", *rows]) + "\n")
        >>> config = TrainingConfig(train_file="headlines_tiny.csv", epochs=1, batch_size=8,
        ...     model_options={"vocab_size": 100, "maxlen": 16, "embed_dim": 8, "ff_dim": 8})
        >>> result = train(config, export=False, verbose=0)
        >>> result.export_dir, result.interrupted, sorted(result.history)
        (None, False, ['accuracy', 'loss', 'phase', 'seconds', 'val_accuracy', 'val_loss'])
        >>> sorted(result.metrics["test"])
        ['accuracy', 'confusion_matrix', 'per_class']
    """

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
    r"""Run one training job as configured and return the trained model and its metrics.

    The settings and the export directory are checked before any work; then the data is
    loaded, the model built and fitted by its recipe, evaluated on validation and test,
    and exported (a SavedModel with ``model.keras``, ``config.json``, ``history.json``
    and ``metrics.json`` beside it).

    Args:
        config: The run's settings.
        export: Whether to export to ``config``'s export directory.
        verbose: 1 prints the data's sizes, Keras's progress and the metrics; 0 prints
            nothing.
        data: Your own splits to train on (a `TextClassificationData` for
            classification ...) instead of loading ``config.dataset``, which then only
            names the export directory.

    Returns:
        The trained model, its data, history and metrics, and where it was exported.

    Raises:
        KerasformerError: Settings that cannot train, an export directory that exists
            (without ``config.overwrite``) or cannot be written, or data the task refuses;
            its subclass `NonFiniteLoss` when the loss or a weight becomes NaN or infinite.

    Examples:
        >>> from pathlib import Path
        >>> rows = [f"Shares rose {i},business" for i in range(20)]
        >>> rows += [f"City won {i},sport" for i in range(20)]
        >>> _ = Path("news_tiny.csv").write_text("\n".join(["text,label", *rows]) + "\n")
        >>> config = TrainingConfig(train_file="news_tiny.csv", epochs=1, batch_size=8,
        ...     model_options={"vocab_size": 100, "maxlen": 16, "embed_dim": 8, "ff_dim": 8},
        ...     export_dir="news-classifier", overwrite=True)
        >>> result = train(config, verbose=0)
        >>> result.data.class_names, 0 <= result.metrics["test"]["accuracy"] <= 1
        (('business', 'sport'), True)
        >>> sorted(path.name for path in result.export_dir.iterdir())
        ['assets', 'config.json', ..., 'metrics.json', 'model.keras', 'saved_model.pb', 'variables']
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
