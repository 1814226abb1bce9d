import numpy as np
import pytest

from kerasformer.datasets import LabeledTexts, TextClassificationData
from kerasformer.datasets.text_classification_data import (
    require_trainable,
    stratified_split,
    with_validation_split,
)
from kerasformer.errors import KerasformerError


def test_split_keeps_class_proportions_and_is_reproducible():
    labels = np.repeat([0, 1, 2], [60, 30, 10])
    data = LabeledTexts(np.array([f"text {i}" for i in range(100)], dtype=object), labels)
    keep, held = stratified_split(data, 0.2, seed=3)
    assert np.bincount(held.labels).tolist() == [12, 6, 2]
    assert len(keep) == 80 and not set(keep.texts) & set(held.texts)
    again = stratified_split(data, 0.2, seed=3)[1]
    np.testing.assert_array_equal(held.texts, again.texts)
    assert not np.array_equal(held.texts, stratified_split(data, 0.2, seed=4)[1].texts)


def test_identical_texts_stay_on_the_same_side():
    texts = [f"text {i}" for i in range(40)] + [f"text {i}" for i in range(10)]
    data = LabeledTexts(
        np.array(texts, dtype=object),
        np.array([i % 2 for i in range(40)] + [i % 2 for i in range(10)]),
    )
    keep, held = stratified_split(data, 0.25, seed=0)
    assert len(keep) + len(held) == 50
    assert not set(keep.texts) & set(held.texts)


def test_too_few_examples_of_a_class_is_a_clear_error():
    data = LabeledTexts(np.array(["a", "b", "c", "d"], dtype=object), np.array([0, 0, 0, 1]))
    with pytest.raises(KerasformerError, match="class label 1 has only one example"):
        stratified_split(data, 0.5, seed=0)
    with pytest.raises(KerasformerError, match="class 'news' has only one example"):
        stratified_split(data, 0.5, seed=0, class_names=["sport", "news"])
    # Two of each, but a held-out part of one text cannot hold both classes.
    data = LabeledTexts(np.array(["a", "b", "c", "d"], dtype=object), np.array([0, 0, 1, 1]))
    with pytest.raises(KerasformerError, match="give more examples of every class"):
        stratified_split(data, 0.25, seed=0)


def test_sample_draws_distinct_aligned_examples_from_every_part_of_a_sorted_split():
    # Sorted by class, as BBC News splits are: a head would hold one class only.
    labels = np.repeat([0, 1, 2, 3], 50)
    data = LabeledTexts(np.array([f"text {i}" for i in range(200)], dtype=object), labels)
    sample = data.sample(40, seed=1)
    indices = [int(text.split()[1]) for text in sample.texts]
    assert len(set(indices)) == 40
    np.testing.assert_array_equal(sample.labels, labels[indices])
    assert set(sample.labels) == {0, 1, 2, 3} and set(data.head(40).labels) == {0}
    np.testing.assert_array_equal(data.sample(40, seed=1).texts, sample.texts)
    assert sorted(data.sample(500).texts) == sorted(data.texts)
    with pytest.raises(KerasformerError, match="whole number >= 1"):
        data.sample(0)


def labeled(labels, prefix="text") -> LabeledTexts:
    return LabeledTexts(
        np.array([f"{prefix} {i}" for i in range(len(labels))], dtype=object), np.array(labels)
    )


def test_one_training_class_is_refused_before_splitting():
    names = ("World", "Sports", "Business", "Sci/Tech")
    with pytest.raises(
        KerasformerError,
        match="news training data has 30 examples, all of class 'Business'; "
        "a classifier needs examples of at least two classes",
    ):
        with_validation_split("news", names, labeled([2] * 30), labeled([0, 1, 2, 3]), 0.2, 0)


def user_data(train, validation, test, class_names=("a", "b", "c")) -> TextClassificationData:
    splits = {"train": train, "validation": validation, "test": test}
    return TextClassificationData("mine", class_names, splits)


def test_user_data_with_a_class_missing_from_validation_is_trainable():
    data = user_data(labeled([0, 1, 2] * 4), labeled([0, 1]), labeled([2]))
    assert require_trainable(data) is None


@pytest.mark.parametrize(
    "data, message",
    [
        (
            user_data(labeled([1] * 6), labeled([0, 1]), labeled([0, 2])),
            "mine train split has 6 examples, all of class 'b'; a classifier needs examples "
            "of at least two classes",
        ),
        (
            user_data(labeled([0, 1]), labeled([]), labeled([0, 2])),
            "mine validation split is empty; give it examples",
        ),
        (
            user_data(labeled([0, 1]), labeled([0, 1]), labeled([0, 3, 4])),
            r"mine test split has label 3 \(2 outside 0 to 2\)",
        ),
        (
            user_data(labeled([0, 1]), labeled([0, 1]), labeled([-1, 0])),
            r"mine test split has label -1 \(1 outside 0 to 2\)",
        ),
        (
            user_data(labeled([0.0, 1.0]), labeled([0, 1]), labeled([0, 1])),
            "mine train labels are float64, not integers",
        ),
        (
            user_data(labeled([0, 1]), labeled([0, 1]), labeled([0, 1]), class_names=("a",)),
            r"mine names 1 class\(es\) \('a',\); a classifier needs at least two",
        ),
        (
            TextClassificationData("mine", ("a", "b"), {"train": labeled([0, 1])}),
            "mine has no validation, test split",
        ),
    ],
    ids=["one class", "empty split", "label too high", "negative label", "float labels",
         "one class name", "missing splits"],
)  # fmt: skip
def test_user_data_that_cannot_train_is_one_line(data, message):
    with pytest.raises(KerasformerError, match=message):
        require_trainable(data)
