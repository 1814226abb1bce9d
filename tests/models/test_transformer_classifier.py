import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models import (
    adapt_vectorizer,
    attention_weights,
    build_classifier,
    build_transformer_classifier,
    padding_free_classifier,
    string_classifier,
    token_id_classifier,
)
from kerasformer.models.transformer_classifier import drop_padding_columns
from kerasformer.tf_keras.layers import (
    MaskedAveragePooling,
    TokenAndPositionEmbedding,
    TransformerBlock,
)
from tests.helpers.processes import run_python

TEXTS = [
    "stocks rise as investors cheer profits",
    "the team won the match with a late goal",
    "parliament votes on the new treaty",
    "new chip makes computers faster",
]


@pytest.fixture
def model():
    model = build_transformer_classifier(num_classes=4, vocab_size=200, maxlen=16)
    adapt_vectorizer(model, TEXTS)
    return model


def test_layers_are_the_seeds_in_order_with_its_defaults():
    model = build_transformer_classifier(num_classes=4)
    kinds = [type(layer) for layer in model.layers]
    assert kinds == [
        keras.layers.TextVectorization,
        TokenAndPositionEmbedding,
        TransformerBlock,
        MaskedAveragePooling,
        keras.layers.Dropout,
        keras.layers.Dense,
        keras.layers.Dropout,
        keras.layers.Dense,
    ]
    assert isinstance(model, keras.Sequential)
    embedding, block = model.layers[1], model.layers[2]
    assert (embedding.vocab_size, embedding.maxlen, embedding.embed_dim) == (20_000, 512, 32)
    assert (block.num_heads, block.ff_dim, block.key_dim) == (2, 32, 16)
    assert model.layers[5].units == 20 and model.layers[5].activation.__name__ == "relu"
    assert model.layers[7].units == 4 and model.layers[7].activation.__name__ == "softmax"
    # A token table and a position table, as in the seed (648,192 at its maxlen of 256).
    assert embedding.count_params() == 20_000 * 32 + 512 * 32


def test_raw_strings_in_probabilities_out(model):
    probabilities = model.predict(tf.constant(TEXTS + ["an unseen text entirely"]), verbose=0)
    assert probabilities.shape == (5, 4)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)


def test_vectorizer_learns_training_vocabulary(model):
    vocabulary = model.layers[0].get_vocabulary()
    assert vocabulary[:2] == ["", "[UNK]"]
    assert {"stocks", "treaty", "chip"} <= set(vocabulary)


def test_padding_with_extra_zeros_changes_no_prediction(model):
    id_model = keras.Sequential([keras.Input(shape=(None,), dtype="int64"), *model.layers[1:]])
    ids = model.layers[0](tf.constant(TEXTS)).numpy()[:, :8]
    assert (ids == 0).any(), "the check needs some padding already"
    reference = id_model(ids, training=False).numpy()
    for extra in (1, 8):
        padded = np.pad(ids, ((0, 0), (0, extra)))
        np.testing.assert_allclose(id_model(padded, training=False).numpy(), reference, atol=1e-6)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("position", ["learned", "sinusoidal", "rotary", "relative"])
