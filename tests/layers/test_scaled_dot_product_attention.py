"""Scaled dot-product attention (function and layer) against a NumPy softmax(QKᵀ/√d)V."""

import numpy as np
import pytest

from kerasformer.layers.backend import keras, ops
from kerasformer.layers.scaled_dot_product_attention import (
    ScaledDotProductAttention,
    scaled_dot_product_attention,
)
from tests.helpers.numpy_reference import masked_attention

BATCH, LENGTH, DEPTH, VALUE_DEPTH = 2, 5, 4, 3
# Batch 0: the last query and the last two keys are padding; batch 1 has no padding.
QUERY_MASK = np.array([[True, True, True, True, False], [True] * 5])
KEY_MASK = np.array([[True, True, True, False, False], [True] * 5])
# An arbitrary pattern in which every query still sees at least one key.
ATTENTION_MASK = np.random.default_rng(7).random((BATCH, LENGTH, LENGTH)) < 0.6
ATTENTION_MASK[:, :, 0] = True
CAUSAL = np.tril(np.ones((LENGTH, LENGTH), bool))[None]
PADDING = QUERY_MASK[:, :, None] & KEY_MASK[:, None, :]
# Which queries attend to which keys in each case, in the reference's terms.
CASES = {
    "no mask": np.ones((BATCH, LENGTH, LENGTH), bool),
    "padding": PADDING,
    "causal": np.broadcast_to(CAUSAL, (BATCH, LENGTH, LENGTH)),
    "padding and causal": PADDING & CAUSAL,
    "attention_mask": ATTENTION_MASK,
}


def inputs(seed=0, length=LENGTH):
    rng = np.random.default_rng(seed)
    query = rng.normal(size=(BATCH, length, DEPTH)).astype("float32")
    key = rng.normal(size=(BATCH, length, DEPTH)).astype("float32")
    value = rng.normal(size=(BATCH, length, VALUE_DEPTH)).astype("float32")
    return query, key, value


def call_function(case, query, key, value):
    """The function, with the case's masks given as its ``mask``/``use_causal_mask``."""
    mask = {"padding": PADDING, "padding and causal": PADDING, "attention_mask": ATTENTION_MASK}
    outputs, weights = scaled_dot_product_attention(
        query, key, value, mask=mask.get(case), use_causal_mask="causal" in case
    )
    return ops.convert_to_numpy(outputs), ops.convert_to_numpy(weights)


def call_layer(case, query, key, value):
    """The layer, with per-token masks for padding and ``attention_mask`` for the rest."""
    padding = {"query_mask": QUERY_MASK, "value_mask": KEY_MASK} if "padding" in case else {}
    if case == "attention_mask":
        padding = {"attention_mask": ATTENTION_MASK}
    outputs, weights = ScaledDotProductAttention()(
        query, value, key=key, use_causal_mask="causal" in case, return_attention_scores=True,
        **padding,
    )  # fmt: skip
    return ops.convert_to_numpy(outputs), ops.convert_to_numpy(weights)


@pytest.mark.parametrize("call", [call_function, call_layer], ids=["function", "layer"])
@pytest.mark.parametrize("case", list(CASES))
def test_outputs_and_weights_match_numpy_reference(call, case):
    query, key, value = inputs()
    allowed = CASES[case]
    expected_outputs, expected_weights = masked_attention(query, key, value, allowed)
    outputs, weights = call(case, query, key, value)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outputs, expected_outputs, rtol=1e-5, atol=1e-6)

    rows_with_keys = allowed.any(axis=-1)
    np.testing.assert_allclose(weights.sum(axis=-1)[rows_with_keys], 1.0, rtol=1e-6)
    assert np.all(weights[~allowed] == 0.0), "a masked key got weight"


@pytest.mark.parametrize("call", [call_function, call_layer], ids=["function", "layer"])
def test_padded_query_gets_all_zero_weights_and_output(call):
    outputs, weights = call("padding", *inputs(seed=1))
    assert np.all(weights[0, LENGTH - 1] == 0.0)
    assert np.all(outputs[0, LENGTH - 1] == 0.0)


