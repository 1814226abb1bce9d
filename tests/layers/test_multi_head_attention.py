"""MultiHeadAttention against Keras's own layer and a NumPy reference; positions, cache."""

import io
import json
import zipfile

import h5py
import numpy as np
import pytest

from kerasformer.layers.backend import backend_name, keras, ops
from kerasformer.layers.multi_head_attention import MultiHeadAttention
from kerasformer.layers.transformer_block import TransformerBlock
from kerasformer.validation import LayerError
from tests.helpers.arrays import normal
from tests.helpers.numpy_reference import multi_head_cross_attention, t5_relative_bias
from tests.helpers.weights import attention_weights, numpy, randomise
from tests.layers.harness import run_layer_test

BATCH = 2
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}
# Distances 0, 1 get exact buckets, 2-3 and 4+ logarithmic ones, each way.
RELATIVE = {"position": "relative", "num_buckets": 8, "max_distance": 6}
ROTARY = {"position": "rotary"}
# Weights that `randomise` leaves alone: the adaptive spans keep their initial (largest) span.
SPANS = ("span",)


def as_numpy(outputs):
    return [ops.convert_to_numpy(output) for output in outputs]


# --- Against keras.layers.MultiHeadAttention -----------------------------------------------

SELF = {"query": (5, 8), "value": (5, 8), "key": None}
CROSS = {"query": (4, 6), "value": (5, 10), "key": (5, 7)}
# Batch 0 pads its last query, its last value and (through key_mask) one more key.
QUERY_MASK = np.array([[True, True, True, False], [True] * 4])
VALUE_MASK = np.array([[True, True, True, True, False], [True] * 5])
KEY_MASK = np.array([[True, True, True, False, True], [True] * 5])
KERAS_CASES = {
    "self-attention": (SELF, {"num_heads": 2, "key_dim": 4}, {}),
    "self-attention causal": (SELF, {"num_heads": 2, "key_dim": 4}, {"use_causal_mask": True}),
    "cross-attention": (CROSS, {"num_heads": 2, "key_dim": 4, "value_dim": 5}, {}),
    "cross-attention output_shape": (
        CROSS, {"num_heads": 2, "key_dim": 4, "value_dim": 5, "output_shape": 9}, {}
    ),
    "cross-attention padding": (
        CROSS, {"num_heads": 2, "key_dim": 4, "value_dim": 5},
        {"query_mask": QUERY_MASK, "value_mask": VALUE_MASK, "key_mask": KEY_MASK},
    ),
    "cross-attention padding causal": (
        CROSS, {"num_heads": 2, "key_dim": 4, "value_dim": 5},
        {"query_mask": QUERY_MASK, "value_mask": VALUE_MASK, "use_causal_mask": True},
    ),
    "no biases": (
        CROSS, {"num_heads": 2, "key_dim": 4, "value_dim": 5, "use_bias": False}, {}
    ),
}  # fmt: skip


def attention_inputs(shapes, seed=0):
    query = normal(seed, BATCH, *shapes["query"])
    value = normal(seed + 1, BATCH, *shapes["value"])
    key = None if shapes["key"] is None else normal(seed + 2, BATCH, *shapes["key"])
    return query, value, key


def keras_attention_mask(call_kwargs, query_length, key_length):
    """The per-token masks our layer takes, as the one ``attention_mask`` Keras's takes."""
    mask = np.ones((BATCH, query_length, key_length), bool)
    if "query_mask" in call_kwargs:
        mask &= call_kwargs["query_mask"][:, :, None]
    for name in ("value_mask", "key_mask"):
        if name in call_kwargs:
            mask &= call_kwargs[name][:, None, :]
    return mask


