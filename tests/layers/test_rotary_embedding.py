"""RotaryEmbedding (RoPE, Su et al. 2021) against explicit 2x2 rotations of (i, i + d/2) pairs."""

import numpy as np
import pytest

from kerasformer.layers import RotaryEmbedding
from kerasformer.layers.backend import ops
from kerasformer.validation import LayerError
from tests.helpers import numpy_reference
from tests.layers.harness import run_layer_test


def rotate(x, start_index=0, max_wavelength=10_000.0):
    """The layer's output for ``x`` as float64 NumPy."""
    layer = RotaryEmbedding(max_wavelength=max_wavelength)
    return ops.convert_to_numpy(layer(x, start_index=start_index)).astype("float64")


def reference_rotation(x, start_index=0, max_wavelength=10_000.0):
    """``x`` (batch, length, ..., dim) with the vector at position p rotated for p."""
    expected = np.zeros(x.shape)
    for index in np.ndindex(x.shape[:-1]):
        position = start_index + index[1]
        expected[index] = numpy_reference.rotary_embedding(x[index], position, max_wavelength)
    return expected


@pytest.mark.parametrize("start_index", [0, 7])
@pytest.mark.parametrize("dim", [2, 6, 16])
def test_three_dimensional_inputs_are_rotated_pair_by_pair(dim, start_index):
    x = np.random.default_rng(dim).normal(size=(2, 5, dim)).astype("float32")
    expected = reference_rotation(x, start_index)
    np.testing.assert_allclose(rotate(x, start_index), expected, atol=1e-5)


def test_per_head_inputs_rotate_every_head_by_its_position():
    x = np.random.default_rng(1).normal(size=(2, 4, 3, 8)).astype("float32")
    np.testing.assert_allclose(rotate(x), reference_rotation(x), atol=1e-5)


def test_max_wavelength_sets_the_angles():
    x = np.random.default_rng(2).normal(size=(1, 6, 4)).astype("float32")
    expected = reference_rotation(x, 2, max_wavelength=20.0)
    np.testing.assert_allclose(rotate(x, 2, max_wavelength=20.0), expected, atol=1e-5)


def test_position_zero_is_the_identity_and_later_positions_are_not():
    x = np.random.default_rng(3).normal(size=(1, 3, 8)).astype("float32")
    rotated = rotate(x)
    np.testing.assert_allclose(rotated[0, 0], x[0, 0], atol=1e-6)
    assert not np.allclose(rotated[0, 1:], x[0, 1:], atol=1e-2)


def test_start_index_shifts_the_positions():
    x = np.random.default_rng(4).normal(size=(2, 9, 8)).astype("float32")
    whole = rotate(x)
    tail = rotate(x[:, 5:], start_index=5)
    np.testing.assert_allclose(tail, whole[:, 5:], atol=1e-5)


def test_rotation_preserves_norms():
    x = np.random.default_rng(5).normal(size=(2, 20, 2, 12)).astype("float32")
    np.testing.assert_allclose(
        np.linalg.norm(rotate(x, start_index=3), axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-5
    )


def rotated_at_every_position(vector, length):
    """``vector`` placed at positions 0 .. length - 1 and rotated by the layer."""
    return rotate(np.tile(vector.astype("float32"), (1, length, 1)))[0]


def test_query_key_score_depends_only_on_the_offset():
    """<rot(q, m), rot(k, n)> = <q, rot(k, n - m)>: a function of m - n alone (eq. 11)."""
    rng = np.random.default_rng(6)
    query, key = rng.normal(size=(2, 16))
    rotated_queries = rotated_at_every_position(query, 31)
    rotated_keys = rotated_at_every_position(key, 31)

    def score(m, n):
        return rotated_queries[m] @ rotated_keys[n]

    scores = [score(m, n) for m, n in [(3, 0), (7, 4), (12, 9), (30, 27)]]  # m - n = 3
    np.testing.assert_allclose(scores, scores[0], atol=1e-4)
    # It is the score of the query rotated by the offset alone (NumPy rotation).
    expected = numpy_reference.rotary_embedding(query, 3) @ key
    np.testing.assert_allclose(scores[0], expected, atol=1e-4)
    for m, n in [(9, 9), (10, 9), (4, 7), (14, 9)]:  # offsets 0, 1, -3, 5
        assert abs(score(m, n) - scores[0]) > 1e-2, (m, n)


def test_compute_mask_passes_the_mask_on_unchanged():
    inputs = ops.convert_to_tensor(np.zeros((2, 3, 4), "float32"))
    mask = np.array([[True, True, False], [True, False, False]])
    out_mask = RotaryEmbedding().compute_mask(inputs, ops.convert_to_tensor(mask))
    np.testing.assert_array_equal(ops.convert_to_numpy(out_mask), mask)


@pytest.mark.parametrize("dim", [1, 7])
def test_odd_dimension_is_a_one_line_layer_error(dim):
    with pytest.raises(LayerError, match=f"even, known last dimension, got {dim}") as error:
        RotaryEmbedding()(np.zeros((1, 3, dim), "float32"))
    assert "\n" not in str(error.value)


def test_input_without_a_position_axis_is_a_layer_error():
    with pytest.raises(LayerError, match=r"needs inputs \(batch, length, \.\.\., dim\)"):
        RotaryEmbedding()(np.zeros((3, 4), "float32"))


@pytest.mark.parametrize("max_wavelength", [0, -10.0, "big"])
def test_bad_max_wavelength_is_a_layer_error(max_wavelength):
    with pytest.raises(LayerError, match="`max_wavelength` must be a positive number"):
        RotaryEmbedding(max_wavelength=max_wavelength)


@pytest.mark.parametrize("shape", [(2, 4, 6), (2, 4, 3, 6)])
def test_layer_harness(shape, tmp_path):
    inputs = np.random.default_rng(7).normal(size=shape).astype("float32")
    run_layer_test(
        RotaryEmbedding,
        {"max_wavelength": 500.0},
        inputs,
        shape,
        expected_num_trainable_weights=0,
        run_training_check=False,  # nothing to train
        tmp_path=tmp_path,
    )


def test_layer_harness_with_start_index(tmp_path):
    inputs = np.random.default_rng(8).normal(size=(2, 3, 2, 4)).astype("float32")
    run_layer_test(
        RotaryEmbedding,
        {},
        inputs,
        (2, 3, 2, 4),
        call_kwargs={"start_index": 4},
        run_training_check=False,
        tmp_path=tmp_path,
    )
