import inspect
import json
import re

import numpy as np
import pytest

from kerasformer.errors import KerasformerError
from kerasformer.layers import TokenAndPositionEmbedding
from kerasformer.layers.backend import keras, ops
from tests.helpers.numpy_reference import sinusoidal_position_encoding
from tests.helpers.weights import numpy
from tests.layers.harness import run_layer_test


def token_table(layer: TokenAndPositionEmbedding) -> np.ndarray:
    return numpy(layer.token_embedding.embeddings)


def position_table(layer: TokenAndPositionEmbedding) -> np.ndarray:
    return numpy(layer.position_embedding.embeddings)


@pytest.mark.parametrize("length", [1, 5, 12])
def test_output_is_token_row_plus_position_row(length):
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=12, embed_dim=6)
    ids = np.random.default_rng(length).integers(0, 30, size=(4, length))
    out = numpy(layer(ops.convert_to_tensor(ids)))
    expected = token_table(layer)[ids] + position_table(layer)[np.arange(length)][None]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize("length", [1, 7])
def test_sinusoidal_output_is_scaled_token_row_plus_published_sinusoid(length):
    """Vaswani et al. 2017: embeddings multiplied by √d_model (§3.4), plus PE (§3.5)."""
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=8, embed_dim=6, position="sinusoidal")
    ids = np.random.default_rng(length).integers(0, 30, size=(3, length))
    out = numpy(layer(ops.convert_to_tensor(ids)))
    scaled_tokens = token_table(layer)[ids] * np.sqrt(6)
    expected = scaled_tokens + sinusoidal_position_encoding(length, 6)[None]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    assert len(layer.trainable_weights) == 1  # the sinusoid is fixed: tokens only


def test_no_position_output_is_the_token_row_only():
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=8, embed_dim=5, position="none")
    ids = np.array([[3, 29, 0, 7], [1, 1, 1, 1]])
    out = numpy(layer(ops.convert_to_tensor(ids)))
    np.testing.assert_array_equal(out, token_table(layer)[ids])
    assert len(layer.trainable_weights) == 1


@pytest.mark.parametrize("position", ["learned", "sinusoidal", "none"])
def test_mask_is_false_exactly_at_padding(position):
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=8, embed_dim=4, position=position)
    ids = np.array([[3, 1, 0, 0], [0, 7, 2, 0]])
    mask = layer.compute_mask(ops.convert_to_tensor(ids))
    np.testing.assert_array_equal(numpy(mask), ids != 0)
    unmasked = TokenAndPositionEmbedding(8, 30, 4, mask_zero=False, position=position)
    assert unmasked.compute_mask(ops.convert_to_tensor(ids)) is None


def test_mask_reaches_the_next_layer():
    inputs = keras.Input(shape=(None,), dtype="int32")
    embedded = TokenAndPositionEmbedding(vocab_size=30, maxlen=8, embed_dim=4)(inputs)
    pooled = keras.layers.GlobalAveragePooling1D()(embedded)
    model = keras.Model(inputs, [embedded, pooled])
    ids = np.array([[3, 5, 0, 0]])
    vectors, average = (numpy(t) for t in model(ids))
    np.testing.assert_allclose(average[0], vectors[0, :2].mean(axis=0), rtol=1e-6)


def test_tables_do_not_start_identical():
    layer = TokenAndPositionEmbedding(vocab_size=8, maxlen=8, embed_dim=4)
    layer.build((None, None))
    assert not np.allclose(token_table(layer), position_table(layer))


TOO_LONG = "longer than maxlen=4; truncate the input or build the layer with a larger maxlen."


@pytest.mark.parametrize("position", ["learned", "sinusoidal", "none"])
def test_input_longer_than_maxlen_is_a_clear_error_eagerly(position):
    layer = TokenAndPositionEmbedding(vocab_size=30, maxlen=4, embed_dim=4, position=position)
    with pytest.raises(ValueError, match=re.escape(f"got a sequence of length 5, {TOO_LONG}")):
        layer(ops.ones((1, 5), "int32"))


