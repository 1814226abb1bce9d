"""`WordIds` against the tf-keras ``TextVectorization`` whose ids it must reproduce."""

import numpy as np
import pytest

from kerasformer.backend import keras
from kerasformer.litert.word_ids import WordIds

TRAIN = [
    "Shares rose on Monday", "The team won the cup", "U.S.-led talks in café Zoë",
    "ÉCOLE normale and école", "don't stop (again)!", "ΑΘΗΝΑ İstanbul naïve",
]  # fmt: skip
# Case outside ASCII, punctuation inside words, every kind of white space TensorFlow
# splits on and some it does not (no-break, em and ideographic spaces, separators).
TRICKY = [
    "", "   ", "!!!", "SHARES rose,on-Monday.", "Élan ÉCOLE école", "tab\tsep\x0bvt\x0cff\rcr\nnl",
    "no\u00a0break em\u2003space ideo\u3000graphic", "a\x1cb\x1dc\x85d\u2028e", "don't",
    "U.S.-led #1 café", "naïve ΑΘΗΝΑ athina İstanbul", "emoji 😀 shares", "x " * 40,
]  # fmt: skip


@pytest.fixture(scope="module")
def vectorizer():
    layer = keras.layers.TextVectorization(max_tokens=40, output_sequence_length=12)
    layer.adapt(np.array(TRAIN + TRICKY, dtype=object))
    return layer


def test_same_ids_as_text_vectorization(vectorizer):
    expected = vectorizer(np.array(TRAIN + TRICKY, dtype=object)).numpy()
    ids = WordIds(vectorizer.get_vocabulary(), max_length=12)
    np.testing.assert_array_equal(ids(TRAIN + TRICKY, length=12), expected)
    # Unicode-cased words stay as they are (TensorFlow lower-cases ASCII only).
    assert b"\xc3\x89cole" in ids.words("Élan ÉCOLE") and ids.words("ÉCOLE") != ids.words("école")


def test_batches_pad_to_their_longest_text_and_keep_max_length_words(vectorizer):
    ids = WordIds(vectorizer.get_vocabulary(), max_length=12)
    batch = ids(["shares rose", "", "x " * 40])
    assert batch.shape == (3, 12) and batch.dtype == np.int32
    assert batch[1].tolist() == [0] * 12 and ids(["", " "]).shape == (2, 1)
    assert ids(["shares rose"]).tolist() == [ids.ids("Shares, ROSE")]


def test_vocabulary_file_round_trip(vectorizer, tmp_path):
    path = tmp_path / "vocab.txt"
    vocabulary = vectorizer.get_vocabulary()
    path.write_text("".join(f"{word}\n" for word in vocabulary), encoding="utf-8")
    from_file = WordIds.from_file(path, max_length=12)
    assert from_file.vocabulary == vocabulary
    texts = TRAIN + TRICKY
    np.testing.assert_array_equal(from_file(texts, 12), vectorizer(np.array(texts, dtype=object)))


@pytest.mark.parametrize(
    "vocabulary, max_length, phrase",
    [(["[UNK]", "a"], 4, "must start with ''"), (["", "[UNK]"], 0, "positive integer"),
     (["", "[UNK]"], True, "positive integer")],
)  # fmt: skip
def test_bad_arguments_are_refused(vocabulary, max_length, phrase):
    with pytest.raises(ValueError, match=phrase):
        WordIds(vocabulary, max_length)
