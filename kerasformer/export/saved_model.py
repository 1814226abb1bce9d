"""Export a classifier as a SavedModel that maps raw strings to class probabilities.

The export directory is a SavedModel (``saved_model_cli`` and ``tf.saved_model.load``
work on it without kerasformer installed) with the Keras model beside it:

    saved_model.pb, variables/, assets/class_names.txt   the SavedModel
    model.keras                                          the Keras model, for kerasformer
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from kerasformer.backend import keras, tf
from kerasformer.export.saved_model_files import write_saved_model
from kerasformer.files.staged_directory import require_replaceable, staged_directory
from kerasformer.files.text_files import write_settings
from kerasformer.loading.exported_classifier import CLASS_NAMES_FILE, INPUT_NAME, SETTINGS_FILE
from kerasformer.models.text_classifier import TextClassifier


class ClassifierServing(tf.Module):
    """What the SavedModel holds: the model, its class names, and the serving functions.

    ``serve`` returns, per text, ``probabilities``, ``predicted_class`` and
    ``known_tokens``: how many of the tokens the model read are in its vocabulary. Every
    text gets a finite probability row; one with no known token (empty, punctuation,
    emoji, a script the model never saw) gets a guess, which callers flag by
    ``known_tokens == 0``. A multi-label classifier (with a ``threshold``) also returns
    ``over_threshold`` (a bool per class) and ``labels`` (the names of the classes over
    it, joined by ``,``). Only TensorFlow ops are traced, so no kerasformer is needed to
    serve it.
    """

    def __init__(
        self, model: keras.Model | TextClassifier, class_names: Sequence[str],
        class_names_file: Path,
    ):  # fmt: skip
        super().__init__(name="classifier_serving")
        classifier = TextClassifier.of(model)
        self.model = classifier.model
        # Same weights as the model; also counts the known tokens of each text.
        self._classify = classifier.counting_function()
        self.threshold = classifier.threshold
        self.class_names = tf.constant(list(class_names), dtype=tf.string)
        self.class_names_file = tf.saved_model.Asset(str(class_names_file))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def serve(self, inputs):
        probabilities, known_tokens = self._classify(inputs)
        outputs = {
            "probabilities": probabilities,
            "predicted_class": tf.gather(self.class_names, tf.argmax(probabilities, axis=-1)),
            "known_tokens": known_tokens,
        }
        if self.threshold is not None:
            over = probabilities > self.threshold
            names = tf.ragged.boolean_mask(
                tf.broadcast_to(self.class_names, tf.shape(probabilities)), over
            )
            outputs.update(
                over_threshold=over, labels=tf.strings.reduce_join(names, axis=-1, separator=",")
            )
        return outputs

    @tf.function(input_signature=[])
    def get_class_names(self):
        return {"class_names": self.class_names}


def export_classifier(
    model: keras.Model, class_names: Sequence[str], export_dir: str | Path, overwrite: bool = True
) -> Path:
    """Write the SavedModel and ``model.keras`` to ``export_dir``, replacing it whole.

    The ``serving_default`` signature takes ``inputs``, a batch of strings, and returns
    ``probabilities`` (one per class, summing to 1) and ``predicted_class`` (its name).
    A second signature, ``class_names``, returns the class names in output order.

    The export is written beside ``export_dir`` and swapped in complete, so a failure or
    a killed process never leaves half a model; an existing ``export_dir`` is replaced
    only if kerasformer wrote it (and ``overwrite`` is true). Each text's ``known_tokens``
    is returned too, and a multi-label classifier (a `TextClassifier` with a
    ``threshold``) also writes ``classifier.json`` and returns ``over_threshold`` and
    ``labels``. `ExportedClassifier` reads the export back.

    Args:
        model: A string-in classifier from `kerasformer.models.build_classifier` (or its
            `TextClassifier`), or one `load_keras_model` loaded.
        class_names: The class names, one per output, in output order.
        export_dir: The directory to write; its parent is created if needed.
        overwrite: Whether an existing export of kerasformer's at ``export_dir`` may be
            replaced; False refuses any existing ``export_dir``.

    Returns:
        ``export_dir``, as a `Path`.

    Raises:
        KerasformerError: ``export_dir`` cannot be written: it exists and ``overwrite``
            is false, kerasformer did not write it, it is a file or a link, it lies
            inside another output, or its parent is not writable.
        ValueError: ``class_names`` does not have one name per output, or the model can
            not count its known tokens (neither a ``TextVectorization`` nor a BERT
            preprocess layer).

    Examples:
        >>> from kerasformer.loading import ExportedClassifier, load_keras_model
        >>> model = load_keras_model("saved_models/bbc_news-transformer")
        >>> names = ["business", "entertainment", "politics", "sports", "tech"]
        >>> export_dir = export_classifier(model, names, Path(tempfile.mkdtemp()) / "bbc")
        >>> ExportedClassifier(export_dir).class_names == tuple(names)
        True
    """
    require_replaceable(export_dir, overwrite, flag="--export-dir", kind="classifier")
    with staged_directory(export_dir, "classifier", overwrite) as staging:
        write_classifier(model, class_names, staging)
    return Path(export_dir)


def write_classifier(
    model: keras.Model | TextClassifier, class_names: Sequence[str], directory: Path
) -> None:
    """Write the SavedModel and ``model.keras`` into ``directory`` (which may exist, empty)."""
    classifier = TextClassifier.of(model)
    model = classifier.model
    if len(class_names) != model.output_shape[-1]:
        raise ValueError(
            f"{len(class_names)} class names for a model with {model.output_shape[-1]} outputs."
        )
    with tempfile.TemporaryDirectory(prefix="kerasformer-assets-") as assets:
        names_file = Path(assets) / CLASS_NAMES_FILE
        names_file.write_text("".join(f"{name}\n" for name in class_names), encoding="utf-8")
        serving = ClassifierServing(classifier, class_names, names_file)
        signatures = {"serving_default": serving.serve, "class_names": serving.get_class_names}
        write_saved_model(directory, serving, signatures, model)
    if classifier.threshold is not None:
        write_settings(
            Path(directory) / SETTINGS_FILE,
            {"multi_label": True, "threshold": float(classifier.threshold)},
        )
