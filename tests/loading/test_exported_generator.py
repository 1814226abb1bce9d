"""`ExportedGenerator` against `TextGenerator` read back from the same export's
``model.keras``: the same continuations, prompt checks and unknown-word counts."""

import json
import shutil

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.export.generator_export import write_generator
from kerasformer.loading.exported_generator import ExportedGenerator
from kerasformer.loading.generator import load_generator
from kerasformer.models.generation import Sampling
from tests.helpers.tiny_models import LM_MAXLEN, tiny_text_generator

GREEDY = Sampling(temperature=0.0)
# The export generates LM_MAXLEN // 2 tokens: a prompt may have LM_MAXLEN // 2 - 1.
MAX_TOKENS = LM_MAXLEN // 2
PROMPTS = ["the", "the cat", "a dog sat", "mat .", "<eos> the"]
CHECKED = [*PROMPTS, "", " \t ", "the cat sat on", "zebra the", "The CAT", "the\tcat\nsat"]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("generator") / "export"
    write_generator(tiny_text_generator(), directory)
    return directory


@pytest.fixture(scope="module")
def exported(export_dir):
    return ExportedGenerator.load_if_serves(export_dir, MAX_TOKENS)


@pytest.fixture(scope="module")
def keras_generator(export_dir):
    return load_generator(export_dir)


def test_greedy_continuations_are_the_keras_generators(exported, keras_generator):
    assert exported.max_tokens == MAX_TOKENS and exported.maxlen == LM_MAXLEN
    expected = keras_generator.generate(PROMPTS, MAX_TOKENS, GREEDY)
    assert any(expected)  # the tiny model says something to compare
    assert exported.generate(PROMPTS) == expected
    # Called as `TextGenerator` is, as the command line calls either.
    assert exported.generate(PROMPTS, MAX_TOKENS, GREEDY) == expected
    with pytest.raises(KerasformerError, match=f"generates {MAX_TOKENS} tokens, not 3"):
        exported.generate(PROMPTS, 3, GREEDY)


def test_prompts_are_checked_and_their_known_words_counted_as_keras_does(exported, keras_generator):
    assert [exported.problem(p) for p in CHECKED] == [
        keras_generator.problem(p, MAX_TOKENS) for p in CHECKED
    ]
    assert exported.known_words(CHECKED) == keras_generator.known_words(CHECKED)
    with pytest.raises(KerasformerError, match="prompt 2 has 4 tokens"):
        exported.generate(["the", "the cat sat on"])


def test_sampling_values_reach_the_signature(exported):
    # Sampling from the single most likely token is greedy decoding, at any temperature;
    # at temperature 5 with no limit, 40 prompts all continued greedily would be a wonder.
    prompts = PROMPTS * 8
    greedy = exported.generate(prompts)
    assert exported.generate(prompts, sampling=Sampling(temperature=5.0, top_k=1)) == greedy
    assert exported.generate(prompts, sampling=Sampling(temperature=5.0)) != greedy


def test_other_numbers_of_tokens_and_older_exports_are_left_to_keras(export_dir, tmp_path):
    assert ExportedGenerator.load_if_serves(export_dir, MAX_TOKENS - 1) is None
    older = shutil.copytree(export_dir, tmp_path / "older")
    settings = json.loads((older / "generator.json").read_text())
    del settings["maxlen"]  # as written before the window was recorded
    (older / "generator.json").write_text(json.dumps(settings))
    assert ExportedGenerator.load_if_serves(older, MAX_TOKENS) is None
