"""Exported translators and language models, served without kerasformer.

A fresh interpreter loads each SavedModel with ``tf.saved_model.load`` only and calls its
signatures; its answers must be the strings that the in-process `Translator` or
`TextGenerator` gives for the same inputs.
"""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from kerasformer.datasets.sentence_pairs import TranslationData
from kerasformer.datasets.wikitext import END_OF_LINE, LanguageModelData
from kerasformer.errors import KerasformerError
from kerasformer.export.generator_export import DEFAULT_MAX_TOKENS, load_generator
from kerasformer.export.translator_export import DEFAULT_BEAM_WIDTH, load_translator
from kerasformer.models.generation import Sampling
from kerasformer.training import TrainingConfig, train
from tests.helpers.data import reversal_pairs
from tests.helpers.processes import run_python_json

# Trains or starts several TensorFlow processes per test: out of the quick tier.
pytestmark = pytest.mark.slow

MAXLEN = 10
SENTENCES = ["3 1 4 1 5", "9 2 6", "5 3 5 8 9 7", "Two 7 1 8!", "8 2 8 4 5 9"]
PROMPTS = ["the cat", "a dog sat on", "zebra"]  # "zebra" is not in the vocabulary

# Run in a fresh interpreter: argv[1] the translator, argv[2] the language model, argv[3]
# the sentences, argv[4] the prompts. Prints one JSON object.
SERVE_WITH_TENSORFLOW_ONLY = """
import json, sys
import tensorflow as tf

def strings(tensor):
    return [text.decode("utf-8") for text in tensor.numpy()]

translator = tf.saved_model.load(sys.argv[1])
sentences = tf.constant(json.loads(sys.argv[3]))
greedy = translator.signatures["serving_default"]
served = {
    "greedy": strings(greedy(inputs=sentences)["outputs"]),
    "beam": strings(translator.signatures["beam_search"](inputs=sentences)["outputs"]),
    "empty": strings(greedy(inputs=tf.constant(["", "1 2"]))["outputs"]),
    "too_long": None,
}
try:
    greedy(inputs=tf.constant([" ".join(["1"] * 50)]))
except tf.errors.InvalidArgumentError as error:
    served["too_long"] = error.message

generator = tf.saved_model.load(sys.argv[2])
prompts = tf.constant(json.loads(sys.argv[4]))
served["generated_at_temperature_0"] = strings(generator.signatures["sample"](
    inputs=prompts, temperature=tf.constant(0.0), top_k=tf.constant(0), top_p=tf.constant(1.0)
)["outputs"])
served["generated_by_default"] = strings(generator.signatures["serving_default"](
    inputs=prompts
)["outputs"])
served["kerasformer_imported"] = any(name.startswith("kerasformer") for name in sys.modules)
print(json.dumps(served))
"""


def digit_sentences(count: int, seed: int) -> list[str]:
    """Sentences of 3 to 6 digits."""
    rng = np.random.default_rng(seed)
    return [" ".join(map(str, rng.integers(0, 10, rng.integers(3, 7)))) for _ in range(count)]


@pytest.fixture(scope="module")
def translator_export(tmp_path_factory):
    """A transformer translator trained briefly on reversing digits, exported."""
    splits = {
        part: reversal_pairs(digit_sentences(count, seed))
        for part, count, seed in (("train", 1000, 0), ("validation", 50, 1), ("test", 50, 2))
    }
    data = TranslationData("reversed_digits", "digits", "reversed digits", splits)
    export_dir = tmp_path_factory.mktemp("translator") / "export"
    options = dict(vocab_size=20, maxlen=MAXLEN, embed_dim=16, num_heads=2, ff_dim=32, num_layers=1)
    config = TrainingConfig(
        task="translation", dataset="spa_eng", epochs=2, batch_size=64, learning_rate=3e-3,
        model_options=options, export_dir=str(export_dir),
    )  # fmt: skip
    return train(config, verbose=0, data=data)


def tiny_corpus(lines: int, seed: int) -> tuple[str, ...]:
    """Tokens of short made-up sentences, each line ended by ``<eos>`` as WikiText's are."""
    rng = np.random.default_rng(seed)
    words = "the a cat dog sat ran on under mat rug and , .".split()
    tokens: list[str] = []
    for _ in range(lines):
        tokens += list(rng.choice(words, rng.integers(3, 9))) + [END_OF_LINE]
    return tuple(tokens)


@pytest.fixture(scope="module")
def generator_export(tmp_path_factory):
    """A tiny language model trained one epoch on a made-up tokenised text, exported."""
    splits = {"train": tiny_corpus(300, 0), "validation": tiny_corpus(30, 1)}
    splits["test"] = tiny_corpus(30, 2)
    data = LanguageModelData("tiny_text", splits)
    export_dir = tmp_path_factory.mktemp("generator") / "export"
    options = dict(maxlen=64, embed_dim=16, num_heads=2, ff_dim=32, num_layers=1)
    config = TrainingConfig(
        task="language-model", dataset="wikitext2", epochs=1, batch_size=16,
        model_options=options, export_dir=str(export_dir),
    )  # fmt: skip
    return train(config, verbose=0, data=data)


