"""T5's relative position buckets and RelativePositionBias, against a NumPy port of T5's code."""

import numpy as np
import pytest

from kerasformer.layers import RelativePositionBias
from kerasformer.layers.backend import ops
from kerasformer.layers.relative_position_bias import relative_position_buckets
from kerasformer.validation import LayerError
from tests.helpers import numpy_reference
from tests.layers.harness import run_layer_test

RELATIVE_POSITIONS = np.arange(-200, 201)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(
    "num_buckets, max_distance", [(32, 128), (16, 64), (10, 20), (64, 256), (8, 100), (33, 50)]
)
def test_buckets_match_t5(num_buckets, max_distance, bidirectional):
    got = relative_position_buckets(
        ops.convert_to_tensor(RELATIVE_POSITIONS.astype("int32")),
        bidirectional, num_buckets, max_distance,
    )  # fmt: skip
    expected = [
        numpy_reference.t5_relative_position_bucket(
            int(relative), bidirectional, num_buckets, max_distance
        )
        for relative in RELATIVE_POSITIONS
    ]
    np.testing.assert_array_equal(ops.convert_to_numpy(got), expected)


def test_t5_default_buckets_by_hand():
    """Spot values of the default (32 buckets, 128, bidirectional) read off the description:
    keys before the query use buckets 0-15 (exact below 8), keys after it 16-31."""
    relative = np.array([0, -1, -7, -8, -127, -128, -1000, 1, 7, 8, 128, 1000], "int32")
    got = ops.convert_to_numpy(relative_position_buckets(ops.convert_to_tensor(relative)))
    assert got.tolist() == [0, 1, 7, 8, 15, 15, 15, 17, 23, 24, 31, 31]


def layer_with_table(table, **kwargs):
    layer = RelativePositionBias(num_heads=table.shape[1], num_buckets=table.shape[0], **kwargs)
    layer.build((None, table.shape[1], None, None))
    layer.set_weights([table])
    return layer


def reference_bias(table, query_length, key_length, query_start, **bucket_options):
    """(heads, q, k): table[bucket(j - i), h] with i counted from ``query_start``."""
    bias = np.zeros((table.shape[1], query_length, key_length))
    for h in range(table.shape[1]):
        for i in range(query_length):
            for j in range(key_length):
                relative = j - (query_start + i)
                bucket = numpy_reference.t5_relative_position_bucket(
                    relative, num_buckets=table.shape[0], **bucket_options
                )
                bias[h, i, j] = table[bucket, h]
    return bias


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("lengths", [(5, 5, 0), (3, 9, 6), (1, 12, 11)], ids=str)
def test_layer_adds_the_bucket_bias_of_each_head(lengths, bidirectional):
    query_length, key_length, query_start = lengths
    rng = np.random.default_rng(query_length)
    table = rng.normal(size=(8, 3)).astype("float32")
    options = {"bidirectional": bidirectional, "max_distance": 6}
    layer = layer_with_table(table, **options)
    scores = rng.normal(size=(2, 3, query_length, key_length)).astype("float32")
    got = ops.convert_to_numpy(layer(scores, query_start=query_start))
    bias = reference_bias(table, query_length, key_length, query_start, **options)
    np.testing.assert_allclose(got, scores + bias[None], atol=1e-6)


def test_bias_method_has_the_attention_layout():
    table = np.random.default_rng(0).normal(size=(16, 2)).astype("float32")
    layer = layer_with_table(table, max_distance=20)
    bias = ops.convert_to_numpy(layer.bias(4, 7, query_start=2))
    assert bias.shape == (1, 2, 4, 7)
    np.testing.assert_allclose(bias[0], reference_bias(table, 4, 7, 2, max_distance=20))


def test_zeros_initialised_table_adds_nothing():
    scores = np.random.default_rng(1).normal(size=(1, 2, 3, 3)).astype("float32")
    got = RelativePositionBias(num_heads=2)(scores)
    np.testing.assert_array_equal(ops.convert_to_numpy(got), scores)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"num_heads": 0}, "`num_heads` must be a positive integer"),
        ({"num_heads": 2, "num_buckets": 0}, "`num_buckets` must be a positive integer"),
        ({"num_heads": 2, "max_distance": -1}, "`max_distance` must be a positive integer"),
        ({"num_heads": 2, "bidirectional": "no"}, "`bidirectional` must be True or False"),
        ({"num_heads": 2, "num_buckets": 3}, "leaves no room for logarithmic buckets"),
        ({"num_heads": 2, "num_buckets": 1, "bidirectional": False}, "leaves no room"),
        ({"num_heads": 2, "num_buckets": 32, "max_distance": 8}, "max_distance > 8"),
        ({"num_heads": 2, "num_buckets": 8, "max_distance": 4, "bidirectional": False},
         "max_distance > 4"),
    ],
)  # fmt: skip
def test_bad_configurations_are_layer_errors(options, message):
    with pytest.raises(LayerError, match=message) as error:
        RelativePositionBias(**options)
    assert "\n" not in str(error.value)


def test_smallest_valid_configurations_are_accepted():
    RelativePositionBias(num_heads=1, num_buckets=4, max_distance=2)
    RelativePositionBias(num_heads=1, num_buckets=2, max_distance=2, bidirectional=False)


@pytest.mark.parametrize("bidirectional", [True, False])
def test_layer_harness(bidirectional, tmp_path):
    scores = np.random.default_rng(2).normal(size=(2, 3, 4, 6)).astype("float32")
    run_layer_test(
        RelativePositionBias,
        {
            "num_heads": 3, "num_buckets": 8, "max_distance": 10,
            "bidirectional": bidirectional, "embeddings_initializer": "random_normal",
        },
        scores,
        (2, 3, 4, 6),
        expected_num_trainable_weights=1,
        tmp_path=tmp_path,
    )  # fmt: skip


def test_layer_harness_with_query_start(tmp_path):
    scores = np.random.default_rng(3).normal(size=(1, 2, 2, 5)).astype("float32")
    run_layer_test(
        RelativePositionBias,
        {"num_heads": 2, "num_buckets": 8, "max_distance": 10},
        scores,
        (1, 2, 2, 5),
        call_kwargs={"query_start": 3},
        tmp_path=tmp_path,
    )
