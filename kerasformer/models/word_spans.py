"""Words of raw text with their character offsets, split as BERT's basic tokenizer splits.

White space separates words; each punctuation mark and each CJK ideograph is a word of
its own. Punctuation is BERT's: ASCII symbols and every Unicode ``P*`` character. Control
and format characters separate words as white space does (BERT deletes them, which
would join the words beside one). Offsets are in characters (code points), end
exclusive, so ``text[start:end] == word``.

The same split runs in Python (`split_words`, no TensorFlow needed) and as TensorFlow ops
in a SavedModel (`kerasformer.models.word_splitter.WordSplitter`), which needs no
``tensorflow_text``.
"""

from __future__ import annotations

import functools
import sys
import unicodedata

import numpy as np

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