@pytest.mark.parametrize("case", list(KERAS_CASES))
def test_matches_keras_multi_head_attention_given_the_same_weights(case):
    shapes, init_kwargs, call_kwargs = KERAS_CASES[case]
    query, value, key = attention_inputs(shapes)
    keras_kwargs = dict(init_kwargs)
    reference = keras.layers.MultiHeadAttention(**keras_kwargs)
    # Keras 3 on JAX fails unless it returns the scores when value_dim != key_dim.
    reference(query, value, key=key, return_attention_scores=True)
    randomise(reference, seed=1, keep=SPANS)
    ours = MultiHeadAttention(**init_kwargs)
    ours(query, value, key=key)
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in reference.get_weights()]
    ours.set_weights(reference.get_weights())

    attention_mask = keras_attention_mask(call_kwargs, query.shape[1], value.shape[1])
    expected_outputs, expected_weights = as_numpy(
        reference(
            query, value, key=key, attention_mask=attention_mask, return_attention_scores=True,
            use_causal_mask=call_kwargs.get("use_causal_mask", False),
        )
    )  # fmt: skip
    outputs, weights = as_numpy(ours(query, value, key=key, return_attention_scores=True,
                                     **call_kwargs))  # fmt: skip
    real = call_kwargs.get("query_mask", np.ones(query.shape[:2], bool))
    np.testing.assert_allclose(outputs[real], expected_outputs[real], **TOLERANCE)
    real_rows = np.broadcast_to(real[:, None, :], weights.shape[:3])
    np.testing.assert_allclose(weights[real_rows], expected_weights[real_rows], **TOLERANCE)


def test_keras_masks_in_a_functional_model_match_keras_layer_given_attention_mask():
    """Embedding masks reach the layer: the same as Keras's layer with the equivalent mask."""
    query_ids = np.array([[3, 1, 4, 0], [2, 7, 1, 8]])
    value_ids = np.array([[5, 9, 2, 0, 0], [5, 3, 5, 8, 9]])
    query_input = keras.Input(shape=(None,), dtype="int32")
    value_input = keras.Input(shape=(None,), dtype="int32")
    query_embedding = keras.layers.Embedding(10, 6, mask_zero=True)
    value_embedding = keras.layers.Embedding(10, 10, mask_zero=True)
    ours = MultiHeadAttention(num_heads=2, key_dim=4, value_dim=5)
    attended = ours(query_embedding(query_input), value_embedding(value_input))
    pooled = keras.layers.GlobalAveragePooling1D()(attended)
    model = keras.Model([query_input, value_input], [attended, pooled])
    randomise(ours, seed=2, keep=SPANS)
    outputs, averages = as_numpy(model([query_ids, value_ids]))

    query = ops.convert_to_numpy(query_embedding.embeddings)[query_ids]
    value = ops.convert_to_numpy(value_embedding.embeddings)[value_ids]
    reference = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4, value_dim=5)
    reference(query, value, return_attention_scores=True)
    reference.set_weights(ours.get_weights())
    real_query, real_value = query_ids != 0, value_ids != 0
    attention_mask = real_query[:, :, None] & real_value[:, None, :]
    expected, _ = as_numpy(
        reference(query, value, attention_mask=attention_mask, return_attention_scores=True)
    )
    np.testing.assert_allclose(outputs[real_query], expected[real_query], **TOLERANCE)
    expected_averages = [expected[b][real_query[b]].mean(axis=0) for b in range(BATCH)]
    np.testing.assert_allclose(averages, expected_averages, **TOLERANCE)


# --- Against the NumPy reference --------------------------------------------------------

NUMPY_CASES = {
    "self-attention": (SELF, {"num_heads": 2, "key_dim": 4}, {}),
    # Keras's `use_gate`, which tf-keras's layer has not: against NumPy on every Keras.
    "gated cross-attention padding": (
        CROSS, {"num_heads": 2, "key_dim": 4, "value_dim": 5, "use_gate": True},
        {"query_mask": QUERY_MASK, "value_mask": VALUE_MASK, "key_mask": KEY_MASK},
    ),

    "cross-attention padding causal": (
        CROSS, {"num_heads": 2, "key_dim": 4, "value_dim": 5, "output_dim": 9},
        {"query_mask": QUERY_MASK, "value_mask": VALUE_MASK, "use_causal_mask": True},
    ),
    "no biases": (SELF, {"num_heads": 2, "key_dim": 4, "use_bias": False}, {}),
    "rotary": (
        SELF, {"num_heads": 2, "key_dim": 4, "position": "rotary", "max_wavelength": 100.0}, {}
    ),
    "rotary cross-attention causal": (
        CROSS, {"num_heads": 2, "key_dim": 4, "position": "rotary"}, {"use_causal_mask": True},
    ),
    "relative": (SELF, {"num_heads": 2, "key_dim": 4, **RELATIVE}, {}),
    "relative cross-attention padding causal": (
        CROSS, {"num_heads": 2, "key_dim": 4, **RELATIVE},
        {"query_mask": QUERY_MASK, "value_mask": VALUE_MASK, "use_causal_mask": True},
    ),
}  # fmt: skip