@pytest.mark.parametrize("call", [call_function, call_layer], ids=["function", "layer"])
@pytest.mark.parametrize("changed_position", [1, 3])
def test_changing_a_later_token_changes_no_earlier_output(call, changed_position):
    query, key, value = inputs(seed=2)
    outputs, _ = call("causal", query, key, value)
    key, value = key.copy(), value.copy()
    key[:, changed_position] += 5.0
    value[:, changed_position] -= 3.0
    changed_outputs, _ = call("causal", query, key, value)
    before, after = slice(None, changed_position), slice(changed_position, None)
    np.testing.assert_allclose(changed_outputs[:, before], outputs[:, before], atol=1e-6)
    assert not np.allclose(changed_outputs[:, after], outputs[:, after], atol=1e-3)


def test_appended_padding_leaves_real_outputs_unchanged():
    query, key, value = inputs(seed=3, length=3)
    padded_query, padded_key, padded_value = (
        np.concatenate([x, 100.0 * y], axis=1)
        for x, y in zip((query, key, value), inputs(4, 2), strict=True)
    )
    real = np.array([[True] * 3 + [False] * 2] * BATCH)
    layer = ScaledDotProductAttention()
    for use_causal_mask in (False, True):
        plain = ops.convert_to_numpy(layer(query, value, key=key, use_causal_mask=use_causal_mask))
        padded = layer(
            padded_query, padded_value, key=padded_key, query_mask=real, value_mask=real,
            use_causal_mask=use_causal_mask,
        )  # fmt: skip
        np.testing.assert_allclose(ops.convert_to_numpy(padded)[:, :3], plain, atol=1e-6)
        outputs, _ = scaled_dot_product_attention(
            padded_query, padded_key, padded_value, mask=real[:, None, :],
            use_causal_mask=use_causal_mask,
        )  # fmt: skip
        np.testing.assert_allclose(ops.convert_to_numpy(outputs)[:, :3], plain, atol=1e-6)


def test_keras_masks_from_masking_layer_in_a_functional_model():
    """Masking's mask reaches the layer (padded keys hidden) and passes on to pooling."""
    x = np.random.default_rng(5).normal(size=(BATCH, LENGTH, DEPTH)).astype("float32")
    x[0, 3:] = 0.0  # padding, as Masking(mask_value=0) sees it
    vector_input = keras.Input(shape=(LENGTH, DEPTH))
    masked = keras.layers.Masking(mask_value=0.0)(vector_input)
    attended = ScaledDotProductAttention()(masked, masked)
    pooled = keras.layers.GlobalAveragePooling1D()(attended)
    model = keras.Model(vector_input, [attended, pooled])
    outputs, averages = (ops.convert_to_numpy(t) for t in model(x))

    real = np.any(x != 0.0, axis=-1)
    expected, _ = masked_attention(x, x, x, real[:, :, None] & real[:, None, :])
    np.testing.assert_allclose(outputs[real], expected[real], rtol=1e-5, atol=1e-6)
    expected_averages = [expected[b][real[b]].mean(axis=0) for b in range(BATCH)]
    np.testing.assert_allclose(averages, expected_averages, rtol=1e-5, atol=1e-6)


def test_keras_masks_from_embeddings_in_a_functional_model():
    """Query and value each carry the mask of their own ``Embedding(mask_zero=True)``."""
    query_ids = np.array([[3, 1, 4, 0], [2, 7, 1, 8]])
    value_ids = np.array([[5, 9, 2, 6, 0, 0], [5, 3, 5, 8, 9, 7]])
    query_input = keras.Input(shape=(None,), dtype="int32")
    value_input = keras.Input(shape=(None,), dtype="int32")
    query_embedding = keras.layers.Embedding(10, DEPTH, mask_zero=True)
    value_embedding = keras.layers.Embedding(10, DEPTH, mask_zero=True)
    attended = ScaledDotProductAttention()(
        query_embedding(query_input), value_embedding(value_input)
    )
    pooled = keras.layers.GlobalAveragePooling1D()(attended)
    model = keras.Model([query_input, value_input], [attended, pooled])
    outputs, averages = (ops.convert_to_numpy(t) for t in model([query_ids, value_ids]))

    query = ops.convert_to_numpy(query_embedding.embeddings)[query_ids]
    value = ops.convert_to_numpy(value_embedding.embeddings)[value_ids]
    real_query, real_value = query_ids != 0, value_ids != 0
    allowed = real_query[:, :, None] & real_value[:, None, :]
    expected, _ = masked_attention(query, value, value, allowed)
    np.testing.assert_allclose(outputs[real_query], expected[real_query], rtol=1e-5, atol=1e-6)
    expected_averages = [expected[b][real_query[b]].mean(axis=0) for b in range(BATCH)]
    np.testing.assert_allclose(averages, expected_averages, rtol=1e-5, atol=1e-6)
