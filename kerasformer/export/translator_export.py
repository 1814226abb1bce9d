"""Export a `Translator` as a SavedModel that maps English strings to Spanish strings.

The export directory holds:

    saved_model.pb, variables/, assets/       the SavedModel: decoding loop in the graph
    model.keras                               the Keras model, for kerasformer
    source_vocabulary.txt, target_vocabulary.txt, translator.json
                                              what `load_translator` needs besides it

Signatures: ``serving_default`` (greedy) and ``beam_search`` (beam width fixed at
export), each taking ``inputs``, a batch of strings, and returning ``outputs``. An empty
input gives an empty output; one longer than the model's ``maxlen`` words fails with
an InvalidArgumentError naming the limit. No kerasformer is needed to serve it.
"""

from __future__ import annotations

import json
from pathlib import Path

from kerasformer.backend import tf
from kerasformer.errors import KerasformerError
from kerasformer.export.export_files import require_intact_export
from kerasformer.export.export_kind import TRANSLATOR
from kerasformer.export.saved_model import INPUT_NAME, KERAS_FILE
from kerasformer.models.translator import Translator

SETTINGS_FILE = "translator.json"
SOURCE_VOCABULARY_FILE = "source_vocabulary.txt"
TARGET_VOCABULARY_FILE = "target_vocabulary.txt"
DEFAULT_BEAM_WIDTH = 4
OUTPUT_NAME = "outputs"


class TranslatorServing(tf.Module):
    """The model, its vocabularies and the two decoding signatures."""

    def __init__(self, translator: Translator, beam_width: int):
        super().__init__(name="translator_serving")
        self._translator = translator
        # Tracked here so their variables and lookup tables are saved.
        self.model = translator.model
        self.source_vectorizer = translator.source_vectorizer
        self.target_vectorizer = translator.target_vectorizer
        self.beam_width = beam_width

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def greedy(self, inputs):
        return {OUTPUT_NAME: self._translator.translate_tensor(inputs, beam_width=1)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=INPUT_NAME)])
    def beam_search(self, inputs):
        return {OUTPUT_NAME: self._translator.translate_tensor(inputs, self.beam_width)}


def write_translator(
    translator: Translator, directory: Path, beam_width: int = DEFAULT_BEAM_WIDTH
) -> None:
    """Write the SavedModel, ``model.keras`` and the vocabularies into ``directory``."""
    directory = Path(directory)
    serving = TranslatorServing(translator, beam_width)
    tf.saved_model.save(
        serving,
        str(directory),
        signatures={"serving_default": serving.greedy, "beam_search": serving.beam_search},
    )
    translator.model.save(directory / KERAS_FILE)
    write_lines(directory / SOURCE_VOCABULARY_FILE, translator.source_vocabulary)
    write_lines(directory / TARGET_VOCABULARY_FILE, translator.target_vocabulary)
    settings = {
        "model": translator.model.name,
        "maxlen": translator.maxlen,
        "beam_width": beam_width,
    }
    write_settings(directory / SETTINGS_FILE, settings)


def load_translator(directory: str | Path, cached: bool = True) -> Translator:
    """The `Translator` that `write_translator` exported to ``directory``."""
    from kerasformer.export.exported_classifier import load_keras_model

    directory = require_intact_export(directory, TRANSLATOR)
    settings = read_settings(directory, SETTINGS_FILE, "translator", "translation")
    return Translator(
        load_keras_model(directory),
        read_lines(directory / SOURCE_VOCABULARY_FILE),
        read_lines(directory / TARGET_VOCABULARY_FILE),
        maxlen=settings["maxlen"],
        cached=cached,
    )


def write_lines(path: Path, lines) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def write_settings(path: Path, settings: dict) -> None:
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def read_settings(directory: Path, file_name: str, kind: str, task: str) -> dict:
    """An export's settings file, or a one-line error saying which export was expected."""
    if not (directory / file_name).is_file():
        raise KerasformerError(
            f"{directory} is not an exported {kind} (no {file_name}); pass the "
            f"directory that `kerasformer train --task {task}` wrote."
        )
    return json.loads((directory / file_name).read_text(encoding="utf-8"))
