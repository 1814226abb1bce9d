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
