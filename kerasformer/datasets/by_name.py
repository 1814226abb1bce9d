"""Classification datasets by name, as `kerasformer.registry` lists them."""

from __future__ import annotations

from pathlib import Path

from kerasformer.datasets.text_classification_data import TextClassificationData
from kerasformer.errors import KerasformerError
from kerasformer.registry import TASKS, resolve

# The classification datasets by name, from the registry (kept for one release).
LOADERS = {entry.name: resolve(entry.loader) for entry in TASKS["classification"].datasets}


def load_dataset(
    name: str,
    data_dir: str | Path | None = None,
    validation_fraction: float = 0.1,
    split_seed: int = 0,
) -> TextClassificationData:
    """Load a dataset by name (``bbc_news`` or ``ag_news``).

    Example:

    >>> data = load_dataset("bbc_news")
    >>> data.class_names
    ('business', 'entertainment', 'politics', 'sports', 'tech')
    >>> text, label = next(iter(data.train))
    """
    if name not in LOADERS:
        raise KerasformerError(
            f"unknown dataset {name!r}; choose one of: {', '.join(sorted(LOADERS))}."
        )
    return LOADERS[name](
        data_dir=data_dir, validation_fraction=validation_fraction, split_seed=split_seed
    )
