"""Aligned source and target sentences split into train, validation and test, for translation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerasformer.backend import tf
from kerasformer.datasets.splits import Splits, sample_indices


@dataclass(frozen=True)
class SentencePairs:
    """Source sentences and their translations, aligned by position.

    Example:

    >>> pairs = SentencePairs(np.array(["Go."], dtype=object), np.array(["Ve."], dtype=object))
    >>> len(pairs)
    1
    >>> source, target = next(iter(pairs.to_dataset()))
    """

    sources: np.ndarray
    targets: np.ndarray

    def __post_init__(self):
        if len(self.sources) != len(self.targets):
            raise ValueError(f"{len(self.sources)} sources but {len(self.targets)} targets.")

    def __len__(self) -> int:
        return len(self.sources)

    def to_dataset(self) -> tf.data.Dataset:
        """A ``tf.data.Dataset`` of ``(source, target)`` string scalars, unbatched."""
        return tf.data.Dataset.from_tensor_slices(
            (
                tf.constant(self.sources, dtype=tf.string, shape=[len(self)]),
                tf.constant(self.targets, dtype=tf.string, shape=[len(self)]),
            )
        )

    def head(self, n: int) -> SentencePairs:
        """The first ``n`` pairs, in the split's order."""
        return SentencePairs(self.sources[:n], self.targets[:n])

    def sample(self, n: int, seed: int = 0) -> SentencePairs:
        """``n`` pairs drawn at random without replacement, e.g. a small slice for a quick run.

        All of them, shuffled, when ``n`` is at least the number of pairs.
        """
        chosen = sample_indices(n, len(self), seed, "pairs")
        return SentencePairs(self.sources[chosen], self.targets[chosen])


@dataclass(frozen=True)
class TranslationData(Splits):
    """A translation dataset: three splits of sentence pairs and the two languages.

    Example:

    >>> data = load_spa_eng("../shared/data/spa-eng")
    >>> data.source_language, data.target_language
    ('English', 'Spanish')
    >>> source, target = next(iter(data.split("train").to_dataset()))
    """

    name: str
    source_language: str
    target_language: str
    splits: dict[str, SentencePairs]
