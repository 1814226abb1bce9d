"""Train a classifier on a dataset, evaluate it, and export it with its history and metrics."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.datasets import LabeledTexts, TextClassificationData, load_dataset
from kerasformer.datasets.pipeline import (
    INPUT_PIPELINES,
    TOKEN_ID_PIPELINES,
    text_batches,
    token_id_batches,
    token_id_examples,
)
from kerasformer.errors import KerasformerError
from kerasformer.export.saved_model import export_classifier
from kerasformer.models import (
    build_classifier,
    string_classifier,
    text_vectorizer,
    token_id_classifier,
)
from kerasformer.models.bert_classifier import encoder_layer
from kerasformer.plots import plot_training_history, save_figure
from kerasformer.training.acceleration import (
    dtype_policy,
    make_strategy,
    split_off_string_preprocessing,
)
from kerasformer.training.evaluation import classification_metrics
from kerasformer.training.recipes import (
    RECIPES_BY_MODEL,
    default_recipe,
    recipe_phases,
    require_recipe_fits_model,
)
from kerasformer.training.reproducibility import make_reproducible

HISTORY_FILE = "history.json"
METRICS_FILE = "metrics.json"
HISTORY_PLOT_FILE = "history.png"
# A model with its own vectorizer trains on token ids made once; a BERT preprocess
# model is a SavedModel layer and keeps running on strings.
PIPELINES_BY_MODEL = {"transformer": INPUT_PIPELINES, "bert": ("strings",)}
DEFAULT_PIPELINE = {"transformer": "bucketed", "bert": "strings"}


@dataclass
class TrainingConfig:
    """Everything a training run depends on; saved with its metrics."""

    model: str = "transformer"
    dataset: str = "bbc_news"
    data_dir: str | None = None
    # Chosen on BBC News validation accuracy (mean of 3 seeds levels off by epoch 10).
    epochs: int = 10
    batch_size: int = 128
    learning_rate: float = 1e-3
    recipe: str | None = None  # None: the model's default (see training.recipes)
    fine_tune_learning_rate: float = 3e-5
    warmup_fraction: float = 0.1
    frozen_epochs: int = 1
    seed: int = 0
    deterministic: bool = False
    strategy: str = "default"
    mixed_precision: bool = False
    xla: bool = False
    input_pipeline: str | None = None  # None: the model's default (see PIPELINES_BY_MODEL)
    validation_fraction: float = 0.1
    export_dir: str | None = None
    overwrite: bool = False
    model_options: dict = field(default_factory=dict)

    def resolved_recipe(self) -> str:
        return self.recipe or default_recipe(self.model)

    def resolved_input_pipeline(self) -> str:
        return self.input_pipeline or DEFAULT_PIPELINE.get(self.model, "strings")

    def resolved_export_dir(self) -> Path:
        if self.export_dir is not None:
            return Path(self.export_dir)
        name = f"{self.dataset}-{self.model}"
        if self.resolved_recipe() != default_recipe(self.model):
            name += f"-{self.resolved_recipe()}"
        return Path("saved_models") / name

    def validate(self) -> None:
        if self.model not in RECIPES_BY_MODEL:
            raise KerasformerError(
                f"unknown model {self.model!r}; choose one of: {', '.join(RECIPES_BY_MODEL)}."
            )
        require_recipe_fits_model(self.resolved_recipe(), self.model)
        pipeline = self.resolved_input_pipeline()
        if pipeline not in PIPELINES_BY_MODEL[self.model]:
            raise KerasformerError(
                f"input pipeline {pipeline!r} does not fit model {self.model!r}; choose one "
                f"of: {', '.join(PIPELINES_BY_MODEL[self.model])}."
            )
        if self.xla and pipeline == "dynamic":
            raise KerasformerError(
                "--xla would compile again for every batch length of the 'dynamic' input "
                "pipeline; use 'bucketed' or 'padded' with --xla."
            )
        for name in ("epochs", "batch_size", "frozen_epochs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise KerasformerError(f"{name} must be a whole number >= 1, got {value!r}.")
        for name in ("learning_rate", "fine_tune_learning_rate"):
            if not getattr(self, name) > 0:
                raise KerasformerError(f"{name} must be positive, got {getattr(self, name)!r}.")
        if not 0 <= self.warmup_fraction < 1:
            raise KerasformerError(
                f"warmup_fraction must be in [0, 1), got {self.warmup_fraction!r}."
            )
        if not 0 < self.validation_fraction < 1:
            raise KerasformerError(
                f"validation_fraction must be between 0 and 1, got {self.validation_fraction!r}."
            )


@dataclass
class TrainingResult:
    model: keras.Model
    data: TextClassificationData
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
    data: TextClassificationData | None = None,
) -> TrainingResult:
    """Run one training job as configured and return the trained model and its metrics.

    ``data`` trains on your own splits instead of loading ``config.dataset``, which
    then only names the export directory.

    Example:

    >>> result = train(TrainingConfig(dataset="bbc_news"))
    >>> result.metrics["test"]["accuracy"] > 0.9
    True
    """
    config.validate()
    export_dir = config.resolved_export_dir() if export else None
    if export_dir is not None:
        require_writable_export_dir(export_dir, config.overwrite)

    make_reproducible(config.seed, deterministic_ops=config.deterministic)
    if data is None:
        data = load_dataset(
            config.dataset, config.data_dir, config.validation_fraction, split_seed=0
        )
    if verbose:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        print(f"{data.name}: {sizes} examples; classes: {', '.join(data.class_names)}")
    strategy = make_strategy(config.strategy)
    with dtype_policy(config.mixed_precision), strategy.scope():
        model = build_classifier(
            config.model, data.num_classes, data.splits["train"].texts, **config.model_options
        )
        plan = FitPlan.for_model(model, config.resolved_input_pipeline(), xla=config.xla)
    started = time.perf_counter()
    history, interrupted = run_recipe(plan, data, config, verbose)
    train_seconds = time.perf_counter() - started
    metrics = {
        split: evaluate_split(model, data.splits[split], data.class_names, config.batch_size)
        for split in ("validation", "test")
    }
    if export_dir is not None:
        export_classifier(model, data.class_names, export_dir)
        write_json(export_dir / HISTORY_FILE, history)
        if history.get("loss"):  # nothing to draw when stopped inside the first epoch
            title = f"{data.name}: {config.model} ({config.resolved_recipe()})"
            save_figure(plot_training_history(history, title), export_dir / HISTORY_PLOT_FILE)
        write_json(
            export_dir / METRICS_FILE,
            {
                "config": asdict(config),
                "interrupted": interrupted,
                "sizes": data.sizes(),
                **metrics,
            },
        )
    return TrainingResult(
        model, data, history, metrics, export_dir, interrupted, plan.fit_model, train_seconds
    )


@dataclass
class FitPlan:
    """What ``model.fit`` trains, and on which batches.

    Either the string-in model itself, or a model on token ids (or, under XLA, on the
    preprocessed tensors) that shares every weight with it. The string-in model is
    what gets evaluated and exported either way.
    """

    full_model: keras.Model
    fit_model: keras.Model
    jit_compile: bool
    make_batches: Callable[[LabeledTexts, int, int | None], tf.data.Dataset]

    @classmethod
    def for_model(cls, model: keras.Model, pipeline: str, xla: bool) -> FitPlan:
        if pipeline in TOKEN_ID_PIPELINES:
            return cls.on_token_ids(model, pipeline, xla)
        if not xla:
            return cls(model, model, False, text_batches)
        preprocessing, core = split_off_string_preprocessing(model)

        def preprocessed_batches(part, batch_size, shuffle_seed):
            return (
                text_batches(part, batch_size, shuffle_seed)
                .map(lambda texts, labels: (preprocessing(texts), labels), tf.data.AUTOTUNE)
                .prefetch(tf.data.AUTOTUNE)
            )

        return cls(model, core, True, preprocessed_batches)

    @classmethod
    def on_token_ids(cls, model: keras.Model, pipeline: str, xla: bool) -> FitPlan:
        vectorizer = text_vectorizer(model)
        maxlen = vectorizer.get_config()["output_sequence_length"]

        def id_batches(part, batch_size, shuffle_seed):
            examples = token_id_examples(part, vectorizer)
            return token_id_batches(
                examples, batch_size, pipeline, maxlen, shuffle_seed, fixed_shapes=xla
            )

        return cls(model, token_id_classifier(model), xla, id_batches)

    def batches(
        self, part: LabeledTexts, batch_size: int, shuffle_seed: int | None = None
    ) -> tf.data.Dataset:
        return self.make_batches(part, batch_size, shuffle_seed)


def run_recipe(
    plan: FitPlan, data: TextClassificationData, config: TrainingConfig, verbose: int
) -> tuple[dict[str, list], bool]:
    """Fit the model phase by phase; Ctrl-C stops training but keeps what was learned.

    Returns the history of every epoch (with the phase it belongs to) and whether
    training was interrupted.
    """
    model = plan.fit_model
    train_batches = plan.batches(data.splits["train"], config.batch_size, config.seed)
    validation_batches = plan.batches(data.splits["validation"], config.batch_size)
    phases = recipe_phases(
        config.resolved_recipe(),
        epochs=config.epochs,
        steps_per_epoch=math.ceil(len(data.splits["train"]) / config.batch_size),
        learning_rate=config.learning_rate,
        fine_tune_learning_rate=config.fine_tune_learning_rate,
        warmup_fraction=config.warmup_fraction,
        frozen_epochs=config.frozen_epochs,
    )
    history: dict[str, list] = {"phase": [], "seconds": []}
    done = 0
    for phase in phases:
        if phase.encoder_trainable is not None:
            encoder_layer(plan.full_model).trainable = phase.encoder_trainable
        model.compile(
            optimizer=phase.make_optimizer(),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
            jit_compile=plan.jit_compile,
        )
        if verbose:
            print(f"Phase {phase.name!r}: {phase.epochs} epoch(s)")
            plan.full_model.summary()
        recorder = EpochHistory()
        try:
            model.fit(
                train_batches,
                validation_data=validation_batches,
                initial_epoch=done,
                epochs=done + phase.epochs,
                callbacks=[recorder],
                verbose=verbose,
            )
        except KeyboardInterrupt:
            return add_epochs(history, recorder, phase.name), True
        except tf.errors.InvalidArgumentError as error:
            if "determinism is enabled" not in error.message:
                raise
            raise KerasformerError(
                "deterministic ops cannot train this model: its SavedModel encoder has "
                "unseeded random ops (dropout); run without --deterministic."
            ) from None
        add_epochs(history, recorder, phase.name)
        done += phase.epochs
    return history, False


class EpochHistory(keras.callbacks.History):
    """Keras's history plus each epoch's wall time (training and validation)."""

    def on_epoch_begin(self, epoch, logs=None):
        self._started = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(
            epoch, {**(logs or {}), "seconds": time.perf_counter() - self._started}
        )


def add_epochs(history: dict[str, list], recorder, phase: str) -> dict[str, list]:
    epochs = 0
    for key, values in recorder.history.items():
        history.setdefault(key, []).extend(float(v) for v in values)
        epochs = len(values)
    history["phase"].extend([phase] * epochs)
    return history


def evaluate_split(
    model: keras.Model, part: LabeledTexts, class_names: tuple[str, ...], batch_size: int
) -> dict:
    return classification_metrics(
        part.labels, predict_probabilities(model, part.texts, batch_size), class_names
    )


def predict_probabilities(model: keras.Model, texts, batch_size: int) -> np.ndarray:
    """The model's probabilities for many texts, batch by batch, skipping shared padding."""
    classify = tf.function(string_classifier(model), reduce_retracing=True)
    batches = tf.data.Dataset.from_tensor_slices(tf.constant(texts, dtype=tf.string))
    rows = [classify(batch).numpy() for batch in batches.batch(batch_size)]
    return np.concatenate(rows) if rows else np.zeros((0, model.output_shape[-1]), np.float32)


def require_writable_export_dir(export_dir: Path, overwrite: bool) -> None:
    """Refuse before training, not after, when the export could not be written."""
    if export_dir.exists() and not overwrite:
        raise KerasformerError(
            f"{export_dir} already exists; pass --overwrite to replace it or --export-dir "
            "to write somewhere else."
        )
    if export_dir.exists() and not export_dir.is_dir():
        raise KerasformerError(f"{export_dir} is a file; --export-dir must name a directory.")
    parent = next((p for p in [export_dir, *export_dir.parents] if p.exists()), Path("."))
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise KerasformerError(f"cannot write to {parent}; choose a writable --export-dir.")


def write_json(path: Path, payload) -> None:
    path.write_text(json.dumps(payload, indent=2, default=_json_default) + "\n", encoding="utf-8")


def _json_default(value):
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
