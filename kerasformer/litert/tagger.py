"""Run a tagger exported by ``kerasformer export-litert``: raw text in, entities out."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kerasformer.litert.files import TAGGER, LiteRTFiles
from kerasformer.litert.runtime import signature_runner
from kerasformer.models.word_tagger import WordTagger
from kerasformer.models.word_windows import windowed_rows


class LiteRTTagger(WordTagger):
    """A ``.tflite`` from-scratch tagger: `SequenceTagger`'s words, decoding and entities,
    its model run by LiteRT one sentence at a time, with no TensorFlow.

    The model maps ``word_ids`` ``(1, words)`` and ``char_ids`` ``(1, words, characters)``
    (int32, as `WordTagger` makes them) to ``probabilities`` ``(1, words, tags)``.
    One sentence per call: a BiLSTM over a batch of varying lengths needs TensorFlow ops
    LiteRT lacks, and a device tags one text at a time.

    ``tag(texts)`` gives each text's words, tags and entities (with character offsets
    and scores), as `SequenceTagger.tag` does.

    Args:
        model: The ``.tflite`` file that ``kerasformer export-litert`` wrote from a
            from-scratch tagger, its ``.json`` beside it.
        runtime: ``"litert"`` (``ai_edge_litert``) or ``"tensorflow"`` (``tf.lite``).
        num_threads: Interpreter threads, a whole number >= 1 (default: every core).

    Raises:
        KerasformerError: A model file that does not exist or is not a tagger, its
            settings missing, damaged or written with another model, or a runtime that is
            unknown, not installed or cannot open the model.

    Examples:
        >>> tagger = LiteRTTagger("saved_models/conll2003-rnn.tflite")
        >>> record = tagger.tag(["Angela Merkel visited Paris."])[0]
        >>> sorted(record)
        ['entities', 'tags', 'words']
        >>> record["words"], len(record["tags"])
        (['Angela', 'Merkel', 'visited', 'Paris', '.'], 5)
        >>> tagger.probabilities([["Angela", "Merkel"]])[0].shape
        (2, ...)
    """

    def __init__(self, model: str | Path, runtime: str = "litert", num_threads: int | None = None):
        files = LiteRTFiles.of(model)
        settings = files.read_settings(TAGGER)
        try:
            tagger = settings["tagger"]
            super().__init__(tagger["words"], tagger["characters"], tagger["tag_names"],
                             tagger["decoding"])  # fmt: skip
        except (KeyError, TypeError, ValueError) as error:
            raise files.damaged(error) from None
        self._run = signature_runner(files.model, runtime, num_threads)

    def probabilities(self, sentences, batch_size: int = 1) -> list[np.ndarray]:
        """Each tokenised sentence's ``(words, tags)`` tag probabilities."""
        del batch_size  # one sentence per call, see the class
        return [self.sentence_probabilities(words) for words in sentences]

    def sentence_probabilities(self, words) -> np.ndarray:
        """One sentence's probabilities; a long one window by window, as the SavedModel
        reads it (`windowed_rows`)."""
        return windowed_rows(self.window_probabilities, words)

    def window_probabilities(self, words) -> np.ndarray:
        if not words:
            return np.zeros((0, len(self.tag_names)), np.float32)
        characters = self.char_ids(words)
        char_ids = np.zeros((1, len(words), max(1, *map(len, characters))), np.int32)
        for i, ids in enumerate(characters):
            char_ids[0, i, : len(ids)] = ids
        word_ids = np.asarray([self.word_ids(words)], np.int32)
        return self._run(word_ids=word_ids, char_ids=char_ids)["probabilities"][0]
