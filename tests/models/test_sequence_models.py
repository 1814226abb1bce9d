"""The translators and the language model: causality, padding, the decoding cache, the
masked loss, the translator's errors and the word tokenizer.

Every model is tiny and untrained (random weights, no dropout); the references are
NumPy computations or the model's own full pass, never the code under test's helpers.
"""

import numpy as np
import pytest

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.models.decoder_stack import DecoderStack
from kerasformer.models.language_model import EMBEDDING_NAME, build_transformer_language_model
from kerasformer.models.rnn_translator import RnnTranslatorDecoding, build_rnn_translator
from kerasformer.models.transformer_translator import (
    TransformerTranslatorDecoding,
    build_transformer_translator,
)
from kerasformer.models.translator import Translator
from kerasformer.models.word_tokenizer import (
    adapted_vocabulary,
    join_words,
    lower_words_and_punctuation,
)
from tests.helpers.numpy_reference import masked_token_accuracy, masked_token_cross_entropy

POSITIONS = ["learned", "sinusoidal", "rotary", "relative"]
SOURCE_WORDS = ["tom", "sleeps", "eats", "bread", "."]
TARGET_WORDS = ["[start]", "[end]", "tom", "duerme", "come", "pan", "."]
SOURCE_VOCAB, TARGET_VOCAB = len(SOURCE_WORDS) + 2, len(TARGET_WORDS) + 2
MAXLEN = 8
LM_VOCAB = 11
# Sources and teacher-forced targets (2 = [start]) with padding, rows of unequal length.
SOURCES = np.array([[2, 3, 6, 0, 0], [2, 4, 5, 6, 0], [4, 0, 0, 0, 0]], np.int32)
TARGETS = np.array([[2, 4, 5, 8, 0, 0], [2, 4, 6, 7, 8, 3], [2, 5, 0, 0, 0, 0]], np.int32)
UNPADDED_TARGETS = np.array([[2, 4, 5, 8, 3, 6], [2, 7, 7, 4, 5, 6], [2, 8, 3, 6, 4, 4]], np.int32)
TOKENS = np.array([[4, 9, 2, 7, 7, 5, 3], [10, 2, 6, 6, 8, 4, 9]], np.int32)


def with_random_position_tables(model, seed=0):
    """``model`` with its T5 relative-position tables drawn from N(0, 1), as after training:
    they start at zero, which would leave the relative positions out of every check."""
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        if "relative_position_bias" in weight.name:
            weight.assign(rng.normal(0.0, 1.0, weight.shape).astype("float32"))
    return model


def tiny_transformer_translator(position="learned", norm_first=False, num_layers=1, seed=0):
    keras.utils.set_random_seed(seed)
    model = build_transformer_translator(
        SOURCE_VOCAB, TARGET_VOCAB, maxlen=MAXLEN, embed_dim=16, num_heads=2, ff_dim=16,
        num_layers=num_layers, dropout=0.0, position=position, norm_first=norm_first,
    )  # fmt: skip
    return with_random_position_tables(model, seed)


def tiny_rnn_translator(seed=0):
    keras.utils.set_random_seed(seed)
    return build_rnn_translator(
        SOURCE_VOCAB, TARGET_VOCAB, maxlen=MAXLEN, embed_dim=8, units=16, dropout=0.0
    )


def tiny_language_model(
    position="learned", norm_first=False, num_layers=1, seed=0, tie_embeddings=False
):
    keras.utils.set_random_seed(seed)
    model = build_transformer_language_model(
        LM_VOCAB, maxlen=MAXLEN, embed_dim=16, num_heads=2, ff_dim=16, num_layers=num_layers,
        dropout=0.0, position=position, norm_first=norm_first, tie_embeddings=tie_embeddings,
    )  # fmt: skip
    return with_random_position_tables(model, seed)


def with_end_unlikely(model, end_id=3):
    """``model`` with the [end] logit lowered, so that decoding runs to the last position."""
    logits = model.get_layer("logits")
    kernel, bias = logits.get_weights()
    bias[end_id] -= 10.0
    logits.set_weights([kernel, bias])
    return model


def translator_logits(model, sources, targets) -> np.ndarray:
    inputs = {"source_ids": tf.constant(sources), "target_ids": tf.constant(targets)}
    return model(inputs, training=False).numpy()


