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
    """The `Translator` that `write_translator` exported to ``directory``.

    It rebuilds the Keras model from ``model.keras``, so unlike `ExportedTranslator` it
    decodes with any beam width and reads subword exports, and it gives attention.

    Args:
        directory: A directory ``kerasformer train --task translation`` wrote, checked
            whole before TensorFlow is imported.
        cached: Whether decoding keeps the decoder's keys and values between steps
            (faster, same translations); False recomputes every step from the start.

    Returns:
        The translator, with its model, tokenizers and ``maxlen``.

    Raises:
        KerasformerError: ``directory`` is not a translator export, or one of its files
            is missing or damaged.

    Examples:
        >>> translator = load_translator("saved_models/spa_eng-transformer")
        >>> translator.family, translator.source_lengths(["I see the sea."])
        ('transformer', [5])
        >>> translator.translate(["I see the sea."], beam_width=2)
        ['...']
    """
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
