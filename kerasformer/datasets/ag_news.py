"""AG News: news titles and descriptions in four topics.

Two sources give the same data: TensorFlow Datasets' ``ag_news_subset`` (downloaded on
first use) and a local folder in the original CSV layout (``train.csv``, ``test.csv``;
rows of class index 1-4, title, description; an optional header line).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from kerasformer.datasets.text_classification_data import (
    LabeledTexts,
    TextClassificationData,
    with_validation_split,
)
from kerasformer.errors import KerasformerError
from kerasformer.files.tables import records_of
from kerasformer.files.text_files import read_utf8_text
from kerasformer.network import require_reachable

CLASS_NAMES = ("World", "Sports", "Business", "Sci/Tech")
TFDS_NAME = "ag_news_subset"


def load_ag_news(
    data_dir: str | Path | None = None,
    validation_fraction: float = 0.1,
    split_seed: int = 0,
    tfds_data_dir: str | None = None,
) -> TextClassificationData:
    r"""Load AG News from a local CSV folder, or from TensorFlow Datasets.

    The text of an example is its title and description joined by a space. The test split
    is the dataset's own; validation is held out of train, stratified by class.

    Args:
        data_dir: A folder with ``train.csv`` and ``test.csv`` in the original layout:
            rows of class index (1 to 4), title, description, and an optional header line;
            optionally ``classes.txt``, one class name per line, for other classes.
            Without it, ``tfds.load('ag_news_subset')`` (downloaded on first use).
        validation_fraction: Part of the training split held out for validation, between
            0 and 1.
        split_seed: Seed of the validation split; the same seed gives the same split.
        tfds_data_dir: Where TensorFlow Datasets keeps its files (its default if None);
            used only without ``data_dir``.

    Returns:
        The train, validation and test splits, with class names ``World``, ``Sports``,
        ``Business`` and ``Sci/Tech`` (or those of ``classes.txt``).

    Raises:
        KerasformerError: A folder without ``train.csv`` or ``test.csv``, a row that is not
            class index, title, description, or TensorFlow Datasets failing to load (no
            network, for one).

    Examples:
        >>> from pathlib import Path
        >>> folder = Path("ag_news_tiny"); folder.mkdir(exist_ok=True)
        >>> rows = [f'"{c}","Headline {c}.{i}","Story {i}."' for i in range(2) for c in "1234"]
        >>> _ = (folder / "train.csv").write_text("\n".join(rows) + "\n")
        >>> _ = (folder / "test.csv").write_text('"3","Wall St. rallies","Shares rose."\n')
        >>> data = load_ag_news(folder, validation_fraction=0.5)
        >>> data.class_names, data.sizes(), data.splits["test"].texts[0]
        (('World', 'Sports', 'Business', 'Sci/Tech'), {'train': 4, 'validation': 4, 'test': 1},
         'Wall St. rallies Shares rose.')
    """
    if data_dir is not None:
        train, test, class_names = read_csv_folder(Path(data_dir))
    else:
        train, test = load_from_tfds(tfds_data_dir)
        class_names = CLASS_NAMES
    return with_validation_split(
        "ag_news", class_names, train, test, validation_fraction, split_seed
    )


def join_title_and_description(title: str, description: str) -> str:
    # The original CSVs encode line breaks as backslashes ("dwindling\\band").
    return " ".join(f"{title} {description}".replace("\\", " ").split())


def read_csv_folder(root: Path) -> tuple[LabeledTexts, LabeledTexts, tuple[str, ...]]:
    """Read ``train.csv`` and ``test.csv`` (and ``classes.txt`` if present) from ``root``."""
    if not root.is_dir():
        raise KerasformerError(
            f"AG News folder {root} does not exist; pass --data-dir with train.csv and "
            "test.csv in the original AG News CSV layout."
        )
    class_names = read_class_names(root / "classes.txt")
    train = read_csv_split(root / "train.csv", len(class_names))
    test = read_csv_split(root / "test.csv", len(class_names))
    return train, test, class_names


def read_class_names(path: Path) -> tuple[str, ...]:
    if not path.exists():
        return CLASS_NAMES
    names = tuple(line.strip() for line in read_utf8_text(path).splitlines() if line.strip())
    if len(names) < 2:
        raise KerasformerError(
            f"{path} lists {len(names)} class names; it needs one per line, at least two."
        )
    if len(set(names)) < len(names):
        repeated = sorted({name for name in names if names.count(name) > 1})
        raise KerasformerError(
            f"{path} lists {', '.join(map(repr, repeated))} more than once; "
            "give every class a different name, one per line."
        )
    return names


def read_csv_split(path: Path, num_classes: int) -> LabeledTexts:
    """Rows of ``"class index","title","description"``; the first row may be a header."""
    if not path.is_file():
        raise KerasformerError(
            f"{path} is missing; an AG News folder needs train.csv and test.csv "
            "(class index, title, description per row)."
        )
    texts, labels = [], []
    header = False
    records = records_of(path, read_utf8_text(path), ",")
    for line, row in tqdm(
        records, desc=f"Reading {path.name}", unit=" rows", leave=False, disable=None
    ):
        if not row:
            continue
        if not texts and not header and is_header(row):
            header = True
            continue
        labels.append(parse_row_label(row, path, line, num_classes))
        texts.append(join_title_and_description(row[1], row[2]))
    if not texts:
        found = "only a header line" if header else "no rows"
        raise KerasformerError(
            f"{path} has {found}; it needs rows of class index, title, description."
        )
    return LabeledTexts(np.array(texts, dtype=object), np.array(labels, dtype=np.int64))


def is_header(row: list[str]) -> bool:
    # A header names its columns; a first field with any digit ("1", "²", "1.0")
    # is a data row, checked like any other rather than dropped.
    first = row[0].strip()
    return bool(first) and not any(char.isdigit() for char in first)


def parse_row_label(row: list[str], path: Path, line: int, num_classes: int) -> int:
    if len(row) != 3:
        raise KerasformerError(
            f"{path}:{line}: expected 3 fields (class index, title, description), got {len(row)}."
        )
    index = row[0].strip()
    # str.isdigit() accepts "²" and other digits that int() refuses.
    if not (index.isascii() and index.isdigit()) or not 1 <= int(index) <= num_classes:
        raise KerasformerError(
            f"{path}:{line}: class index must be a number from 1 to {num_classes}, got {row[0]!r}."
        )
    return int(index) - 1


def load_from_tfds(tfds_data_dir: str | None) -> tuple[LabeledTexts, LabeledTexts]:
    import tensorflow_datasets as tfds

    builder = tfds.builder(TFDS_NAME, data_dir=tfds_data_dir)
    url = download_url_of(builder)
    if not builder.is_prepared() and url is not None:
        require_reachable(
            url,
            f"{TFDS_NAME} with tensorflow_datasets",
            "pass --data-dir with train.csv and test.csv in the original AG News CSV layout.",
        )
    try:
        splits = tfds.as_numpy(tfds.load(TFDS_NAME, data_dir=tfds_data_dir, batch_size=-1))
    except Exception as error:  # tfds raises many kinds: network, checksum, disk
        raise KerasformerError(
            f"tfds.load({TFDS_NAME!r}) failed ({type(error).__name__}: {first_line(error)}); "
            "pass --data-dir with train.csv and test.csv in the original AG News CSV layout."
        ) from error
    return tfds_split_to_texts(splits["train"]), tfds_split_to_texts(splits["test"])


def tfds_split_to_texts(split: dict) -> LabeledTexts:
    texts = [
        join_title_and_description(title.decode("utf-8"), description.decode("utf-8"))
        for title, description in zip(split["title"], split["description"], strict=True)
    ]
    return LabeledTexts(np.array(texts, dtype=object), np.asarray(split["label"], dtype=np.int64))


def download_url_of(builder) -> str | None:
    """The URL the builder downloads from, when its module names one."""
    return getattr(sys.modules.get(type(builder).__module__), "_DOWNLOAD_URL", None)


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""
