"""Every model's attention maps against a NumPy forward pass through the same weights.

The layers are checked against NumPy one at a time elsewhere; here the question is the
wiring: that each map's layer k is what block k computes on what the model really feeds
it (the embedding, then the blocks before), with padding gone and the tokens in place.
"""

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models import (
    attention_weights,
    build_bert_classifier,
    build_transformer_classifier,
    classifier_attention_maps,
    text_vectorizer,
)
from kerasformer.models.attention_maps import AttentionMap
from kerasformer.models.translator import Translator
from tests.helpers.numpy_bert import NumpyBert
from tests.helpers.numpy_reference import transformer_decoder_block, transformer_encoder_block
from tests.helpers.tiny_models import SOURCE_WORDS, TARGET_WORDS, tiny_translator_model
from tests.helpers.weights import attention_weights as numpy_attention
from tests.helpers.weights import decoder_block_weights

EPSILON = 1e-6


def numpy_of(tensor) -> np.ndarray:
    return np.asarray(tensor, dtype=np.float64)


def encoder_weights(block) -> dict:
    def norm(layer):
        return numpy_of(layer.gamma), numpy_of(layer.beta)

    return {
        "self": numpy_attention(block.attention),
        "ln_self": norm(block.attention_norm), "ln_ff": norm(block.ff_norm),
        "ff1_kernel": numpy_of(block.ff_hidden.kernel), "ff1_bias": numpy_of(block.ff_hidden.bias),
        "ff2_kernel": numpy_of(block.ff_output.kernel), "ff2_bias": numpy_of(block.ff_output.bias),
    }  # fmt: skip


def numpy_encoder(embedded: np.ndarray, blocks) -> tuple[np.ndarray, np.ndarray]:
    """Blocks chained in NumPy: the last output and every block's weights (first row)."""
    x, weights = embedded, []
    for block in blocks:
        x, scores = transformer_encoder_block(
            x, None, encoder_weights(block), block.norm_first, EPSILON
        )
        weights.append(scores[0])
    return x, np.stack(weights)


def test_an_attention_map_refuses_weights_that_do_not_fit_its_tokens():
    with pytest.raises(ValueError, match=r"shape \(layers, heads, 2, 3\)"):
        AttentionMap("self-attention", ("a", "b"), ("a", "b", "c"), np.ones((1, 2, 2, 2)))
    found = AttentionMap("self-attention", ("a",), ("a",), np.ones((2, 3, 1, 1)))
    with pytest.raises(KerasformerError, match="no layer 2; choose --layer from 0 to 1"):
        found.layer(2)
    with pytest.raises(KerasformerError, match="no head 3; choose --head from 0 to 2"):
        found.head(1, 3)


def test_transformer_classifier_map_is_its_block_on_its_embedded_tokens():
    model = build_transformer_classifier(3, vocab_size=20, maxlen=12, embed_dim=8, num_heads=2)
    text_vectorizer(model).set_vocabulary(["bank", "shares", "team", "goal"])
    (found,) = classifier_attention_maps(model, "Team goal, shares!")
    assert found.query_tokens == found.key_tokens == ("team", "goal", "shares")
    ids = text_vectorizer(model)(tf.constant(["Team goal, shares!"]))[:, :3]
    embedded = numpy_of(model.get_layer("embedding")(ids))
    _, expected = numpy_encoder(embedded, [model.get_layer("transformer_block")])
    np.testing.assert_allclose(found.weights, expected, atol=1e-5)
    tokens, weights = attention_weights(model, "Team goal, shares!")
    assert tokens == list(found.query_tokens) and np.array_equal(weights, found.weights[0])
    with pytest.raises(KerasformerError, match="a second text is for BERT models"):
        classifier_attention_maps(model, "team", "goal")


