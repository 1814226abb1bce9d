"""SQuAD exact match and F1, computed by the official evaluation scripts.

The Model Garden ships both (``official.nlp.tools.squad_evaluate_v1_1`` and
``squad_evaluate_v2_0``); `squad_scores` hands them the questions as SQuAD's own JSON and
reads their results back. Both compare answers after normalising them (lower case,
punctuation removed, the articles "a", "an" and "the" removed, white space collapsed):
exact match is 1 when the normalised strings are equal, and F1 is the harmonic mean of
token precision and recall over the normalised, space-split tokens. Each question scores
its best value over its reference answers; the corpus score is the mean × 100.

They differ where an answer normalises to nothing. v1.1 gives an empty prediction against
the reference "the" exact match 1 and F1 0. v2.0 drops references that normalise to
nothing: a question left with none wants an empty prediction, which scores 1 on both.
v2.0 also scores unanswerable questions (no reference answers) and reports the
questions with an answer (``HasAns``) and without (``NoAns``) apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from kerasformer.errors import KerasformerError


def squad_scores(
    predictions: Sequence[str],
    references: Sequence[Sequence[str]],
    unanswerable: bool = False,
) -> dict:
    """Exact match and F1 (0-100) of answers against each question's reference answers.

    Args:
        predictions: One predicted answer per question.
        references: The reference answers of each question, in the same order; a
            question scores its best match among them.
        unanswerable: SQuAD 2.0, scored by ``evaluate-v2.0.py``: a question with no
            reference answers is unanswerable, answered right by an empty prediction.
            Otherwise SQuAD v1.1, scored by ``evaluate-v1.1.py``, and such a question is
            refused.

    Returns:
        ``{"exact_match", "f1", "questions"}``; with ``unanswerable``, also
        ``has_answer_*`` and ``no_answer_*`` (exact match, F1 and questions of each part;
        a part without questions is left out), as ``evaluate-v2.0.py`` reports them.

    Example:

    >>> squad_scores(["the Broncos"], [["Denver Broncos", "Broncos"]])
    {'exact_match': 100.0, 'f1': 100.0, 'questions': 1}
    """
    if len(predictions) != len(references):
        raise KerasformerError(
            f"got {len(predictions)} predictions for {len(references)} questions; give one "
            "prediction per question."
        )
    if not predictions:
        raise KerasformerError("no questions to score; give at least one prediction.")
    for number, answers in enumerate(references):
        if isinstance(answers, str) or (len(answers) == 0 and not unanswerable):
            raise KerasformerError(
                f"question {number} needs a list of one or more reference answers, got {answers!r}."
            )
    ids = [str(number) for number in range(len(predictions))]
    questions = [
        {"id": qid, "answers": [{"text": answer} for answer in answers]}
        for qid, answers in zip(ids, references, strict=True)
    ]
    dataset = [{"paragraphs": [{"qas": questions}]}]
    answered = dict(zip(ids, predictions, strict=True))
    if unanswerable:
        return v2_scores(dataset, answered)
    from official.nlp.tools import squad_evaluate_v1_1

    scores = squad_evaluate_v1_1.evaluate(dataset, answered)
    return {
        "exact_match": 100.0 * scores["exact_match"],
        "f1": 100.0 * scores["final_f1"],
        "questions": len(ids),
    }


def v2_scores(dataset: list, answered: dict[str, str]) -> dict:
    """``evaluate-v2.0.py``'s scores, overall and apart for the questions with and
    without an answer, under kerasformer's names (a part without questions left out)."""
    from official.nlp.tools import squad_evaluate_v2_0

    scores = squad_evaluate_v2_0.evaluate(dataset, answered)
    named = {}
    for ours, theirs in (("", ""), ("has_answer_", "HasAns_"), ("no_answer_", "NoAns_")):
        if f"{theirs}total" in scores:
            named[f"{ours}exact_match"] = float(scores[f"{theirs}exact"])
            named[f"{ours}f1"] = float(scores[f"{theirs}f1"])
            named[f"{ours}questions"] = int(scores[f"{theirs}total"])
    return named
