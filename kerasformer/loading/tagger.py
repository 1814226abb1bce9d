"""Read a tagger export back: the `SequenceTagger` that `write_tagger` wrote."""

from __future__ import annotations

from pathlib import Path

from kerasformer.files.export_files import require_intact_export
from kerasformer.files.export_kind import TAGGER
from kerasformer.files.text_files import read_settings
from kerasformer.loading.keras_model import load_keras_model
from kerasformer.models.sequence_tagger import SequenceTagger

SETTINGS_FILE = "tagger.json"


def load_tagger(directory: str | Path) -> SequenceTagger:
    """The `SequenceTagger` that `write_tagger` exported to ``directory``."""
    directory = require_intact_export(directory, TAGGER)
    settings = read_settings(directory, SETTINGS_FILE, "tagger", "ner")
    return SequenceTagger(
        load_keras_model(directory),
        settings["words"],
        settings["characters"],
        settings["tag_names"],
        settings["decoding"],
    )
