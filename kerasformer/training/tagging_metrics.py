"""Entity-level precision, recall and F1 of tag sequences, by ``seqeval``.

Strict IOB2 (an entity counts only with the right type and both ends, and a sequence
that breaks IOB2 is read as IOB2 reads it) is the headline; conlleval's default reading,
where an ``I-`` tag after ``O`` still starts an entity, is reported beside it.
"""

from __future__ import annotations

import warnings

from kerasformer.errors import KerasformerError
from kerasformer.models.iob_tags import entity_spans

NONE = "(none)"


def entity_scores(true_tags: list[list[str]], predicted_tags: list[list[str]]) -> dict:
    """Overall and per-type entity precision, recall and F1 (in [0, 1]), strict IOB2,
    with conlleval's default F1 as ``f1_conlleval``.

    Example:

    >>> entity_scores([["B-PER", "I-PER", "O"]], [["B-PER", "I-PER", "O"]])["f1"]
    1.0
    """
    # Imported here: seqeval imports scikit-learn, which costs every command a second.
    from seqeval.metrics import classification_report, f1_score
    from seqeval.scheme import IOB2

    if len(true_tags) != len(predicted_tags) or any(
        len(t) != len(p) for t, p in zip(true_tags, predicted_tags, strict=False)
    ):
        raise KerasformerError("give one predicted tag for each true tag, sentence by sentence.")
    true_tags, predicted_tags = [list(t) for t in true_tags], [list(p) for p in predicted_tags]
    with warnings.catch_warnings():  # numpy's mean of no entities, for a type with none
        warnings.simplefilter("ignore", RuntimeWarning)
        report = classification_report(
            true_tags, predicted_tags, mode="strict", scheme=IOB2, output_dict=True,
            zero_division=0,
        )  # fmt: skip
    overall = report["micro avg"]
    per_type = {
        kind: {
            "precision": float(row["precision"]),
            "recall": float(row["recall"]),
            "f1": float(row["f1-score"]),
            "entities": int(row["support"]),
        }  # fmt: skip
        for kind, row in report.items()
        if not kind.endswith(" avg")
    }
    return {
        "precision": float(overall["precision"]),
        "recall": float(overall["recall"]),
        "f1": float(overall["f1-score"]),
        "f1_conlleval": float(f1_score(true_tags, predicted_tags, zero_division=0)),
        "entities": int(overall["support"]),
        "per_type": per_type,
    }


def entity_type_confusion(
    true_tags: list[list[str]], predicted_tags: list[list[str]], types: list[str]
) -> tuple[list[list[int]], list[str]]:
    """Entities counted by true type (rows) and predicted type (columns), matched by
    exact span; ``(none)`` is the row of spurious entities and the column of missed ones.

    Returns the matrix and its row and column names (``types`` then ``(none)``).
    """
    names = [*types, NONE]
    index = {name: i for i, name in enumerate(names)}
    matrix = [[0] * len(names) for _ in names]
    for true, predicted in zip(true_tags, predicted_tags, strict=True):
        truth = {(first, last): kind for kind, first, last in entity_spans(list(true))}
        guess = {(first, last): kind for kind, first, last in entity_spans(list(predicted))}
        for span, kind in truth.items():
            matrix[index[kind]][index[guess.get(span, NONE)]] += 1
        for span, kind in guess.items():
            if span not in truth:
                matrix[index[NONE]][index[kind]] += 1
    return matrix, names