def numpy_reference(layer, query, value, key, call_kwargs):
    key = value if key is None else key
    mask = keras_attention_mask(call_kwargs, query.shape[1], key.shape[1])
    if call_kwargs.get("use_causal_mask"):
        mask &= np.tril(np.ones(mask.shape[1:], bool))[None]
    score_bias = None
    if layer.position == "relative":
        table = ops.convert_to_numpy(layer.relative_position_bias.table)
        score_bias = t5_relative_bias(
            table, query.shape[1], key.shape[1], max_distance=layer.max_distance
        )
    rotary = layer.max_wavelength if layer.position == "rotary" else None
    return multi_head_cross_attention(
        query, key, value, attention_weights(layer), mask, score_bias, rotary
    )


@pytest.mark.parametrize("case", list(NUMPY_CASES))
def test_matches_numpy_reference(case):
    shapes, init_kwargs, call_kwargs = NUMPY_CASES[case]
    query, value, key = attention_inputs(shapes, seed=3)
    layer = MultiHeadAttention(**init_kwargs)
    layer(query, value, key=key)
    randomise(layer, seed=4, keep=SPANS)
    outputs, weights = as_numpy(
        layer(query, value, key=key, return_attention_scores=True, **call_kwargs)
    )
    expected_outputs, expected_weights = numpy_reference(layer, query, value, key, call_kwargs)
    real = call_kwargs.get("query_mask", np.ones(query.shape[:2], bool))
    np.testing.assert_allclose(outputs[real], expected_outputs[real], **TOLERANCE)
    np.testing.assert_allclose(weights, expected_weights, **TOLERANCE)


# --- Relative positions: rotary and T5 biases depend on offsets only ----------------------


def log_weight_offsets(weights):
    """log w[i, j] - log w[i, i]: the score of key j minus that of key i, for query i."""
    logs = np.log(weights)
    return logs - np.diagonal(logs, axis1=-2, axis2=-1)[..., :, None]


@pytest.mark.parametrize("init_kwargs", [ROTARY, RELATIVE], ids=["rotary", "relative"])
def test_identical_tokens_get_scores_that_depend_on_the_offset_only(init_kwargs):
    """For a sequence of one token repeated, score(i, j) is a function of i - j: the matrix
    of score differences is Toeplitz (constant along every diagonal), and not constant."""
    length = 5
    tokens = np.repeat(normal(5, BATCH, 1, 8), length, axis=1)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, **init_kwargs)
    layer(tokens, tokens)
    randomise(layer, seed=6, keep=SPANS)
    _, weights = as_numpy(layer(tokens, tokens, return_attention_scores=True))
    offsets = log_weight_offsets(weights.astype("float64"))
    np.testing.assert_allclose(offsets[..., 1:, 1:], offsets[..., :-1, :-1], atol=1e-4)
    assert np.ptp(offsets) > 0.1, "the scores do not depend on the position at all"


@pytest.mark.parametrize("init_kwargs", [ROTARY, RELATIVE], ids=["rotary", "relative"])
@pytest.mark.parametrize("use_causal_mask", [False, True])
def test_shifting_a_sequence_changes_nothing(init_kwargs, use_causal_mask):
    """The same tokens after 3 masked-out ones (absolute positions 3..7, not 0..4) give the
    same outputs and weights."""
    tokens = normal(7, BATCH, 5, 8)
    shifted = np.concatenate([normal(8, BATCH, 3, 8), tokens], axis=1)
    real = np.array([[False] * 3 + [True] * 5] * BATCH)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, **init_kwargs)
    layer(tokens, tokens)
    randomise(layer, seed=9, keep=SPANS)
    outputs, weights = as_numpy(
        layer(tokens, tokens, use_causal_mask=use_causal_mask, return_attention_scores=True)
    )
    shifted_outputs, shifted_weights = as_numpy(
        layer(shifted, shifted, query_mask=real, value_mask=real,
              use_causal_mask=use_causal_mask, return_attention_scores=True)
    )  # fmt: skip
    np.testing.assert_allclose(shifted_outputs[:, 3:], outputs, **TOLERANCE)
    np.testing.assert_allclose(shifted_weights[:, :, 3:, 3:], weights, **TOLERANCE)


