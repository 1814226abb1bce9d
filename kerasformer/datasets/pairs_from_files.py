"""Your own sentence pairs for translation: a TSV/CSV table with a header, or JSON Lines.

``from_sentence_pairs("pairs.tsv", source_column="English", target_column="French")``
returns the `TranslationData` the named datasets return. The two columns' names are the
languages' names, recorded in the export. A split without a file of its own is held out
of the training file, seeded and grouped by source sentence, as spa-eng is split: every
translation of one sentence lands in the same split.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kerasformer.datasets.from_files import data_name
from kerasformer.datasets.grouped_split import held_out, require_every_split, splits_of_files
from kerasformer.datasets.sentence_pairs import SentencePairs, TranslationData
from kerasformer.errors import KerasformerError
from kerasformer.files.tables import read_table


def from_sentence_pairs(
    train_file: str | Path,
    validation_file: str | Path | None = None,
    test_file: str | Path | None = None,
    *,
    source_column: str | int = "source",
    target_column: str | int = "target",
    delimiter: str | None = None,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
    name: str | None = None,
) -> TranslationData:
    r"""Sentence pairs from TSV/CSV files with a header row, or from JSON Lines files.

    The source and target columns' names are the languages' names. A split without a
    file of its own is held out of the training file, seeded and grouped by source
    sentence: every translation of one sentence lands in the same split.

    Args:
        train_file: The training pairs.
        validation_file: Validation pairs; by default ``validation_fraction`` of the
            training file's pairs.
        test_file: Test pairs; by default ``test_fraction`` of the training file's pairs.
        source_column: The source sentence's column (or JSON key), by name or 0-based index.
        target_column: The translation's column (or JSON key), by name or 0-based index.
        delimiter: The field separator of a TSV/CSV file; sniffed from the header by default.
        validation_fraction: Part of the training file held out for validation; with
            ``test_fraction``, each between 0 and 1 and summing to less than 1.
        test_fraction: Part of the training file held out for testing.
        split_seed: Seed of the held-out splits and of the order inside each split.
        name: The dataset's name in messages and export names; the training file's stem
            by default.

    Returns:
        The train, validation and test pairs, and the source and target languages.

    Raises:
        KerasformerError: A missing file or column, one column named as both source and
            target, an empty or missing sentence, fractions out of range, or a split
            left empty.

    Examples:
        >>> from pathlib import Path
        >>> rows = [f"I have {n} cats.\tJ'ai {n} chats." for n in range(10)]
        >>> _ = Path("cats.tsv").write_text("\n".join(["English\tFrench", *rows]) + "\n")
        >>> data = from_sentence_pairs("cats.tsv", source_column="English",
        ...                            target_column="French")
        >>> data.source_language, data.target_language, data.sizes()
        ('English', 'French', {'train': 8, 'validation': 1, 'test': 1})
    """
    languages = []

    def read(path) -> SentencePairs:
        source, target, pairs = read_pairs(path, source_column, target_column, delimiter)
        languages.append((source, target))  # the training file's, read first, name them
        return pairs

    splits = splits_of_files(
        {"train": train_file, "validation": validation_file, "test": test_file},
        read, lambda pairs: pairs.sources,
        lambda pairs, chosen: SentencePairs(pairs.sources[chosen], pairs.targets[chosen]),
        held_out(validation_fraction, test_fraction, split_seed),
    )  # fmt: skip
    name = name or data_name(train_file)
    require_every_split(name, {s: len(part) for s, part in splits.items()}, "pairs", "more pairs")
    (source_language, target_language), *_ = languages
    return TranslationData(name, source_language, target_language, splits)


def read_pairs(
    path: str | Path, source_column, target_column, delimiter: str | None
) -> tuple[str, str, SentencePairs]:
    """The source and target columns' names, and the file's pairs in file order."""
    table = read_table(path, delimiter)
    (source,) = table.column_names([source_column], "source_column")
    (target,) = table.column_names([target_column], "target_column")
    if source == target:
        raise KerasformerError(
            f"{table.path}: the source and target columns are both {source!r}; name two "
            "different columns."
        )
    sources, targets = [], []
    for row in table.rows:
        sides = []
        for side, column in (("source", source), ("target", target)):
            value = row.values.get(column)
            if not isinstance(value, str) or not value.strip():
                what = (
                    "missing" if value is None else "not text" if not isinstance(value, str)
                    else "empty"
                )  # fmt: skip
                raise KerasformerError(
                    f"{row.where}: the {side} sentence ({column!r}) is {what}; give both "
                    "sentences of every pair as text, or remove the row."
                )
            sides.append(" ".join(value.split()))
        sources.append(sides[0])
        targets.append(sides[1])
    pairs = SentencePairs(np.array(sources, dtype=object), np.array(targets, dtype=object))
    return source, target, pairs
