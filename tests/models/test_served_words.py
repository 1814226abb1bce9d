"""Tagged words re-split as a tagger's export splits raw text, each piece with its tag."""

from __future__ import annotations

import pytest

from kerasformer.models.iob_tags import entity_spans
from kerasformer.models.served_words import carry_tags, first_piece_tags, word_pieces
from kerasformer.models.word_spans import split_words

# CoNLL-2003 keeps these whole; the export's raw-text split does not.
CONLL_SENTENCES = [
    (["U.S.", "troops", "left", "Bonn", "on", "1996-08-31", "."],
     ["B-LOC", "O", "O", "B-LOC", "O", "O", "O"]),
    (["Ian", "O'Neil", "'s", "one-day", "team", "won", "6-2", "--", "again"],
     ["B-PER", "I-PER", "O", "O", "O", "O", "O", "O", "O"]),
    (["St.-Denis", "F.C.", "Paris", "beat", "U.N.", "staff"],
     ["B-ORG", "I-ORG", "I-ORG", "O", "B-ORG", "O"]),
    (["plain", "words", "only"], ["O", "O", "O"]),
]  # fmt: skip


def char_entities(words, tags, pieces_with_offsets=None):
    """``(start, end, type)`` of each entity in ``" ".join(words)``."""
    if pieces_with_offsets is None:
        starts, at = [], 0
        for word in words:
            starts.append(at)
            at += len(word) + 1
        ends = [start + len(word) for start, word in zip(starts, words, strict=True)]
    else:
        starts = [start for _, start, _ in pieces_with_offsets]
        ends = [end for _, _, end in pieces_with_offsets]
    return {(starts[first], ends[last - 1], kind) for kind, first, last in entity_spans(tags)}


@pytest.mark.parametrize("words,tags", CONLL_SENTENCES)
def test_pieces_are_what_the_export_reads_of_the_words_joined_by_spaces(words, tags):
    pieces, counts = word_pieces(words)
    assert pieces == [word for word, _, _ in split_words(" ".join(words))]
    assert sum(counts) == len(pieces) and len(counts) == len(words)


def test_a_conll_sentence_splits_at_each_punctuation_mark():
    pieces, counts = word_pieces(["U.S.", "troops", "1996-08-31", "n't"])
    assert pieces == ["U", ".", "S", ".", "troops", "1996", "-", "08", "-", "31", "n", "'", "t"]
    assert counts == [4, 1, 5, 3]


@pytest.mark.parametrize("words,tags", CONLL_SENTENCES)
def test_carried_tags_find_the_same_entities_at_the_same_offsets(words, tags):
    text = " ".join(words)
    pieces, counts = word_pieces(words)
    carried = carry_tags(tags, counts)
    assert len(carried) == len(pieces)
    found = char_entities(pieces, carried, split_words(text))
    assert found == char_entities(words, tags)
    # Offsets still cut the entity's own text out of the raw text.
    by_words = {text[start:end] for start, end, _ in found}
    assert by_words == {" ".join(words[first:last]) for _, first, last in entity_spans(tags)}


def test_inside_an_entity_every_later_piece_is_inside_and_outside_stays_outside():
    assert carry_tags(["B-ORG", "I-ORG", "O"], [2, 3, 2]) == [
        "B-ORG", "I-ORG", "I-ORG", "I-ORG", "I-ORG", "O", "O",
    ]  # fmt: skip


def test_an_entity_whose_first_word_gives_no_piece_begins_at_its_next_piece():
    # A zero-width space is no word to the export: the entity starts at "Bonn".
    pieces, counts = word_pieces(["\u200b", "Bonn", "Stadt", "is", "far"])
    assert pieces == ["Bonn", "Stadt", "is", "far"]
    tags = carry_tags(["B-LOC", "I-LOC", "I-LOC", "O", "O"], counts)
    assert tags == ["B-LOC", "I-LOC", "O", "O"]


@pytest.mark.parametrize("words,tags", CONLL_SENTENCES)
def test_each_word_reads_back_its_first_pieces_tag(words, tags):
    _, counts = word_pieces(words)
    assert first_piece_tags(carry_tags(tags, counts), counts) == tags


def test_a_word_with_no_piece_reads_back_as_outside():
    assert first_piece_tags(["B-PER", "I-PER"], [0, 1, 1]) == ["O", "B-PER", "I-PER"]
