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


def entity_offsets(words, tags) -> set[tuple[int, int, str]]:
    """``(start, end, type)`` of each entity of one tagged sentence, in its words joined by
    spaces: where a tagger's export must find it in that raw text.

    Example:

    >>> entity_offsets(["U.S.", "troops"], ["B-LOC", "O"])
    {(0, 4, 'LOC')}
    """
    starts, at = [], 0
    for word in words:
        starts.append(at)
        at += len(word) + 1
    return {
        (starts[first], starts[last - 1] + len(words[last - 1]), kind)
        for kind, first, last in entity_spans(list(tags))
    }


def offset_scores(gold: list[set], found: list[set]) -> dict:
    """Micro precision, recall and F1 of ``found`` entities against ``gold``, sentence by
    sentence, overall and per type, as `entity_scores` gives them: an entity counts only
    where its type, start and end all match (strict, as seqeval's IOB2 mode)."""
    if len(gold) != len(found):
        raise KerasformerError("give the entities found in each sentence, one set a sentence.")
    types = sorted({kind for entities in (*gold, *found) for _, _, kind in entities})
    per_type = {kind: counted(gold, found, kind) for kind in types}
    return {**counted(gold, found, None), "per_type": per_type}


def counted(gold: list[set], found: list[set], kind: str | None) -> dict:
    def of_kind(entities: set) -> set:
        return entities if kind is None else {e for e in entities if e[2] == kind}

    right = sum(len(of_kind(g) & of_kind(f)) for g, f in zip(gold, found, strict=True))
    guessed = sum(len(of_kind(f)) for f in found)
    true = sum(len(of_kind(g)) for g in gold)
    precision = right / guessed if guessed else 0.0
    recall = right / true if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "entities": true}
