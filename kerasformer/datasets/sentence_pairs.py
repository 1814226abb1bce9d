"""Aligned source and target sentences split into train, validation and test, for translation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerasformer.backend import tf
from kerasformer.datasets.splits import AlignedArrays, Splits


@dataclass(frozen=True)
class SentencePairs(AlignedArrays):
    """Source sentences and their translations, aligned by position.

    Example:

    >>> pairs = SentencePairs(np.array(["Go."], dtype=object), np.array(["Ve."], dtype=object))
    >>> len(pairs)
    1
    >>> source, target = next(iter(pairs.to_dataset()))
    """

    noun = "pairs"

    sources: np.ndarray
    targets: np.ndarray

    def to_dataset(self) -> tf.data.Dataset:
        """A ``tf.data.Dataset`` of ``(source, target)`` string scalars, unbatched."""
        return tf.data.Dataset.from_tensor_slices(
            (
                tf.constant(self.sources, dtype=tf.string, shape=[len(self)]),
                tf.constant(self.targets, dtype=tf.string, shape=[len(self)]),
            )
        )


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
