"""SinusoidalPositionEncoding against the formula of "Attention Is All You Need", §3.5."""

import numpy as np
import pytest

from kerasformer.layers import SinusoidalPositionEncoding
from kerasformer.layers.backend import keras, keras_mask, ops
from kerasformer.validation import LayerError
from tests.helpers import numpy_reference
from tests.layers.harness import run_layer_test


@pytest.mark.parametrize("start_index", [0, 3, 250])
@pytest.mark.parametrize("length, dim", [(1, 2), (7, 8), (12, 10)])
def test_encoding_is_the_published_formula(length, dim, start_index):
    inputs = np.zeros((1, length, dim), "float32")
    encoding = SinusoidalPositionEncoding()(inputs, start_index=start_index)
    expected = numpy_reference.sinusoidal_position_encoding(length, dim, start_index)
    np.testing.assert_allclose(ops.convert_to_numpy(encoding)[0], expected, atol=2e-5)


def test_max_wavelength_sets_the_frequencies():
    inputs = np.zeros((1, 6, 8), "float32")
    encoding = SinusoidalPositionEncoding(max_wavelength=50.0)(inputs, start_index=1)
    expected = numpy_reference.sinusoidal_position_encoding(6, 8, 1, max_wavelength=50.0)
    np.testing.assert_allclose(ops.convert_to_numpy(encoding)[0], expected, atol=2e-5)


def test_encoding_is_the_same_for_every_batch_row_and_ignores_the_values():
    inputs = np.random.default_rng(0).normal(size=(3, 5, 6)).astype("float32")
    encoding = ops.convert_to_numpy(SinusoidalPositionEncoding()(inputs))
    assert encoding.shape == (3, 5, 6)
    expected = numpy_reference.sinusoidal_position_encoding(5, 6)
    for row in encoding:
        np.testing.assert_allclose(row, expected, atol=2e-5)


def test_compute_mask_passes_the_mask_on_unchanged():
    inputs = ops.convert_to_tensor(np.zeros((2, 4, 6), "float32"))
    mask = np.array([[True, True, False, False], [True, True, True, False]])
    layer = SinusoidalPositionEncoding()
    out_mask = layer.compute_mask(inputs, ops.convert_to_tensor(mask))
    np.testing.assert_array_equal(ops.convert_to_numpy(out_mask), mask)
    assert layer.compute_mask(inputs, None) is None


def test_padding_mask_reaches_the_next_layer():
    token_ids = keras.Input(shape=(None,), dtype="int32")
    embedded = keras.layers.Embedding(10, 4, mask_zero=True)(token_ids)
    encoded = SinusoidalPositionEncoding()(embedded)
    pooled = keras.layers.GlobalAveragePooling1D()(encoded)
    model = keras.Model(token_ids, pooled)
    ids = np.array([[3, 5, 0, 0], [0, 0, 0, 7]])
    expected = numpy_reference.sinusoidal_position_encoding(4, 4)
    average = ops.convert_to_numpy(model(ids))
    np.testing.assert_allclose(average[0], expected[:2].mean(axis=0), atol=2e-5)
    np.testing.assert_allclose(average[1], expected[3], atol=2e-5)
    eager = SinusoidalPositionEncoding()(keras.layers.Embedding(10, 4, mask_zero=True)(ids))
    np.testing.assert_array_equal(ops.convert_to_numpy(keras_mask(eager)), ids != 0)


@pytest.mark.parametrize("dim", [1, 5])
def test_odd_dimension_is_a_one_line_layer_error(dim):
    with pytest.raises(LayerError, match=f"even, known last dimension.*got {dim}") as error:
        SinusoidalPositionEncoding()(np.zeros((1, 3, dim), "float32"))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("max_wavelength", [0, -1.0, float("inf"), True])
def test_bad_max_wavelength_is_a_layer_error(max_wavelength):
    with pytest.raises(LayerError, match="`max_wavelength` must be a positive number"):
        SinusoidalPositionEncoding(max_wavelength=max_wavelength)


def test_layer_harness(tmp_path):
    inputs = np.random.default_rng(1).normal(size=(2, 5, 6)).astype("float32")
    run_layer_test(
        SinusoidalPositionEncoding,
        {"max_wavelength": 1000.0},
        inputs,
        (2, 5, 6),
        expected_num_trainable_weights=0,
        run_training_check=False,  # nothing to train
        tmp_path=tmp_path,
    )


def test_layer_harness_with_start_index(tmp_path):
    inputs = np.zeros((2, 3, 4), "float32")
    run_layer_test(
        SinusoidalPositionEncoding,
        {},
        inputs,
        (2, 3, 4),
        call_kwargs={"start_index": 5},
        run_training_check=False,
        tmp_path=tmp_path,
    )
