"""Perturbed copies of texts, for a teacher to label: more transfer data for distillation.

Tang et al. (2019), "Distilling Task-Specific Knowledge from BERT into Simple Neural
Networks", grow the student's training set with perturbed copies of the training texts
that the teacher labels: words masked with probability 0.1, and with probability 0.25 the
copy cut down to an n-gram of 1 to 5 words. Here a masked word is deleted rather than
replaced by ``[MASK]``, which raw text cannot carry through a TF-Hub preprocess model (it
would be tokenised as the word "mask"); their part-of-speech-guided word swap, which needs
a tagger, is left out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kerasformer.errors import KerasformerError
from kerasformer.validation import is_whole_number

DROP_PROBABILITY = 0.1
NGRAM_PROBABILITY = 0.25
MAX_NGRAM = 5


def augmented_copies(
    texts: Sequence[str],
    copies: int,
    seed: int = 0,
    drop_probability: float = DROP_PROBABILITY,
    ngram_probability: float = NGRAM_PROBABILITY,
) -> tuple[str, ...]:
    """``copies`` perturbed copies of every text, copy by copy (all texts' first copies first).

    Each copy deletes every word with probability ``drop_probability`` (at least one word
    stays), then, with probability ``ngram_probability``, keeps only a run of 1 to 5
    consecutive words of what is left. Words are whitespace-separated; their order is kept.

    Example:

    >>> augmented_copies(["stocks fell sharply on monday"], copies=2, seed=0)
    ('stocks fell monday', 'on monday')
    """
    require_augmented_copies(copies)
    for name, value in (("drop", drop_probability), ("n-gram", ngram_probability)):
        if not 0 <= value < 1:
            raise KerasformerError(f"the {name} probability must be in [0, 1), got {value!r}.")
    rng = np.random.default_rng(seed)
    split_texts = [str(text).split() for text in texts]
    return tuple(
        " ".join(perturbed_words(words, rng, drop_probability, ngram_probability))
        for _ in range(copies)
        for words in split_texts
        if words
    )


def require_augmented_copies(copies) -> int:
    if not is_whole_number(copies) or copies < 0:
        raise KerasformerError(f"augmented copies must be a whole number >= 0, got {copies!r}.")
    return copies


def perturbed_words(
    words: list[str], rng: np.random.Generator, drop_probability: float, ngram_probability: float
) -> list[str]:
    dropped = rng.random(len(words)) < drop_probability
    kept = [word for word, drop in zip(words, dropped, strict=True) if not drop]
    if not kept:  # a text of one or two words may lose them all; keep one
        kept = [words[rng.integers(len(words))]]
    if rng.random() < ngram_probability:
        length = min(int(rng.integers(1, MAX_NGRAM + 1)), len(kept))
        start = int(rng.integers(len(kept) - length + 1))
        kept = kept[start : start + length]
    return kept
