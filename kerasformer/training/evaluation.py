"""Classification metrics: accuracy, per-class precision/recall/F1, confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support


def classification_metrics(
    labels: np.ndarray, probabilities: np.ndarray, class_names: Sequence[str]
) -> dict:
    """Metrics of predicted probabilities against true integer labels, as plain JSON types."""
    predictions = np.argmax(probabilities, axis=-1)
    classes = list(range(len(class_names)))
    precision, recall, f1, support = precision_recall_fscore_support(
        labels, predictions, labels=classes, zero_division=0
    )
    return {
        "accuracy": float(accuracy_score(labels, predictions)),
        "per_class": {
            name: {
                "precision": float(precision[i]),
                "recall": float(recall[i]),
                "f1": float(f1[i]),
                "support": int(support[i]),
            }
            for i, name in enumerate(class_names)
        },
        "confusion_matrix": confusion_matrix(labels, predictions, labels=classes).tolist(),
    }
