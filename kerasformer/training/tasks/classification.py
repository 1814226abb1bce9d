"""Text classification: labelled texts in, class probabilities out."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.datasets import LabeledTexts, TextClassificationData
from kerasformer.datasets.data_summary import summarize_texts
from kerasformer.datasets.text_classification_data import require_trainable
from kerasformer.errors import KerasformerError
from kerasformer.export.saved_model import write_classifier
from kerasformer.models import TextClassifier, build_text_classifier
from kerasformer.models.transformer_classifier import DEFAULTS
from kerasformer.training.evaluation import (
    best_threshold,
    classification_metrics,
    multi_label_metrics,
)
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.tasks.base import Task


class ClassificationTask(Task):
    """Labelled texts in; a string-in classifier, its accuracy and a classifier export out."""

    def require_trainable(self, data: TextClassificationData) -> None:
        require_trainable(data)

    def describe(self, data: TextClassificationData) -> str:
        sizes = ", ".join(f"{count} {split}" for split, count in data.sizes().items())
        kind = "multi-label " if data.multi_label else ""
        return f"{data.name}: {sizes} examples; {kind}classes: {', '.join(data.class_names)}"

    def build(self, config, data: TextClassificationData):
        options = dict(config.model_options)
        if data.multi_label:
            options["output_activation"] = "sigmoid"  # each class's probability on its own
        classifier = build_text_classifier(
            config.model, data.num_classes, data.splits["train"].texts, **options
        )
        plan = FitPlan.for_model(classifier, config.resolved_input_pipeline(), xla=config.xla)
        if data.multi_label:
            plan = dataclasses.replace(
                plan,
                loss="binary_crossentropy",
                metrics=[keras.metrics.BinaryAccuracy(name="binary_accuracy"),
                         keras.metrics.AUC(multi_label=True, name="auc")],
            )  # fmt: skip
        return classifier, plan

    def reported_metrics(self, metrics: dict[str, dict]) -> tuple[str, ...]:
        """Accuracy, and a multi-label classifier's micro and macro F1."""
        extra = ("micro_f1", "macro_f1")
        return self.headline_metrics + tuple(
            name for name in extra if all(name in split for split in metrics.values())
        )

    def summarize(self, classifier: TextClassifier, data: TextClassificationData) -> dict:
        return summarize_texts(data, *classifier.length_measure())

    def evaluate(self, model, data: TextClassificationData, config) -> dict[str, dict]:
        """Accuracy and per-class scores; a multi-label classifier's at the threshold with
        the best validation micro F1, which it keeps (``threshold``) for its export."""
        if data.multi_label:
            return evaluate_multi_label(model, data, config.batch_size)
        return {
            split: evaluate_split(model, data.splits[split], data.class_names, config.batch_size)
            for split in ("validation", "test")
        }

    def write_export(self, model, data: TextClassificationData, directory: Path) -> None:
        write_classifier(model, data.class_names, directory)

    def result_model(self, classifier: TextClassifier) -> keras.Model:
        return classifier.model

    def require_fits_in_memory(self, config) -> None:
        """Refuse, before building anything, sizes whose weights could not fit in memory."""
        if config.model != "transformer":
            return
        options = {**DEFAULTS, **config.model_options}
        sizes = [options.get(name) for name in ("vocab_size", "maxlen", "embed_dim")]
        if not all(isinstance(size, int) and size > 0 for size in sizes):
            return  # the model itself says which size is wrong
        vocab_size, maxlen, embed_dim = sizes
        # Weights, gradients and Adam's two moments: four float32 copies of each table.
        needed = 4 * 4 * (vocab_size + maxlen) * embed_dim
        available = physical_memory_bytes()
        if available and needed > available / 2:
            raise KerasformerError(
                f"vocab_size {vocab_size:,} and maxlen {maxlen:,} at embed_dim {embed_dim} need "
                f"about {needed / 2**30:.1f} GiB for the embedding tables alone, more than half "
                f"of this machine's {available / 2**30:.1f} GiB; choose smaller sizes."
            )


def physical_memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def evaluate_multi_label(
    classifier: TextClassifier, data: TextClassificationData, batch_size: int
) -> dict[str, dict]:
    parts = {split: data.splits[split] for split in ("validation", "test")}
    probabilities = {
        split: predict_probabilities(classifier, part.texts, batch_size)
        for split, part in parts.items()
    }
    classifier.threshold = best_threshold(parts["validation"].labels, probabilities["validation"])
    return {
        split: multi_label_metrics(
            part.labels, probabilities[split], data.class_names, classifier.threshold
        )
        for split, part in parts.items()
    }


def evaluate_split(
    model: keras.Model | TextClassifier,
    part: LabeledTexts,
    class_names: tuple[str, ...],
    batch_size: int,
) -> dict:
    return classification_metrics(
        part.labels, predict_probabilities(model, part.texts, batch_size), class_names
    )


def predict_probabilities(
    model: keras.Model | TextClassifier, texts, batch_size: int
) -> np.ndarray:
    """The model's probabilities for many texts, batch by batch, skipping shared padding.

    Texts are batched in order of length, so each batch holds texts of similar length
    and is padded only to its own longest; rows come back in the texts' order.
    """
    classifier = TextClassifier.of(model)
    if len(texts) == 0:
        return np.zeros((0, classifier.model.output_shape[-1]), np.float32)
    # Traced once for every batch size (the last batch is smaller).
    classify = tf.function(
        classifier.string_function(), input_signature=[tf.TensorSpec([None], tf.string)]
    )
    order = np.argsort([len(text) for text in texts], kind="stable")
    ordered = tf.constant([texts[i] for i in order], dtype=tf.string)
    batches = tf.data.Dataset.from_tensor_slices(ordered).batch(batch_size)
    rows = np.concatenate([classify(batch).numpy() for batch in batches])
    probabilities = np.empty_like(rows)
    probabilities[order] = rows
    return probabilities