# --- Causality and the key/value cache -------------------------------------------------

POSITIONS = {
    "none": {},
    "rotary": ROTARY,
    "relative": RELATIVE,
    "adaptive span": {"attention_span": 2, "span_ramp": 2},
}


@pytest.mark.parametrize("init_kwargs", list(POSITIONS.values()), ids=list(POSITIONS))
def test_changing_a_later_token_changes_no_earlier_output(init_kwargs):
    tokens = normal(10, BATCH, 5, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, **init_kwargs)
    layer(tokens, tokens)
    randomise(layer, seed=11, keep=SPANS)
    outputs = ops.convert_to_numpy(layer(tokens, tokens, use_causal_mask=True))
    for position in (1, 3):
        changed = tokens.copy()
        changed[:, position] += normal(12, BATCH, 8)
        changed_outputs = ops.convert_to_numpy(layer(changed, changed, use_causal_mask=True))
        np.testing.assert_allclose(changed_outputs[:, :position], outputs[:, :position], atol=1e-6)
        assert not np.allclose(changed_outputs[:, position:], outputs[:, position:], atol=1e-3)


@pytest.mark.parametrize("step", [1, 2])
@pytest.mark.parametrize("init_kwargs", list(POSITIONS.values()), ids=list(POSITIONS))
def test_decoding_with_a_cache_matches_the_full_causal_pass(init_kwargs, step):
    length, max_length = 5, 7  # two cache slots are never written
    tokens = normal(13, BATCH, length, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, **init_kwargs)
    layer(tokens, tokens)
    randomise(layer, seed=14, keep=SPANS)
    full_outputs, full_weights = as_numpy(
        layer(tokens, tokens, use_causal_mask=True, return_attention_scores=True)
    )
    cache = layer.empty_cache(BATCH, max_length)
    assert tuple(cache.shape) == (BATCH, 2, max_length, 2, 4)
    for start in range(0, length, step):
        new = tokens[:, start : start + step]
        outputs, weights, cache = layer(
            new, new, cache=cache, cache_index=start, return_attention_scores=True
        )
        outputs, weights = as_numpy((outputs, weights))
        np.testing.assert_allclose(outputs, full_outputs[:, start : start + step], **TOLERANCE)
        np.testing.assert_allclose(
            weights[..., :length], full_weights[:, :, start : start + step], **TOLERANCE
        )
        assert np.all(weights[..., length:] == 0.0), "an unwritten cache slot got weight"


# --- Bad arguments -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"num_heads": 0, "key_dim": 4}, "num_heads"),
        ({"num_heads": 2, "key_dim": "4"}, "key_dim"),
        ({"num_heads": 2, "key_dim": 4, "dropout": 1.5}, "dropout"),
        ({"num_heads": 2, "key_dim": 4, "position": "learned"}, "position"),
    ],
)
def test_bad_arguments_are_one_line_layer_errors_naming_the_argument(kwargs, argument):
    with pytest.raises(LayerError, match=f"`{argument}`") as error:
        MultiHeadAttention(**kwargs)
    assert "\n" not in str(error.value)


def cache_without_index(layer, tokens):
    layer(tokens, tokens, cache=layer.empty_cache(BATCH, 4))


def cache_for_three_heads(layer, tokens):
    layer(tokens, tokens, cache=np.zeros((BATCH, 2, 4, 3, 4), "float32"), cache_index=0)


def cache_with_value_dim_unlike_key_dim(layer, tokens):
    unequal = MultiHeadAttention(num_heads=2, key_dim=4, value_dim=3)
    unequal(tokens, tokens, cache=unequal.empty_cache(BATCH, 4), cache_index=0)


@pytest.mark.parametrize(
    "bad_call, message",
    [
        (cache_without_index, "needs `cache_index`"),
        (cache_for_three_heads, r"cache of shape \(2, 2, 4, 3, 4\) does not fit"),
        (cache_with_value_dim_unlike_key_dim, "key_dim=4 and value_dim=3"),
    ],
)
def test_bad_cache_is_a_one_line_layer_error(bad_call, message):
    with pytest.raises(LayerError, match=message) as error:
        bad_call(MultiHeadAttention(num_heads=2, key_dim=4), normal(15, BATCH, 1, 8))
    assert "\n" not in str(error.value), f"not one line: {str(error.value)[:300]!r}..."


