"""Train a classifier on a dataset, evaluate it, and export it with its history and metrics."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.datasets import LabeledTexts, TextClassificationData, load_dataset
from kerasformer.errors import KerasformerError
from kerasformer.export.saved_model import export_classifier
from kerasformer.models import build_classifier
from kerasformer.training.evaluation import classification_metrics
from kerasformer.training.reproducibility import make_reproducible

HISTORY_FILE = "history.json"
METRICS_FILE = "metrics.json"


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
    seed: int = 0
    validation_fraction: float = 0.1
    export_dir: str | None = None
    overwrite: bool = False
    model_options: dict = field(default_factory=dict)

    def resolved_export_dir(self) -> Path:
        if self.export_dir is not None:
            return Path(self.export_dir)
        return Path("saved_models") / f"{self.dataset}-{self.model}"

    def validate(self) -> None:
        for name in ("epochs", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise KerasformerError(f"{name} must be a whole number >= 1, got {value!r}.")
        if not self.learning_rate > 0:
            raise KerasformerError(f"learning_rate must be positive, got {self.learning_rate!r}.")
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


def train(config: TrainingConfig, export: bool = True, verbose: int = 1) -> TrainingResult:
    """Run one training job as configured and return the trained model and its metrics.

    Example:

    >>> result = train(TrainingConfig(dataset="bbc_news"))
    >>> result.metrics["test"]["accuracy"] > 0.9
    True
    """
    config.validate()
    export_dir = config.resolved_export_dir() if export else None
    if export_dir is not None:
        require_writable_export_dir(export_dir, config.overwrite)

    make_reproducible(config.seed)
    data = load_dataset(config.dataset, config.data_dir, config.validation_fraction, split_seed=0)
    if verbose:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        print(f"{data.name}: {sizes} examples; classes: {', '.join(data.class_names)}")
    model = build_classifier(
        config.model, data.num_classes, data.splits["train"].texts, **config.model_options
    )
    model.compile(
        optimizer=keras.optimizers.Adam(config.learning_rate),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    history, interrupted = fit(model, data, config, verbose)
    metrics = {
        split: evaluate_split(model, data.splits[split], data.class_names, config.batch_size)
        for split in ("validation", "test")
    }
    if export_dir is not None:
        export_classifier(model, data.class_names, export_dir)
        write_json(export_dir / HISTORY_FILE, history)
        write_json(
            export_dir / METRICS_FILE,
            {
                "config": asdict(config),
                "interrupted": interrupted,
                "sizes": data.sizes(),
                **metrics,
            },
        )
    return TrainingResult(model, data, history, metrics, export_dir, interrupted)


def fit(
    model: keras.Model, data: TextClassificationData, config: TrainingConfig, verbose: int
) -> tuple[dict[str, list[float]], bool]:
    """``model.fit`` with a progress bar; Ctrl-C stops training but keeps what was learned."""
    train_batches = batched(data.splits["train"], config.batch_size, shuffle_seed=config.seed)
    validation_batches = batched(data.splits["validation"], config.batch_size)
    history = keras.callbacks.History()
    try:
        model.fit(
            train_batches,
            validation_data=validation_batches,
            epochs=config.epochs,
            callbacks=[history],
            verbose=verbose,
        )
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    return {key: [float(v) for v in values] for key, values in history.history.items()}, interrupted


def batched(
    part: LabeledTexts, batch_size: int, shuffle_seed: int | None = None
) -> tf.data.Dataset:
    dataset = part.to_dataset()
    if shuffle_seed is not None:
        dataset = dataset.shuffle(len(part), seed=shuffle_seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def evaluate_split(
    model: keras.Model, part: LabeledTexts, class_names: tuple[str, ...], batch_size: int
) -> dict:
    texts = tf.data.Dataset.from_tensor_slices(tf.constant(part.texts, dtype=tf.string))
    probabilities = model.predict(texts.batch(batch_size), verbose=0)
    return classification_metrics(part.labels, probabilities, class_names)


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
