"""What every dataset's splits share: looking one up by name, counting them, sampling."""

from __future__ import annotations

import numpy as np

from kerasformer.errors import KerasformerError
from kerasformer.validation import is_whole_number

SPLITS = ("train", "validation", "test")


class Splits:
    """A dataset of named splits (``self.splits``): train, validation and test."""

    def split(self, name: str):
        if name not in self.splits:
            raise KerasformerError(f"unknown split {name!r}; choose one of: {', '.join(SPLITS)}.")
        return self.splits[name]

    def sizes(self) -> dict[str, int]:
        """Examples per split (for a language model, tokens)."""
        return {name: len(part) for name, part in self.splits.items()}


def sample_indices(n: int, count: int, seed: int, noun: str) -> np.ndarray:
    """``n`` of ``count`` indices drawn at random without replacement, reproducibly.

    All of them, shuffled, when ``n`` is at least ``count``.
    """
    if not is_whole_number(n) or n < 1:
        raise KerasformerError(f"a sample needs a whole number >= 1 of {noun}, got {n!r}.")
    return np.random.default_rng(seed).permutation(count)[:n]