def test_input_longer_than_maxlen_is_a_clear_error_in_a_functional_model():
    inputs = keras.Input(shape=(6,), dtype="int32")
    with pytest.raises(ValueError, match=re.escape(f"got a sequence of length 6, {TOO_LONG}")):
        TokenAndPositionEmbedding(vocab_size=30, maxlen=4, embed_dim=4)(inputs)


@pytest.mark.parametrize("bad_id", [30, 31, -1, -3])
def test_a_token_id_outside_the_vocabulary_is_a_clear_error_eagerly(bad_id):
    """An id at or past vocab_size, or negative (Keras 3 read -3 as row 27, a real token
    to the mask), never reaches the lookup; the message names the tutorial's order."""
    layer = TokenAndPositionEmbedding(maxlen=4, vocab_size=30, embed_dim=4)
    layer(ops.convert_to_tensor(np.array([[1, 29, 0]], "int32")))  # the extremes are fine
    with pytest.raises(KerasformerError) as refused:
        layer(ops.convert_to_tensor(np.array([[5, bad_id, 0]], "int32")))
    assert "got a token id outside 0 to 29 (vocab_size=30)" in str(refused.value)
    assert "TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)" in str(refused.value)


def test_its_positional_arguments_are_the_tutorials_maxlen_vocab_size_embed_dim():
    layer = TokenAndPositionEmbedding(4, 30, 6)
    assert (layer.maxlen, layer.vocab_size, layer.embed_dim) == (4, 30, 6)


@pytest.mark.parametrize(
    "position, reversible", [("learned", False), ("sinusoidal", False), ("learned", True)]
)
def test_harness(position, reversible, tmp_path):
    ids = np.array([[3, 5, 0, 0, 0], [1, 2, 9, 4, 0]], dtype="int32")
    run_layer_test(
        TokenAndPositionEmbedding,
        dict(vocab_size=10, maxlen=6, embed_dim=4, position=position, reversible=reversible),
        ids,
        (2, 5, 4),
        expected_output_mask=ids != 0,
        expected_num_trainable_weights=(2 if position == "learned" else 1) + reversible,
        # The output bias serves reverse calls only, so a forward fit step leaves it
        # alone: test_a_tied_model_trains_every_weight_and_reloads trains it.
        run_training_check=not reversible,
        tmp_path=tmp_path,
    )


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(vocab_size=0, maxlen=4, embed_dim=4), "vocab_size"),
        (dict(vocab_size=10, maxlen=-1, embed_dim=4), "maxlen"),
        (dict(vocab_size=10, maxlen=4, embed_dim=2.5), "embed_dim"),
        (dict(vocab_size=10, maxlen=4, embed_dim=np.float64(4.0)), "embed_dim"),
        (dict(vocab_size=True, maxlen=4, embed_dim=4), "vocab_size"),
        (dict(vocab_size=10, maxlen=4, embed_dim=4, mask_zero="false"), "mask_zero"),
        (dict(vocab_size=10, maxlen=4, embed_dim=4, position="rotary"), "position"),
    ],
)
def test_invalid_arguments_are_a_one_line_kerasformer_error(kwargs, name):
    with pytest.raises(KerasformerError, match=f"^`{name}` must be") as caught:
        TokenAndPositionEmbedding(**kwargs)
    assert isinstance(caught.value, ValueError)  # what Keras users catch
    assert "\n" not in str(caught.value)


def test_sinusoidal_positions_need_an_even_embed_dim():
    with pytest.raises(KerasformerError, match="^sinusoidal positions need an even embed_dim"):
        TokenAndPositionEmbedding(vocab_size=10, maxlen=4, embed_dim=5, position="sinusoidal")


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
    assert tuple(layer(ops.convert_to_tensor(np.array([[3, 0]]))).shape) == (1, 2, 4)


def test_config_has_every_constructor_argument_and_round_trips():
    layer = TokenAndPositionEmbedding(
        vocab_size=99, maxlen=7, embed_dim=6, mask_zero=False,
        embeddings_initializer="glorot_uniform", position="sinusoidal", name="emb",
    )  # fmt: skip
    config = layer.get_config()
    parameters = set(inspect.signature(TokenAndPositionEmbedding.__init__).parameters)
    assert parameters - {"self", "kwargs"} <= set(config)
    assert config["position"] == "sinusoidal"
    assert TokenAndPositionEmbedding.from_config(config).get_config() == config
    registered = keras.saving.get_registered_name(TokenAndPositionEmbedding)
    assert registered == "kerasformer>TokenAndPositionEmbedding"


