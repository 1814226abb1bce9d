import numpy as np
import pytest

from kerasformer.datasets import LabeledTexts
from kerasformer.datasets.text_classification_data import stratified_split
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
    with pytest.raises(KerasformerError, match="give more examples of every class"):
        stratified_split(data, 0.5, seed=0)
