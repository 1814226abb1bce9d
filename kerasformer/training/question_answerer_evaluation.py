"""A question answerer measured as users meet it: SQuAD's exact match and F1 of the
answers its export's ``serving_default`` gives, and SQuAD 2.0's scores of the questions
with and without an answer where some have none.

The signature applies the export's ``null_threshold``, so a question it judges
unanswerable comes back as ``""``, as a user receives it, and is scored so.
"""

from __future__ import annotations

import time
from pathlib import Path

from kerasformer.datasets.squad import SquadExamples
from kerasformer.training.squad_metrics import squad_scores


def question_answerer_metrics(
    export_dir: str | Path, part: SquadExamples, batch_size: int = 32
) -> dict:
    """`evaluate_answers` of the answerer at ``export_dir`` on ``part``, scored as SQuAD
    2.0 (``has_answer_*``, ``no_answer_*``) where any question of ``part`` has no answer.

    Example:

    >>> part = read_squad_json("faq.json")
    >>> question_answerer_metrics("saved_models/squad-bert", part)["f1"]
    81.2...
    """
    from kerasformer.loading.exported_question_answerer import serving_answerer

    unanswerable = any(not answers for answers in part.answers)
    return evaluate_answers(serving_answerer(export_dir), part, batch_size, unanswerable)


def evaluate_answers(answerer, part: SquadExamples, batch_size: int, unanswerable=False) -> dict:
    """SQuAD exact match and F1 of ``answerer``'s answers (anything with
    ``answer(questions, contexts, batch_size)``), and its speed.

    With ``unanswerable`` (SQuAD 2.0 data), also the scores of the questions with and
    without an answer (``has_answer_*``, ``no_answer_*``).
    """
    started = time.perf_counter()
    answers = answerer.answer(list(part.questions), list(part.contexts), batch_size)
    seconds = time.perf_counter() - started
    scores = squad_scores([a["answer"] for a in answers], part.answers, unanswerable)
    return {**scores, "examples_per_second": len(part) / seconds}
