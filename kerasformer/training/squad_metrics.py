"""SQuAD v1.1 exact match and F1, as the official evaluation script computes them.

The official ``evaluate-v1.1.py`` compares answers after normalising both sides:
lower case, punctuation removed, the articles "a", "an" and "the" removed, white space
collapsed. Exact match is 1 when the normalised strings are equal; F1 is the harmonic
mean of token precision and recall over the normalised, space-split tokens (a bag of
tokens, so repeated tokens count as often as they appear in both). Each question scores
the best value over its reference answers, and the corpus score is the mean × 100.
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


def squad_scores(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> dict:
    """Exact match and F1 (0-100) of answers against each question's reference answers.

    Args:
        predictions: One predicted answer per question.
        references: The reference answers of each question, in the same order; a
            question scores its best match among them.

    Returns:
        ``{"exact_match", "f1", "questions"}``.

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
        if isinstance(answers, str) or len(answers) == 0:
            raise KerasformerError(
                f"question {number} needs a list of one or more reference answers, got {answers!r}."
            )
    matches = [
        max(exact_match(p, a) for a in answers)
        for p, answers in zip(predictions, references, strict=True)
    ]
    overlaps = [
        max(f1(p, a) for a in answers) for p, answers in zip(predictions, references, strict=True)
    ]
    return {
        "exact_match": 100.0 * sum(matches) / len(matches),
        "f1": 100.0 * sum(overlaps) / len(overlaps),
        "questions": len(predictions),
    }
