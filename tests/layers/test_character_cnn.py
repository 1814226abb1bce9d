"""CharacterCNN against a NumPy convolution, with padding left out of the maximum."""

import numpy as np
import pytest

from kerasformer.layers import CharacterCNN
from kerasformer.layers.backend import ops
from tests.layers.harness import run_layer_test


def numpy_character_cnn(layer: CharacterCNN, ids: np.ndarray) -> np.ndarray:
    table = ops.convert_to_numpy(layer.embedding.embeddings).astype("float64")
    kernel, bias = (ops.convert_to_numpy(w).astype("float64") for w in layer.convolution.weights)
    width = kernel.shape[0]
    out = np.zeros((*ids.shape[:2], layer.filters))
    for b, w in np.ndindex(*ids.shape[:2]):
        characters = ids[b, w][ids[b, w] != 0]  # padding only ever follows a word
        if len(characters) == 0:
            continue
        embedded = table[characters]
        left = (width - 1) // 2
        padded = np.pad(embedded, ((left, width - 1 - left), (0, 0)))
        conv = np.stack([
            np.einsum("kd,kdf->f", padded[i : i + width], kernel) + bias
            for i in range(len(characters))
        ])  # fmt: skip
        out[b, w] = np.tanh(conv).max(axis=0)
    return out


@pytest.mark.parametrize("kernel_size", [2, 3])
def test_it_matches_numpy_and_ignores_how_much_padding_follows(kernel_size):
    layer = CharacterCNN(vocab_size=12, embed_dim=5, filters=7, kernel_size=kernel_size)
    ids = np.array([[[3, 4, 5, 6], [7, 0, 0, 0], [0, 0, 0, 0]], [[8, 9, 0, 0], [1, 2, 3, 0],
                                                                 [11, 0, 0, 0]]])  # fmt: skip
    got = ops.convert_to_numpy(layer(ids))
    np.testing.assert_allclose(got, numpy_character_cnn(layer, ids), rtol=1e-5, atol=1e-6)
    more_padding = np.pad(ids, ((0, 0), (0, 0), (0, 5)))
    np.testing.assert_allclose(ops.convert_to_numpy(layer(more_padding)), got, atol=1e-6)
    mask = ops.convert_to_numpy(layer.compute_mask(ids)).tolist()
    assert mask == [[True, True, False], [True, True, True]]


def test_layer_contract(tmp_path):
    run_layer_test(
        CharacterCNN,
        init_kwargs={"vocab_size": 20, "embed_dim": 4, "filters": 6, "kernel_size": 3},
        input_data=np.random.default_rng(0).integers(0, 20, (2, 3, 5)).astype("int32"),
        expected_output_shape=(2, 3, 6),
        tmp_path=tmp_path,
    )