# --- The shared layer checks -------------------------------------------------------------


def harness_inputs(seed, with_key=False, with_masks=False):
    query, value, key = attention_inputs(CROSS, seed)
    data = {"query": query, "value": value}
    if with_key:
        data["key"] = key
    if with_masks:
        data["query_mask"], data["value_mask"] = QUERY_MASK, VALUE_MASK
    return data


def test_harness_plain(tmp_path):
    run_layer_test(
        MultiHeadAttention, {"num_heads": 2, "key_dim": 4, "dropout": 0.25},
        harness_inputs(20, with_masks=True), (BATCH, 4, 6),
        expected_output_mask=QUERY_MASK, expected_num_trainable_weights=8, tmp_path=tmp_path,
    )  # fmt: skip


def test_harness_rotary_cross_attention_with_scores(tmp_path):
    run_layer_test(
        MultiHeadAttention,
        {"num_heads": 2, "key_dim": 4, "value_dim": 5, "output_dim": 9, "use_bias": False,
         "position": "rotary"},
        harness_inputs(21, with_key=True), [(BATCH, 4, 9), (BATCH, 2, 4, 5)],
        call_kwargs={"return_attention_scores": True, "use_causal_mask": True},
        expected_num_trainable_weights=4, tmp_path=tmp_path,
    )  # fmt: skip


def test_harness_relative(tmp_path):
    run_layer_test(
        MultiHeadAttention, {"num_heads": 2, "key_dim": 4, **RELATIVE},
        harness_inputs(22, with_masks=True), (BATCH, 4, 6),
        expected_num_trainable_weights=9, tmp_path=tmp_path,
    )  # fmt: skip


def test_harness_attention_span(tmp_path):
    run_layer_test(
        MultiHeadAttention,
        # Spans start at their maximum, where a gradient asking for more is clipped away
        # (seen on a GPU); a clear penalty makes the fit step move them down.
        {"num_heads": 2, "key_dim": 4, "attention_span": 2, "span_ramp": 2, "span_penalty": 0.1},
        {"query": normal(23, BATCH, 5, 8), "value": normal(24, BATCH, 5, 8)}, (BATCH, 5, 8),
        call_kwargs={"use_causal_mask": True}, expected_num_trainable_weights=9,
        tmp_path=tmp_path,
    )  # fmt: skip


def test_regularizers_add_their_penalties_and_constraints_hold_after_a_step():
    """As on Keras's layer: an L2 kernel regularizer's loss is 0.1 x the sum of squares of
    the four kernels (checked in NumPy), a bias regularizer adds the biases'; after one
    optimizer step a non-negative constraint leaves no negative kernel, and a max-norm
    bias constraint no bias column over its norm."""
    layer = MultiHeadAttention(
        num_heads=2, key_dim=3, kernel_regularizer=keras.regularizers.L2(0.1),
        bias_regularizer="l2", kernel_constraint="non_neg",
        bias_constraint=keras.constraints.MaxNorm(0.05, axis=0),
        bias_initializer="ones",
    )  # fmt: skip
    x = np.random.default_rng(0).standard_normal((4, 5, 6)).astype("float32")
    inputs = keras.Input((5, 6))
    model = keras.Model(inputs, layer(inputs, inputs))
    kernels = [dense.kernel for dense in layer.projections().values()]
    biases = [dense.bias for dense in layer.projections().values()]
    expected = 0.1 * sum(float((numpy(k) ** 2).sum()) for k in kernels)
    expected += 0.01 * sum(float((numpy(b) ** 2).sum()) for b in biases)  # "l2" is L2(0.01)
    penalties = float(sum(ops.convert_to_numpy(loss) for loss in model.losses))
    assert penalties == pytest.approx(expected, rel=1e-5)
    model.compile(keras.optimizers.SGD(0.1), loss="mse")
    model.train_on_batch(x, np.ones((4, 5, 6), "float32"))
    assert all(numpy(k).min() >= 0 for k in kernels)
    for bias in biases:
        norms = np.sqrt((numpy(bias) ** 2).sum(axis=0))
        assert norms.max() <= 0.05 + 1e-6


