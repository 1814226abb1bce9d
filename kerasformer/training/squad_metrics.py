"""SQuAD v1.1 exact match and F1, as the official evaluation script computes them.

The official ``evaluate-v1.1.py`` compares answers after normalising both sides:
lower case, punctuation removed, the articles "a", "an" and "the" removed, white space
collapsed. Exact match is 1 when the normalised strings are equal; F1 is the harmonic
mean of token precision and recall over the normalised, space-split tokens (a bag of
tokens, so repeated tokens count as often as they appear in both). Each question scores
the best value over its reference answers, and the corpus score is the mean × 100.

SQuAD 2.0's ``evaluate-v2.0.py`` adds unanswerable questions (no reference answers):
one scores 1 for both exact match and F1 when the prediction is empty (after
normalising) and 0 otherwise, and the scores are also given apart for the questions
with an answer (``HasAns``) and without (``NoAns``).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from kerasformer.errors import KerasformerError

PUNCTUATION = frozenset(string.punctuation)
ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, collapse white space (in that order)."""
    text = "".join(character for character in text.lower() if character not in PUNCTUATION)
    return " ".join(ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, reference: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(reference))


def f1(prediction: str, reference: str) -> float:
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(reference).split()
    shared = sum((Counter(predicted) & Counter(expected)).values())
    if shared == 0:
        return 0.0
    precision = shared / len(predicted)
    recall = shared / len(expected)
    return 2 * precision * recall / (precision + recall)


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
        unanswerable: SQuAD 2.0: a question with no reference answers is unanswerable,
            answered right by an empty prediction (otherwise it is refused).

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
    pairs = list(zip(predictions, references, strict=True))
    matches = [question_scores(p, answers)[0] for p, answers in pairs]
    overlaps = [question_scores(p, answers)[1] for p, answers in pairs]
    scores = mean_scores(matches, overlaps)
    if unanswerable:
        for part, wanted in (("has_answer", True), ("no_answer", False)):
            chosen = [i for i, (_, answers) in enumerate(pairs) if bool(answers) == wanted]
            if chosen:
                part_scores = mean_scores(
                    [matches[i] for i in chosen], [overlaps[i] for i in chosen]
                )
                scores.update({f"{part}_{key}": value for key, value in part_scores.items()})
    return scores


def question_scores(prediction: str, answers: Sequence[str]) -> tuple[float, float]:
    """One question's best exact match and F1; an unanswerable one wants no answer."""
    if not answers:
        right = float(normalize_answer(prediction) == "")
        return right, right
    return (
        max(exact_match(prediction, answer) for answer in answers),
        max(f1(prediction, answer) for answer in answers),
    )


def mean_scores(matches: list[float], overlaps: list[float]) -> dict:
    return {
        "exact_match": 100.0 * sum(matches) / len(matches),
        "f1": 100.0 * sum(overlaps) / len(overlaps),
        "questions": len(matches),
    }
