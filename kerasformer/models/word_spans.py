"""Words of raw text with their character offsets, split as BERT's basic tokenizer splits.

White space separates words; each punctuation mark and each CJK ideograph is a word of
its own. Punctuation is BERT's: ASCII symbols and every Unicode ``P*`` character. Control
and format characters separate words as white space does (BERT deletes them, which
would join the words beside one). Offsets are in characters (code points), end
exclusive, so ``text[start:end] == word``.

The same split runs in Python (`split_words`) and as TensorFlow ops in a SavedModel
(`split_words_tf`), which needs no ``tensorflow_text``.
"""

from __future__ import annotations

import functools
import sys
import unicodedata

import numpy as np

from kerasformer.backend import tf

WORD, SPACE, SINGLE = 0, 1, 2
CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)  # fmt: skip


def character_class(character: str) -> int:
    """`SPACE`, `SINGLE` (a word by itself) or `WORD` (part of a longer word)."""
    code = ord(character)
    category = unicodedata.category(character)
    if character.isspace() or category in ("Zs", "Cc", "Cf"):
        return SPACE
    if is_cjk(code):
        return SINGLE
    ascii_symbol = 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126
    return SINGLE if ascii_symbol or category.startswith("P") else WORD


def is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in CJK_RANGES)


def split_words(text: str) -> list[tuple[str, int, int]]:
    """``(word, start, end)`` of each word of ``text``.

    Example:

    >>> split_words("Hi, Zoë!")
    [('Hi', 0, 2), (',', 2, 3), ('Zoë', 4, 7), ('!', 7, 8)]
    """
    words, start = [], None
    for index, character in enumerate([*text, " "]):
        kind = character_class(character)
        if start is not None and kind != WORD:
            words.append((text[start:index], start, index))
            start = None
        if kind == SINGLE:
            words.append((character, index, index + 1))
        elif kind == WORD and start is None:
            start = index
    return words


# Outside ASCII, only these categories can make a character anything but `WORD`: white
# space is Zs, Zl, Zp or Cc, and the rest of `character_class` asks for Cc, Cf and P*.
NON_WORD_CATEGORIES = frozenset(
    ("Zs", "Zl", "Zp", "Cc", "Cf", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po")
)


@functools.cache
def non_word_code_points() -> tuple[np.ndarray, np.ndarray]:
    """Every code point outside the CJK ranges whose class is not `WORD`, and its class."""
    # One category lookup per code point, and `character_class` only for the few
    # candidates: classifying all 1.1 million code points took 3.4 s per export.
    category = unicodedata.category
    candidates = [
        code
        for code in range(sys.maxunicode + 1)
        if code < 128 or category(chr(code)) in NON_WORD_CATEGORIES
    ]
    codes, classes = [], []
    for code in candidates:
        kind = character_class(chr(code))
        if kind != WORD and not is_cjk(code):
            codes.append(code), classes.append(kind)
    return np.array(codes, np.int64), np.array(classes, np.int32)


class WordSplitter(tf.Module):
    """`split_words` as TensorFlow ops, for a SavedModel's string input.

    Called on a batch of strings, it returns ragged ``words`` ``(batch, None)``, their
    code points ``(batch, None, None)``, and ``starts`` and ``ends`` ``(batch, None)``.
    """

    def __init__(self):
        super().__init__()
        codes, classes = non_word_code_points()
        self.classes = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(codes), tf.constant(classes)),
            default_value=WORD,
        )

    def character_classes(self, code_points: tf.Tensor) -> tf.Tensor:
        cjk = tf.zeros_like(code_points, tf.bool)
        for low, high in CJK_RANGES:
            cjk |= (code_points >= low) & (code_points <= high)
        return tf.where(cjk, SINGLE, self.classes.lookup(tf.cast(code_points, tf.int64)))

    def __call__(self, texts: tf.Tensor):
        code_points = tf.strings.unicode_decode(texts, "UTF-8", errors="replace")
        flat = tf.cast(code_points.flat_values, tf.int64)
        rows = code_points.value_rowids()
        kind = self.character_classes(flat)
        position = tf.cast(tf.ragged.range(code_points.row_lengths()).flat_values, tf.int64)
        first = tf.equal(position, 0)
        previous = tf.where(first, SPACE, tf.roll(kind, 1, axis=0))
        starts_word = tf.equal(kind, SINGLE) | (tf.equal(kind, WORD) & tf.not_equal(previous, WORD))
        in_word = tf.not_equal(kind, SPACE)
        word_of = tf.cumsum(tf.cast(starts_word, tf.int64)) - 1
        count = tf.reduce_sum(tf.cast(starts_word, tf.int64))
        word_of, word_codes = tf.boolean_mask(word_of, in_word), tf.boolean_mask(flat, in_word)
        word_codes = tf.RaggedTensor.from_value_rowids(word_codes, word_of, nrows=count)
        starts = tf.boolean_mask(position, starts_word)
        ends = tf.math.unsorted_segment_max(tf.boolean_mask(position, in_word) + 1, word_of, count)
        word_rows = tf.boolean_mask(rows, starts_word)
        batch = tf.shape(texts, out_type=tf.int64)[0]

        def per_text(values):
            return tf.RaggedTensor.from_value_rowids(values, word_rows, nrows=batch)

        words = tf.strings.unicode_encode(tf.cast(word_codes, tf.int32), "UTF-8")
        return per_text(words), per_text(word_codes), per_text(starts), per_text(ends)
