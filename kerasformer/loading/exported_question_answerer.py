"""Use a question-answerer export through its SavedModel signature, as TF Serving would."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kerasformer.files.export_kind import QUESTION_ANSWERER
from kerasformer.loading.serving_function import load_checked_serving_function
from kerasformer.models.question_pairs import answers_in_batches

# What the writer (kerasformer.export.question_answerer_export) and this reader agree on.
QUESTION_INPUT = "question"
CONTEXT_INPUT = "context"
ANSWER_OUTPUTS = ("answer", "start", "end", "score", "no_answer_score")


class ExportedQuestionAnswerer:
    """A question-answerer export, answered by its own ``serving_default`` signature.

    The SavedModel holds the preprocess model, the encoder and the span search, so this
    needs TensorFlow and TF Text's ops only: no Keras, no TF-Hub, and not the preprocess
    model the answerer was trained with. Its answers are `QuestionAnswerer.answer`'s.
    Exports written before the signature returned ``no_answer_score`` are told apart by
    `load_if_complete`; load those with `load_question_answerer`.

    Args:
        export_dir: A directory ``kerasformer train --task question-answering`` wrote,
            checked whole (every file and saved value) before it is loaded.

    Raises:
        KerasformerError: ``export_dir`` is not a question-answerer export, or one of its
            files is missing or damaged.

    Examples:
        >>> answerer = ExportedQuestionAnswerer("saved_models/squad-bert")
        >>> found = answerer.answer(["Who won?"], ["The Broncos won the game."])[0]
        >>> sorted(found)
        ['answer', 'end', 'no_answer_score', 'score', 'start']
        >>> found["answer"] == "The Broncos won the game."[found["start"] : found["end"]]
        True
    """

    def __init__(self, export_dir: str | Path):
        self.export_dir, self._serve = load_checked_serving_function(export_dir, QUESTION_ANSWERER)

    @classmethod
    def load_if_complete(cls, export_dir: str | Path) -> ExportedQuestionAnswerer | None:
        """The answerer of ``export_dir``, or None for an export whose signature lacks an
        output `answer` gives (one written before SQuAD 2.0's no-answer score)."""
        answerer = cls(export_dir)
        outputs = answerer._serve.structured_outputs
        return answerer if all(name in outputs for name in ANSWER_OUTPUTS) else None

    def answer(
        self, questions: Sequence[str], contexts: Sequence[str], batch_size: int = 32
    ) -> list[dict]:
        """Each question's answer in its context: ``{"answer", "start", "end", "score",
        "no_answer_score"}``, as `QuestionAnswerer.answer` gives it."""
        return answers_in_batches(self._serve_pairs, questions, contexts, batch_size)

    def _serve_pairs(self, questions, contexts) -> dict:
        return self._serve(**{QUESTION_INPUT: questions, CONTEXT_INPUT: contexts})


def serving_answerer(export_dir: str | Path, token_probabilities: bool = False):
    """What answers for ``export_dir``: the export's own signature (TensorFlow alone)
    where it gives all that is asked, else the Keras model (`load_question_answerer`):
    ``token_probabilities`` (each token's start and end probability, for ``answer
    --plot``), or an export written before the signature gave its no-answer score. Both
    give ``answer(questions, contexts, batch_size)``."""
    if not token_probabilities:
        answerer = ExportedQuestionAnswerer.load_if_complete(export_dir)
        if answerer is not None:
            return answerer
    from kerasformer.loading.question_answerer import load_question_answerer

    return load_question_answerer(export_dir)
