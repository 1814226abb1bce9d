"""Read a translator export back: the `Translator` that `write_translator` wrote."""

from __future__ import annotations

from pathlib import Path

from kerasformer.files.export_files import require_intact_export
from kerasformer.files.export_kind import TRANSLATOR
from kerasformer.files.text_files import read_lines, read_settings
from kerasformer.loading.keras_model import load_keras_model
from kerasformer.models.translator import Translator

SETTINGS_FILE = "translator.json"
SOURCE_VOCABULARY_FILE = "source_vocabulary.txt"
TARGET_VOCABULARY_FILE = "target_vocabulary.txt"


def load_translator(directory: str | Path, cached: bool = True) -> Translator:
    """The `Translator` that `write_translator` exported to ``directory``."""
    directory = require_intact_export(directory, TRANSLATOR)
    settings = read_settings(directory, SETTINGS_FILE, "translator", "translation")
    model = load_keras_model(directory)
    return Translator(
        model,
        read_lines(directory / SOURCE_VOCABULARY_FILE),
        read_lines(directory / TARGET_VOCABULARY_FILE),
        maxlen=settings["maxlen"],
        cached=cached,
        family=settings.get("family"),  # exports before it was written: from the model
    )
