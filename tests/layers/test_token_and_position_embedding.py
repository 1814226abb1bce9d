import inspect

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.layers import TokenAndPositionEmbedding


def tables(layer: TokenAndPositionEmbedding) -> tuple[np.ndarray, np.ndarray]:
    return layer.token_embedding.embeddings.numpy(), layer.position_embedding.embeddings.numpy()


@pytest.mark.parametrize("length", [1, 5, 12])
def test_output_is_token_row_plus_position_row(length):
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=12, embed_dim=6)
    ids = np.random.default_rng(length).integers(0, 30, size=(4, length))
    out = layer(tf.constant(ids)).numpy()
    token_table, position_table = tables(layer)
    expected = token_table[ids] + position_table[np.arange(length)][None]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_mask_is_false_exactly_at_padding():
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=8, embed_dim=4)
    ids = tf.constant([[3, 1, 0, 0], [0, 7, 2, 0]])
    np.testing.assert_array_equal(layer.compute_mask(ids).numpy(), ids.numpy() != 0)
    assert TokenAndPositionEmbedding(30, 8, 4, mask_zero=False).compute_mask(ids) is None


def test_mask_reaches_the_next_layer():
    inputs = keras.Input(shape=(None,), dtype="int32")
    embedded = TokenAndPositionEmbedding(vocab_size=30, maxlen=8, embed_dim=4)(inputs)
    pooled = keras.layers.GlobalAveragePooling1D()(embedded)
    model = keras.Model(inputs, [embedded, pooled])
    ids = np.array([[3, 5, 0, 0]])
    vectors, average = (t.numpy() for t in model(ids))
    np.testing.assert_allclose(average[0], vectors[0, :2].mean(axis=0), rtol=1e-6)


def test_tables_do_not_start_identical():
    layer = TokenAndPositionEmbedding(vocab_size=8, maxlen=8, embed_dim=4)
    layer.build((None, None))
    token_table, position_table = tables(layer)
    assert not np.allclose(token_table, position_table)


def test_input_longer_than_maxlen_is_a_clear_error_eagerly():
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=4, embed_dim=4)
    with pytest.raises(ValueError, match="length 5, longer than maxlen=4"):
        layer(tf.ones((1, 5), tf.int32))


def test_input_longer_than_maxlen_is_a_clear_error_in_a_graph():
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=4, embed_dim=4)
    run = tf.function(layer, input_signature=[tf.TensorSpec((None, None), tf.int32)])
    run(tf.ones((1, 4), tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="longer than maxlen=4"):
        run(tf.ones((1, 6), tf.int32))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(vocab_size=0, maxlen=4, embed_dim=4), "vocab_size"),
        (dict(vocab_size=10, maxlen=-1, embed_dim=4), "maxlen"),
        (dict(vocab_size=10, maxlen=4, embed_dim=2.5), "embed_dim"),
        (dict(vocab_size=True, maxlen=4, embed_dim=4), "vocab_size"),
    ],
)
def test_invalid_arguments_are_rejected(kwargs, name):
    with pytest.raises(ValueError, match=name):
        TokenAndPositionEmbedding(**kwargs)


def test_config_has_every_constructor_argument_and_round_trips():
    layer = TokenAndPositionEmbedding(
        vocab_size=99, maxlen=7, embed_dim=5, mask_zero=False,
        embeddings_initializer="glorot_uniform", name="emb",
    )  # fmt: skip
    config = layer.get_config()
    parameters = set(inspect.signature(TokenAndPositionEmbedding.__init__).parameters)
    assert parameters - {"self", "kwargs"} <= set(config)
    assert TokenAndPositionEmbedding.from_config(config).get_config() == config
    registered = keras.saving.get_registered_name(TokenAndPositionEmbedding)
    assert registered == "kerasformer>TokenAndPositionEmbedding"
