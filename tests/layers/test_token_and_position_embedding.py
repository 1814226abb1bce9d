import inspect
import json
import re

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
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


TOO_LONG = "longer than maxlen=4; truncate the input or build the layer with a larger maxlen."
# Under XLA the compiler reports the slice of positions 0..length-1 out of maxlen=4.
XLA_TOO_LONG = r"Expected size\[0\] in \[0, 4\], but got 6[\s\S]*positions_up_to_maxlen"


def test_input_longer_than_maxlen_is_a_clear_error_eagerly():
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=4, embed_dim=4)
    with pytest.raises(ValueError, match=re.escape(f"got a sequence of length 5, {TOO_LONG}")):
        layer(tf.ones((1, 5), tf.int32))


def test_input_longer_than_maxlen_is_a_clear_error_in_a_graph_of_unknown_length():
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=4, embed_dim=4)
    run = tf.function(layer, input_signature=[tf.TensorSpec((None, None), tf.int32)])
    run(tf.ones((1, 4), tf.int32))
    expected = f"assertion failed: [TokenAndPositionEmbedding got a sequence {TOO_LONG}]"
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(expected)):
        run(tf.ones((1, 6), tf.int32))


def reference_embedding(layer: TokenAndPositionEmbedding, ids: np.ndarray) -> np.ndarray:
    token_table, position_table = tables(layer)
    return token_table[ids] + position_table[np.arange(ids.shape[-1])][None]


@pytest.mark.parametrize(
    "compile_options",
    [
        dict(input_signature=[tf.TensorSpec((None, None), tf.int32)]),
        dict(reduce_retracing=True),
    ],
    ids=["length-none-signature", "relaxed-shapes"],
)
def test_xla_refuses_input_longer_than_maxlen_instead_of_reusing_a_position(compile_options):
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=4, embed_dim=4)
    run = tf.function(layer, jit_compile=True, **compile_options)
    for length in (3, 4):  # up to maxlen, XLA computes the right numbers
        ids = np.arange(1, length + 1, dtype="int32")[None]
        np.testing.assert_allclose(run(ids).numpy(), reference_embedding(layer, ids), rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match=XLA_TOO_LONG):
        run(tf.ones((1, 6), tf.int32))


def xla_compiled_model(maxlen: int) -> keras.Model:
    inputs = keras.Input(shape=(None,), dtype="int32")
    embedded = TokenAndPositionEmbedding(vocab_size=30, maxlen=maxlen, embed_dim=4)(inputs)
    pooled = keras.layers.GlobalAveragePooling1D()(embedded)
    model = keras.Model(inputs, keras.layers.Dense(2, activation="softmax")(pooled))
    model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=True)
    return model


def padded_batches(length: int) -> tf.data.Dataset:
    """Batches whose length is unknown when Keras traces, like the bucketed pipeline's."""
    ids = np.arange(1, 4 * length + 1, dtype="int32").reshape(4, length) % 30
    examples = tf.data.Dataset.from_tensor_slices((ids, np.array([0, 1, 0, 1])))
    return examples.padded_batch(2, padded_shapes=([None], []))


def test_keras_model_compiled_with_xla_refuses_batches_longer_than_maxlen():
    model = xla_compiled_model(maxlen=4)
    assert padded_batches(6).element_spec[0].shape.as_list() == [None, None]
    model.fit(padded_batches(4), verbose=0)  # the legitimate path still trains
    before = [w.numpy() for w in model.weights]
    with pytest.raises(tf.errors.InvalidArgumentError, match=XLA_TOO_LONG):
        model.fit(padded_batches(6), verbose=0)
    for old, new in zip(before, model.weights, strict=True):
        np.testing.assert_array_equal(old, new.numpy())  # nothing was learned from it
    with pytest.raises(tf.errors.InvalidArgumentError, match=XLA_TOO_LONG):
        model.predict(padded_batches(6).map(lambda ids, label: ids), verbose=0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(vocab_size=0, maxlen=4, embed_dim=4), "vocab_size"),
        (dict(vocab_size=10, maxlen=-1, embed_dim=4), "maxlen"),
        (dict(vocab_size=10, maxlen=4, embed_dim=2.5), "embed_dim"),
        (dict(vocab_size=10, maxlen=4, embed_dim=np.float64(4.0)), "embed_dim"),
        (dict(vocab_size=True, maxlen=4, embed_dim=4), "vocab_size"),
        (dict(vocab_size=10, maxlen=4, embed_dim=4, mask_zero="false"), "mask_zero"),
    ],
)
def test_invalid_arguments_are_a_one_line_kerasformer_error(kwargs, name):
    with pytest.raises(KerasformerError, match=f"^`{name}` must be") as caught:
        TokenAndPositionEmbedding(**kwargs)
    assert isinstance(caught.value, ValueError)  # what Keras users catch


def test_numpy_integer_sizes_are_accepted_and_stored_as_python_ints():
    layer = TokenAndPositionEmbedding(
        vocab_size=np.int64(30), maxlen=np.int32(8), embed_dim=np.uint8(4),
        mask_zero=np.bool_(True),
    )  # fmt: skip
    config = layer.get_config()
    sizes = {key: config[key] for key in ("vocab_size", "maxlen", "embed_dim", "mask_zero")}
    assert sizes == {"vocab_size": 30, "maxlen": 8, "embed_dim": 4, "mask_zero": True}
    assert [type(value) for value in sizes.values()] == [int, int, int, bool]
    assert json.loads(json.dumps(config))["maxlen"] == 8
    assert layer(tf.constant([[3, 0]])).shape == (1, 2, 4)


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