def with_token_changed(ids, position):
    """``ids`` with the token at ``position`` of every row replaced by another real id."""
    changed = np.array(ids)
    changed[:, position] = np.where(changed[:, position] == 4, 5, 4)
    return changed


# -- 1. causality ------------------------------------------------------------------------


@pytest.fixture(scope="module", params=POSITIONS)
def transformer_translator(request):
    return tiny_transformer_translator(request.param)


@pytest.fixture(scope="module", params=POSITIONS)
def language_model(request):
    return tiny_language_model(request.param)


def test_translator_logits_never_depend_on_later_target_tokens(transformer_translator):
    targets = TARGETS[1:2]  # the row without padding
    logits = translator_logits(transformer_translator, SOURCES[1:2], targets)
    for position in range(1, targets.shape[1]):
        changed = translator_logits(
            transformer_translator, SOURCES[1:2], with_token_changed(targets, position)
        )
        np.testing.assert_allclose(changed[:, :position], logits[:, :position], atol=1e-6)
        # The position that reads the changed token does see it.
        assert np.abs(changed[:, position] - logits[:, position]).max() > 1e-4


def test_language_model_logits_never_depend_on_later_tokens(language_model):
    logits = language_model(tf.constant(TOKENS), training=False).numpy()
    for position in range(1, TOKENS.shape[1]):
        changed = with_token_changed(TOKENS, position)
        changed_logits = language_model(tf.constant(changed), training=False).numpy()
        np.testing.assert_allclose(changed_logits[:, :position], logits[:, :position], atol=1e-6)
        assert np.abs(changed_logits[:, position] - logits[:, position]).max() > 1e-4


# -- 2. source padding -------------------------------------------------------------------


def assert_source_padding_changes_nothing(model):
    logits = translator_logits(model, SOURCES, TARGETS)
    more_padding = np.pad(SOURCES, [[0, 0], [0, 3]])
    np.testing.assert_allclose(translator_logits(model, more_padding, TARGETS), logits, atol=1e-5)
    # Each row alone, without the padding its batch gave it, reads the same.
    for row in range(len(SOURCES)):
        length = int(np.count_nonzero(SOURCES[row]))
        alone = translator_logits(model, SOURCES[row : row + 1, :length], TARGETS[row : row + 1])
        np.testing.assert_allclose(alone[0], logits[row], atol=1e-5)
    # ...while a real source token instead of padding does change them.
    unpadded = translator_logits(model, np.where(SOURCES, SOURCES, 3), TARGETS)
    assert np.abs(unpadded - logits).max() > 1e-4


def test_transformer_translator_ignores_source_padding(transformer_translator):
    assert_source_padding_changes_nothing(transformer_translator)


def test_rnn_translator_ignores_source_padding():
    assert_source_padding_changes_nothing(tiny_rnn_translator())


# -- 3. the key/value cache --------------------------------------------------------------

CACHE_CASES = [(position, False) for position in POSITIONS] + [("learned", True)]


@pytest.mark.parametrize("position, norm_first", CACHE_CASES)
def test_translator_decoder_steps_with_the_cache_equal_the_full_pass(position, norm_first):
    model = tiny_transformer_translator(position, norm_first, num_layers=2)
    targets = UNPADDED_TARGETS
    full = translator_logits(model, SOURCES, targets)
    decoder = DecoderStack.of(model, "target_embedding")
    encoded = TransformerTranslatorDecoding(model).encoder(tf.constant(SOURCES), training=False)
    source_mask = tf.not_equal(SOURCES, 0)
    np.testing.assert_allclose(
        decoder.full(tf.constant(targets), encoded, source_mask).numpy(), full, atol=1e-5
    )
    cache = decoder.empty_caches(len(targets), targets.shape[1])
    for index in range(targets.shape[1]):
        ids = tf.constant(targets[:, : index + 1])
        logits, cache = decoder.step(ids, index, cache, encoded, source_mask)
        np.testing.assert_allclose(logits.numpy(), full[:, index], atol=1e-5)


