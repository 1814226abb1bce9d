"""Run a classifier exported by ``kerasformer export-litert``: raw text in, classes out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from kerasformer.errors import KerasformerError
from kerasformer.litert.files import CLASSIFIER, LiteRTFiles
from kerasformer.litert.runtime import signature_runner
from kerasformer.litert.word_ids import UNKNOWN_ID, WordIds


class LiteRTPredictions(NamedTuple):
    """What the model says about a batch of texts, one entry per text."""

    probabilities: np.ndarray  # (texts, classes)
    known_tokens: np.ndarray  # (texts,) how many of the text's words are in the vocabulary


class LiteRTClassifier:
    """A ``.tflite`` classifier with its vocabulary: the same answers as its SavedModel.

    Texts become token ids in Python (`WordIds`, as the model's ``TextVectorization``
    makes them), padded per batch to its longest text; the model maps ``token_ids``
    ``(batch, words)`` int32 to ``probabilities``. Needs NumPy and ``ai-edge-litert``
    (or TensorFlow, with ``runtime="tensorflow"``), not kerasformer's models.

    Args:
        model: The ``.tflite`` file that ``kerasformer export-litert`` wrote; its
            ``.json`` and ``.vocab.txt`` sit beside it.
        runtime: ``"litert"`` (``ai_edge_litert``) or ``"tensorflow"`` (``tf.lite``).
        num_threads: Interpreter threads, a whole number >= 1 (default: every core).

    Raises:
        KerasformerError: A model file that does not exist or is not a classifier, its
            settings or vocabulary missing, damaged or written with another model, or a
            runtime that is unknown, not installed or cannot open the model.

    Examples:
        >>> classifier = LiteRTClassifier("saved_models/bbc_news-transformer.tflite")
        >>> classifier.class_names
        ['business', 'entertainment', 'politics', 'sports', 'tech']
        >>> classifier.predict_proba(["Shares rose after profits beat forecasts"]).shape
        (1, 5)
        >>> classifier.predict(["Shares rose after profits beat forecasts"])
        ['...']
    """

    def __init__(self, model: str | Path, runtime: str = "litert", num_threads: int | None = None):
        files = LiteRTFiles.of(model)
        settings = files.read_settings(CLASSIFIER)
        try:
            self.class_names = [str(name) for name in settings["class_names"]]
            # None: one class per text; a number: multi-label, classes over it predicted.
            self.threshold = settings.get("threshold")
            if self.threshold is not None and not 0 < float(self.threshold) < 1:
                raise ValueError(f"threshold {self.threshold!r} is not between 0 and 1")
            self.word_ids = WordIds(files.read_vocabulary(settings), int(settings["max_length"]))
        except (KeyError, TypeError, ValueError) as error:
            raise files.damaged(error) from None
        self._run = signature_runner(files.model, runtime, num_threads)

    def classify(self, texts: Sequence[str], batch_size: int = 64) -> LiteRTPredictions:
        """``probabilities`` ``(texts, classes)`` and ``known_tokens`` ``(texts,)``, as
        `kerasformer.loading.ExportedClassifier.classify` gives them.

        A text with no known word (0 in ``known_tokens``) gets a guess; an empty one is
        read as padding alone, as the SavedModel and the Keras model read it.
        """
        if isinstance(texts, str | bytes):
            raise KerasformerError("pass a list of texts, e.g. [text], not a single string.")
        probabilities = [np.zeros((0, len(self.class_names)), np.float32)]
        known = [np.zeros(0, np.int64)]
        for start in range(0, len(texts), batch_size):
            ids = self.word_ids(texts[start : start + batch_size])
            known.append((ids > UNKNOWN_ID).sum(axis=1))
            probabilities.append(self._run(token_ids=ids)["probabilities"])
        return LiteRTPredictions(np.concatenate(probabilities), np.concatenate(known))

    def predict_proba(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Class probabilities, one row per text."""
        return self.classify(texts, batch_size)[0]

    def predict(self, texts: Sequence[str], batch_size: int = 64) -> list[str]:
        """Each text's class name (multi-label: the names over the threshold, joined by ``,``)."""
        probabilities = self.predict_proba(texts, batch_size)
        if self.threshold is None:
            return [self.class_names[i] for i in probabilities.argmax(axis=1)]
        return [
            ",".join(name for name, p in zip(self.class_names, row, strict=True)
                     if p > self.threshold)
            for row in probabilities
        ]  # fmt: skip
