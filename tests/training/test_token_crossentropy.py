import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.training.token_crossentropy import (
    SmoothedSparseCrossentropy,
    token_crossentropy,
)


def numpy_smoothed_crossentropy(ids, logits, epsilon):
    """Cross-entropy against the smoothed one-hot target, (1 - ε) y + ε / V."""
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    vocab = logits.shape[-1]
    target = np.eye(vocab)[ids] * (1 - epsilon) + epsilon / vocab
    return -(target * log_p).sum(-1)


def random_batch(seed=0, shape=(3, 5), vocab=11):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, shape)
    logits = rng.normal(0, 3, shape + (vocab,)).astype("float32")
    return ids, logits


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.5])
def test_each_tokens_loss_matches_numpy(epsilon):
    ids, logits = random_batch()
    loss = SmoothedSparseCrossentropy(epsilon)
    per_token = loss.call(tf.constant(ids), tf.constant(logits)).numpy()
    np.testing.assert_allclose(
        per_token, numpy_smoothed_crossentropy(ids, logits, epsilon), rtol=1e-5
    )


def test_it_agrees_with_keras_one_hot_label_smoothing():
    ids, logits = random_batch(seed=1)
    keras_loss = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    expected = keras_loss(tf.one_hot(ids, logits.shape[-1]), logits).numpy()
    assert float(SmoothedSparseCrossentropy(0.1)(ids, logits)) == pytest.approx(expected, rel=1e-5)


def test_padding_masked_on_the_logits_is_left_out():
    ids, logits = random_batch(seed=2)
    model_input = keras.Input((5, 11))
    model = keras.Model(model_input, keras.layers.Masking(mask_value=-1e9)(model_input))
    model.compile(loss=SmoothedSparseCrossentropy(0.1))
    padded = logits.copy()
    padded[:, 3:] = -1e9  # the last two steps of each row: Masking marks them padding
    reported = model.evaluate(padded, ids, verbose=0)
    expected = numpy_smoothed_crossentropy(ids, logits, 0.1)[:, :3].mean()
    assert reported == pytest.approx(expected, rel=1e-5)


def test_without_smoothing_it_is_keras_sparse_crossentropy():
    loss = token_crossentropy(0.0)
    assert isinstance(loss, keras.losses.SparseCategoricalCrossentropy)


@pytest.mark.parametrize("bad", [-0.1, 1.0, float("nan"), "0.1"])
def test_a_bad_label_smoothing_is_a_one_line_error(bad):
    with pytest.raises(KerasformerError, match=r"label_smoothing must be in \[0, 1\)"):
        token_crossentropy(bad)


def test_its_config_round_trips():
    loss = SmoothedSparseCrossentropy(0.2)
    assert SmoothedSparseCrossentropy.from_config(loss.get_config()).label_smoothing == 0.2
