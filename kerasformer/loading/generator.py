"""Read a language-model export back: the `TextGenerator` that `write_generator` wrote."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kerasformer.files.export_files import require_intact_export
from kerasformer.files.export_kind import LANGUAGE_MODEL
from kerasformer.files.text_files import read_lines, read_settings
from kerasformer.loading.keras_model import load_keras_model

if TYPE_CHECKING:
    from kerasformer.models.language_model import TextGenerator

SETTINGS_FILE = "generator.json"
VOCABULARY_FILE = "vocabulary.txt"


def load_generator(directory: str | Path) -> TextGenerator:
    """The `TextGenerator` that `write_generator` exported to ``directory``.

    It rebuilds the Keras model from ``model.keras``, so unlike `ExportedGenerator` it
    generates any number of tokens the model's window allows, and follows
    ``tf.random.set_seed`` when it samples.

    Args:
        directory: A directory ``kerasformer train --task language-model`` wrote, checked
            whole before TensorFlow is imported.

    Returns:
        The language model with its vocabulary and end token.

    Raises:
        KerasformerError: ``directory`` is not a language-model export, or one of its
            files is missing or damaged.

    Examples:
        >>> generator = load_generator("saved_models/wikitext2-transformer")
        >>> type(generator).__name__, generator.end_token
        ('TextGenerator', '<eos>')
        >>> generator.generate(["the cat"], max_tokens=4)
        ['...']
    """
    directory = require_intact_export(directory, LANGUAGE_MODEL)
    settings = read_settings(directory, SETTINGS_FILE, "language model", "language-model")
    # The export is checked before TensorFlow is imported.
    from kerasformer.models.language_model import TextGenerator

    model = load_keras_model(directory)
    return TextGenerator(model, read_lines(directory / VOCABULARY_FILE), settings["end_token"])