def test_regularizers_and_constraints_are_saved_in_the_config():
    layer = MultiHeadAttention(
        num_heads=2, key_dim=3, kernel_regularizer=keras.regularizers.L2(0.1),
        kernel_constraint="non_neg",
    )  # fmt: skip
    config = layer.get_config()
    assert config["bias_regularizer"] is None and config["bias_constraint"] is None
    clone = MultiHeadAttention.from_config(config)
    assert float(clone.kernel_regularizer.l2) == pytest.approx(0.1)
    assert isinstance(clone.kernel_constraint, keras.constraints.NonNeg)
    assert clone.get_config() == config


# --- Keras's other arguments: attention axes, output shape, windows, mask shapes ---------


def copied_layer(layer, x, **init_kwargs):
    """A layer of ``init_kwargs`` with ``layer``'s weights, built on ``x``."""
    other = MultiHeadAttention(**init_kwargs)
    other(x, x)
    other.set_weights(layer.get_weights())
    return other


def test_attention_over_two_axes_is_attention_over_their_flattened_positions():
    """Attending over axes 1 and 2 of (batch, 3, 4, features) is the usual attention over
    the 12 positions in a row, with the same weights (the flattened layer is itself
    checked against NumPy above)."""
    x = normal(0, BATCH, 3, 4, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, attention_axes=(1, 2), use_gate=True)
    layer(x, x)
    randomise(layer, seed=1)
    outputs, weights = as_numpy(layer(x, x, return_attention_scores=True))
    assert outputs.shape == x.shape and weights.shape == (BATCH, 2, 3, 4, 3, 4)

    flat = x.reshape(BATCH, 12, 8)
    flat_layer = copied_layer(layer, flat, num_heads=2, key_dim=4, use_gate=True)
    expected, expected_weights = as_numpy(flat_layer(flat, flat, return_attention_scores=True))
    np.testing.assert_allclose(outputs.reshape(BATCH, 12, 8), expected, **TOLERANCE)
    np.testing.assert_allclose(weights.reshape(BATCH, 2, 12, 12), expected_weights, **TOLERANCE)


def test_attention_over_one_axis_of_four_attends_within_each_slice_and_masks_the_future():
    """``attention_axes=1`` on (batch, length, 3, features): each of the 3 slices
    is its own sequence; a causal mask hides later positions in each."""
    x = normal(2, BATCH, 5, 3, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, attention_axes=1)
    layer(x, x)
    randomise(layer, seed=3)
    outputs = ops.convert_to_numpy(layer(x, x, use_causal_mask=True))
    slices = np.transpose(x, (0, 2, 1, 3)).reshape(BATCH * 3, 5, 8)
    per_slice = copied_layer(layer, slices, num_heads=2, key_dim=4)
    expected = ops.convert_to_numpy(per_slice(slices, slices, use_causal_mask=True))
    expected = np.transpose(expected.reshape(BATCH, 3, 5, 8), (0, 2, 1, 3))
    np.testing.assert_allclose(outputs, expected, **TOLERANCE)


def test_output_shape_as_a_tuple_is_the_flat_projection_reshaped():
    x = normal(4, BATCH, 5, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, output_shape=(2, 3))
    outputs = ops.convert_to_numpy(layer(x, x))
    assert outputs.shape == (BATCH, 5, 2, 3)
    assert layer.compute_output_shape((BATCH, 5, 8), (BATCH, 5, 8)) == (BATCH, 5, 2, 3)
    flat = MultiHeadAttention(num_heads=2, key_dim=4, output_shape=6)
    flat(x, x)
    weights = layer.get_weights()
    weights[-2] = weights[-2].reshape(2, 4, 6)
    weights[-1] = weights[-1].reshape(6)
    flat.set_weights(weights)
    expected = ops.convert_to_numpy(flat(x, x))
    np.testing.assert_allclose(outputs.reshape(BATCH, 5, 6), expected, **TOLERANCE)


def test_output_dim_of_earlier_configs_is_read_as_output_shape():
    layer = MultiHeadAttention.from_config({"num_heads": 2, "key_dim": 4, "output_dim": 7})
    assert layer.get_config()["output_shape"] == (7,)
    assert tuple(layer(normal(0, 1, 3, 5), normal(1, 1, 3, 5)).shape) == (1, 3, 7)


