"""WordPieceWindows: first-piece labelling, windows over long sentences, and which window
a word is read from, checked against a WordPiece tokeniser and a search written here."""

import itertools

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.convert.convert_bert import default_bert_checkpoint_dir
from kerasformer.errors import KerasformerError
from kerasformer.models.word_piece_windows import WordPieceWindows, ragged_words, word_logits
from tests.helpers.bert import reference_pieces

SENTENCES = [
    ["Zoë", "Müller", "visited", "Ouagadougou", ",", "U.S.", "(", "again", ")", "."],
    ["naïveté", "Dvořák", "Kraftfahrzeughaftpflichtversicherung", "!"],
    [],
    ["Hi"],
]


@pytest.fixture(scope="module")
def vocabulary():
    words = (default_bert_checkpoint_dir() / "vocab.txt").read_text().splitlines()
    return {word: index for index, word in enumerate(words)}


def cut(preprocess, sentences, **options):
    windows = WordPieceWindows(preprocess, **options)
    words = (
        tf.ragged.constant(sentences, dtype=tf.string, ragged_rank=1)
        if any(sentences)
        else tf.RaggedTensor.from_row_lengths(tf.constant([], tf.string), [0] * len(sentences))
    )
    return {key: value.numpy() for key, value in windows(words).items()}, words


def test_each_word_is_labelled_at_its_first_piece(minilm_preprocess, vocabulary):
    out, _ = cut(minilm_preprocess, SENTENCES, seq_length=128)
    assert out["example"].tolist() == [0, 1, 2, 3]  # one window each: all are short
    for row, words in enumerate(SENTENCES):
        pieces = [reference_pieces(word, vocabulary) for word in words]
        flat = [piece for word in pieces for piece in word]
        length = len(flat) + 2
        assert out["input_word_ids"][row, :length].tolist() == [
            vocabulary["[CLS]"],
            *flat,
            vocabulary["[SEP]"],
        ]
        assert out["input_mask"][row].tolist() == [1] * length + [0] * (
            out["input_mask"].shape[1] - length
        )
        firsts = 1 + np.cumsum([0] + [len(p) for p in pieces[:-1]]) if words else []
        expected = np.full(out["word_index"].shape[1], -1)
        expected[np.asarray(firsts, int)] = np.arange(len(words))
        assert out["word_index"][row].tolist() == expected.tolist()
    # "Kraftfahrzeughaftpflichtversicherung" is many pieces, labelled once.
    assert len(reference_pieces(SENTENCES[1][2], vocabulary)) >= 5


def test_a_word_bert_reads_as_nothing_becomes_mask(minilm_preprocess, vocabulary):
    out, _ = cut(minilm_preprocess, [["a", "\u0301", "b"]], seq_length=16)
    assert out["input_word_ids"][0, :5].tolist() == [
        vocabulary["[CLS]"], vocabulary["a"], vocabulary["[MASK]"], vocabulary["b"],
        vocabulary["[SEP]"],
    ]  # fmt: skip
    assert out["word_index"][0, :5].tolist() == [-1, 0, 1, 2, -1]


def sentence_pieces(words, vocabulary) -> tuple[list[int], list[int]]:
    """A sentence's word pieces, and at each the word's index at its first piece, else -1."""
    pieces, labels = [], []
    for index, word in enumerate(words):
        ids = reference_pieces(word, vocabulary)
        pieces += ids
        labels += [index] + [-1] * (len(ids) - 1)
    return pieces, labels


