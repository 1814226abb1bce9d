"""What the exported serving signature returns for texts the model cannot read."""

import json

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.export import ExportedClassifier, export_classifier
from kerasformer.models import build_bert_classifier
from tests.helpers.processes import (
    WITHOUT_KERASFORMER,
    run_python_json,
    run_saved_model_cli,
)

# The tiny AG News vocabulary is synthetic English words: none of these is in it.
UNKNOWN_WORD_TEXTS = ["📈📉🚀", "日本語のニュース", "أخبار اليوم", "[PAD]", "zzzz qqqq"]
NO_WORD_TEXTS = ["", "?!", "...", "   "]
KNOWN_TEXTS = ["team goal season", "shares profit market bank", "the minister said"]

SERVE_WITHOUT_KERASFORMER = (
    WITHOUT_KERASFORMER
    + """
import json
import tensorflow as tf

serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
out = serve(inputs=tf.constant(json.loads(sys.argv[2])))
print(json.dumps({
    "probabilities": out["probabilities"].numpy().tolist(),
    "known_tokens": out["known_tokens"].numpy().tolist(),
}))
"""
)


@pytest.fixture(scope="module")
def classifier(tiny_transformer):
    return ExportedClassifier(tiny_transformer.export_dir)


def vocabulary_words(model) -> set[str]:
    """The model's own vocabulary, minus padding and the out-of-vocabulary token."""
    return set(model.get_layer("vectorizer").get_vocabulary()[2:])


def test_many_texts_without_words_in_one_batch_all_get_finite_guesses(classifier):
    # Used to be a traceback: TensorFlow's assertion message, parsed, was cut at 20 indices.
    texts = ["", "?!"] * 15 + ["team goal season"]
    probabilities = classifier.predict_proba(texts, batch_size=64)
    assert probabilities.shape == (31, 4) and np.isfinite(probabilities).all()
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)
    assert classifier.classify(texts).guessed.tolist() == [True] * 30 + [False]


def test_known_tokens_counts_the_words_in_the_vocabulary(tiny_transformer, classifier):
    words = vocabulary_words(tiny_transformer.model)
    texts = KNOWN_TEXTS + UNKNOWN_WORD_TEXTS + NO_WORD_TEXTS + ["Team zzzz GOAL!! 📈"]
    # Reference: the text split on whitespace, lower-cased, ASCII punctuation stripped.
    expected = [
        sum(word.lower().strip("!?.[]") in words for word in text.split()) for text in texts
    ]
    assert expected[-1] == 2 and expected[: len(KNOWN_TEXTS)] == [3, 4, 3]
    predictions = classifier.classify(texts)
    assert predictions.known_tokens.tolist() == expected


def test_normal_texts_keep_the_keras_models_predictions(tiny_transformer, classifier):
    # A guard, not a fix: texts with words are served exactly as before.
    texts = KNOWN_TEXTS + UNKNOWN_WORD_TEXTS
    expected = tiny_transformer.model.predict(tf.constant(texts), verbose=0)
    np.testing.assert_allclose(classifier.predict_proba(texts), expected, rtol=1e-5, atol=1e-6)


def test_a_text_without_words_gets_what_the_saved_keras_model_gives_it(
    tiny_transformer, classifier
):
    """The SavedModel, and model.keras loaded back as a user loads it, agree on texts with
    no word: both read padding alone (the SavedModel once read one unknown word there)."""
    from kerasformer.backend import keras

    saved = keras.models.load_model(tiny_transformer.export_dir / "model.keras")
    # Reference: the Keras model reads every text padded to its full window.
    expected = saved.predict(tf.constant(NO_WORD_TEXTS + KNOWN_TEXTS), verbose=0)
    served = classifier.predict_proba(NO_WORD_TEXTS + KNOWN_TEXTS)
    np.testing.assert_allclose(served, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(classifier.predict_proba(NO_WORD_TEXTS[:1]), expected[:1],
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    unknown_word = saved.predict(tf.constant(["zzzz"]), verbose=0)[0]
    assert not np.allclose(expected[0], unknown_word, atol=1e-4)  # a different reading


@pytest.mark.slow
def test_serving_signature_flags_unknown_texts_without_kerasformer(tiny_transformer):
    texts = ["team goal", "📈📉🚀", ""]
    served = run_python_json(
        SERVE_WITHOUT_KERASFORMER, str(tiny_transformer.export_dir), json.dumps(texts)
    )
    assert served["known_tokens"] == [2, 0, 0]
    assert np.isfinite(served["probabilities"]).all()


@pytest.mark.slow
def test_saved_model_cli_prints_the_known_token_counts(tiny_transformer):
    result = run_saved_model_cli(tiny_transformer.export_dir, 'inputs=["team goal", ""]')
    assert result.returncode == 0, result.stderr[-2000:]
    block = result.stdout.split("Result for output key known_tokens:")[1].split("Result")[0]
    assert block.split() == ["[2", "0]"]


@pytest.mark.slow
def test_bert_export_counts_word_pieces_other_than_special_ones(tiny_hub_bert, tmp_path):
    model = build_bert_classifier(4, tiny_hub_bert.preprocess, tiny_hub_bert.encoder)
    export_dir = export_classifier(model, ["a", "b", "c", "d"], tmp_path / "bert")
    texts = ["team goal season", "📈📉🚀 zzzz", "", "[PAD]", "bank 📈"]
    predictions = ExportedClassifier(export_dir).classify(texts)
    # The tiny vocabulary (tests/helpers/bert.py) holds the synthetic words and no brackets.
    assert predictions.known_tokens.tolist() == [3, 0, 0, 0, 1]
    expected = model.predict(tf.constant(texts), verbose=0)
    np.testing.assert_allclose(predictions.probabilities, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "texts, message",
    [
        ("team goal", r"got a single string where a sequence of texts was expected"),
        (["fine", b"caf\xe9 au lait"], r"text 1 is not valid UTF-8 \(invalid continuation byte"),
        (["fine", "bad \udcff"], r"text 1 is not valid UTF-8 \(surrogates not allowed"),
        (["fine", None], r"text 1 is a NoneType, not a string"),
    ],
)
def test_texts_that_are_not_strings_are_refused_by_index(classifier, texts, message):
    with pytest.raises(KerasformerError, match=message):
        classifier.classify(texts)
