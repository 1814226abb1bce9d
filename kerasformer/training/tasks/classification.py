"""Text classification: labelled texts in, class probabilities out."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.datasets import LabeledTexts, TextClassificationData, load_dataset
from kerasformer.datasets.text_classification_data import require_trainable
from kerasformer.export.saved_model import write_classifier
from kerasformer.models import build_classifier, string_classifier
from kerasformer.training.evaluation import classification_metrics
from kerasformer.training.fit_plan import FitPlan


class ClassificationTask:
    name = "classification"
    models = ("transformer", "bert")
    datasets = ("bbc_news", "ag_news")
    headline_metrics = ("accuracy",)
    export_kind = "classifier"

    def load_data(self, config) -> TextClassificationData:
        return load_dataset(
            config.dataset, config.data_dir, config.validation_fraction, split_seed=0
        )

    def require_trainable(self, data: TextClassificationData) -> None:
        require_trainable(data)

    def describe(self, data: TextClassificationData) -> str:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        return f"{data.name}: {sizes} examples; classes: {', '.join(data.class_names)}"

    def build(self, config, data: TextClassificationData):
        model = build_classifier(
            config.model, data.num_classes, data.splits["train"].texts, **config.model_options
        )
        return model, FitPlan.for_model(model, config.resolved_input_pipeline(), xla=config.xla)

    def evaluate(self, model, data: TextClassificationData, config) -> dict[str, dict]:
        return {
            split: evaluate_split(model, data.splits[split], data.class_names, config.batch_size)
            for split in ("validation", "test")
        }

    def write_export(self, model, data: TextClassificationData, directory: Path) -> None:
        write_classifier(model, data.class_names, directory)

    def keras_model(self, model):
        return model


def evaluate_split(
    model: keras.Model, part: LabeledTexts, class_names: tuple[str, ...], batch_size: int
) -> dict:
    return classification_metrics(
        part.labels, predict_probabilities(model, part.texts, batch_size), class_names
    )


def predict_probabilities(model: keras.Model, texts, batch_size: int) -> np.ndarray:
    """The model's probabilities for many texts, batch by batch, skipping shared padding.

    Texts are batched in order of length, so each batch holds texts of similar length
    and is padded only to its own longest; rows come back in the texts' order.
    """
    if len(texts) == 0:
        return np.zeros((0, model.output_shape[-1]), np.float32)
    classify = tf.function(string_classifier(model), reduce_retracing=True)
    order = np.argsort([len(text) for text in texts], kind="stable")
    ordered = tf.constant([texts[i] for i in order], dtype=tf.string)
    batches = tf.data.Dataset.from_tensor_slices(ordered).batch(batch_size)
    rows = np.concatenate([classify(batch).numpy() for batch in batches])
    probabilities = np.empty_like(rows)
    probabilities[order] = rows
    return probabilities
