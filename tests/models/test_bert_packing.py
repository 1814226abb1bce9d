"""BertInputPacker and length-sorted chunks, checked against the preprocess model's own packing."""

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models.bert_classifier import (
    PackedBertClassifier,
    bert_classifier_on_encoder_inputs,
    build_bert_classifier,
)
from kerasformer.models.bert_packing import BertInputPacker, in_length_sorted_chunks

# Lengths from nothing to past the tiny preprocess model's 32 positions, with unknown
# words, punctuation and upper case, so that truncation and [UNK] are covered.
TEXTS = [
    "team goal",
    "",
    " ".join(["shares profit market"] * 15),  # 45 words: cut at 30 pieces
    "Bank, stocks & merger!",
    "zzzz 📈 qqq",
    "the coach said today",
    " ".join(["season"] * 30),  # exactly 30 pieces: fits with [CLS] and [SEP]
    "software",
]


@pytest.fixture(scope="module")
def preprocess(tiny_hub_bert):
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401

    return hub.load(str(tiny_hub_bert.preprocess))


def without_padding(packed: dict) -> list[tuple[list[int], list[int]]]:
    """Each row's word ids and type ids where the mask is 1."""
    mask = packed["input_mask"].numpy().astype(bool)
    return [
        (ids[row].tolist(), types[row].tolist())
        for ids, types, row in zip(
            packed["input_word_ids"].numpy(), packed["input_type_ids"].numpy(), mask, strict=True
        )
    ]


@pytest.mark.slow
def test_packing_gives_the_preprocess_models_tokens_without_its_padding(preprocess):
    packer = BertInputPacker(preprocess)
    assert packer.max_seq_length == 32 and packer.max_pieces == 30
    texts = tf.constant(TEXTS)
    reference = preprocess(texts)  # the string-in path: every row padded to 32
    packed = packer.pack(packer.word_pieces(texts))
    assert without_padding(packed) == without_padding(reference)
    lengths = reference["input_mask"].numpy().sum(axis=1)
    assert packed["input_word_ids"].shape == (len(TEXTS), lengths.max())
    short = packer.pack(packer.word_pieces(tf.constant(["team goal", "software"])))
    assert short["input_word_ids"].shape == (2, 4)  # [CLS] team goal [SEP]
    np.testing.assert_array_equal(short["input_mask"].numpy(), [[1, 1, 1, 1], [1, 1, 1, 0]])


def test_padded_pieces_pack_to_their_padded_width(preprocess):
    """A tf.data batch padded to a bucket's limit keeps that width (plus [CLS], [SEP])."""
    packer = BertInputPacker(preprocess)
    pieces = packer.word_pieces(tf.constant(["team goal", "software"]))
    padded = pieces.to_tensor(shape=[2, 9])
    packed = packer.pack_padded(padded)
    assert packed["input_word_ids"].shape == (2, 11)
    assert without_padding(packed) == without_padding(packer.pack(pieces))


def test_a_shorter_limit_cuts_like_a_preprocess_model_of_that_length(preprocess):
    packer = BertInputPacker(preprocess, max_seq_length=6)
    packed = packer.pack(packer.word_pieces(tf.constant(TEXTS)))
    reference = preprocess.bert_pack_inputs(
        [preprocess.tokenize(tf.constant(TEXTS))], seq_length=tf.constant(6)
    )
    assert without_padding(packed) == without_padding(reference)


@pytest.mark.parametrize("limit", [2, 0, 2.5, True])
def test_bad_limits_are_refused(preprocess, limit):
    with pytest.raises(KerasformerError, match="max_seq_length must be a whole number above 2"):
        BertInputPacker(preprocess, max_seq_length=limit)


def test_a_model_without_the_bert_functions_is_refused():
    with pytest.raises(KerasformerError, match=r"has no tokenize\(\); give a TF-Hub BERT"):
        BertInputPacker(object())


@pytest.mark.parametrize("chunk_size", [1, 3, 8, 50])
def test_chunks_are_packed_to_their_own_longest_and_rows_keep_text_order(preprocess, chunk_size):
    packer = BertInputPacker(preprocess)
    widths = []

    def apply(inputs):  # each row: its length in tokens, and the chunk's width
        widths.append(int(inputs["input_word_ids"].shape[1]))
        mask = tf.cast(inputs["input_mask"], tf.float32)
        width = tf.fill(tf.shape(mask[:, :1]), tf.cast(tf.shape(mask)[1], tf.float32))
        return tf.concat([tf.reduce_sum(mask, axis=1, keepdims=True), width], axis=1)

    rows = in_length_sorted_chunks(
        packer, apply, packer.word_pieces(tf.constant(TEXTS)), chunk_size, 2
    ).numpy()
    lengths = preprocess(tf.constant(TEXTS))["input_mask"].numpy().sum(axis=1)
    np.testing.assert_array_equal(rows[:, 0], lengths)
    ordered = np.sort(lengths, kind="stable")
    expected_widths = [
        ordered[start : start + chunk_size].max() for start in range(0, len(TEXTS), chunk_size)
    ]
    assert widths == expected_widths
    sorted_position = np.argsort(np.argsort(lengths, kind="stable"), kind="stable")
    np.testing.assert_array_equal(
        rows[:, 1], [expected_widths[p // chunk_size] for p in sorted_position]
    )


def test_an_empty_batch_gives_no_rows(preprocess):
    packer = BertInputPacker(preprocess)
    rows = in_length_sorted_chunks(
        packer,
        lambda inputs: inputs["input_mask"],
        packer.word_pieces(tf.constant([], tf.string)),
        4,
        3,
    )
    assert rows.shape == (0, 3)


@pytest.mark.slow
def test_packed_classifier_gives_the_string_in_models_probabilities(tiny_hub_bert):
    model = build_bert_classifier(
        4, tiny_hub_bert.preprocess, tiny_hub_bert.encoder, trainable=True
    )
    texts = tf.constant(TEXTS * 5)
    expected = model(texts, training=False).numpy()
    for chunk_size in (1, 7, 64):
        packed = PackedBertClassifier(model, chunk_size=chunk_size)
        np.testing.assert_allclose(packed(texts).numpy(), expected, rtol=1e-5, atol=1e-6)
    in_graph = tf.function(PackedBertClassifier(model))
    np.testing.assert_allclose(in_graph(texts).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert in_graph(tf.constant([], tf.string)).shape == (0, 4)


@pytest.mark.slow
def test_the_model_on_encoder_inputs_shares_every_weight(tiny_hub_bert):
    model = build_bert_classifier(
        3, tiny_hub_bert.preprocess, tiny_hub_bert.encoder, trainable=True
    )
    core = bert_classifier_on_encoder_inputs(model)
    assert {id(v) for v in core.trainable_weights} == {id(v) for v in model.trainable_weights}
    assert all(tensor.shape.as_list() == [None, None] for tensor in core.inputs)


def test_a_model_not_built_by_kerasformer_is_refused_with_the_fix(tiny_hub_bert):
    model = build_bert_classifier(3, tiny_hub_bert.preprocess, tiny_hub_bert.encoder)
    model.get_layer("probabilities")._name = "head"
    with pytest.raises(KerasformerError, match="train it with --input-pipeline strings"):
        bert_classifier_on_encoder_inputs(model)
