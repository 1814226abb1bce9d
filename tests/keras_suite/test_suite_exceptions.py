"""The behaviour checked by each test of Keras's suite that is not run against ours
(`exceptions.EXCEPTIONS`), tested through our public attributes."""

import numpy as np

from kerasformer.layers import MultiHeadAttention
from kerasformer.layers.backend import ops


def test_sliding_window_serialization():
    """`sliding_window` is saved in the config, and the layer made from it attends within
    the same window: its scores are those of the original, given the same weights."""
    layer = MultiHeadAttention(num_heads=2, key_dim=4, sliding_window=2)
    config = layer.get_config()
    assert config["sliding_window"] == 2
    restored = MultiHeadAttention.from_config(config)
    assert restored.sliding_window == 2

    x = np.random.default_rng(0).standard_normal((1, 5, 8)).astype("float32")
    layer(x, x)
    restored(x, x)
    restored.set_weights(layer.get_weights())
    _, scores = layer(x, x, return_attention_scores=True)
    _, restored_scores = restored(x, x, return_attention_scores=True)
    scores, restored_scores = ops.convert_to_numpy(scores), ops.convert_to_numpy(restored_scores)
    distance = np.abs(np.arange(5)[:, None] - np.arange(5)[None, :])
    assert np.all(scores[..., distance >= 2] == 0.0) and np.all(scores[..., distance < 2] > 0)
    np.testing.assert_allclose(restored_scores, scores, rtol=1e-6)