@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_is_the_banded_attention_mask(causal):
    """Each query sees the keys fewer than ``sliding_window`` positions away: the same as
    passing that band as ``attention_mask`` (and the causal triangle with it)."""
    x = normal(5, BATCH, 7, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, sliding_window=3)
    layer(x, x)
    randomise(layer, seed=6)
    outputs, weights = as_numpy(layer(x, x, use_causal_mask=causal, return_attention_scores=True))
    distance = np.arange(7)[:, None] - np.arange(7)[None, :]
    band = np.abs(distance) < 3
    if causal:
        band &= distance >= 0
    assert np.all(weights[..., ~band] == 0.0) and np.all(weights[..., band] > 0.0)
    plain = copied_layer(layer, x, num_heads=2, key_dim=4)
    expected = ops.convert_to_numpy(
        plain(x, x, attention_mask=np.broadcast_to(band, (BATCH, 7, 7)))
    )
    np.testing.assert_allclose(outputs, expected, **TOLERANCE)


def test_an_attention_mask_with_or_without_batch_and_heads_axes_gives_the_same_outputs():
    x = normal(7, BATCH, 5, 8)
    band = np.tril(np.ones((5, 5), bool))
    band[3, 1] = False
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    masks = (band, np.broadcast_to(band, (BATCH, 5, 5)), np.broadcast_to(band, (BATCH, 2, 5, 5)))
    outputs = [
        ops.convert_to_numpy(layer(x, x, attention_mask=mask, query_mask=VALUE_MASK))
        for mask in masks
    ]
    np.testing.assert_allclose(outputs[1], outputs[0], **TOLERANCE)
    np.testing.assert_allclose(outputs[2], outputs[0], **TOLERANCE)


