"""The shared layer harness applied to ScaledDotProductAttention, and shown to catch bugs."""

import numpy as np
import pytest

from kerasformer.layers.backend import keras, ops, serializable
from kerasformer.layers.scaled_dot_product_attention import ScaledDotProductAttention
from tests.layers.harness import run_layer_test

BATCH, QUERY_LENGTH, KEY_LENGTH, DEPTH, VALUE_DEPTH = 2, 3, 5, 4, 6


def attention_inputs(seed=0, query_length=QUERY_LENGTH, with_key=False):
    """Query and value; the value doubles as the key unless ``with_key``."""
    rng = np.random.default_rng(seed)
    value_depth = VALUE_DEPTH if with_key else DEPTH
    inputs = {
        "query": rng.normal(size=(BATCH, query_length, DEPTH)).astype("float32"),
        "value": rng.normal(size=(BATCH, KEY_LENGTH, value_depth)).astype("float32"),
    }
    if with_key:
        inputs["key"] = rng.normal(size=(BATCH, KEY_LENGTH, DEPTH)).astype("float32")
    return inputs


def test_attention_over_query_and_value(tmp_path):
    run_layer_test(
        ScaledDotProductAttention,
        {"dropout": 0.25},
        attention_inputs(),
        (BATCH, QUERY_LENGTH, DEPTH),
        expected_num_trainable_weights=0,
        run_mixed_precision_check=False,  # test_attention_under_mixed_float16 does it
        tmp_path=tmp_path,
    )


@pytest.mark.parametrize("use_causal_mask", [False, True])
def test_attention_with_separate_key_and_returned_scores(use_causal_mask, tmp_path):
    run_layer_test(
        ScaledDotProductAttention,
        {},
        attention_inputs(seed=1, query_length=KEY_LENGTH, with_key=True),
        [(BATCH, KEY_LENGTH, VALUE_DEPTH), (BATCH, KEY_LENGTH, KEY_LENGTH)],
        call_kwargs={"return_attention_scores": True, "use_causal_mask": use_causal_mask},
        run_mixed_precision_check=False,
        tmp_path=tmp_path,
    )


QUERY_MASK = np.array([[True, True, False], [True, True, True]])
VALUE_MASK = np.array([[True, True, True, False, False], [True, True, True, True, True]])


def test_attention_with_padding_masks(tmp_path):
    run_layer_test(
        ScaledDotProductAttention,
        {},
        {**attention_inputs(seed=2), "query_mask": QUERY_MASK, "value_mask": VALUE_MASK},
        (BATCH, QUERY_LENGTH, DEPTH),
        run_mixed_precision_check=False,
        tmp_path=tmp_path,
    )


def test_attention_output_carries_the_query_mask(tmp_path):
    """Keras calls ``compute_mask(query, query_mask)`` positionally to propagate masks."""
    run_layer_test(
        ScaledDotProductAttention,
        {},
        {**attention_inputs(seed=3), "query_mask": QUERY_MASK},
        (BATCH, QUERY_LENGTH, DEPTH),
        expected_output_mask=QUERY_MASK,
        run_training_check=False,
        run_mixed_precision_check=False,
        run_saving_check=False,
        tmp_path=tmp_path,
    )


def test_attention_under_mixed_float16(tmp_path):
    """float32 inputs (as from keras.Input) into a mixed_float16 layer give float16 outputs."""
    run_layer_test(
        ScaledDotProductAttention,
        {"dropout": 0.25},
        {**attention_inputs(seed=4, with_key=True), "query_mask": QUERY_MASK},
        [(BATCH, QUERY_LENGTH, VALUE_DEPTH), (BATCH, QUERY_LENGTH, KEY_LENGTH)],
        call_kwargs={"return_attention_scores": True},
        run_training_check=False,
        run_saving_check=False,
        tmp_path=tmp_path,
    )


@serializable
class ScaleForgottenInConfig(keras.layers.Layer):
    """Broken on purpose: ``get_config`` saves ``shift`` but forgets ``scale``."""

    def __init__(self, scale=2.0, shift=1.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.shift = shift

    def call(self, inputs):
        return inputs * self.scale + self.shift

    def get_config(self):
        return {**super().get_config(), "shift": self.shift}


@serializable
class WeightThatNeverTrains(keras.layers.Layer):
    """Broken on purpose: ``unused`` is trainable but takes no part in the output."""

    def build(self, input_shape):
        self.used = self.add_weight(name="used", shape=(input_shape[-1],))
        self.unused = self.add_weight(name="unused", shape=(input_shape[-1],))

    def call(self, inputs):
        return inputs * ops.cast(self.used, inputs.dtype)


@pytest.mark.filterwarnings("ignore:Gradients do not exist")  # Keras 3, on the unused weight
@pytest.mark.parametrize(
    "broken_layer, message",
    [
        (ScaleForgottenInConfig, r"lacks __init__ arguments \['scale'\]"),
        (WeightThatNeverTrains, r"weights unchanged: \['[^',]*unused[^',]*'\]"),
    ],
)
def test_harness_catches_a_broken_layer(broken_layer, message, tmp_path):
    data = np.random.default_rng(3).normal(size=(BATCH, 3, 4)).astype("float32")
    with pytest.raises(AssertionError, match=message):
        run_layer_test(broken_layer, {}, data, (BATCH, 3, 4), tmp_path=tmp_path)
