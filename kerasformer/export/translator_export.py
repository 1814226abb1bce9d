"""Export a `Translator` as a SavedModel that maps English strings to Spanish strings.

The export directory holds:

    saved_model.pb, variables/, assets/       the SavedModel: decoding loop in the graph
    model.keras                               the Keras model, for kerasformer
    source_vocabulary.txt, target_vocabulary.txt, translator.json
                                              what `load_translator` needs besides it
    source_subwords.model, target_subwords.model
                                              the SentencePiece models, when the
                                              translator reads subwords

Signatures: ``serving_default`` (greedy) and ``beam_search`` (beam width fixed at
export), each taking ``inputs``, a batch of strings, and returning ``outputs``. An empty
input gives an empty output; one longer than the model's ``maxlen`` words fails with
an InvalidArgumentError naming the limit. No kerasformer is needed to serve it.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import tf
from kerasformer.export.saved_model_files import INPUT_NAME, write_saved_model
from kerasformer.files.text_files import write_lines, write_settings
from kerasformer.loading.translator import (
    SETTINGS_FILE,
    SOURCE_SUBWORDS_FILE,
    SOURCE_VOCABULARY_FILE,
    TARGET_SUBWORDS_FILE,
    TARGET_VOCABULARY_FILE,
    load_translator,  # noqa: F401  (its old home)
)
from kerasformer.models.translator import Translator

DEFAULT_BEAM_WIDTH = 4
OUTPUT_NAME = "outputs"


class TranslatorServing(tf.Module):
    """The model, its tokenizers and the two decoding signatures."""

    def __init__(self, translator: Translator, beam_width: int):
        super().__init__(name="translator_serving")
        self._translator = translator
        # Tracked here so their variables and lookup tables are saved.
        self.model = translator.model
        self.source_tokenizer = translator.source_tokenizer
        self.target_tokenizer = translator.target_tokenizer
        self.beam_width = beam_width

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def greedy(self, inputs):
        return {OUTPUT_NAME: self._translator.translate_tensor(inputs, beam_width=1)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def beam_search(self, inputs):
        return {OUTPUT_NAME: self._translator.translate_tensor(inputs, self.beam_width)}


def write_translator(
    translator: Translator,
    directory: Path,
    beam_width: int = DEFAULT_BEAM_WIDTH,
    languages: tuple[str, str] | None = None,
) -> None:
    """Write the SavedModel, ``model.keras`` and the tokenizers into ``directory``.

    ``languages``, the source's and the target's names, are recorded in the settings.
    """
    directory = Path(directory)
    serving = TranslatorServing(translator, beam_width)
    signatures = {"serving_default": serving.greedy, "beam_search": serving.beam_search}
    write_saved_model(directory, serving, signatures, translator.model)
    write_lines(directory / SOURCE_VOCABULARY_FILE, translator.source_vocabulary)
    write_lines(directory / TARGET_VOCABULARY_FILE, translator.target_vocabulary)
    tokenizers = (translator.source_tokenizer, translator.target_tokenizer)
    if tokenizers[0].kind == "sentencepiece":  # one kind for both (see Translator)
        (directory / SOURCE_SUBWORDS_FILE).write_bytes(tokenizers[0].model)
        (directory / TARGET_SUBWORDS_FILE).write_bytes(tokenizers[1].model)
    settings = {
        "model": translator.model.name,
        "family": translator.family,
        "maxlen": translator.maxlen,
        "beam_width": beam_width,
        "tokenizer": tokenizers[0].kind,
    }
    if languages is not None:
        settings["source_language"], settings["target_language"] = languages
    write_settings(directory / SETTINGS_FILE, settings)