def test_value_and_key_of_different_lengths_are_refused_in_keras_words():
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match="must be equal"):
        layer(normal(0, 1, 3, 8), normal(1, 1, 4, 8), key=normal(2, 1, 5, 8))
    with pytest.raises(ValueError, match="must be equal"):
        layer.compute_output_shape((1, 3, 8), (1, 4, 8), (1, 5, 8))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_heads": 1.5, "key_dim": 4}, "argument `num_heads`"),
        ({"num_heads": 2, "key_dim": 0}, "argument `key_dim`"),
        ({"num_heads": 2, "key_dim": 4, "output_shape": 8.0}, "Invalid `output_shape`"),
        ({"num_heads": 2, "key_dim": 4, "sliding_window": 0}, "`sliding_window`"),
        ({"num_heads": 2, "key_dim": 4, "attention_axes": "1"}, "`attention_axes` must be"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(kwargs, message):
    with pytest.raises(LayerError, match=message):
        MultiHeadAttention(**kwargs)


def test_positions_and_spans_refuse_attention_over_other_axes():
    layer = MultiHeadAttention(num_heads=2, key_dim=4, position="rotary", attention_axes=(1, 2))
    x = normal(0, 1, 3, 4, 8)
    with pytest.raises(LayerError, match="attend over the length"):
        layer(x, x)


# --- Files saved before the projections were sub-layers ------------------------------------

NEW_ARGUMENTS = ("attention_axes", "sliding_window", "flash_attention", "use_gate", "seed")


def earlier_weights(data: bytes) -> bytes:
    """A weights file with each attention's projections as its own eight weights (query,
    key, value, output: kernel then bias), as kerasformer saved them before."""
    buffer = io.BytesIO(data)
    with h5py.File(buffer, "r+") as weights:
        parents = []
        weights.visit(lambda name: parents.append(name.rsplit("/", 1)[0])
                      if name.endswith("query_dense") else None)  # fmt: skip
        for parent in parents:
            group = weights[parent]
            arrays = []
            for projection in ("query_dense", "key_dense", "value_dense", "output_dense"):
                (name,) = [n for n in group if n.endswith(projection)]
                variables = group[f"{name}/vars"]
                arrays += [variables[str(i)][()] for i in range(len(variables))]
                del group[name]
            for index, array in enumerate(arrays):
                group.require_group("vars").create_dataset(str(index), data=array)
    return buffer.getvalue()


def earlier_config(data: bytes) -> bytes:
    def rewrite(node):
        if isinstance(node, dict):
            if "num_heads" in node and "output_shape" in node:
                shape = node.pop("output_shape")
                node["output_dim"] = None if shape is None else shape[0]
                for name in NEW_ARGUMENTS:
                    node.pop(name, None)
            for value in node.values():
                rewrite(value)
        elif isinstance(node, list):
            for value in node:
                rewrite(value)

    config = json.loads(data)
    rewrite(config)
    return json.dumps(config).encode()


def test_a_keras_file_saved_before_the_projections_were_sublayers_still_loads(tmp_path):
    """A model with an encoder block and a cross-attention (with ``output_dim``), saved in
    the earlier layout, loads and predicts as the model it was saved from."""
    inputs = keras.Input((5, 8))
    encoded = TransformerBlock(8, 2, 16)(inputs)
    outputs = MultiHeadAttention(num_heads=2, key_dim=3, output_dim=6)(encoded, inputs)
    model = keras.Model(inputs, outputs)
    randomise(model, seed=9)
    model.save(tmp_path / "now.keras")
    with (
        zipfile.ZipFile(tmp_path / "now.keras") as now,
        zipfile.ZipFile(tmp_path / "earlier.keras", "w") as earlier,
    ):
        for item in now.infolist():
            data = now.read(item.filename)
            if item.filename.endswith(".weights.h5"):
                data = earlier_weights(data)
            elif item.filename == "config.json":
                data = earlier_config(data)
            earlier.writestr(item, data)
    with zipfile.ZipFile(tmp_path / "earlier.keras") as earlier:
        assert "output_dim" in earlier.read("config.json").decode()
    reloaded = keras.models.load_model(tmp_path / "earlier.keras")
    x = normal(3, BATCH, 5, 8)
    np.testing.assert_allclose(
        ops.convert_to_numpy(reloaded(x)), ops.convert_to_numpy(model(x)), **TOLERANCE
    )


# --- The fused kernel's path (GPUs), checked here on the CPU -------------------------------

FUSED_CASES = {
    "padded cross-attention": (
        CROSS, {"num_heads": 2, "key_dim": 4},
        {"query_mask": QUERY_MASK, "value_mask": VALUE_MASK, "key_mask": KEY_MASK},
    ),
    "causal only": (SELF, {"num_heads": 2, "key_dim": 4}, {"use_causal_mask": True}),
    "causal and padding": (
        SELF, {"num_heads": 2, "key_dim": 4},
        {"query_mask": VALUE_MASK, "value_mask": VALUE_MASK, "use_causal_mask": True},
    ),
    "relative, gated": (SELF, {"num_heads": 2, "key_dim": 4, "use_gate": True, **RELATIVE}, {}),
    "rotary, sliding window": (
        SELF, {"num_heads": 2, "key_dim": 4, "sliding_window": 2, **ROTARY},
        {"use_causal_mask": True},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(FUSED_CASES))
def test_the_fused_kernel_path_gives_the_matmul_paths_outputs(case, monkeypatch):
    """Where a fused kernel exists (JAX or PyTorch on a GPU), the layer calls
    ``keras.ops.dot_product_attention``; made to take that path here, it gives the outputs
    of its own matmul path, a padded query's zeros included. tf-keras has no such op."""
    import sys

    from kerasformer.layers.backend import fused_attention

    shapes, init_kwargs, call_kwargs = FUSED_CASES[case]
    query, value, key = attention_inputs(shapes, seed=11)
    layer = MultiHeadAttention(**init_kwargs)
    layer(query, value, key=key)
    randomise(layer, seed=12)
    expected = ops.convert_to_numpy(layer(query, value, key=key, **call_kwargs))
    keras_module = sys.modules[fused_attention.__module__]
    monkeypatch.setattr(keras_module, "_has_fused_attention_kernel", lambda: True, raising=False)
    if fused_attention() is None:
        assert backend_name() == "tf_keras"
        return
    calls = []
    real_op = ops.dot_product_attention
    monkeypatch.setattr(
        ops, "dot_product_attention", lambda *a, **k: calls.append(k) or real_op(*a, **k)
    )
    outputs = ops.convert_to_numpy(layer(query, value, key=key, **call_kwargs))
    assert calls, "the fused op was not called"
    np.testing.assert_allclose(outputs, expected, **TOLERANCE)
