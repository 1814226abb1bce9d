"""LoRA and int8 quantisation of `MultiHeadAttention` and the blocks built on it (Keras 3),
and the one-line refusal where tf-keras cannot do them."""

import numpy as np
import pytest

from kerasformer.layers import (
    MultiHeadAttention,
    TokenAndPositionEmbedding,
    TransformerBlock,
    TransformerDecoderBlock,
)
from kerasformer.layers.backend import backend_name, keras
from kerasformer.validation import LayerError
from tests.helpers.weights import numpy

ON_TF_KERAS = backend_name() == "tf_keras"
VOCABULARY, LENGTH, WIDTH = 50, 8, 16


def tutorial_classifier():
    """The Keras tutorial's classifier, small: embedding, block, pooling, two dense layers."""
    inputs = keras.Input(shape=(LENGTH,), dtype="int32")
    x = TokenAndPositionEmbedding(LENGTH, VOCABULARY, WIDTH)(inputs)
    x = TransformerBlock(WIDTH, 2, 32, name="block")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(8, activation="relu")(x)
    outputs = keras.layers.Dense(2, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile("adam", "sparse_categorical_crossentropy")
    return model


def refused_on_tf_keras(method: str, argument) -> bool:
    """On tf-keras, check that a block refuses ``method`` in one line and changes nothing,
    and say so: tf-keras's EinsumDense and Dense have neither LoRA nor quantisation."""
    if not ON_TF_KERAS:
        return False
    block = TransformerBlock(WIDTH, 2, 32)
    block(np.ones((1, 4, WIDTH), "float32"))
    with pytest.raises(LayerError, match="needs Keras 3"):
        getattr(block, method)(argument)
    assert all(v.trainable for v in block.weights)
    return True


def tiny_data(seed):
    rng = np.random.default_rng(seed)
    return rng.integers(1, VOCABULARY, (32, LENGTH)), rng.integers(0, 2, 32)


def test_a_lora_fine_tune_of_a_trained_classifier_trains_only_the_lora_weights(tmp_path):
    """After ``enable_lora``, a fit changes the four LoRA matrices and nothing else; the
    saved model holds each merged kernel, W + (alpha / rank) A B computed here in NumPy,
    and predicts as the fine-tuned one did."""
    if refused_on_tf_keras("enable_lora", 4):
        return
    model = tutorial_classifier()
    model.fit(*tiny_data(0), epochs=1, verbose=0)
    block = model.get_layer("block")
    for layer in model.layers:
        layer.trainable = layer is block
    block.enable_lora(4)
    lora = {id(v) for v in block.trainable_weights}
    assert len(lora) == 4 and all("lora" in v.path for v in block.trainable_weights)
    before = {v.path: numpy(v) for v in model.weights if id(v) not in lora}
    model.compile(keras.optimizers.SGD(0.5), "sparse_categorical_crossentropy")
    model.fit(*tiny_data(1), epochs=2, verbose=0)
    for variable in model.weights:
        if id(variable) not in lora:
            np.testing.assert_array_equal(numpy(variable), before[variable.path], variable.path)
    query = block.attention.query_dense
    b_matrix = numpy(query.lora_kernel_b)
    assert np.abs(b_matrix).max() > 0, "LoRA's B matrix did not train"

    path = tmp_path / "lora.keras"
    model.save(path)
    reloaded = keras.saving.load_model(path)
    x = tiny_data(2)[0]
    np.testing.assert_allclose(reloaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    frozen = before[query._kernel.path]
    update = numpy(query.lora_kernel_a) @ b_matrix * (query.lora_alpha / query.lora_rank)
    merged = numpy(reloaded.get_layer("block").attention.query_dense.kernel)
    np.testing.assert_allclose(merged, frozen + update.reshape(frozen.shape), rtol=1e-5, atol=1e-6)


def test_lora_targets_are_checked_and_every_other_weight_frozen():
    if refused_on_tf_keras("enable_lora", 2):
        return
    layer = MultiHeadAttention(num_heads=2, key_dim=4, use_gate=True)
    x = np.zeros((1, 3, 8), "float32")
    layer(x, x)
    with pytest.raises(LayerError, match="not projections"):
        layer.enable_lora(2, targets=("query", "ffn"))
    layer.enable_lora(2, targets=("key", "gate"))
    names = sorted(
        v.path.split("/")[-2] + "/" + v.path.split("/")[-1] for v in layer.trainable_weights
    )
    assert names == ["gate/lora_kernel_a", "gate/lora_kernel_b", "key/lora_kernel_a",
                     "key/lora_kernel_b"]  # fmt: skip


def int8_kernels(layer) -> list[str]:
    return [v.path for v in layer.weights if v.path.endswith("kernel") and v.dtype == "int8"]


def test_an_int8_block_keeps_its_outputs_and_saves_and_loads_quantized(tmp_path):
    """Every projection and feed-forward kernel becomes int8; the outputs stay close to
    the float ones (a weak check, as Keras's own); saved and loaded, the model is still
    int8 and predicts exactly as before saving."""
    if refused_on_tf_keras("quantize", "int8"):
        return
    model = tutorial_classifier()
    x = tiny_data(3)[0]
    block = model.get_layer("block")
    hidden = keras.Model(model.input, block.output)
    float_outputs = numpy(hidden(x))
    block.quantize("int8")
    assert len(int8_kernels(block)) == 6, int8_kernels(block)
    quantized_outputs = numpy(hidden(x))
    assert np.mean((quantized_outputs - float_outputs) ** 2) < 1e-2
    assert not np.array_equal(quantized_outputs, float_outputs)

    path = tmp_path / "int8.keras"
    model.save(path)
    reloaded = keras.saving.load_model(path)
    assert len(int8_kernels(reloaded.get_layer("block"))) == 6
    np.testing.assert_allclose(reloaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6, atol=1e-7)  # fmt: skip


def test_a_decoder_block_quantizes_both_attentions_and_can_take_lora():
    if refused_on_tf_keras("quantize", "int8"):
        return
    block = TransformerDecoderBlock(WIDTH, 2, 32)
    x, source = np.ones((1, 4, WIDTH), "float32"), np.ones((1, 6, WIDTH), "float32")
    block(x, source)
    block.quantize("int8")
    assert len(int8_kernels(block)) == 10
    other = TransformerDecoderBlock(WIDTH, 2, 32)
    other(x, source)
    other.enable_lora(2)
    assert len(other.trainable_weights) == 8
