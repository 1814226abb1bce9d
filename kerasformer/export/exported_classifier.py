"""Use an exported classifier through its SavedModel signature, as a server would."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.export.saved_model import CLASS_NAMES_FILE, INPUT_NAME, KERAS_FILE

# tf.debugging.Assert reports "assertion failed: [message] [data]".
ASSERTION = re.compile(r"assertion failed: \[([^\]]*)\] \[([^\]]*)\]")


class ExportedClassifier:
    """An exported classifier loaded with ``tf.saved_model.load``.

    Example:

    >>> classifier = ExportedClassifier("saved_models/bbc_news-transformer")
    >>> classifier.predict_proba(["Shares rose on Monday"]).shape
    (1, 5)
    """

    def __init__(self, export_dir: str | Path):
        export_dir = Path(export_dir)
        if not (export_dir / "saved_model.pb").is_file():
            raise KerasformerError(
                f"{export_dir} is not an exported model (no saved_model.pb); pass the "
                "directory that `kerasformer train` wrote, e.g. saved_models/bbc_news-transformer."
            )
        self.export_dir = export_dir
        self._serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
        names_file = export_dir / "assets" / CLASS_NAMES_FILE
        self.class_names = tuple(names_file.read_text(encoding="utf-8").splitlines())

    def predict_proba(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Class probabilities, one row per text, computed in batches."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, len(self.class_names)), dtype=np.float32)
        rows = []
        for start in range(0, len(texts), batch_size):
            batch = tf.constant(texts[start : start + batch_size], dtype=tf.string)
            try:
                rows.append(self._serve(**{INPUT_NAME: batch})["probabilities"].numpy())
            except tf.errors.InvalidArgumentError as error:
                raise KerasformerError(describe_serving_error(error, start)) from None
        return np.concatenate(rows)


def describe_serving_error(error: tf.errors.InvalidArgumentError, offset: int) -> str:
    """The serving function's own assertion message in one line, with absolute indices."""
    match = ASSERTION.search(error.message)
    if match is None:
        return " ".join(error.message.split())
    reason, indices = match.groups()
    positions = ", ".join(str(int(i) + offset) for i in indices.split())
    return f"{reason} {positions}"


def load_keras_model(export_dir: str | Path) -> keras.Model:
    """The Keras model of an export (``model.keras``), with kerasformer's layers, uncompiled.

    Use it to look inside a model (its layers, attention weights) or to train it further;
    serving is faster and needs no kerasformer through ``ExportedClassifier``. A BERT
    classifier's ``model.keras`` refers to its preprocess and encoder by their handles,
    which must still exist.
    """
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401  (ops of BERT preprocess models)

    import kerasformer.layers  # noqa: F401  (registers the custom layers for loading)

    path = Path(export_dir) / KERAS_FILE
    if not path.is_file():
        raise KerasformerError(
            f"{export_dir} has no {KERAS_FILE}; pass a directory written by `kerasformer train`."
        )
    try:
        # BERT classifiers hold hub.KerasLayer layers, which Keras cannot find by name;
        # they reload their SavedModels from the handles they were built with.
        return keras.models.load_model(
            path, compile=False, custom_objects={"KerasLayer": hub.KerasLayer}
        )
    except (OSError, ValueError, TypeError) as error:
        raise KerasformerError(f"cannot load {path}: {' '.join(str(error).split())}") from None