def test_reverse_is_hidden_times_the_transposed_token_table_plus_bias():
    layer = TokenAndPositionEmbedding(vocab_size=11, maxlen=6, embed_dim=4, reversible=True)
    layer.build((None, None))
    bias = np.random.default_rng(0).normal(size=11).astype("float32")
    layer.output_bias.assign(bias)
    hidden = np.random.default_rng(1).normal(size=(2, 3, 4)).astype("float32")
    logits = numpy(layer(ops.convert_to_tensor(hidden), reverse=True))
    expected = np.einsum("bld,vd->blv", hidden, token_table(layer)) + bias
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)


def test_a_tied_model_learns_one_table_and_passes_the_mask_to_its_logits():
    ids = keras.Input(shape=(None,), dtype="int32")
    layer = TokenAndPositionEmbedding(vocab_size=13, maxlen=6, embed_dim=4, reversible=True)
    logits = layer(keras.layers.Dense(4)(layer(ids)), reverse=True)
    model = keras.Model(ids, logits)
    names = sorted(weight.name.split("/")[-1].split(":")[0] for weight in model.weights)
    assert names.count("embeddings") == 2  # tokens and positions, no second token table
    assert len(model.weights) == 5  # the two tables, the output bias, Dense's two
    batch = np.array([[3, 5, 0], [4, 0, 0]], "int32")
    assert tuple(model(batch).shape) == (2, 3, 13)
    hidden, mask = ops.ones((2, 3, 4)), ops.convert_to_tensor(batch != 0)
    assert layer.compute_mask(hidden, mask) is mask  # the logits keep the padding mask


def test_reverse_gives_float32_logits_under_mixed_precision():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        ids = keras.Input(shape=(None,), dtype="int32")
        layer = TokenAndPositionEmbedding(vocab_size=11, maxlen=6, embed_dim=4, reversible=True)
        hidden = layer(ids)
        logits = layer(hidden, reverse=True)
        assert "float32" in str(logits.dtype) and "bfloat16" in str(hidden.dtype)
        model = keras.Model(ids, [hidden, logits])
        table = np.random.default_rng(0).normal(size=(11, 4)).astype("float32")
        layer.token_embedding.embeddings.assign(table)  # values near 1, not near 0
        batch = np.array([[3, 5, 2]], "int32")
        vectors, out = (numpy(t) for t in model(batch))
        expected = vectors.astype("float32") @ token_table(layer).astype("float32").T
        # Keras 3 hands the call its table autocast to bfloat16 (tf-keras: float32), so the
        # products are within bfloat16's rounding of the float32 ones.
        np.testing.assert_allclose(out, expected, rtol=2e-2, atol=2e-2)
    finally:
        keras.mixed_precision.set_global_policy("float32")


def test_reverse_needs_a_reversible_layer():
    layer = TokenAndPositionEmbedding(vocab_size=11, maxlen=6, embed_dim=4)
    layer.build((None, None))
    with pytest.raises(KerasformerError, match="^reverse=True needs .* reversible=True"):
        layer(ops.ones((1, 2, 4)), reverse=True)


def test_a_tied_model_trains_every_weight_and_reloads(tmp_path):
    ids = keras.Input(shape=(None,), dtype="int32")
    layer = TokenAndPositionEmbedding(vocab_size=9, maxlen=5, embed_dim=4, reversible=True)
    model = keras.Model(ids, layer(layer(ids), reverse=True))
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    batch = np.array([[3, 5, 2, 0], [4, 1, 7, 8]], "int32")
    before = [numpy(weight).copy() for weight in layer.weights]
    model.fit(batch, np.roll(batch, -1, axis=1), epochs=1, verbose=0)
    after = [numpy(weight) for weight in layer.weights]
    assert not any(np.allclose(old, new) for old, new in zip(before, after, strict=True))
    path = tmp_path / "tied.keras"
    model.save(path)
    reloaded = keras.models.load_model(path)
    np.testing.assert_allclose(numpy(reloaded(batch)), numpy(model(batch)), rtol=1e-6)