# None: windows exactly as long as the first sentence's pieces, so it fills one window.
@pytest.mark.parametrize("seq_length,stride", [(8, 3), (8, 6), (5, 1), (12, 5), (None, 4)])
def test_long_sentences_are_cut_into_overlapping_windows(
    minilm_preprocess, vocabulary, seq_length, stride
):
    if seq_length is None:
        seq_length = len(sentence_pieces(SENTENCES[0], vocabulary)[0]) + 2
    out, _ = cut(minilm_preprocess, SENTENCES, seq_length=seq_length, stride=stride)
    room = seq_length - 2
    row = 0
    for sentence, words in enumerate(SENTENCES):
        flat, labels = sentence_pieces(words, vocabulary)
        count = 1 + -(-max(len(flat) - room, 0) // stride)
        spans = []
        for k in range(count):
            first = k * stride
            part = flat[first : first + room]
            spans.append((first, first + len(part)))
            assert out["example"][row] == sentence
            ids = out["input_word_ids"][row]
            assert ids[: len(part) + 2].tolist() == [vocabulary["[CLS]"], *part,
                                                      vocabulary["[SEP]"]]  # fmt: skip
            # Word indices count from the sentence's first word, in every window.
            index = out["word_index"][row]
            assert index[: len(part) + 2].tolist() == [-1, *labels[first : first + room], -1]
            assert (index[len(part) + 2 :] == -1).all()
            rank = np.arange(len(part))
            assert (
                out["context"][row, 1 : len(part) + 1].tolist()
                == np.minimum(rank, len(part) - 1 - rank).tolist()
            )
            row += 1
        # Every piece is in some window, the last window ends the sentence, and no window
        # holds nothing that another does not.
        covered = set().union(*(range(a, b) for a, b in spans))
        assert covered == set(range(len(flat))) and spans[-1][1] == len(flat)
        assert all(b1 < b2 for (_, b1), (_, b2) in itertools.pairwise(spans))
    assert row == len(out["example"])
    assert out["input_word_ids"].shape[1] <= seq_length
    if stride == 4:
        assert out["example"].tolist().count(0) == 1  # it fits: one window, not two


def test_a_batch_without_sentences_has_no_windows(minilm_preprocess):
    windows = WordPieceWindows(minilm_preprocess, seq_length=8)
    words = tf.RaggedTensor.from_row_lengths(tf.constant([], tf.string), tf.zeros([0], tf.int64))
    out = windows(words)
    assert out["input_word_ids"].shape[0] == 0 and out["example"].shape == (0,)
    logits = tf.zeros([0, out["word_index"].shape[1], 3])
    assert word_logits(logits, out, words.row_lengths()).to_list() == []


def test_each_word_is_read_from_the_window_where_it_has_most_context(minilm_preprocess):
    out, words = cut(minilm_preprocess, SENTENCES, seq_length=8, stride=3)
    logits = np.random.default_rng(0).normal(size=(*out["word_index"].shape, 5))
    got = word_logits(tf.constant(logits), out, words.row_lengths()).to_list()
    for sentence, count in enumerate(len(words) for words in SENTENCES):
        for word in range(count):
            # Brute force: every place the word's first piece is seen, the best first.
            seen = [
                (out["context"][w, p], -w, -p)
                for w in np.flatnonzero(out["example"] == sentence)
                for p in np.flatnonzero(out["word_index"][w] == word)
            ]
            _, w, p = max(seen)
            np.testing.assert_allclose(got[sentence][word], logits[-w, -p])


@pytest.mark.parametrize(
    "options,phrase",
    [({"seq_length": 2}, "no room"), ({"seq_length": 8, "stride": 7}, "at most 6"),
     ({"seq_length": 0}, "seq_length"), ({"seq_length": 8, "stride": 0}, "stride")],
)  # fmt: skip
def test_windows_that_cannot_work_are_refused(minilm_preprocess, options, phrase):
    with pytest.raises(KerasformerError, match=phrase):
        WordPieceWindows(minilm_preprocess, **options)


def test_ragged_words_keeps_every_sentence_and_word_in_order_empty_ones_too():
    sentences = [["Zoë", "visited"], [], ["Paris", ".", "again"]]
    words = ragged_words(sentences)
    assert words.shape.rank == 2
    assert [[w.decode() for w in row] for row in words.to_list()] == sentences
    assert ragged_words([]).shape[0] == 0
