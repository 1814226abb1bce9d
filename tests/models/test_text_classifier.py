"""TextClassifier: a classifier says what it is; nothing searches its layers for it."""

from __future__ import annotations

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models import build_classifier, build_text_classifier
from kerasformer.models.text_classifier import TextClassifier, TransformerTextClassifier

TEXTS = ["stocks fell on monday", "the team wins the cup", "chip maker profit", "bank shares"]
SMALL = dict(vocab_size=30, maxlen=8, embed_dim=8, num_heads=2, ff_dim=8)


@pytest.fixture(scope="module")
def classifier():
    return build_text_classifier("transformer", 3, TEXTS, **SMALL)


def test_a_built_classifier_knows_its_family_and_a_bare_one_is_told(classifier):
    assert isinstance(classifier, TransformerTextClassifier) and classifier.family == "transformer"
    assert TextClassifier.of(classifier) is classifier
    bare = build_classifier("transformer", 3, TEXTS, **SMALL)
    assert TextClassifier.of(bare).family == "transformer" and classifier.encoder is None


def test_token_ids_give_the_string_models_probabilities(classifier):
    texts = ["stocks fell", "the cup", "zzz unknown words"]
    reader = classifier.token_reader()
    ids = reader.tokenize(tf.constant(texts))
    vocabulary = classifier.model.get_layer("vectorizer").get_vocabulary()
    expected_ids = [
        [vocabulary.index(w) if w in vocabulary else 1 for w in t.split()] for t in texts
    ]
    assert [row[row != 0].tolist() for row in np.asarray(ids)] == expected_ids
    on_ids = reader.model(tf.constant(np.asarray(ids)), training=False).numpy()
    on_strings = classifier.model(tf.constant(texts), training=False).numpy()
    np.testing.assert_allclose(on_ids, on_strings, atol=1e-5)
    assert reader.max_length == SMALL["maxlen"] and reader.pack is None


def test_counting_finds_the_words_in_the_vocabulary(classifier):
    texts = tf.constant(["stocks fell zzz", "qqq", "the team wins"])
    probabilities, known = classifier.counting_function()(texts)
    vocabulary = set(classifier.model.get_layer("vectorizer").get_vocabulary()[2:])
    expected = [
        sum(w in vocabulary for w in t.split()) for t in ["stocks fell zzz", "qqq", "the team wins"]
    ]
    assert known.numpy().tolist() == expected
    np.testing.assert_allclose(probabilities.numpy().sum(axis=1), 1.0, rtol=1e-5)


def test_a_plain_keras_model_says_what_it_cannot_do():
    inputs = keras.Input((), dtype=tf.string)
    plain = TextClassifier.of(keras.Model(inputs, keras.layers.Lambda(lambda t: t)(inputs)))
    assert type(plain) is TextClassifier and plain.encoder is None
    with pytest.raises(ValueError, match="cannot export model"):
        plain.counting_function()
    with pytest.raises(KerasformerError, match="reads strings only"):
        plain.token_reader()
    with pytest.raises(KerasformerError, match="a second text is for BERT models"):
        plain.attention_maps("a text", second="another")
