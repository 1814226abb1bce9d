"""SpanWindows: packing, windows over long contexts, and offsets back to the context."""

import unicodedata

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.convert.convert_bert import default_bert_checkpoint_dir
from kerasformer.errors import KerasformerError
from kerasformer.models.span_windows import SpanWindows

CONTEXTS = [
    "Café DÉJÀ-vu: naïve résumés in the 1990s cost $1,000x more (Zürich, 東京).",
    "The Normans (Norman: Nourmands; French: Normands) gave their name to Normandy.",
    "Short.",
]


@pytest.fixture(scope="module")
def preprocess(minilm_preprocess):
    return minilm_preprocess


@pytest.fixture(scope="module")
def vocabulary():
    return (default_bert_checkpoint_dir() / "vocab.txt").read_text().splitlines()


def cut(preprocess, questions, contexts, **options):
    options.setdefault("max_question_tokens", 8)
    windows = SpanWindows(preprocess, **options)
    out = windows(tf.constant(questions), tf.constant(contexts))
    return {key: value.numpy() for key, value in out.items()}


def folded(text):
    """Lower case without accents, as BERT's uncased tokeniser sees text."""
    decomposed = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def context_tokens(out, row, vocabulary):
    positions = np.flatnonzero(out["token_starts"][row] >= 0)
    return [
        (vocabulary[out["input_word_ids"][row, p]], out["token_starts"][row, p],
         out["token_limits"][row, p])
        for p in positions
    ]  # fmt: skip


def test_every_context_token_maps_back_to_the_text_it_came_from(preprocess, vocabulary):
    out = cut(preprocess, ["Why?"] * 3, CONTEXTS, seq_length=64, doc_stride=16)
    for row, example in enumerate(out["example"]):
        raw = CONTEXTS[example].encode("utf-8")
        for token, start, limit in context_tokens(out, row, vocabulary):
            text = raw[start:limit].decode("utf-8")
            piece = token.removeprefix("##")
            if text.isascii():
                # ASCII: the token's own characters, exactly.
                assert folded(text) == piece, (token, text)
            else:
                # Elsewhere the whole word, which holds the token's text.
                assert piece in folded(text) and " " not in text, (token, text)


def test_answers_can_split_an_ascii_word(preprocess, vocabulary):
    # convert-bert's preprocess model gives each wordpiece's offsets.
    assert SpanWindows(preprocess, seq_length=32).has_offsets
    out = cut(preprocess, ["How much?"], ["costs 1000x"], seq_length=32, doc_stride=8)
    tokens = [token for token, _, _ in context_tokens(out, 0, vocabulary)]
    spans = [(s, e) for _, s, e in context_tokens(out, 0, vocabulary)]
    assert tokens[-2:] == ["1000", "##x"]
    assert spans[-2:] == [(6, 10), (10, 11)]


def test_windows_step_by_the_stride_and_cover_the_whole_context(preprocess):
    context = " ".join(f"word{i}" for i in range(60))
    whole = cut(preprocess, ["What is it?"], [context], seq_length=256)
    full_ids = whole["input_word_ids"][0][whole["token_starts"][0] >= 0]
    seq_length, stride = 32, 10
    out = cut(preprocess, ["What is it?"], [context], seq_length=seq_length, doc_stride=stride)
    room = seq_length - 3 - 4  # "what is it ?" is 4 wordpieces
    expected_windows = 1 + -(-(len(full_ids) - room) // stride)
    assert list(out["example"]) == [0] * expected_windows
    for w in range(expected_windows):
        ids = out["input_word_ids"][w][out["token_starts"][w] >= 0]
        first = w * stride
        np.testing.assert_array_equal(ids, full_ids[first : first + room])
    assert (w * stride) + len(ids) == len(full_ids)  # the last window reaches the end


def test_each_window_is_packed_question_first(preprocess, vocabulary):
    question = "one two three four five six seven"
    out = cut(
        preprocess, [question], ["alpha beta gamma"], seq_length=16, doc_stride=4,
        max_question_tokens=4,
    )  # fmt: skip
    words = [vocabulary[i] for i in out["input_word_ids"][0][out["input_mask"][0] == 1]]
    assert words == ["[CLS]", "one", "two", "three", "four", "[SEP]",
                     "alpha", "beta", "gamma", "[SEP]"]  # fmt: skip
    np.testing.assert_array_equal(out["input_type_ids"][0][:10], [0] * 6 + [1] * 4)
    np.testing.assert_array_equal(out["input_mask"][0], [1] * 10 + [0] * 6)
    assert (out["token_starts"][0] >= 0).sum() == 3


def test_an_empty_context_gets_one_window_without_context_tokens(preprocess):
    out = cut(preprocess, ["Why?", "Who?"], ["", "Me."], seq_length=16, doc_stride=4)
    assert list(out["example"]) == [0, 1]
    assert not (out["token_starts"][0] >= 0).any()
    assert (out["token_starts"][1] >= 0).sum() == 2


@pytest.mark.parametrize(
    "options, message",
    [
        ({"seq_length": 20, "max_question_tokens": 17}, "leaves no room for the context"),
        ({"seq_length": 32, "doc_stride": 20, "max_question_tokens": 10}, "lower doc_stride"),
        ({"seq_length": 0}, "seq_length must be a whole number >= 1"),
        ({"doc_stride": 1.5}, "doc_stride must be a whole number"),
    ],
)
def test_bad_settings_are_one_clear_error(preprocess, options, message):
    with pytest.raises(KerasformerError, match=message):
        SpanWindows(preprocess, **options)


def test_a_model_without_the_preprocess_functions_is_refused():
    with pytest.raises(KerasformerError, match="no tokenize"):
        SpanWindows(object())


class WithoutOffsets:
    """A preprocess model as older TF-Hub ones are: no tokenize_with_offsets."""

    def __init__(self, preprocess):
        self.tokenize = preprocess.tokenize
        self.bert_pack_inputs = preprocess.bert_pack_inputs


def test_without_tokenizer_offsets_every_wordpiece_takes_its_whole_word(preprocess, vocabulary):
    windows = SpanWindows(WithoutOffsets(preprocess), seq_length=32, max_question_tokens=8)
    assert not windows.has_offsets
    out = windows(tf.constant(["How much?"]), tf.constant(["costs 1000x"]))
    out = {key: value.numpy() for key, value in out.items()}
    spans = [(s, e) for _, s, e in context_tokens(out, 0, vocabulary)]
    assert spans == [(0, 5), (6, 11), (6, 11)]
