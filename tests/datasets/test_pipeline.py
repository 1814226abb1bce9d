import collections
import re

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.datasets import LabeledTexts
from kerasformer.datasets.pipeline import (
    length_bucket_boundaries,
    next_token_windows,
    strided_next_token_windows,
    text_batches,
    token_id_batches,
    token_id_examples,
)

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
VOCABULARY = ["", "[UNK]", *WORDS[:8]]  # the last four words are out of vocabulary
MAXLEN = 40


def reference_ids(text: str) -> list[int]:
    """What the vectorizer should give, by hand: lower-case, strip punctuation, look up."""
    tokens = re.sub(r"[^\w\s]", "", text.lower()).split()[:MAXLEN]
    return [VOCABULARY.index(t) if t in VOCABULARY else 1 for t in tokens]


@pytest.fixture(scope="module")
def part() -> LabeledTexts:
    rng = np.random.default_rng(0)
    texts = [
        " ".join(rng.choice(WORDS, rng.integers(1, 60))).capitalize() + "." for _ in range(230)
    ]
    return LabeledTexts(np.array(texts, dtype=object), rng.integers(0, 3, len(texts)))


@pytest.fixture(scope="module")
def examples(part):
    from kerasformer.backend import keras

    vectorizer = keras.layers.TextVectorization(
        vocabulary=VOCABULARY[2:], output_sequence_length=MAXLEN
    )
    return token_id_examples(part, vectorizer)


def as_rows(batches) -> collections.Counter:
    """Every (unpadded ids, label) pair in the batches, with padding checked and removed."""
    rows = collections.Counter()
    for ids, labels in batches:
        for row, label in zip(ids.numpy(), labels.numpy(), strict=True):
            length = int(np.count_nonzero(row))
            assert not row[length:].any(), "padding must come after the text only"
            rows[(tuple(row[:length]), int(label))] += 1
    return rows


def test_examples_are_each_texts_ids_without_padding(part, examples):
    got = [(ids.numpy().tolist(), int(label)) for ids, label in examples]
    want = [(reference_ids(t), int(y)) for t, y in zip(part.texts, part.labels, strict=True)]
    assert got == want
    assert max(len(ids) for ids, _ in got) == MAXLEN  # long texts were cut at maxlen


@pytest.mark.parametrize("pipeline", ["padded", "dynamic", "bucketed"])
@pytest.mark.parametrize("fixed_shapes", [False, True])
def test_every_pipeline_gives_every_example_once_per_epoch(part, examples, pipeline, fixed_shapes):
    batches = token_id_batches(examples, 32, pipeline, MAXLEN, 7, fixed_shapes=fixed_shapes)
    want = collections.Counter(
        (tuple(reference_ids(t)), int(y)) for t, y in zip(part.texts, part.labels, strict=True)
    )
    for _ in range(2):
        assert as_rows(batches) == want
    assert int(batches.cardinality()) == sum(1 for _ in batches)  # known before an epoch


def test_padding_to_maxlen_to_the_batch_or_to_the_bucket(examples):
    boundaries = length_bucket_boundaries(MAXLEN)

    def widths_and_lengths(pipeline, fixed_shapes=False):
        batches = token_id_batches(examples, 16, pipeline, MAXLEN, 1, fixed_shapes=fixed_shapes)
        return [
            (ids.shape[1], np.count_nonzero(ids.numpy(), axis=1), len(labels))
            for ids, labels in batches
        ]

    assert {width for width, _, _ in widths_and_lengths("padded")} == {MAXLEN}
    for width, lengths, size in widths_and_lengths("dynamic"):
        assert width == lengths.max() and size <= 16
    for width, lengths, _ in widths_and_lengths("bucketed"):
        assert width == lengths.max()
        bucket = np.searchsorted(boundaries, lengths, side="right")
        assert len(set(bucket)) == 1, "a bucketed batch mixes texts of one length range only"
    limits = {b - 1 for b in boundaries}
    assert {w for w, _, _ in widths_and_lengths("bucketed", fixed_shapes=True)} <= limits


def test_bucketing_puts_less_padding_in_batches_than_dynamic_padding(examples):
    def padding_share(pipeline):
        total = padding = 0
        for ids, _ in token_id_batches(examples, 32, pipeline, MAXLEN, 3):
            total += ids.shape[0] * ids.shape[1]
            padding += int(np.sum(ids.numpy() == 0))
        return padding / total

    assert padding_share("bucketed") < 0.5 * padding_share("dynamic")


