"""Export a classifier as a SavedModel that maps raw strings to class probabilities.

The export directory is a SavedModel (``saved_model_cli`` and ``tf.saved_model.load``
work on it without kerasformer installed) with the Keras model beside it:

    saved_model.pb, variables/, assets/class_names.txt   the SavedModel
    model.keras                                          the Keras model, for kerasformer
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kerasformer.backend import keras, tf
from kerasformer.models import string_classifier

INPUT_NAME = "inputs"
CLASS_NAMES_FILE = "class_names.txt"
KERAS_FILE = "model.keras"


class ClassifierServing(tf.Module):
    """What the SavedModel holds: the model, its class names, and the serving functions."""

    def __init__(self, model: keras.Model, class_names: Sequence[str], class_names_file: Path):
        super().__init__(name="classifier_serving")
        self.model = model
        # Same weights as the model; skips the padding that a whole batch shares.
        self._classify = string_classifier(model)
        self.class_names = tf.constant(list(class_names), dtype=tf.string)
        self.class_names_file = tf.saved_model.Asset(str(class_names_file))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def serve(self, inputs):
        probabilities = self._classify(inputs, training=False)
        # A text with no words leaves the masked average with nothing to average, so its
        # probabilities are NaN; fail loudly instead of returning them.
        finite = tf.reduce_all(tf.math.is_finite(probabilities), axis=-1)
        check = tf.debugging.Assert(
            tf.reduce_all(finite),
            [
                "cannot classify a text with no words (empty or punctuation only); input index:",
                tf.where(tf.logical_not(finite))[:, 0],
            ],
            summarize=20,
        )
        with tf.control_dependencies([check]):
            probabilities = tf.identity(probabilities)
        return {
            "probabilities": probabilities,
            "predicted_class": tf.gather(self.class_names, tf.argmax(probabilities, axis=-1)),
        }

    @tf.function(input_signature=[])
    def get_class_names(self):
        return {"class_names": self.class_names}


def export_classifier(
    model: keras.Model, class_names: Sequence[str], export_dir: str | Path
) -> Path:
    """Write the SavedModel and ``model.keras`` to ``export_dir`` (replacing it).

    The ``serving_default`` signature takes ``inputs``, a batch of strings, and returns
    ``probabilities`` (one per class, summing to 1) and ``predicted_class`` (its name).
    A second signature, ``class_names``, returns the class names in output order.
    """
    export_dir = Path(export_dir)
    if len(class_names) != model.output_shape[-1]:
        raise ValueError(
            f"{len(class_names)} class names for a model with {model.output_shape[-1]} outputs."
        )
    # Build into a sibling directory and swap it in at the end, so a failed export
    # never leaves half a model where a good one was.
    export_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{export_dir.name}-", dir=export_dir.parent))
    try:
        names_file = staging / CLASS_NAMES_FILE
        names_file.write_text("".join(f"{name}\n" for name in class_names), encoding="utf-8")
        serving = ClassifierServing(model, class_names, names_file)
        saved_model_dir = staging / "saved_model"
        tf.saved_model.save(
            serving,
            str(saved_model_dir),
            signatures={
                "serving_default": serving.serve,
                "class_names": serving.get_class_names,
            },
        )
        model.save(saved_model_dir / KERAS_FILE)
        if export_dir.exists():
            shutil.rmtree(export_dir)
        saved_model_dir.rename(export_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return export_dir
