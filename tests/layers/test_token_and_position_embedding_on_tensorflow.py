"""TokenAndPositionEmbedding on tf-keras in TensorFlow graphs and under XLA.

These behaviours belong to TensorFlow (``tf.function``, ``jit_compile``, ``tf.data``), so
this file imports TensorFlow and tf-keras itself and is collected only when the layers are
built on tf-keras (see ``conftest.py``).
"""

import re

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.layers import TokenAndPositionEmbedding

TOO_LONG = "longer than maxlen=4; truncate the input or build the layer with a larger maxlen."
# Under XLA the compiler reports the slice of positions 0..length-1 out of maxlen=4.
XLA_TOO_LONG = r"Expected size\[0\] in \[0, 4\], but got 6[\s\S]*positions_up_to_maxlen"


def reference_embedding(layer: TokenAndPositionEmbedding, ids: np.ndarray) -> np.ndarray:
    token_table = layer.token_embedding.embeddings.numpy()
    position_table = layer.position_embedding.embeddings.numpy()
    return token_table[ids] + position_table[np.arange(ids.shape[-1])][None]


def test_input_longer_than_maxlen_is_a_clear_error_in_a_graph_of_unknown_length():
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=4, embed_dim=4)
    run = tf.function(layer, input_signature=[tf.TensorSpec((None, None), tf.int32)])
    run(tf.ones((1, 4), tf.int32))
    expected = f"assertion failed: [TokenAndPositionEmbedding got a sequence {TOO_LONG}]"
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(expected)):
        run(tf.ones((1, 6), tf.int32))


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


def test_the_tied_table_gradient_never_builds_a_batch_by_vocabulary_by_width_tensor():
    # A (batch, length, vocab, width) intermediate: 33,280 words at batch 32 ran out of
    # memory. Every tensor of the gradient graph is no larger than the logits, the hidden
    # vectors or the table.
    batch, length, vocab, width = 3, 5, 7, 11
    layer = TokenAndPositionEmbedding(length, vocab, width, reversible=True)
    layer(tf.ones((batch, length), tf.int32))

    @tf.function(input_signature=[tf.TensorSpec((batch, length, width), tf.float32)])
    def table_gradient(hidden):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(hidden, reverse=True) ** 2)
        return tape.gradient(loss, layer.token_embedding.embeddings)

    graph = table_gradient.get_concrete_function().graph
    sizes = [
        output.shape.num_elements() or 0 for op in graph.get_operations() for output in op.outputs
    ]
    assert sizes, "the gradient graph has no operations"
    assert max(sizes) <= max(batch * length * vocab, batch * length * width, vocab * width)
    hidden = np.random.default_rng(0).normal(size=(batch, length, width)).astype("float32")
    table = layer.token_embedding.embeddings.numpy()
    logits = hidden @ table.T + layer.output_bias.numpy()
    expected = 2 * np.einsum("btv,btd->vd", logits, hidden)  # d/dW sum((hW^T + b)^2)
    np.testing.assert_allclose(table_gradient(hidden).numpy(), expected, rtol=1e-4, atol=1e-4)
