"""Tagged words as a tagger's export reads them: each word re-split as raw text is split.

An export tags raw text, which it splits into words itself (`word_spans.split_words`:
white space, then every punctuation mark a word of its own, as BERT's basic tokenizer
does). Tagged data is split otherwise: CoNLL-2003 keeps ``U.S.``, ``1996-08-31``, ``'s``
and ``n't`` whole. A tagger trained on CoNLL's words would read, at serving time, words
it never saw (``U`` ``.`` ``S`` ``.``), and lost 4 to 5 entity-F1 points on raw text. So
taggers train on the export's words instead: each word is split as `split_words` splits
it, and its pieces carry its tag (an entity's first word keeps ``B-TYPE`` on its first
piece, every other piece of an entity is ``I-TYPE``). The entities stay the same, piece
for piece, and ``text[start:end]`` of an entity found in raw text is still its text.

Tags asked for words split otherwise (`EntityTagger.predict_tags` on CoNLL's words) are
read from the pieces the same way: each word gets its first piece's tag.
"""

from __future__ import annotations

from collections.abc import Sequence

from kerasformer.models.iob_tags import OUTSIDE, tag_type
from kerasformer.models.word_spans import split_words


def word_pieces(words: Sequence[str]) -> tuple[list[str], list[int]]:
    """The pieces the export reads of ``words`` joined by spaces, and how many each word
    gave (0 for a word of white space or control characters alone, which it never sees).

    Example:

    >>> word_pieces(["U.S.", "troops"])
    (['U', '.', 'S', '.', 'troops'], [4, 1])
    """
    pieces: list[str] = []
    counts: list[int] = []
    for word in words:
        split = [piece for piece, _, _ in split_words(word)]
        pieces.extend(split)
        counts.append(len(split))
    return pieces, counts


def carry_tags(tags: Sequence[str], counts: Sequence[int]) -> list[str]:
    """Each word's tag on each of its ``counts`` pieces, as IOB2.

    A word's first piece keeps its tag; the others are ``I-TYPE`` inside an entity and
    ``O`` outside one. Where a word gave no piece and began an entity, the entity's next
    piece begins it instead.

    Example:

    >>> carry_tags(["B-LOC", "O"], [4, 1])
    ['B-LOC', 'I-LOC', 'I-LOC', 'I-LOC', 'O']
    """
    carried: list[str] = []
    for tag, count in zip(tags, counts, strict=True):
        if count:
            inside = OUTSIDE if tag == OUTSIDE else f"I-{tag_type(tag)}"
            carried.extend([tag, *[inside] * (count - 1)])
    return begin_each_entity(carried)


def begin_each_entity(tags: list[str]) -> list[str]:
    """``I-TYPE`` that continues no entity of its type made ``B-TYPE`` (IOB2)."""
    begun, previous = [], OUTSIDE
    for tag in tags:
        if tag != OUTSIDE and tag.startswith("I-") and tag_type(previous) != tag_type(tag):
            tag = f"B-{tag_type(tag)}"
        begun.append(tag)
        previous = tag
    return begun


def first_piece_tags(piece_tags: Sequence[str], counts: Sequence[int]) -> list[str]:
    """Each word's tag, read from its pieces' tags: its first piece's (``O`` for a word
    that gave no piece).

    Example:

    >>> first_piece_tags(["B-LOC", "I-LOC", "I-LOC", "I-LOC", "O"], [4, 1])
    ['B-LOC', 'O']
    """
    tags, at = [], 0
    for count in counts:
        tags.append(piece_tags[at] if count else OUTSIDE)
        at += count
    return tags
