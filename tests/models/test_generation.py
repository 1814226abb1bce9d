"""Decoding: beam search against exhaustive search, greedy decoding and sampling against
the model's full passes, and `TextGenerator`.

The models are tiny and untrained; every expected sequence is computed in NumPy from the
logits of the model's own full (teacher-forced) pass over each prefix, never through the
decoding loops or the key/value cache under test.
"""

import numpy as np
import pytest

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.models.generation import Sampling, decode, ids_before_end
from kerasformer.models.rnn_translator import RnnTranslatorDecoding
from kerasformer.models.transformer_translator import (
    TransformerTranslatorDecoding,
)
from kerasformer.models.translator import Translator
from tests.helpers.numpy_reference import (
    best_finished_sequence,
    greedy_sequence,
    log_softmax,
    softmax,
)
from tests.helpers.tiny_models import (
    END,
    LM_MAXLEN,
    LM_WORDS,
    SOURCE_WORDS,
    START,
    TARGET_WORDS,
    tiny_translator_model,
)

TARGET_TABLE = ["", "[UNK]", *TARGET_WORDS]
NEVER_GENERATED = (0, START)  # as `Translator` does: padding and [start] are no next word
CAN_FOLLOW = [i for i in range(len(TARGET_TABLE)) if i not in NEVER_GENERATED]
SOURCES = np.array([[2, 3, 5, 0], [2, 4, 4, 5], [3, 0, 0, 0]], np.int32)


def decoding_of(model):
    if model.name == "rnn_translator":
        return RnnTranslatorDecoding(model)
    return TransformerTranslatorDecoding(model, cached=True)


def masked_step(decoding):
    """The decoding step with padding and [start] ruled out, as `Translator` rules them out."""
    never = np.zeros(len(TARGET_TABLE), np.float32)
    never[list(NEVER_GENERATED)] = -1e9

    def step(ids, index, cache):
        logits, cache = decoding.step(ids, index, cache)
        return logits + never, cache

    return step


def full_pass_log_probs(model, source_row):
    """``prefix -> log p(next | [start] + prefix)`` from the model's full pass over the
    prefix, renormalised over the ids that may follow (the others -inf)."""

    def next_token_log_probs(prefix):
        inputs = {
            "source_ids": tf.constant(source_row[None]),
            "target_ids": tf.constant([[START, *prefix]], tf.int32),
        }
        logits = model(inputs, training=False).numpy()[0, -1].astype(np.float64)
        log_probs = np.full(len(TARGET_TABLE), -np.inf)
        log_probs[CAN_FOLLOW] = log_softmax(logits[CAN_FOLLOW])
        return log_probs

    return next_token_log_probs


def padded(sequence, length):
    return list(sequence) + [0] * (length - len(sequence))


def run_decode(model, max_length, **options):
    decoding = decoding_of(model)
    sources = tf.constant(SOURCES)
    return decode(
        masked_step(decoding), tf.fill([len(SOURCES)], START),
        decoding.initial_cache(sources, max_length), vocab_size=len(TARGET_TABLE),
        max_length=max_length, end_id=END, **options,
    )  # fmt: skip


KINDS = ["learned", "relative", "rnn"]


@pytest.fixture(scope="module", params=KINDS)
def model(request):
    return tiny_translator_model(request.param)


# -- beam search ------------------------------------------------------------------------


def test_beam_search_finds_the_most_likely_finished_sequence(model):
    # 4 ids may follow and 3 of them go on, so 64 beams keep every prefix of 3 tokens.
    ids, scores = run_decode(model, max_length=3, beam_width=64, length_penalty=0.0)
    lengths = []
    for row, source in enumerate(SOURCES):
        expected, log_prob = best_finished_sequence(
            full_pass_log_probs(model, source), CAN_FOLLOW, END, max_length=3
        )
        assert ids.numpy()[row].tolist() == padded(expected, 3)
        np.testing.assert_allclose(scores.numpy()[row], log_prob, rtol=1e-4)
        lengths.append(len(expected))
    assert max(lengths) > 1  # not only "[end]" at once: the search had work to do


def test_translator_beam_search_uses_the_gnmt_length_penalty(model):
    translator = Translator(model, SOURCE_WORDS, TARGET_WORDS, maxlen=4)  # 3 tokens out
    ids = translator.translate_ids(tf.constant(SOURCES), beam_width=64).numpy()
    for row, source in enumerate(SOURCES):
        expected, _ = best_finished_sequence(
            full_pass_log_probs(model, source), CAN_FOLLOW, END, max_length=3,
            length_penalty=0.6,
        )  # fmt: skip
        assert ids[row].tolist() == padded(expected, 3)


# -- greedy decoding --------------------------------------------------------------------


def test_greedy_decoding_is_the_argmax_of_full_passes(model):
    ids, _ = run_decode(model, max_length=5)
    for row, source in enumerate(SOURCES):
        expected = greedy_sequence(full_pass_log_probs(model, source), END, max_length=5)
        assert ids.numpy()[row].tolist() == padded(expected, 5)


def test_translator_greedy_ids_and_words_are_the_argmax_of_full_passes(model):
    translator = Translator(model, SOURCE_WORDS, TARGET_WORDS, maxlen=6)  # 5 tokens out
    ids = translator.translate_ids(tf.constant(SOURCES)).numpy()
    sentences = ["tom sleeps .", "tom eats eats .", "sleeps"]  # SOURCES as words
    translations = translator.translate(sentences)
    for row, source in enumerate(SOURCES):
        expected = greedy_sequence(full_pass_log_probs(model, source), END, max_length=5)
        assert ids[row].tolist() == padded(expected, 5)
        words = [TARGET_TABLE[i] for i in expected if i != END]
        assert translations[row] == " ".join(words)


