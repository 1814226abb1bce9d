"""`ExportedTranslator` against `Translator` read back from the same export's
``model.keras``: the same translations, greedy and beam, and the same sentence checks."""

import json
import shutil

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.export.translator_export import write_translator
from kerasformer.loading.exported_translator import ExportedTranslator
from kerasformer.loading.translator import load_translator
from kerasformer.models.translator import Translator
from tests.helpers.tiny_models import SOURCE_WORDS, TARGET_WORDS, tiny_translator_model

MAXLEN = 6
BEAM_WIDTH = 3
SENTENCES = ["tom sleeps .", "Tom eats.", "tom", "eats eats tom .", "sleeps, tom!"]
CHECKED = [*SENTENCES, "", " \t ", "zebra", "Tom (sleeps) eats tom sleeps eats tom", "TOM."]


@pytest.fixture(scope="module", params=["rnn", "learned"])
def export_dir(request, tmp_path_factory):
    translator = Translator(tiny_translator_model(request.param), SOURCE_WORDS, TARGET_WORDS,
                            maxlen=MAXLEN)  # fmt: skip
    directory = tmp_path_factory.mktemp("translator") / request.param
    write_translator(translator, directory, beam_width=BEAM_WIDTH)
    return directory


@pytest.fixture(scope="module")
def keras_translator(export_dir):
    return load_translator(export_dir)


@pytest.mark.parametrize("beam_width", [1, BEAM_WIDTH])
def test_translations_are_the_keras_translators(export_dir, keras_translator, beam_width):
    exported = ExportedTranslator.load_if_serves(export_dir, beam_width)
    expected = keras_translator.translate(SENTENCES, beam_width=beam_width)
    assert any(expected)  # the tiny model says something to compare
    assert exported.translate(SENTENCES) == expected
    assert exported.translate(SENTENCES, beam_width=beam_width) == expected


def test_sentences_are_checked_and_their_known_words_counted_as_keras_does(
    export_dir, keras_translator
):
    exported = ExportedTranslator(export_dir)
    assert [exported.problem(s) for s in CHECKED] == [keras_translator.problem(s) for s in CHECKED]
    assert exported.known_words(CHECKED) == keras_translator.known_words(CHECKED)
    with pytest.raises(KerasformerError, match="sentence 2 has 9 words"):
        exported.translate(["tom", CHECKED[-2]])


def test_other_beam_widths_and_subword_translators_are_left_to_keras(export_dir, tmp_path):
    assert ExportedTranslator.load_if_serves(export_dir, BEAM_WIDTH + 1) is None
    with pytest.raises(KerasformerError, match="beam width 1"):
        ExportedTranslator(export_dir, beam_width=2)
    with pytest.raises(KerasformerError, match="loaded for beam width 1, not 3"):
        ExportedTranslator(export_dir).translate(SENTENCES, beam_width=BEAM_WIDTH)
    subwords = shutil.copytree(export_dir, tmp_path / "subwords")
    settings = json.loads((subwords / "translator.json").read_text())
    settings["tokenizer"] = "sentencepiece"
    (subwords / "translator.json").write_text(json.dumps(settings))
    assert ExportedTranslator.load_if_serves(subwords, 1) is None