@pytest.mark.parametrize("position, norm_first", CACHE_CASES)
def test_language_model_steps_with_the_cache_equal_the_full_pass(position, norm_first):
    model = tiny_language_model(position, norm_first, num_layers=2)
    full = model(tf.constant(TOKENS), training=False).numpy()
    decoder = DecoderStack.of(model, EMBEDDING_NAME)
    np.testing.assert_allclose(decoder.full(tf.constant(TOKENS)).numpy(), full, atol=1e-5)
    cache = decoder.empty_caches(len(TOKENS), MAXLEN)
    for index in range(TOKENS.shape[1]):
        logits, cache = decoder.step(tf.constant(TOKENS[:, : index + 1]), index, cache)
        np.testing.assert_allclose(logits.numpy(), full[:, index], atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_tied_language_model_reads_its_logits_off_its_input_embedding(norm_first):
    untied = tiny_language_model(norm_first=norm_first, num_layers=2)
    model = tiny_language_model(norm_first=norm_first, num_layers=2, tie_embeddings=True)
    # The output kernel (embed_dim x vocab) is gone; the output bias stays.
    assert untied.count_params() - model.count_params() == 16 * LM_VOCAB
    rng = np.random.default_rng(0)
    for weight in model.weights:  # biases start at 0, which would hide them
        weight.assign(rng.normal(0.0, 0.5, weight.shape).astype("float32"))
    decoder = DecoderStack.of(model, EMBEDDING_NAME)
    ids = tf.constant(TOKENS)
    hidden = decoder.embedding(ids)
    for block in decoder.blocks:
        hidden = block(hidden, training=False)
    if decoder.final_norm is not None:
        hidden = decoder.final_norm(hidden)
    table = decoder.embedding.token_embedding.embeddings.numpy()
    bias = decoder.embedding.output_bias.numpy()
    expected = hidden.numpy() @ table.T + bias
    np.testing.assert_allclose(model(ids, training=False).numpy(), expected, atol=1e-4)
    cache = decoder.empty_caches(len(TOKENS), MAXLEN)
    for index in range(TOKENS.shape[1]):
        logits, cache = decoder.step(tf.constant(TOKENS[:, : index + 1]), index, cache)
        np.testing.assert_allclose(logits.numpy(), expected[:, index], atol=1e-4)


def test_rnn_decoding_steps_equal_the_full_pass():
    model = tiny_rnn_translator()
    full = translator_logits(model, SOURCES, UNPADDED_TARGETS)
    decoding = RnnTranslatorDecoding(model)
    cache = decoding.initial_cache(tf.constant(SOURCES), UNPADDED_TARGETS.shape[1])
    for index in range(UNPADDED_TARGETS.shape[1]):
        ids = tf.constant(UNPADDED_TARGETS[:, : index + 1])
        logits, cache = decoding.step(ids, index, cache)
        np.testing.assert_allclose(logits.numpy(), full[:, index], atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("position", POSITIONS)
def test_cached_and_uncached_translators_generate_the_same_ids(position):
    model = with_end_unlikely(tiny_transformer_translator(position, num_layers=2))
    cached = Translator(model, SOURCE_WORDS, TARGET_WORDS, MAXLEN, cached=True)
    uncached = Translator(model, SOURCE_WORDS, TARGET_WORDS, MAXLEN, cached=False)
    sources = tf.constant(SOURCES)
    for beam_width in (1, 3):
        ids = cached.translate_ids(sources, beam_width).numpy()
        np.testing.assert_array_equal(ids, uncached.translate_ids(sources, beam_width).numpy())
        assert np.all(ids != 0)  # every position was decoded, none cut short by [end]


# -- 5. the masked loss ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("build", [tiny_transformer_translator, tiny_rnn_translator])
def test_loss_and_accuracy_leave_padding_out(build):
    model = build()
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"]
    )
    inputs = {"source_ids": SOURCES, "target_ids": TARGETS}
    # Any real next token (3 = [end] and up) at each real position, 0 under padding.
    rng = np.random.default_rng(0)
    labels = np.where(TARGETS != 0, rng.integers(3, TARGET_VOCAB, TARGETS.shape), 0)
    logits = translator_logits(model, SOURCES, TARGETS)
    labels[0, :3] = logits[0, :3].argmax(-1)  # some right answers, so accuracy is not 0
    real = TARGETS != 0
    loss, accuracy = model.evaluate(inputs, labels, batch_size=len(labels), verbose=0)
    np.testing.assert_allclose(loss, masked_token_cross_entropy(logits, labels, real), rtol=1e-5)
    np.testing.assert_allclose(accuracy, masked_token_accuracy(logits, labels, real), rtol=1e-6)
    # Anything the model predicts under padding would change an unmasked loss.
    assert not np.isclose(loss, masked_token_cross_entropy(logits, labels, np.ones_like(real)))


# -- 8. the translator's errors and edge cases -------------------------------------------


@pytest.fixture(scope="module")
def translator():
    return Translator(tiny_transformer_translator(), SOURCE_WORDS, TARGET_WORDS, maxlen=4)


def test_translator_rejects_an_empty_sentence_by_its_number(translator):
    with pytest.raises(KerasformerError, match="sentence 2 has no words") as error:
        translator.translate(["tom sleeps.", " ", "tom eats."])
    assert "\n" not in str(error.value)


def test_translator_rejects_an_over_long_sentence_by_its_number(translator):
    with pytest.raises(KerasformerError, match="sentence 3 has 6 words, more than") as error:
        translator.translate(["tom sleeps.", "tom eats.", "tom eats bread, tom."])
    assert "\n" not in str(error.value)
    assert len(translator.translate(["tom eats bread."])) == 1  # 4 words: just fits
    with pytest.raises(KerasformerError, match="list of sentences"):
        translator.translate("tom sleeps.")


def test_translate_tensor_fails_on_an_over_long_sentence(translator):
    with pytest.raises(tf.errors.InvalidArgumentError, match="longer than"):
        translator.translate_tensor(tf.constant(["tom sleeps.", "tom eats bread, tom."]))


def test_translate_tensor_gives_an_empty_string_for_an_empty_sentence(translator):
    outputs = translator.translate_tensor(tf.constant(["", "tom sleeps."])).numpy()
    assert outputs[0] == b""
    # The empty row leaves the other's translation as it is alone.
    assert outputs[1] == translator.translate_tensor(tf.constant(["tom sleeps."])).numpy()[0]


def test_translator_ids_are_the_vocabularies_positions(translator):
    source = translator.source_ids(tf.constant(["Tom eats bread.", "Tom flies"]))
    assert source.to_list() == [[2, 4, 5, 6], [2, 1]]  # 1: unknown
    target = translator.target_ids(tf.constant(["Tom come pan.", ""]))
    assert target.to_list() == [[2, 4, 6, 7, 8, 3], [2, 3]]


# -- 9. the word tokenizer ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text, words",
    [
        ("¿Dónde está, Tom?", "¿ dónde está , tom ?"),
        ("  Hello,   WORLD!! ", "hello , world ! !"),
        ("«Sí» (dijo): ¡ya!", "« sí » ( dijo ) : ¡ ya !"),
        ("Ñandú ÉL", "ñandú él"),
        ("", ""),
    ],
)
def test_lower_words_and_punctuation(text, words):
    assert lower_words_and_punctuation(tf.constant([text])).numpy()[0].decode() == words


@pytest.mark.parametrize(
    "words, text",
    [
        (["¿", "dónde", "está", ",", "tom", "?"], "¿dónde está, tom?"),
        (["¡", "hola", "!", "adiós", "."], "¡hola! adiós."),
        (["«", "sí", "»", "(", "dijo", ")", ":", "ya"], "«sí» (dijo): ya"),
        (["tom"], "tom"),
        ([], ""),
    ],
)
def test_join_words(words, text):
    ragged = tf.ragged.constant([words], dtype=tf.string)
    assert join_words(ragged).numpy()[0].decode() == text


def test_adapted_vocabulary_puts_reserved_tokens_first_then_words_by_frequency():
    texts = ["b a b.", "c b a", "d"]
    vocabulary = adapted_vocabulary(texts, max_tokens=7, reserved=("[start]", "[end]"))
    # 7 ids: padding, unknown, 2 reserved, the 3 most frequent words (b 3, a 2, then one).
    assert vocabulary[:4] == ["[start]", "[end]", "b", "a"]
    assert len(vocabulary) == 5 and vocabulary[4] in {".", "c", "d"}
    with pytest.raises(KerasformerError, match="at least 5"):
        adapted_vocabulary(texts, max_tokens=4, reserved=("[start]", "[end]"))
