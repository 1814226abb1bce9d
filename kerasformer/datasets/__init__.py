"""Datasets: text classification, translation pairs and language-model tokens."""

from __future__ import annotations

from pathlib import Path

from kerasformer.datasets.ag_news import load_ag_news
from kerasformer.datasets.bbc_news import load_bbc_news
from kerasformer.datasets.corpus_from_files import from_text_files
from kerasformer.datasets.from_files import from_csv, from_directory, from_jsonl
from kerasformer.datasets.from_tfds import from_tfds
from kerasformer.datasets.pairs_from_files import from_sentence_pairs
from kerasformer.datasets.questions_from_files import from_squad_files
from kerasformer.datasets.sentence_pairs import SentencePairs, TranslationData
from kerasformer.datasets.spa_eng import SPA_ENG_URL, load_spa_eng
from kerasformer.datasets.text_classification_data import (
    LabeledTexts,
    TextClassificationData,
)
from kerasformer.datasets.wikitext import WIKITEXT2_URL, LanguageModelData, load_wikitext2
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


__all__ = [
    "LOADERS",
    "SPA_ENG_URL",
    "WIKITEXT2_URL",
    "LabeledTexts",
    "LanguageModelData",
    "SentencePairs",
    "TextClassificationData",
    "TranslationData",
    "from_csv",
    "from_directory",
    "from_jsonl",
    "from_sentence_pairs",
    "from_squad_files",
    "from_text_files",
    "from_tfds",
    "load_ag_news",
    "load_bbc_news",
    "load_dataset",
    "load_spa_eng",
    "load_wikitext2",
]
