import numpy as np

from kerasformer.training import classification_metrics


def test_metrics_match_a_hand_count():
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    predicted = np.array([0, 1, 0, 1, 1, 2, 0, 2, 1])
    probabilities = np.eye(3)[predicted] * 0.8 + 0.1
    metrics = classification_metrics(labels, probabilities, ("a", "b", "c"))

    confusion = np.zeros((3, 3), dtype=int)
    for true, guess in zip(labels, predicted, strict=True):
        confusion[true, guess] += 1
    assert metrics["confusion_matrix"] == confusion.tolist()
    assert metrics["accuracy"] == 6 / 9
    # class a: predicted a 3 times, 2 right; 3 true a, 2 found.
    assert metrics["per_class"]["a"] == {
        "precision": 2 / 3,
        "recall": 2 / 3,
        "f1": 2 / 3,
        "support": 3,
    }
    # class b: predicted 4 times, 2 right; 2 true b, both found.
    b = metrics["per_class"]["b"]
    assert (b["precision"], b["recall"], b["support"]) == (0.5, 1.0, 2)
    assert np.isclose(b["f1"], 2 * 0.5 * 1.0 / 1.5)
    # class c: predicted twice, both right; 4 true c, 2 found.
    assert (
        metrics["per_class"]["c"]["precision"] == 1.0 and metrics["per_class"]["c"]["recall"] == 0.5
    )


def test_a_class_never_predicted_has_zero_precision_not_nan():
    metrics = classification_metrics(
        np.array([0, 1]), np.array([[0.9, 0.1], [0.8, 0.2]]), ("x", "y")
    )
    assert metrics["per_class"]["y"]["precision"] == 0.0


def test_multi_label_metrics_match_a_hand_count():
    import pytest

    from kerasformer.training.evaluation import multi_label_metrics

    labels = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    probabilities = np.array([[0.9, 0.2, 0.7], [0.6, 0.8, 0.1], [0.7, 0.3, 0.2], [0.1, 0.1, 0.9]])
    metrics = multi_label_metrics(labels, probabilities, ("a", "b", "c"), threshold=0.5)
    # Predicted sets: {a, c} right, {a, b} (one wrong), {a} (b missed), {c} right.
    # Per class: a tp 2 fp 1 fn 0; b tp 1 fp 0 fn 1; c tp 2 fp 0 fn 0.
    assert metrics["accuracy"] == 0.5
    tp, fp, fn = 5, 1, 1
    assert metrics["micro_f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    per_class_f1 = [2 * 2 / (2 * 2 + 1), 2 * 1 / (2 * 1 + 1), 1.0]
    assert metrics["macro_f1"] == pytest.approx(sum(per_class_f1) / 3)
    assert metrics["per_class"]["b"] == {"precision": 1.0, "recall": 0.5,
                                         "f1": pytest.approx(2 / 3), "support": 2}  # fmt: skip
    assert metrics["threshold"] == 0.5


def test_the_threshold_is_the_best_on_validation_and_nearest_half_of_equals():
    from kerasformer.training.evaluation import best_threshold

    labels = np.array([[1, 0], [0, 1], [1, 1]])
    # Only thresholds in [0.2, 0.4) split these right; of 0.2 to 0.35, 0.35 is nearest 0.5.
    probabilities = np.array([[0.45, 0.2], [0.1, 0.42], [0.41, 0.4]])
    assert best_threshold(labels, probabilities) == 0.35
    # Any threshold below 0.9 is perfect here: 0.5 is nearest the middle.
    assert best_threshold(np.eye(2), np.array([[0.95, 0.01], [0.02, 0.99]])) == 0.5
