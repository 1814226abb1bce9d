"""Use a translator export through its SavedModel's decoding signatures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.files.export_files import require_export_files
from kerasformer.files.export_kind import TRANSLATOR
from kerasformer.files.text_files import read_lines, read_settings
from kerasformer.loading.exported_classifier import INPUT_NAME, utf8_texts
from kerasformer.loading.serving_function import load_checked_serving_function
from kerasformer.loading.translator import SETTINGS_FILE, SOURCE_VOCABULARY_FILE
from kerasformer.loading.vocabulary_words import known_counts, split_words
from kerasformer.models.length_limits import sentence_problem

GREEDY_SIGNATURE, BEAM_SIGNATURE = "serving_default", "beam_search"
BATCH_SIZE = 256  # as `Translator.translate` batches, so that each batch decodes alike


class ExportedTranslator:
    """A translator export, decoded by its own SavedModel signature.

    ``serving_default`` decodes greedily and ``beam_search`` with the beam width the
    export was written with; the SavedModel holds the word lookups, the model and the
    decoding loop, so this needs TensorFlow alone: no Keras and no Model Garden.
    Sentences are checked and their known words counted as `Translator` does it, with
    the same lower-casing and punctuation split (TensorFlow ops) and the export's
    ``source_vocabulary.txt``. Other beam widths, and translators that read subwords
    (their SentencePiece tokenizer is TF Text's), are told apart by `load_if_serves`;
    load those with `load_translator`.

    Args:
        export_dir: A directory ``kerasformer train --task translation`` wrote, checked
            whole (every file and saved value) before it is loaded.
        beam_width: 1 (the default) for greedy decoding, or the export's own beam width
            (``beam_width`` in its ``translator.json``) for its ``beam_search`` signature.

    Raises:
        KerasformerError: ``export_dir`` is not a translator export, one of its files is
            missing or damaged, or it has no signature that decodes with ``beam_width``.

    Examples:
        >>> translator = ExportedTranslator("saved_models/spa_eng-transformer")
        >>> translator.source_lengths(["I see the sea.", "Hello!"])  # words, as it splits them
        [5, 2]
        >>> translator.translate(["I see the sea."])
        ['...']
    """

    def __init__(self, export_dir: str | Path, beam_width: int = 1):
        settings = read_translator_settings(require_export_files(export_dir, TRANSLATOR))
        if beam_width not in served_beam_widths(settings):
            raise KerasformerError(
                f"{export_dir} decodes greedily (beam width 1) or with beam width "
                f"{settings.get('beam_width')}; load it with load_translator for "
                f"beam width {beam_width}."
            )
        signature = GREEDY_SIGNATURE if beam_width == 1 else BEAM_SIGNATURE
        self.export_dir, self._decode = load_checked_serving_function(
            export_dir, TRANSLATOR, signature
        )
        self.beam_width, self.maxlen = beam_width, settings["maxlen"]
        self.vocabulary = frozenset(read_lines(self.export_dir / SOURCE_VOCABULARY_FILE))

    @classmethod
    def load_if_serves(cls, export_dir: str | Path, beam_width: int) -> ExportedTranslator | None:
        """The translator of ``export_dir`` at ``beam_width``, or None where no signature
        of it decodes so, or where it reads subwords. Reads the settings alone first."""
        settings = read_translator_settings(require_export_files(export_dir, TRANSLATOR))
        if settings.get("tokenizer", "word") != "word":
            return None
        if beam_width not in served_beam_widths(settings):
            return None
        return cls(export_dir, beam_width)

    def problem(self, text: str) -> str | None:
        """Why ``text`` cannot be translated (no words, too many), or None if it can."""
        return sentence_problem(self.source_lengths([text])[0], self.maxlen, "words")

    def source_lengths(self, texts: Sequence[str]) -> list[int]:
        """How many words each sentence has for this export (`Translator.source_lengths`)."""
        return [len(words) for words in self._words(utf8_texts(texts, "translating"))]

    def known_words(self, texts: Sequence[str]) -> list[int]:
        """How many words of each sentence are in the source vocabulary."""
        return known_counts(self._words(utf8_texts(texts, "translating")), self.vocabulary)

    def translate(self, texts: Sequence[str], beam_width: int | None = None) -> list[str]:
        """Translate sentences with the signature's decoding (`Translator.translate`)."""
        if beam_width not in (None, self.beam_width):
            raise KerasformerError(
                f"this translator was loaded for beam width {self.beam_width}, not "
                f"{beam_width}; load it again with that width."
            )
        if isinstance(texts, str):
            raise KerasformerError("pass a list of sentences, not one string.")
        encoded = utf8_texts(texts, "translating")
        words = self._words(encoded)
        for index, sentence in enumerate(words):
            problem = sentence_problem(len(sentence), self.maxlen, "words")
            if problem is not None:
                raise KerasformerError(f"sentence {index + 1} {problem}.")
        # Batches of similar length, as `Translator.translate` makes them.
        order = np.argsort([len(sentence) for sentence in words], kind="stable")
        outputs = [""] * len(texts)
        for start in range(0, len(texts), BATCH_SIZE):
            chosen = order[start : start + BATCH_SIZE]
            batch = tf.constant([encoded[i] for i in chosen], tf.string)
            decoded = self._decode(**{INPUT_NAME: batch})["outputs"].numpy()
            for index, text in zip(chosen, decoded, strict=True):
                outputs[index] = text.decode("utf-8")
        return outputs

    @staticmethod
    def _words(encoded: list[bytes]) -> list[list[str]]:
        # What the export's word tokenizer reads: lower-cased, punctuation split off, then
        # TensorFlow's split on whitespace (its TextVectorization's). Imported here: its
        # module defines a `tf.Module`, which would start TensorFlow (with a Keras)
        # before the export is checked.
        from kerasformer.models.word_tokenizer import lower_words_and_punctuation

        if not encoded:
            return []
        return split_words(lower_words_and_punctuation(tf.constant(encoded, tf.string)))


def read_translator_settings(directory: Path) -> dict:
    return read_settings(directory, SETTINGS_FILE, "translator", "translation")


def served_beam_widths(settings: dict) -> set[int]:
    """The beam widths an export's signatures decode with: greedy, and its beam search."""
    return {1} | ({settings["beam_width"]} if "beam_width" in settings else set())


def serving_translator(export_dir: str | Path, beam_width: int):
    """What translates at ``beam_width``: the export's own signature where it has one for
    that width (TensorFlow alone), else the Keras model (`load_translator`): another beam
    width, or a translator that reads subwords. Both give ``maxlen``, ``problem(text)``,
    ``source_lengths(texts)``, ``known_words(texts)`` and ``translate(texts, beam_width)``."""
    exported = ExportedTranslator.load_if_serves(export_dir, beam_width)
    if exported is not None:
        return exported
    from kerasformer.loading.translator import load_translator

    return load_translator(export_dir)
