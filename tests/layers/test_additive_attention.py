"""AdditiveAttention against a NumPy Bahdanau reference built from the layer's weights."""

import numpy as np
import pytest

from kerasformer.layers.additive_attention import AdditiveAttention
from kerasformer.layers.backend import keras, ops
from tests.helpers.arrays import normal
from tests.helpers.numpy_reference import bahdanau_attention
from tests.layers.harness import run_layer_test

BATCH, QUERIES, KEYS, QUERY_DIM, KEY_DIM, VALUE_DIM, UNITS = 2, 3, 5, 6, 3, 7, 4
# Batch 0 pads its last query and its last two annotations; batch 1 has no padding.
QUERY_MASK = np.array([[True, True, False], [True, True, True]])
VALUE_MASK = np.array([[True, True, True, False, False], [True] * KEYS])


def randomise(layer, seed):
    """Random W₁, W₂ and v, not their initial values."""
    for weight in (layer.query_projection.kernel, layer.key_projection.kernel,
                   layer.attention.scale):  # fmt: skip
        weight.assign(normal(seed, *weight.shape))
        seed += 1


def bahdanau_weights(layer):
    """W₁ (query_dim, units), W₂ (key_dim, units) and v (units,) as NumPy arrays."""
    return tuple(
        ops.convert_to_numpy(w)
        for w in (layer.query_projection.kernel, layer.key_projection.kernel, layer.attention.scale)
    )


@pytest.mark.parametrize("separate_key", [False, True], ids=["key is value", "separate key"])
@pytest.mark.parametrize(
    "masks",
    [{}, {"value_mask": VALUE_MASK}, {"query_mask": QUERY_MASK},
     {"query_mask": QUERY_MASK, "value_mask": VALUE_MASK}],
    ids=["no mask", "value mask", "query mask", "both masks"],
)  # fmt: skip
def test_matches_numpy_bahdanau_reference(separate_key, masks):
    query, value = normal(0, BATCH, QUERIES, QUERY_DIM), normal(1, BATCH, KEYS, VALUE_DIM)
    key = normal(2, BATCH, KEYS, KEY_DIM) if separate_key else None
    layer = AdditiveAttention(units=UNITS)
    layer(query, value, key=key)
    randomise(layer, seed=3)
    contexts, alignment = (
        ops.convert_to_numpy(t)
        for t in layer(query, value, key=key, return_attention_scores=True, **masks)
    )
    expected_contexts, expected_alignment = bahdanau_attention(
        query, value if key is None else key, value, *bahdanau_weights(layer),
        masks.get("query_mask"), masks.get("value_mask"),
    )  # fmt: skip
    assert contexts.shape == (BATCH, QUERIES, VALUE_DIM)
    np.testing.assert_allclose(contexts, expected_contexts, rtol=1e-5, atol=1e-6)
    real = masks.get("query_mask", np.ones((BATCH, QUERIES), bool))
    np.testing.assert_allclose(alignment[real], expected_alignment[real], rtol=1e-5, atol=1e-6)

    np.testing.assert_allclose(alignment[real].sum(axis=-1), 1.0, rtol=1e-6)
    if "value_mask" in masks:
        padded_annotations = np.broadcast_to(~VALUE_MASK[:, None, :], alignment.shape)
        assert np.all(alignment[padded_annotations] == 0.0), "a padded annotation got weight"
    if "query_mask" in masks:
        assert np.all(contexts[~QUERY_MASK] == 0.0), "a padded query got a context"


def test_keras_masks_in_a_functional_model():
    """Masking's mask on the states and Embedding's on the annotations reach the layer;
    the context carries the states' mask to the pooling after it."""
    states = normal(4, BATCH, QUERIES, QUERY_DIM)
    states[0, 2] = 0.0  # padding, as Masking(mask_value=0) sees it
    annotation_ids = np.array([[4, 2, 7, 0, 0], [1, 3, 5, 8, 9]])
    state_input = keras.Input(shape=(QUERIES, QUERY_DIM))
    id_input = keras.Input(shape=(KEYS,), dtype="int32")
    embedding = keras.layers.Embedding(10, VALUE_DIM, mask_zero=True)
    layer = AdditiveAttention(units=UNITS)
    contexts = layer(keras.layers.Masking(mask_value=0.0)(state_input), embedding(id_input))
    pooled = keras.layers.GlobalAveragePooling1D()(contexts)
    model = keras.Model([state_input, id_input], [contexts, pooled])
    randomise(layer, seed=5)
    contexts, averages = (ops.convert_to_numpy(t) for t in model([states, annotation_ids]))

    annotations = ops.convert_to_numpy(embedding.embeddings)[annotation_ids]
    real_states = np.any(states != 0.0, axis=-1)
    expected, _ = bahdanau_attention(
        states, annotations, annotations, *bahdanau_weights(layer), real_states,
        annotation_ids != 0,
    )  # fmt: skip
    np.testing.assert_allclose(contexts, expected, rtol=1e-5, atol=1e-6)
    expected_averages = [expected[b][real_states[b]].mean(axis=0) for b in range(BATCH)]
    np.testing.assert_allclose(averages, expected_averages, rtol=1e-5, atol=1e-6)


def harness_inputs(seed, with_key=False, with_masks=False):
    data = {"query": normal(seed, BATCH, QUERIES, QUERY_DIM),
            "value": normal(seed + 1, BATCH, KEYS, VALUE_DIM)}  # fmt: skip
    if with_key:
        data["key"] = normal(seed + 2, BATCH, KEYS, KEY_DIM)
    if with_masks:
        data["query_mask"], data["value_mask"] = QUERY_MASK, VALUE_MASK
    return data


def test_harness_with_masks(tmp_path):
    run_layer_test(
        AdditiveAttention, {"units": UNITS, "dropout": 0.25},
        harness_inputs(10, with_masks=True), (BATCH, QUERIES, VALUE_DIM),
        expected_output_mask=QUERY_MASK, expected_num_trainable_weights=3, tmp_path=tmp_path,
    )  # fmt: skip


def test_harness_separate_key_with_alignment(tmp_path):
    run_layer_test(
        AdditiveAttention, {"units": UNITS},
        harness_inputs(11, with_key=True), [(BATCH, QUERIES, VALUE_DIM), (BATCH, QUERIES, KEYS)],
        call_kwargs={"return_attention_scores": True}, expected_num_trainable_weights=3,
        tmp_path=tmp_path,
    )  # fmt: skip
