"""Aligned source and target sentences split into train, validation and test, for translation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerasformer.backend import tf
from kerasformer.datasets.splits import AlignedArrays, Splits


@dataclass(frozen=True)
class SentencePairs(AlignedArrays):
    """Source sentences and their translations, aligned by position.

    One split of a `TranslationData`; ``len(pairs)`` is its number of pairs.

    Args:
        sources: The source sentences, a 1-D NumPy array of ``str`` (``dtype=object``).
        targets: Their translations, aligned with ``sources`` and as long.

    Examples:
        >>> import numpy as np
        >>> pairs = SentencePairs(np.array(["Go.", "Hi."], dtype=object),
        ...                       np.array(["Ve.", "Hola."], dtype=object))
        >>> len(pairs)
        2
        >>> source, target = next(iter(pairs.to_dataset()))
        >>> source.numpy(), target.numpy()
        (b'Go.', b'Ve.')
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

    What `load_spa_eng` and `from_sentence_pairs` return; ``split(name)`` gives one split,
    ``sizes()`` the pairs in each.

    Args:
        name: The dataset's name in messages and export names (``spa_eng``).
        source_language: The source sentences' language, as the export records it.
        target_language: The translations' language.
        splits: The ``train``, ``validation`` and ``test`` `SentencePairs` by name.

    Examples:
        >>> import numpy as np
        >>> pairs = SentencePairs(np.array(["Go."], dtype=object), np.array(["Ve."], dtype=object))
        >>> data = TranslationData("tiny", "English", "Spanish",
        ...                        {"train": pairs, "validation": pairs, "test": pairs})
        >>> data.source_language, data.target_language, data.sizes()
        ('English', 'Spanish', {'train': 1, 'validation': 1, 'test': 1})
        >>> data.split("train").sources
        array(['Go.'], dtype=object)
    """

    name: str
    source_language: str
    target_language: str
    splits: dict[str, SentencePairs]
