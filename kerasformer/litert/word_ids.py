"""Token ids of raw text exactly as a from-scratch classifier's ``TextVectorization`` makes them.

LiteRT has no string ops, so a ``.tflite`` classifier reads token ids; this gives the
same ids in plain Python (no TensorFlow), from the ``vocab.txt`` written beside it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kerasformer.errors import KerasformerError

PADDING_ID, UNKNOWN_ID = 0, 1
# tf-keras TextVectorization's default punctuation, removed byte by byte after lower-casing.
PUNCTUATION = re.compile(rb'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')


class WordIds:
    """Words to ids as ``TextVectorization(standardize="lower_and_strip_punctuation",
    split="whitespace")`` does, token for token.

    The vectorizer works on UTF-8 bytes: it lower-cases ASCII letters only
    (``tf.strings.lower``), deletes ASCII punctuation, and splits on ASCII white space
    (so ``É`` stays ``É``, and a non-breaking space joins two words). A word not in the
    vocabulary is id 1, padding id 0; a text keeps its first ``max_length`` words.

    Call it with a list of texts for their ``(texts, length)`` int32 ids, padded with 0;
    ``ids(text)`` gives one text's, unpadded.

    Args:
        vocabulary: The vectorizer's ``get_vocabulary()``: ``""`` (padding) and ``[UNK]``
            first, then one word per id.
        max_length: The most words of a text the model reads (its ``maxlen``), a
            positive integer.

    Raises:
        ValueError: A ``vocabulary`` that does not start with ``""`` and the unknown
            word, or a ``max_length`` that is not a positive integer.

    Examples:
        >>> ids = WordIds(["", "[UNK]", "shares", "rose"], max_length=8)
        >>> ids(["Shares ROSE, sharply!", "Rose"]).tolist()
        [[2, 3, 1], [3, 0, 0]]
        >>> ids.words("Shares ROSE, sharply!")
        [b'shares', b'rose', b'sharply']
    """

    def __init__(self, vocabulary: Sequence[str], max_length: int):
        if len(vocabulary) < 2 or vocabulary[0] != "":
            raise ValueError(
                "vocabulary must start with '' (padding) and the unknown word, as "
                f"TextVectorization.get_vocabulary() does; got {list(vocabulary[:2])!r}."
            )
        if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
            raise ValueError(f"max_length must be a positive integer, got {max_length!r}.")
        self.vocabulary = list(vocabulary)
        self.max_length = max_length
        self._index = {word.encode("utf-8"): i for i, word in enumerate(vocabulary) if i > 1}

    @classmethod
    def from_file(cls, path: str | Path, max_length: int) -> WordIds:
        """The vocabulary of a ``vocab.txt``: one word per line, line ``i`` is id ``i``."""
        return cls(vocabulary_lines(Path(path).read_bytes()), max_length)

    def words(self, text: str | bytes) -> list[bytes]:
        """The words the vectorizer reads in ``text``, standardised, as UTF-8 bytes."""
        data = utf8_bytes(text)
        return PUNCTUATION.sub(b"", data.lower()).split()[: self.max_length]

    def ids(self, text: str | bytes) -> list[int]:
        """One text's ids, unpadded."""
        return [self._index.get(word, UNKNOWN_ID) for word in self.words(text)]

    def __call__(self, texts: Sequence[str | bytes], length: int | None = None) -> np.ndarray:
        """``(texts, length)`` int32 ids padded with 0; ``length`` defaults to the longest
        text's (at least 1)."""
        rows = [self.ids(text) for text in texts]
        width = length or max([1, *map(len, rows)])
        padded = np.zeros((len(rows), width), np.int32)
        for i, row in enumerate(rows):
            padded[i, : len(row)] = row[:width]
        return padded


def vocabulary_lines(data: bytes) -> list[str]:
    """The words of a ``vocab.txt``'s bytes, one a line (a Windows line end is not a word's)."""
    lines = data.decode("utf-8").split("\n")
    return [word.rstrip("\r") for word in (lines[:-1] if lines[-1] == "" else lines)]


def utf8_bytes(text: str | bytes) -> bytes:
    """A text as valid UTF-8 bytes, as TensorFlow's string ops assume; anything else refused."""
    try:
        if isinstance(text, str):
            return text.encode("utf-8")
        if isinstance(text, bytes):
            text.decode("utf-8")
            return text
    except UnicodeError as error:
        raise KerasformerError(
            f"text {text[:20]!r}... is not valid UTF-8 ({error.reason}); decode its bytes as "
            "UTF-8 (or drop them) first."
        ) from None
    raise KerasformerError(f"got a {type(text).__name__} where a text was expected; pass strings.")