@pytest.fixture(scope="module")
def served(translator_export, generator_export) -> dict:
    """What a process with TensorFlow alone gets from both exports (one start-up for both)."""
    return run_python_json(
        SERVE_WITH_TENSORFLOW_ONLY, str(translator_export.export_dir),
        str(generator_export.export_dir), json.dumps(SENTENCES), json.dumps(PROMPTS),
    )  # fmt: skip


def test_serving_needs_no_kerasformer(served):
    assert served["kerasformer_imported"] is False


def test_translator_signatures_match_the_translator(served, translator_export):
    translator = translator_export.model
    assert served["greedy"] == translator.translate(SENTENCES)
    assert served["beam"] == translator.translate(SENTENCES, beam_width=DEFAULT_BEAM_WIDTH)
    assert served["empty"] == ["", *translator.translate(["1 2"])]
    # TensorFlow's message escapes the apostrophe (model\'s).
    assert re.search(rf"longer than the model limit of {MAXLEN} words", served["too_long"] or "")


def test_saved_model_cli_runs_the_default_signature(translator_export):
    exe = shutil.which("saved_model_cli")
    assert exe, "TensorFlow installs the saved_model_cli command"
    sentence = SENTENCES[0]
    result = subprocess.run(
        [
            exe, "run", "--dir", str(translator_export.export_dir), "--tag_set", "serve",
            "--signature_def", "serving_default", "--input_exprs", f"inputs={[sentence]!r}",
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    expected = translator_export.model.translate([sentence])[0]
    assert "Result for output key outputs:" in result.stdout
    assert repr([expected.encode()]) in result.stdout, result.stdout


def test_load_translator_gives_the_same_translations(translator_export):
    loaded = load_translator(translator_export.export_dir)
    original = translator_export.model
    assert loaded.maxlen == original.maxlen == MAXLEN
    assert loaded.source_vocabulary == original.source_vocabulary
    assert loaded.target_vocabulary == original.target_vocabulary
    assert loaded.translate(SENTENCES) == original.translate(SENTENCES)
    assert loaded.translate(SENTENCES, beam_width=3) == original.translate(SENTENCES, beam_width=3)


def test_loading_what_is_not_a_translator_names_the_fix(generator_export, tmp_path):
    with pytest.raises(KerasformerError) as caught:
        load_translator(tmp_path)
    message = str(caught.value)
    assert "is not an exported translator" in message
    assert "kerasformer train --task translation" in message
    with pytest.raises(KerasformerError) as caught:
        load_translator(generator_export.export_dir)
    assert str(caught.value) == (
        f"{generator_export.export_dir} is a language model, not a translator; use "
        "kerasformer generate."
    )


def test_loading_what_is_not_a_language_model_names_the_fix(translator_export):
    with pytest.raises(KerasformerError) as caught:
        load_generator(translator_export.export_dir)
    assert str(caught.value) == (
        f"{translator_export.export_dir} is a translator, not a language model; use "
        "kerasformer translate."
    )


def test_generator_sample_signature_at_temperature_0_is_greedy(served, generator_export):
    """Temperature 0 is the limit of softmax(logits / T): always the most likely token."""
    greedy = generator_export.model.generate(PROMPTS, DEFAULT_MAX_TOKENS, Sampling(temperature=0.0))
    assert served["generated_at_temperature_0"] == greedy


def test_generator_default_signature_samples_words_of_the_vocabulary(served, generator_export):
    vocabulary = set(generator_export.model.vocabulary) - {END_OF_LINE}
    assert len(served["generated_by_default"]) == len(PROMPTS)
    for text in served["generated_by_default"]:
        words = text.split()
        assert len(words) <= DEFAULT_MAX_TOKENS and set(words) <= vocabulary, text


def test_load_generator_gives_the_same_greedy_text(generator_export):
    loaded = load_generator(generator_export.export_dir)
    original = generator_export.model
    assert loaded.vocabulary == original.vocabulary and loaded.maxlen == original.maxlen
    greedy = Sampling(temperature=0.0)
    assert loaded.generate(PROMPTS, 10, greedy) == original.generate(PROMPTS, 10, greedy)


@pytest.mark.parametrize("kind", ["translator", "generator"])
def test_tf_serving_takes_translator_and_generator_exports_as_they_are(
    kind, translator_export, generator_export, tmp_path
):
    from tests.helpers.serving import assert_tf_serving_takes, numbered_copy

    export, texts = {
        "translator": (translator_export, SENTENCES), "generator": (generator_export, PROMPTS)
    }[kind]  # fmt: skip
    served_dir = numbered_copy(export.export_dir, tmp_path)
    served = assert_tf_serving_takes(served_dir, {"instances": texts}, tmp_path)
    assert served["outputs"].shape == (len(texts),)
