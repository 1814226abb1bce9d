"""Perturbed copies of texts: words dropped in order, n-grams, reproducible by seed."""

import re

import numpy as np
import pytest

from kerasformer.datasets.text_augmentation import augmented_copies
from kerasformer.errors import KerasformerError

TEXTS = [
    "oil prices rose on friday as traders weighed supply",
    "the home side won the cup final after extra time",
    "a new chip doubles battery life in phones",
]


def is_subsequence(short: list[str], long: list[str]) -> bool:
    remaining = iter(long)
    return all(word in remaining for word in short)


def is_contiguous(short: list[str], long: list[str]) -> bool:
    return any(long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1))


def test_copies_come_copy_by_copy_and_keep_the_words_in_order():
    copies = augmented_copies(TEXTS, copies=4, seed=0)
    assert len(copies) == 4 * len(TEXTS)
    for index, copy in enumerate(copies):
        original = TEXTS[index % len(TEXTS)].split()
        assert copy.split() and is_subsequence(copy.split(), original), (copy, original)


def test_without_perturbation_the_copies_are_the_texts():
    texts = ["  spaced   out text ", "one"]
    copies = augmented_copies(texts, 2, drop_probability=0.0, ngram_probability=0.0)
    assert copies == ("spaced out text", "one") * 2


def test_words_are_dropped_at_the_given_rate():
    text = " ".join(f"w{i}" for i in range(2000))
    copies = augmented_copies([text], 10, seed=1, drop_probability=0.1, ngram_probability=0.0)
    kept = np.mean([len(copy.split()) / 2000 for copy in copies])
    assert abs(kept - 0.9) < 0.01  # 20,000 draws: the standard error is 0.002


def test_ngram_copies_are_runs_of_one_to_five_words():
    copies = augmented_copies(TEXTS, 200, seed=2, drop_probability=0.0, ngram_probability=0.999)
    lengths = {len(copy.split()) for copy in copies}
    assert lengths == {1, 2, 3, 4, 5}
    for index, copy in enumerate(copies):
        assert is_contiguous(copy.split(), TEXTS[index % len(TEXTS)].split())


def test_a_text_never_loses_every_word_and_empty_texts_are_skipped():
    copies = augmented_copies(["alone", "", "two words"], 50, seed=3, drop_probability=0.95)
    assert len(copies) == 100
    assert set(copies[0::2]) == {"alone"} and set(copies[1::2]) <= {"two", "words"}


def test_the_seed_decides_the_copies():
    assert augmented_copies(TEXTS, 3, seed=4) == augmented_copies(TEXTS, 3, seed=4)
    assert augmented_copies(TEXTS, 3, seed=4) != augmented_copies(TEXTS, 3, seed=5)


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(copies=-1), "augmented copies must be a whole number >= 0, got -1"),
        (dict(copies=2, drop_probability=1.0), "the drop probability must be in [0, 1)"),
        (dict(copies=2, ngram_probability=-0.1), "the n-gram probability must be in [0, 1)"),
    ],
)
def test_bad_settings_are_clear_errors(settings, message):
    with pytest.raises(KerasformerError, match=re.escape(message)):
        augmented_copies(TEXTS, **settings)
