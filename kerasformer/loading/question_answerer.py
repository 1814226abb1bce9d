"""Read a question-answerer export back: the `QuestionAnswerer` that was written."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kerasformer.files.export_files import require_handle_present, require_intact_export
from kerasformer.files.export_kind import QUESTION_ANSWERER
from kerasformer.files.text_files import read_settings
from kerasformer.loading.keras_model import load_keras_model

if TYPE_CHECKING:
    from kerasformer.models.question_answerer import QuestionAnswerer

SETTINGS_FILE = "question_answerer.json"


def load_question_answerer(directory: str | Path) -> QuestionAnswerer:
    """The `QuestionAnswerer` that `write_question_answerer` exported to ``directory``.

    Its ``model.keras`` and settings name the encoder and preprocess handles it was
    trained with, which must still exist.

    Args:
        directory: A directory ``kerasformer train --task question-answering`` wrote,
            checked whole before TensorFlow is imported.

    Returns:
        The question answerer, with its Keras model, preprocess model and window
        settings.

    Raises:
        KerasformerError: ``directory`` is not a question-answerer export, one of its
            files is missing or damaged, or its preprocess or encoder model is no longer
            where it was.

    Examples:
        >>> answerer = load_question_answerer("saved_models/squad-bert")
        >>> found = answerer.answer(["Who won?"], ["The Broncos won the game."])[0]
        >>> sorted(found)
        ['answer', 'end', 'no_answer_score', 'score', 'start']
        >>> found["answer"] == "The Broncos won the game."[found["start"] : found["end"]]
        True
    """
    directory = require_intact_export(directory, QUESTION_ANSWERER)
    settings = read_settings(directory, SETTINGS_FILE, "question answerer", "question-answering")
    preprocess = settings.pop("preprocess")
    require_handle_present(directory, "preprocess", preprocess)
    # The export is checked before TensorFlow is imported.
    from kerasformer.models.question_answerer import QuestionAnswerer, load_preprocess

    model = load_keras_model(directory)
    return QuestionAnswerer(
        model,
        load_preprocess(preprocess),
        preprocess_handle=preprocess,
        **settings,
    )