def test_shuffling_repeats_with_the_seed_and_changes_each_epoch(part, examples):
    def order(seed):
        batches = token_id_batches(examples, 300, "dynamic", MAXLEN, seed)
        return [[label for _, label in as_rows_in_order(batches)] for _ in range(2)]

    first, again = order(3), order(3)
    assert first == again and first[0] != first[1]
    texts = [t.numpy() for t, _ in text_batches(part, 300, 3).unbatch()]
    assert sorted(texts) == sorted(t.encode() for t in part.texts)


def as_rows_in_order(batches):
    return [
        (row.tolist(), int(label))
        for ids, labels in batches
        for row, label in zip(ids.numpy(), labels.numpy(), strict=True)
    ]


@pytest.mark.parametrize("maxlen", [1, 7, 8, 64, 256, 512])
def test_bucket_boundaries_grow_and_cover_every_length(maxlen):
    boundaries = length_bucket_boundaries(maxlen)
    assert boundaries == sorted(set(boundaries)) and boundaries[-1] == maxlen + 1
    assert all(b2 <= 2 * b1 for b1, b2 in zip(boundaries, boundaries[1:-1], strict=False))
    assert len(boundaries) <= 12


@pytest.mark.parametrize("maxlen, width", [(1, 8), (7, 8), (8, 8), (30, 8), (126, 8), (50, 16)])
def test_buckets_of_a_fixed_width_cover_every_length(maxlen, width):
    boundaries = length_bucket_boundaries(maxlen, width)
    assert boundaries == sorted(set(boundaries)) and boundaries[-1] == maxlen + 1
    spans = np.diff([0, *boundaries])
    assert np.all(spans[:-1] == width) and 1 <= spans[-1] <= width
    lengths = np.arange(maxlen + 1)
    buckets = np.searchsorted(boundaries, lengths, side="right")
    assert np.all(lengths // width == np.minimum(buckets, len(boundaries) - 1))


def test_narrow_buckets_hold_texts_within_their_width(examples):
    for ids, _ in token_id_batches(examples, 16, "bucketed", MAXLEN, 1, bucket_width=4):
        lengths = np.count_nonzero(ids.numpy(), axis=1)
        assert ids.shape[1] == lengths.max() and lengths.max() // 4 == lengths.min() // 4


def test_next_token_windows_cut_the_stream_and_a_short_stream_is_one_shorter_window():
    ids = np.arange(1, 301)
    inputs, targets = next_token_windows(ids, 128)
    assert inputs.shape == targets.shape == (2, 128)
    np.testing.assert_array_equal(inputs.ravel(), ids[:256])
    np.testing.assert_array_equal(targets.ravel(), ids[1:257])
    # 15 tokens, fewer than one window: one window of 14, each target the next token.
    inputs, targets = next_token_windows(ids[:15], 128)
    np.testing.assert_array_equal(inputs, [ids[:14]])
    np.testing.assert_array_equal(targets, [ids[1:15]])
    assert next_token_windows(ids[:1], 128)[0].shape[0] == 0


def test_an_empty_split_gives_no_batches():
    empty = LabeledTexts(np.array([], dtype=object), np.array([], dtype=np.int64))
    vectorize = lambda texts: tf.zeros([tf.shape(texts)[0], 4], tf.int64)  # noqa: E731
    assert list(token_id_batches(token_id_examples(empty, vectorize), 8, "bucketed", 4)) == []


@pytest.mark.parametrize(
    "tokens, window, stride", [(11, 4, 2), (40, 8, 4), (9, 8, 4), (2, 5, 2), (30, 6, 6), (23, 7, 3)]
)
def test_strided_windows_score_every_next_token_once_with_enough_context(tokens, window, stride):
    ids = np.arange(100, 100 + tokens, dtype=np.int32)  # each id names its position
    inputs, targets, weights = strided_next_token_windows(ids, window, stride)
    scored = []
    for row_inputs, row_targets, row_weights in zip(inputs, targets, weights, strict=True):
        real = row_inputs != 0
        # Each target is the token after its input, in the stream's order.
        np.testing.assert_array_equal(row_targets[real] - row_inputs[real], 1)
        assert (row_weights[~real] == 0).all()
        for position in np.flatnonzero(row_weights):
            target = row_targets[position] - 100
            context = position + 1  # the tokens the model reads before predicting it
            assert context >= min(target, window - stride + 1)
            scored.append(target)
    assert sorted(scored) == list(range(1, tokens))


def test_strided_windows_of_a_single_token_are_empty():
    inputs, targets, weights = strided_next_token_windows(np.array([5], np.int32), 4, 2)
    assert inputs.shape == targets.shape == weights.shape == (0, 4)


def test_strided_windows_refuse_a_stride_longer_than_the_window():
    with pytest.raises(ValueError, match="stride must be from 1 to the window"):
        strided_next_token_windows(np.arange(1, 10), 4, 5)
