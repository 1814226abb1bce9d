"""MaskedAveragePooling against NumPy, and where Keras's GlobalAveragePooling1D gives NaN."""

import numpy as np
import pytest

from kerasformer.layers import MaskedAveragePooling
from kerasformer.layers.backend import keras, ops
from tests.layers.harness import run_layer_test


def numpy_masked_mean(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    keep = mask[..., None].astype("float64")
    counts = keep.sum(axis=1)
    return np.where(counts > 0, (x * keep).sum(axis=1) / np.where(counts > 0, counts, 1), 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_mean_of_real_positions_and_zeros_for_a_row_of_none(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(5, 7, 3)).astype("float32")
    mask = rng.random((5, 7)) < 0.5
    mask[0] = False  # a text with no token
    mask[1] = True
    pooled = ops.convert_to_numpy(MaskedAveragePooling()(x, mask=mask))
    np.testing.assert_allclose(pooled, numpy_masked_mean(x, mask), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(pooled[0], 0.0)


def test_it_agrees_with_keras_where_keras_is_defined_and_stays_finite_where_not():
    x = np.random.default_rng(3).normal(size=(3, 4, 2)).astype("float32")
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]], bool)
    ours = ops.convert_to_numpy(MaskedAveragePooling()(x, mask=mask))
    theirs = ops.convert_to_numpy(keras.layers.GlobalAveragePooling1D()(x, mask=mask))
    np.testing.assert_allclose(ours[:2], theirs[:2], rtol=1e-6)
    assert np.isnan(theirs[2]).all() and np.isfinite(ours).all()


def test_without_a_mask_every_position_counts():
    x = np.random.default_rng(4).normal(size=(2, 5, 3)).astype("float32")
    pooled = ops.convert_to_numpy(MaskedAveragePooling()(x))
    np.testing.assert_allclose(pooled, x.mean(axis=1), rtol=1e-5, atol=1e-6)


def test_the_mask_of_an_embedding_reaches_it_and_goes_no_further():
    ids = np.array([[3, 4, 0, 0], [0, 0, 0, 0]], "int32")
    embedding = keras.layers.Embedding(10, 2, mask_zero=True)
    pooling = MaskedAveragePooling()
    pooled = ops.convert_to_numpy(pooling(embedding(ids)))
    vectors = ops.convert_to_numpy(embedding.embeddings)
    np.testing.assert_allclose(pooled[0], vectors[[3, 4]].mean(axis=0), rtol=1e-6)
    np.testing.assert_array_equal(pooled[1], 0.0)
    assert pooling.compute_mask(ids, ids != 0) is None


def test_shared_layer_checks(tmp_path):
    rng = np.random.default_rng(5)
    run_layer_test(
        MaskedAveragePooling,
        {},
        {"inputs": rng.normal(size=(2, 4, 3)).astype("float32"),
         "mask": np.array([[1, 1, 0, 0], [1, 1, 1, 0]], bool)},
        (2, 3),
        expected_output_mask=None,
        expected_num_trainable_weights=0,
        run_training_check=False,  # nothing to train
        tmp_path=tmp_path,
    )  # fmt: skip


@pytest.mark.parametrize("shape", [(2, 5), (2, 3, 4, 5)])
def test_an_input_without_exactly_a_length_and_a_feature_axis_is_refused(shape):
    x = np.ones(shape, "float32")
    with pytest.raises(ValueError, match=r"averages \(batch, length, dim\) inputs") as caught:
        MaskedAveragePooling()(x)
    assert "\n" not in str(caught.value)
