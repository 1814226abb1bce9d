"""Words with character offsets: BERT's basic split, in Python and in TensorFlow alike."""

import numpy as np
import pytest

from kerasformer.models.word_spans import split_words
from kerasformer.models.word_splitter import WordSplitter


@pytest.fixture(scope="module")
def splitter():
    return WordSplitter()


def test_punctuation_and_cjk_are_words_of_their_own_and_offsets_are_characters():
    text = "Zoë's café, 日本 (U.S.) — 1996-08-22"
    words = split_words(text)
    assert [w for w, _, _ in words] == [
        "Zoë", "'", "s", "café", ",", "日", "本", "(", "U", ".", "S", ".", ")", "—",
        "1996", "-", "08", "-", "22",
    ]  # fmt: skip
    assert all(text[start:end] == word for word, start, end in words)


def test_control_and_format_characters_separate_words():
    assert [w for w, _, _ in split_words("a\u200bb\tc\x00d")] == ["a", "b", "c", "d"]


def random_text(rng) -> str:
    alphabet = list("abcXYZ019 .,;-'\"()\t\n") + ["é", "ß", "日", "—", "\u00a0", "€", "🙂"]
    return "".join(rng.choice(alphabet, size=rng.integers(0, 30)))


def test_tensorflow_splits_as_python_does(splitter):
    rng = np.random.default_rng(0)
    texts = [random_text(rng) for _ in range(40)]
    words, codes, starts, ends = splitter(np.array(texts, dtype=object))
    for row, text in enumerate(texts):
        got = [
            (word.decode("utf-8"), int(start), int(end))
            for word, start, end in zip(
                words[row].numpy(), starts[row].numpy(), ends[row].numpy(), strict=True
            )
        ]
        assert got == split_words(text), text
        assert [list(map(ord, w)) for w, _, _ in got] == codes[row].to_list()


def test_the_words_are_those_of_tensorflow_texts_bert_delimiters(splitter):
    # An independent reference: tensorflow_text's regular expressions for BERT's basic
    # tokenizer, as the question answerer's windows use them.
    import tensorflow_text

    from kerasformer.models.span_windows import BERT_KEPT_DELIMITERS, PIECE_DELIMITERS

    rng = np.random.default_rng(1)
    texts = [random_text(rng) for _ in range(40)] + ["Zoë's café, 日本 (U.S.) — 1996-08-22"]
    # RE2's \s is ASCII white space, so those expressions keep a no-break space (Unicode
    # Zs) inside a word, where BERT's own tokenizer splits, as ours does.
    texts = [text.replace("\u00a0", " ") for text in texts]
    theirs, _, _ = tensorflow_text.regex_split_with_offsets(
        texts, PIECE_DELIMITERS, BERT_KEPT_DELIMITERS
    )
    ours = splitter(np.array(texts, dtype=object))[0]
    assert ours.to_list() == theirs.to_list()
    assert [w for w, _, _ in split_words("a\u00a0b")] == ["a", "b"]


def test_the_table_of_non_word_code_points_is_every_code_point_classified_one_by_one():
    # The reference: `character_class` asked about every code point but surrogates.
    import sys

    from kerasformer.models.word_spans import WORD, character_class, is_cjk, non_word_code_points

    expected = {
        code: kind
        for code in range(sys.maxunicode + 1)
        if not (0xD800 <= code <= 0xDFFF or is_cjk(code))
        and (kind := character_class(chr(code))) != WORD
    }
    codes, classes = non_word_code_points()
    assert dict(zip(codes.tolist(), classes.tolist(), strict=True)) == expected
