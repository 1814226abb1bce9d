"""Use an exported classifier through its SavedModel signature, as a server would."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.export.saved_model import CLASS_NAMES_FILE, INPUT_NAME

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
