"""What every dataset's splits share: looking one up by name, counting them, sampling."""

from __future__ import annotations

import dataclasses

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


class AlignedArrays:
    """A split held as a dataclass of equally long arrays, one row per example.

    Subclasses are frozen dataclasses whose fields are all arrays aligned by position;
    ``noun`` names one example in errors.
    """

    noun = "examples"

    def __post_init__(self):
        counts = {f.name: len(getattr(self, f.name)) for f in dataclasses.fields(self)}
        if len(set(counts.values())) > 1:
            raise ValueError(" but ".join(f"{n} {name}" for name, n in counts.items()) + ".")

    def __len__(self) -> int:
        return len(getattr(self, dataclasses.fields(self)[0].name))

    def rows(self, chosen):
        """The examples at ``chosen`` (indices or a slice), as the same kind of split."""
        return dataclasses.replace(
            self, **{f.name: getattr(self, f.name)[chosen] for f in dataclasses.fields(self)}
        )

    def head(self, n: int):
        """The first ``n`` examples, in the split's order."""
        return self.rows(slice(n))

    def sample(self, n: int, seed: int = 0):
        """``n`` examples drawn at random without replacement, e.g. a small slice for a quick
        run; all of them, shuffled, when ``n`` is at least their number."""
        return self.rows(sample_indices(n, len(self), seed, self.noun))


def sample_indices(n: int, count: int, seed: int, noun: str) -> np.ndarray:
    """``n`` of ``count`` indices drawn at random without replacement, reproducibly.

    All of them, shuffled, when ``n`` is at least ``count``.
    """
    if not is_whole_number(n) or n < 1:
        raise KerasformerError(f"a sample needs a whole number >= 1 of {noun}, got {n!r}.")
    return np.random.default_rng(seed).permutation(count)[:n]