def test_every_position_and_norm_learns_and_ignores_padding(position, norm_first):
    # Seeded: 4 texts with dropout make the last epoch's loss noisy, and unseeded the
    # weights start from whatever state earlier tests on this worker left.
    keras.utils.set_random_seed(0)
    model = build_transformer_classifier(
        num_classes=4, vocab_size=200, maxlen=16, position=position, norm_first=norm_first
    )
    adapt_vectorizer(model, TEXTS)
    embedding, block = model.layers[1], model.layers[2]
    assert (embedding.position, block.position) == POSITION_LAYOUT[position]
    assert any(layer.name == "final_norm" for layer in model.layers) == norm_first
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    labels = np.arange(4)
    history = model.fit(tf.constant(TEXTS), labels, epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.2 * history.history["loss"][0]

    ids = model.layers[0](tf.constant(TEXTS)).numpy()[:, :8]
    on_ids = token_id_classifier(model)
    reference = on_ids(ids, training=False).numpy()
    padded = np.pad(ids, ((0, 0), (0, 8)))
    np.testing.assert_allclose(on_ids(padded, training=False).numpy(), reference, atol=1e-6)


# Where each classifier position lives: (embedding's position, attention's position).
POSITION_LAYOUT = {
    "learned": ("learned", "none"),
    "sinusoidal": ("sinusoidal", "none"),
    "rotary": ("none", "rotary"),
    "relative": ("none", "relative"),
}


def test_token_id_model_shares_the_layers_and_takes_any_length(model):
    on_ids = token_id_classifier(model)
    assert on_ids.inputs[0].shape.as_list() == [None, None]
    assert [id(w) for w in on_ids.weights] == [
        id(w) for w in model.weights[len(model.layers[0].weights) :]
    ]
    ids = model.layers[0](tf.constant(TEXTS)).numpy()
    np.testing.assert_allclose(
        on_ids(ids[:, :9], training=False).numpy(), model(tf.constant(TEXTS)).numpy(), atol=1e-6
    )


@pytest.mark.parametrize(
    "rows",
    [[[3, 4, 0, 0], [5, 0, 0, 0]], [[0, 0, 0], [0, 0, 0]], [[7, 1, 2], [2, 0, 0]], [[4, 0]]],
)
def test_drop_padding_columns_cuts_after_the_longest_row(rows):
    ids = np.array(rows, dtype=np.int64)
    longest = max(1, max(int(np.flatnonzero(r).max()) + 1 if r.any() else 0 for r in ids))
    np.testing.assert_array_equal(drop_padding_columns(tf.constant(ids)).numpy(), ids[:, :longest])


def test_padding_free_classifier_matches_the_model(model):
    texts = tf.constant([*TEXTS, "goal", "stocks " * 30])  # short, and past maxlen
    expected = model(texts, training=False).numpy()
    for classify in (padding_free_classifier(model), tf.function(string_classifier(model))):
        np.testing.assert_allclose(classify(texts).numpy(), expected, atol=1e-6)


def test_attention_weights_for_a_text(model):
    tokens, weights = attention_weights(model, "Stocks rise, says the team!")
    assert tokens == ["stocks", "rise", "[UNK]", "the", "team"]
    assert weights.shape == (2, 5, 5)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    with pytest.raises(KerasformerError, match="no words"):
        attention_weights(model, "?!")


def test_build_classifier_by_name_rejects_unknown_names_and_bad_options():
    with pytest.raises(KerasformerError, match="unknown model 'gpt'"):
        build_classifier("gpt", 4, TEXTS)
    with pytest.raises(KerasformerError, match="num_heads"):
        build_classifier("transformer", 4, TEXTS, num_heads=0)
    with pytest.raises(ValueError, match="num_classes"):
        build_transformer_classifier(num_classes=1)


LOAD_IN_FRESH_PROCESS = """
import sys
import numpy as np
import kerasformer  # registers the layers
import tf_keras as keras
path, expected = sys.argv[1], np.load(sys.argv[2])
model = keras.models.load_model(path)
texts = np.array({texts!r})
np.testing.assert_allclose(model.predict(texts, verbose=0), expected, rtol=1e-5, atol=1e-6)
assert type(model.layers[2]).__module__.startswith("kerasformer")
print("loaded", type(model).__name__)
"""


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["keras", "savedmodel"])
def test_model_saves_and_loads_in_a_new_process(model, tmp_path, fmt):
    path = tmp_path / ("model.keras" if fmt == "keras" else "saved_model")
    model.save(path) if fmt == "keras" else model.save(path, save_format="tf")
    np.save(tmp_path / "expected.npy", model.predict(np.array(TEXTS), verbose=0))
    result = run_python(
        LOAD_IN_FRESH_PROCESS.format(texts=TEXTS), str(path), str(tmp_path / "expected.npy")
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "loaded Sequential" in result.stdout
