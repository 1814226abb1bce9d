"""Read a translator export back: the `Translator` that `write_translator` wrote."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kerasformer.errors import KerasformerError
from kerasformer.files.export_files import require_intact_export
from kerasformer.files.export_kind import TRANSLATOR
from kerasformer.files.text_files import read_lines, read_settings
from kerasformer.loading.keras_model import load_keras_model

if TYPE_CHECKING:
    from kerasformer.models.translator import Translator

SETTINGS_FILE = "translator.json"
SOURCE_VOCABULARY_FILE = "source_vocabulary.txt"
TARGET_VOCABULARY_FILE = "target_vocabulary.txt"
SOURCE_SUBWORDS_FILE = "source_subwords.model"
TARGET_SUBWORDS_FILE = "target_subwords.model"


def load_translator(directory: str | Path, cached: bool = True) -> Translator:
    """The `Translator` that `write_translator` exported to ``directory``."""
    directory = require_intact_export(directory, TRANSLATOR)
    settings = read_settings(directory, SETTINGS_FILE, "translator", "translation")
    # The export is checked before TensorFlow is imported.
    from kerasformer.models.subword_tokenizer import SubwordTokenizer
    from kerasformer.models.translator import Translator

    model = load_keras_model(directory)
    if settings.get("tokenizer", "word") == "sentencepiece":
        source, target = (
            SubwordTokenizer(read_subwords(directory / name), name=name.split(".")[0])
            for name in (SOURCE_SUBWORDS_FILE, TARGET_SUBWORDS_FILE)
        )
    else:  # word vocabularies (every export before subwords)
        source = read_lines(directory / SOURCE_VOCABULARY_FILE)
        target = read_lines(directory / TARGET_VOCABULARY_FILE)
    return Translator(
        model,
        source,
        target,
        maxlen=settings["maxlen"],
        cached=cached,
        family=settings.get("family"),  # exports before it was written: from the model
    )


def read_subwords(path: Path) -> bytes:
    if not path.is_file():
        raise KerasformerError(
            f"{path.parent} reads subwords but has no {path.name}; export the translator "
            "again with kerasformer train."
        )
    return path.read_bytes()
