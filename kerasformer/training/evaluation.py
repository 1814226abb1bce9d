"""Classification metrics: accuracy, per-class precision/recall/F1, confusion matrix; for
multi-label classifiers, micro and macro F1 at a threshold chosen on validation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# scikit-learn is imported by the functions that score: it costs every command a second
# to start, and most commands (predict, translate, answer) score nothing.


def classification_metrics(
    labels: np.ndarray, probabilities: np.ndarray, class_names: Sequence[str]
) -> dict:
    """Metrics of predicted probabilities against true integer labels, as plain JSON types.

    Each text's predicted class is its most probable one. Precision, recall and F1 of a
    class never predicted (or never present) are 0, not an error.

    Args:
        labels: The true class ids, shape ``(texts,)``, 0 to classes - 1.
        probabilities: The predicted probabilities, shape ``(texts, classes)``.
        class_names: The classes' names, label ``i`` naming ``class_names[i]``.

    Returns:
        ``accuracy`` (a float), ``per_class`` (each class name's ``precision``,
        ``recall``, ``f1`` and ``support``) and ``confusion_matrix`` (rows: true
        classes, columns: predicted), as ``metrics.json`` holds them.

    Examples:
        >>> import numpy as np
        >>> probabilities = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
        >>> metrics = classification_metrics(np.array([0, 1, 1]), probabilities, ["neg", "pos"])
        >>> metrics["accuracy"], metrics["confusion_matrix"]
        (0.666..., [[1, 0], [1, 1]])
        >>> metrics["per_class"]["pos"]
        {'precision': 1.0, 'recall': 0.5, 'f1': 0.666..., 'support': 2}
    """
    from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

    predictions = np.argmax(probabilities, axis=-1)
    classes = list(range(len(class_names)))
    precision, recall, f1, support = precision_recall_fscore_support(
        labels, predictions, labels=classes, zero_division=0
    )
    return {
        "accuracy": float(accuracy_score(labels, predictions)),
        "per_class": per_class_scores(class_names, precision, recall, f1, support),
        "confusion_matrix": confusion_matrix(labels, predictions, labels=classes).tolist(),
    }


# Thresholds tried on validation for a multi-label classifier, 0.05 to 0.95.
THRESHOLDS = tuple(round(0.05 * step, 2) for step in range(1, 20))


def multi_label_metrics(
    labels: np.ndarray, probabilities: np.ndarray, class_names: Sequence[str], threshold: float
) -> dict:
    """Metrics of a multi-label classifier whose classes are those over ``threshold``.

    ``accuracy`` is the share of texts whose predicted set of classes is exactly right
    (scikit-learn's subset accuracy); ``micro_f1`` pools every (text, class) decision,
    ``macro_f1`` averages the classes' F1.
    """
    from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

    predicted = (np.asarray(probabilities) > threshold).astype(int)
    truth = np.asarray(labels).astype(int)
    precision, recall, f1, support = precision_recall_fscore_support(
        truth, predicted, zero_division=0
    )
    return {
        "accuracy": float(accuracy_score(truth, predicted)),
        "micro_f1": float(f1_score(truth, predicted, average="micro", zero_division=0)),
        "macro_f1": float(f1_score(truth, predicted, average="macro", zero_division=0)),
        "threshold": float(threshold),
        "per_class": per_class_scores(class_names, precision, recall, f1, support),
    }


def best_threshold(labels: np.ndarray, probabilities: np.ndarray) -> float:
    """The threshold of `THRESHOLDS` with the best micro F1; of equals, the nearest 0.5
    (a plateau of perfect scores says nothing for 0.05 over 0.5)."""
    from sklearn.metrics import f1_score

    truth = np.asarray(labels).astype(int)
    scores = [
        f1_score(truth, (np.asarray(probabilities) > t).astype(int), average="micro",
                 zero_division=0)
        for t in THRESHOLDS
    ]  # fmt: skip
    best = max(scores)
    return min((t for t, score in zip(THRESHOLDS, scores, strict=True) if score == best),
               key=lambda t: (abs(t - 0.5), t))  # fmt: skip


def per_class_scores(class_names: Sequence[str], precision, recall, f1, support) -> dict:
    """scikit-learn's per-class arrays as one plain-JSON dict per class name."""
    return {
        name: {
            "precision": float(precision[i]),
            "recall": float(recall[i]),
            "f1": float(f1[i]),
            "support": int(support[i]),
        }
        for i, name in enumerate(class_names)
    }
