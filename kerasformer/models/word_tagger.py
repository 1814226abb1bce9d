"""`WordTagger`: a tagger that reads words and their characters through its vocabularies.

Plain Python and NumPy: `kerasformer.models.sequence_tagger.SequenceTagger` runs its
Keras model on the ids, `kerasformer.litert.tagger.LiteRTTagger` a ``.tflite`` model with
no TensorFlow at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from kerasformer.models.entity_tagger import EntityTagger

PADDING_ID, UNKNOWN_ID = 0, 1
# A word's first characters only: enough for its shape, and bounds a batch's size.
MAX_WORD_CHARACTERS = 20


class WordTagger(EntityTagger):
    """Tag names, a decoding, and word and character vocabularies; subclasses give
    `probabilities` from the ids.

    Args:
        words: Lower-cased word vocabulary (ids from 2; 0 pads, 1 is unknown).
        characters: Character vocabulary (ids from 2).
        tag_names: The tags, in the model's output order.
        decoding: ``"constrained"`` (IOB2 Viterbi) or ``"argmax"``.
    """

    def __init__(
        self, words: Sequence[str], characters: Sequence[str], tag_names: Sequence[str],
        decoding: str = "constrained",
    ):  # fmt: skip
        super().__init__(tag_names, decoding)
        self.words = list(words)
        self.characters = list(characters)
        self.word_index = {word: i + 2 for i, word in enumerate(self.words)}
        self.character_index = {c: i + 2 for i, c in enumerate(self.characters)}

    def settings(self) -> dict:
        return {"kind": "words", **super().settings(), "words": self.words,
                "characters": self.characters}  # fmt: skip

    def word_ids(self, words: Sequence[str]) -> list[int]:
        return [self.word_index.get(word.lower(), UNKNOWN_ID) for word in words]

    def char_ids(self, words: Sequence[str]) -> list[list[int]]:
        index = self.character_index
        return [[index.get(c, UNKNOWN_ID) for c in word[:MAX_WORD_CHARACTERS]] for word in words]