def test_transformer_translator_maps_follow_the_encoder_and_decoder_in_numpy():
    model = tiny_translator_model("learned")
    translator = Translator(model, SOURCE_WORDS, TARGET_WORDS, maxlen=6)
    maps = translator.attention_maps("Tom eats sleeps .")
    assert [m.name for m in maps] == [
        "encoder self-attention", "decoder self-attention", "cross-attention"
    ]  # fmt: skip
    own, decoder_self, cross = maps
    assert own.query_tokens == ("tom", "eats", "sleeps", ".")
    generated = translator.translate(["Tom eats sleeps ."])[0].split()
    assert decoder_self.query_tokens == ("[start]", *generated) == cross.query_tokens
    assert cross.key_tokens == own.query_tokens

    source = translator.source_ids(tf.constant(["Tom eats sleeps ."])).to_tensor()
    embedded = numpy_of(model.get_layer("source_embedding")(source))
    blocks = [model.get_layer(f"encoder_block_{i}") for i in range(2)]
    memory, expected_own = numpy_encoder(embedded, blocks)
    np.testing.assert_allclose(own.weights, expected_own, atol=1e-5)

    target_ids = [2 + TARGET_WORDS.index(w) for w in ("[start]", *generated)]
    x = numpy_of(model.get_layer("target_embedding")(tf.constant([target_ids])))
    expected_self, expected_cross = [], []
    for i in range(2):
        block = model.get_layer(f"decoder_block_{i}")
        x, self_scores, cross_scores = transformer_decoder_block(
            x, memory, decoder_block_weights(block, True), block.norm_first, EPSILON
        )
        expected_self.append(self_scores[0])
        expected_cross.append(cross_scores[0])
    np.testing.assert_allclose(decoder_self.weights, np.stack(expected_self), atol=1e-5)
    np.testing.assert_allclose(cross.weights, np.stack(expected_cross), atol=1e-5)
    assert np.all(np.triu(decoder_self.weights, k=1) == 0)  # causal: no later token


def test_rnn_translator_map_is_its_alignment():
    translator = Translator(tiny_translator_model("rnn"), SOURCE_WORDS, TARGET_WORDS, maxlen=6)
    (cross,) = translator.attention_maps("tom sleeps .")
    alignment = translator.alignment("tom sleeps .")
    assert cross.name == "cross-attention" and cross.weights.shape[:2] == (1, 1)
    assert cross.key_tokens == tuple(alignment.source_tokens)
    # Rows are the tokens read ([start], then each generated word); the alignment labels
    # them with the word each one predicted.
    assert cross.query_tokens[1:] == tuple(alignment.target_tokens[:-1])
    np.testing.assert_allclose(cross.weights[0, 0], alignment.weights[0, 0], atol=1e-6)


def test_language_model_map_is_causal_self_attention_after_the_start_token(generator):
    (found,) = generator.attention_maps("the cat sat")
    assert found.query_tokens == ("<eos>", "the", "cat", "sat")
    ids = [generator.end_id] + [2 + generator.vocabulary.index(w) for w in ("the", "cat", "sat")]
    model = generator.model
    x = numpy_of(model.get_layer("token_embedding")(tf.constant([ids])))
    expected = []
    for block in generator.decoder.blocks:
        x, scores, _ = transformer_decoder_block(
            x, None, decoder_block_weights(block, False), block.norm_first, EPSILON,
            rotary_wavelength=10_000.0,
        )  # fmt: skip
        expected.append(scores[0])
    np.testing.assert_allclose(found.weights, np.stack(expected), atol=1e-5)
    with pytest.raises(KerasformerError, match="the prompt is empty"):
        generator.attention_maps("  ")


@pytest.mark.slow
def test_bert_classifier_map_is_numpy_bert_then_follows_fine_tuning(
    tiny_bert_checkpoint, tiny_hub_bert
):
    model = build_bert_classifier(
        2, tiny_hub_bert.preprocess, tiny_hub_bert.encoder, trainable=True
    )
    (found,) = classifier_attention_maps(model, "the bank said", "team goal")
    assert found.query_tokens == (
        "[CLS]", "the", "bank", "said", "[SEP]", "team", "goal", "[SEP]"
    )  # fmt: skip
    assert found.segment_start == 5
    vocabulary = (tiny_bert_checkpoint / "vocab.txt").read_text().split()
    ids = np.array([[vocabulary.index(t) for t in found.query_tokens]])
    types = np.array([[0] * 5 + [1] * 3])
    *_, expected = NumpyBert(tiny_bert_checkpoint)(ids, np.ones_like(ids), types, True)
    np.testing.assert_allclose(found.weights, expected[:, 0], atol=1e-5)

    # A fine-tuned model shows its own attention, not the encoder file's.
    model.compile("adam", "sparse_categorical_crossentropy")
    model.optimizer.learning_rate.assign(0.05)
    model.fit(tf.constant(["the bank said", "team goal"] * 4), np.array([0, 1] * 4), verbose=0)
    (tuned,) = classifier_attention_maps(model, "the bank said", "team goal")
    assert np.abs(tuned.weights - found.weights).max() > 1e-3
    np.testing.assert_allclose(tuned.weights.sum(-1), 1.0, atol=1e-5)
