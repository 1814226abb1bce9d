"""Use an exported classifier through its SavedModel signature, as a server would."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.files.export_files import REEXPORT, damaged, require_saved_model_files
from kerasformer.files.export_kind import CLASSIFIER, require_export_kind
from kerasformer.loading.keras_model import KERAS_FILE, load_keras_model  # noqa: F401
from kerasformer.loading.serving_function import load_serving_function

KNOWN_TOKENS = "known_tokens"
# What the writer (kerasformer.export.saved_model) and this reader agree on.
INPUT_NAME = "inputs"
CLASS_NAMES_FILE = "class_names.txt"
# A multi-label classifier's settings: {"multi_label": true, "threshold": 0.4}.
SETTINGS_FILE = "classifier.json"


@dataclass(frozen=True)
class Predictions:
    """What an export says about a batch of texts, one entry per text.

    `ExportedClassifier.classify` returns it; `guessed` flags the texts whose class is a
    guess because the model knew none of their tokens.

    Args:
        probabilities: ``(texts, classes)`` class probabilities, every row finite and
            summing to 1 (each class on its own for a multi-label classifier).
        known_tokens: ``(texts,)`` how many of the tokens the model read of each text are
            in its vocabulary; 0 for an empty text, punctuation or unknown words.

    Examples:
        >>> classifier = ExportedClassifier("saved_models/bbc_news-transformer")
        >>> predictions = classifier.classify(["Bank shares", "?!"])
        >>> predictions.probabilities.shape
        (2, 5)
        >>> predictions.known_tokens.tolist(), predictions.guessed.tolist()
        ([2, 0], [False, True])
    """

    probabilities: np.ndarray  # (texts, classes), every row finite and summing to 1
    known_tokens: np.ndarray  # (texts,) how many tokens the model read are in its vocabulary

    @property
    def guessed(self) -> np.ndarray:
        """Texts with no known token: their class is a guess, not a reading of the text."""
        return self.known_tokens == 0


class ExportedClassifier:
    """An exported classifier loaded with ``tf.saved_model.load``: raw texts in, class
    probabilities out.

    It runs the export's ``serving_default`` signature, as a server would, so it needs
    TensorFlow alone: no Keras model is rebuilt. ``class_names`` holds the classes in
    output order; ``threshold`` is a multi-label classifier's probability over which a
    class is predicted (None for one class per text).

    Args:
        export_dir: A directory `export_classifier` (or ``kerasformer train``) wrote:
            its SavedModel, ``assets/class_names.txt`` and, for a multi-label classifier,
            ``classifier.json``.

    Raises:
        KerasformerError: ``export_dir`` is not a classifier export (no ``saved_model.pb``,
            another kind of export), or one of its files is missing or damaged.

    Examples:
        >>> classifier = ExportedClassifier("saved_models/bbc_news-transformer")
        >>> classifier.class_names
        ('business', 'entertainment', 'politics', 'sports', 'tech')
        >>> classifier.predict_proba(["Shares rose on Monday"]).shape
        (1, 5)
    """

    def __init__(self, export_dir: str | Path):
        export_dir = Path(export_dir)
        require_export_kind(export_dir, CLASSIFIER)
        if not (export_dir / "saved_model.pb").is_file():
            raise KerasformerError(
                f"{export_dir} is not an exported model (no saved_model.pb); pass the "
                "directory that `kerasformer train` wrote, e.g. saved_models/bbc_news-transformer."
            )
        require_saved_model_files(export_dir)
        class_names = export_dir / "assets" / CLASS_NAMES_FILE
        if not class_names.is_file() or class_names.stat().st_size == 0:
            raise damaged(class_names)
        self.export_dir = export_dir
        self._serve = load_serving_function(export_dir)
        self.class_names = read_class_names(export_dir, output_count(self._serve))
        settings = export_dir / SETTINGS_FILE
        # None: one class per text (an export without the file); else multi-label.
        self.threshold = (
            float(json.loads(settings.read_text(encoding="utf-8"))["threshold"])
            if settings.is_file()
            else None
        )

    def predict_proba(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Class probabilities, one finite row per text, computed in batches."""
        return self.classify(texts, batch_size).probabilities

    def classify(self, texts: Sequence[str | bytes], batch_size: int = 256) -> Predictions:
        """Probabilities and known-token counts, one per text, computed in batches.

        A text with no known token (empty, punctuation, unknown words) gets a guess,
        flagged in ``Predictions.guessed``; a text that is not valid UTF-8 is refused.
        """
        encoded = utf8_texts(texts)
        self.require_known_tokens_output()
        if not encoded:
            return Predictions(
                np.zeros((0, len(self.class_names)), np.float32), np.zeros(0, np.int32)
            )
        probabilities, known_tokens = [], []
        for start in range(0, len(encoded), batch_size):
            batch = tf.constant(encoded[start : start + batch_size], dtype=tf.string)
            outputs = self._serve(**{INPUT_NAME: batch})
            probabilities.append(outputs["probabilities"].numpy())
            known_tokens.append(outputs[KNOWN_TOKENS].numpy())
        return Predictions(np.concatenate(probabilities), np.concatenate(known_tokens))

    def require_known_tokens_output(self) -> None:
        # Exports from before `known_tokens` refuse whole batches over one text with no
        # words, and cannot say which texts are guesses.
        if KNOWN_TOKENS not in self._serve.structured_outputs:
            raise KerasformerError(
                f"{self.export_dir} was exported by an older kerasformer, without "
                f"'{KNOWN_TOKENS}' to flag texts of unknown words; export it again with "
                "kerasformer.export.export_classifier(load_keras_model(DIR), class_names, DIR)."
            )


def utf8_texts(texts: Sequence[str | bytes], use: str = "classifying") -> list[bytes]:
    """The texts as UTF-8 bytes; anything else is refused by its index, naming ``use``
    (what is done with them) in the fix."""
    if isinstance(texts, str | bytes):
        # A string is a sequence too: it would be classified one character at a time.
        raise KerasformerError(
            "got a single string where a sequence of texts was expected; pass a list, e.g. [text]."
        )
    return [utf8_text(text, index, use) for index, text in enumerate(texts)]


def utf8_text(text: str | bytes, index: int, use: str = "classifying") -> bytes:
    """One text as UTF-8 bytes, checked: TensorFlow's string ops assume valid UTF-8."""
    if not isinstance(text, str | bytes):
        raise KerasformerError(
            f"text {index} is a {type(text).__name__}, not a string; pass strings."
        )
    try:
        if isinstance(text, bytes):
            text.decode("utf-8")
            return text
        return text.encode("utf-8")
    except UnicodeError as error:
        raise KerasformerError(
            f"text {index} is not valid UTF-8 ({error.reason} at position {error.start}); "
            f"decode its bytes as UTF-8 (or drop them) before {use} it."
        ) from None


def output_count(serve) -> int:
    """How many class probabilities the serving function returns."""
    return serve.structured_outputs["probabilities"].shape[-1]


def read_class_names(export_dir: Path, count: int) -> tuple[str, ...]:
    """The class names, one a line, which must number as many as the model's outputs."""
    path = export_dir / "assets" / CLASS_NAMES_FILE
    try:
        names = tuple(path.read_text(encoding="utf-8").splitlines())
    except UnicodeDecodeError:
        raise damaged(path) from None
    if len(names) != count:
        raise KerasformerError(
            f"{path} has {len(names)} class names for a model with {count} outputs, so it "
            f"is damaged; {REEXPORT}"
        )
    return names