# -- sampling ---------------------------------------------------------------------------


def test_top_1_sampling_a_tiny_top_p_and_temperature_0_are_greedy(model):
    greedy, _ = run_decode(model, max_length=5)
    tf.random.set_seed(0)
    for sampling in (Sampling(top_k=1), Sampling(top_p=1e-6), Sampling(0.0, top_k=3)):
        sampled, _ = run_decode(model, max_length=5, sampling=sampling)
        np.testing.assert_array_equal(sampled.numpy(), greedy.numpy(), err_msg=str(sampling))


@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_top_2_sampling_draws_the_two_most_likely_tokens_by_their_softmax(model, temperature):
    draws = 1000
    # The source whose runner-up first token is likeliest, for a telling frequency.
    first_log_probs = [full_pass_log_probs(model, source)([]) for source in SOURCES]
    row = int(np.argmax([np.sort(log_probs)[-2] for log_probs in first_log_probs]))
    log_probs = first_log_probs[row]
    decoding = decoding_of(model)
    source = SOURCES[row : row + 1].repeat(draws, axis=0)
    tf.random.set_seed(0)
    first, _ = decode(
        masked_step(decoding), tf.fill([draws], START),
        decoding.initial_cache(tf.constant(source), 1), vocab_size=len(TARGET_TABLE),
        max_length=1, end_id=END, sampling=Sampling(temperature=temperature, top_k=2),
    )  # fmt: skip
    most_likely, second = np.argsort(log_probs)[::-1][:2]
    drawn = first.numpy()[:, 0]
    assert set(drawn) <= {most_likely, second}
    # softmax(logits / T) over the two, with log-probabilities standing in for logits.
    expected = softmax(np.array([log_probs[most_likely], log_probs[second]]) / temperature)[0]
    observed = np.mean(drawn == most_likely)
    assert abs(observed - expected) < 4 * np.sqrt(expected * (1 - expected) / draws) + 1e-3


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(temperature=-0.5), "temperature must be >= 0"),
        (dict(temperature=float("nan")), "temperature must be >= 0"),
        (dict(top_k=-1), "top_k must be a whole number"),
        (dict(top_k=2.5), "top_k must be a whole number"),
        (dict(top_k=True), "top_k must be a whole number"),
        (dict(top_p=0.0), r"top_p must be in \(0, 1\]"),
        (dict(top_p=1.5), r"top_p must be in \(0, 1\]"),
    ],
)
def test_sampling_rejects_bad_values(options, message):
    with pytest.raises(KerasformerError, match=message):
        Sampling(**options)


def test_ids_before_end_cuts_each_row_at_its_end_or_padding():
    ids = tf.constant([[4, 5, 3, 6, 0], [3, 4, 0, 0, 0], [4, 0, 5, 0, 0], [4, 4, 5, 4, 4]])
    assert ids_before_end(ids, END).to_list() == [[4, 5], [], [4], [4, 4, 5, 4, 4]]


# -- TextGenerator ----------------------------------------------------------------------


def greedy_continuation(model, prompt_words, max_tokens):
    """Words chosen one at a time by the argmax of a full pass over "<eos>" + the prompt +
    the words so far, never padding or unknown (ids 0 and 1), up to "<eos>"."""
    table = ["", "[UNK]", *LM_WORDS]
    ids = [table.index("<eos>")] + [table.index(w) if w in table else 1 for w in prompt_words]
    words = []
    for _ in range(max_tokens):
        logits = model(tf.constant([ids], tf.int32), training=False).numpy()[0, -1]
        logits[[0, 1]] = -np.inf
        chosen = int(np.argmax(logits))
        if table[chosen] == "<eos>":
            break
        words.append(table[chosen])
        ids.append(chosen)
    return " ".join(words)


PROMPTS = ["the cat", "a dog sat", "the zebra"]


def test_greedy_generation_is_the_argmax_of_full_passes(generator):
    generated = generator.generate(PROMPTS, max_tokens=4)
    expected = [greedy_continuation(generator.model, p.split(), 4) for p in PROMPTS]
    assert generated == expected


def test_top_1_sampling_generates_the_greedy_text(generator):
    tf.random.set_seed(0)
    sampled = generator.generate(PROMPTS, max_tokens=4, sampling=Sampling(top_k=1))
    assert sampled == generator.generate(PROMPTS, max_tokens=4)


def test_generation_refuses_an_empty_or_blank_prompt(generator):
    # Continuing nothing used to return an empty line without a word.
    for prompt in ("", "   ", "\t"):
        with pytest.raises(KerasformerError, match="prompt 2 is empty; give some words"):
            generator.generate(["the cat", prompt], max_tokens=2)


def test_generation_rejects_what_does_not_fit_the_window(generator):
    with pytest.raises(KerasformerError, match="prompt 2 has 6 tokens; with 2 to generate") as e:
        generator.generate(["the cat", "the cat sat on the mat"], max_tokens=2)
    assert "\n" not in str(e.value) and f"window of {LM_MAXLEN}" in str(e.value)
    for max_tokens in (0, LM_MAXLEN):
        with pytest.raises(KerasformerError, match=f"max_tokens must be from 1 to {LM_MAXLEN - 1}"):
            generator.generate(["the cat"], max_tokens=max_tokens)
    with pytest.raises(KerasformerError, match="list of prompts"):
        generator.generate("the cat")
    # The graph function says so too, as it can.
    with pytest.raises(tf.errors.InvalidArgumentError, match="longer than 5 tokens"):
        generator.generate_tensor(tf.constant(["the cat sat on the mat"]), 2, Sampling(0.0))
