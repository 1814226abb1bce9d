"""Your own labelled texts for classification: a CSV/TSV or JSON Lines table, or class folders.

Each function returns the `TextClassificationData` the named datasets return, so
``train(config, data=from_csv("tickets.csv", text_column="body", label_column="team"))``
trains on it. Class names come from the training file, sorted (numerically where every
label is a whole number; a folder's classes as text, as Keras sorts them). A split
without a file of its own is held out of the training file, stratified by class and
seeded: the test split first, then validation from what is left.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kerasformer.datasets.text_classification_data import (
    LabeledTexts,
    TextClassificationData,
    require_trainable,
    stratified_split,
)
from kerasformer.errors import KerasformerError
from kerasformer.files.class_folders import read_class_folders
from kerasformer.files.tables import JSON_LINES_SUFFIXES, read_table


@dataclass(frozen=True)
class Example:
    """One labelled text and where it was read (``path:line``, or a file), for errors."""

    where: str
    text: str
    label: object

    @property
    def class_name(self) -> str:
        """The label as a class name: ``3`` and ``"3"`` name the same class."""
        return str(self.label).strip()


def from_csv(
    train_file: str | Path,
    validation_file: str | Path | None = None,
    test_file: str | Path | None = None,
    *,
    text_column: str | int | list = "text",
    label_column: str | int = "label",
    delimiter: str | None = None,
    multi_label: bool = False,
    label_separator: str = ",",
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
    name: str | None = None,
) -> TextClassificationData:
    r"""Labelled texts from CSV or TSV files with a header row.

    Class names come from the training file, sorted (numerically where every label is a
    whole number). A split without a file of its own is held out of the training file,
    stratified by class and seeded: the test split first, then validation.

    Args:
        train_file: The training examples.
        validation_file: Validation examples; by default ``validation_fraction`` of the
            training file, after the test split is held out.
        test_file: Test examples; by default ``test_fraction`` of the training file.
        text_column: The text's column, by name or 0-based index; several columns
            (``"title,description"`` or a list) are joined by a space.
        label_column: The label's column, by name or 0-based index.
        delimiter: The field separator; sniffed from the header by default.
        multi_label: Each text has one or more labels, separated by ``label_separator``
            (in JSON Lines, also a list); the data's labels are then rows of 0s and 1s,
            and held-out splits are drawn at random rather than by class.
        label_separator: What separates a multi-label text's labels (with
            ``multi_label`` only).
        validation_fraction: Part of the training file held out for validation, between
            0 and 1.
        test_fraction: Part of the training file held out for testing, between 0 and 1.
        split_seed: Seed of the held-out splits.
        name: The dataset's name in messages and export names; the training file's stem
            by default.

    Returns:
        The train, validation and test splits and the class names.

    Raises:
        KerasformerError: A missing file or column, an empty text, a missing label,
            labels that mix numbers and strings, a label of another split that training
            lacks, fewer than two classes, or a class too small to split.

    Examples:
        >>> from pathlib import Path
        >>> problems = {"billing": "Card declined", "hardware": "Screen broken",
        ...             "login": "Password reset fails"}
        >>> rows = [f"{text} #{i},{team}" for team, text in problems.items() for i in range(10)]
        >>> _ = Path("helpdesk.csv").write_text("\n".join(["body,team", *rows]) + "\n")
        >>> data = from_csv("helpdesk.csv", text_column="body", label_column="team")
        >>> data.class_names, data.sizes()
        (('billing', 'hardware', 'login'), {'train': 24, 'validation': 3, 'test': 3})
    """
    return classification_data(
        name or data_name(train_file),
        {"train": train_file, "validation": validation_file, "test": test_file},
        lambda path: table_examples(path, text_column, label_column, delimiter),
        validation_fraction, test_fraction, split_seed,
        label_separator=label_separator if multi_label else None,
    )  # fmt: skip


def from_jsonl(
    train_file: str | Path,
    validation_file: str | Path | None = None,
    test_file: str | Path | None = None,
    *,
    text_column: str | list = "text",
    label_column: str = "label",
    multi_label: bool = False,
    label_separator: str = ",",
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
    name: str | None = None,
) -> TextClassificationData:
    r"""Labelled texts from JSON Lines files: one object per line.

    Each line is an object such as ``{"text": "...", "label": "sports"}``. Labels may be
    strings or whole numbers, not both; whole numbers are sorted as numbers. The splits
    are made as `from_csv` makes them.

    Args:
        train_file: The training examples.
        validation_file: Validation examples; by default ``validation_fraction`` of the
            training file, after the test split is held out.
        test_file: Test examples; by default ``test_fraction`` of the training file.
        text_column: The text's key; several keys (``"title,description"`` or a list)
            are joined by a space.
        label_column: The label's key.
        multi_label: Each text has one or more labels: a list, or a string of labels
            separated by ``label_separator``; the data's labels are then rows of 0s and
            1s, and held-out splits are drawn at random rather than by class.
        label_separator: What separates a multi-label text's labels in a string (with
            ``multi_label`` only).
        validation_fraction: Part of the training file held out for validation, between
            0 and 1.
        test_fraction: Part of the training file held out for testing, between 0 and 1.
        split_seed: Seed of the held-out splits.
        name: The dataset's name in messages and export names; the training file's stem
            by default.

    Returns:
        The train, validation and test splits and the class names.

    Raises:
        KerasformerError: A line that is not a JSON object, a missing key, a text that is
            not a string, labels that mix numbers and strings, or data `from_csv` refuses.

    Examples:
        >>> import json
        >>> from pathlib import Path
        >>> lines = [json.dumps({"text": f"Review {i}", "stars": 1 + 4 * (i % 2)})
        ...          for i in range(20)]
        >>> _ = Path("reviews.jsonl").write_text("\n".join(lines) + "\n")
        >>> data = from_jsonl("reviews.jsonl", label_column="stars")
        >>> data.class_names, data.sizes()
        (('1', '5'), {'train': 16, 'validation': 2, 'test': 2})
    """
    return from_csv(
        train_file, validation_file, test_file,
        text_column=text_column, label_column=label_column, multi_label=multi_label,
        label_separator=label_separator, validation_fraction=validation_fraction,
        test_fraction=test_fraction, split_seed=split_seed, name=name,
    )  # fmt: skip


def from_directory(
    train_dir: str | Path,
    validation_dir: str | Path | None = None,
    test_dir: str | Path | None = None,
    *,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
    name: str | None = None,
) -> TextClassificationData:
    """Labelled texts from folders of class folders, as ``text_dataset_from_directory`` reads.

    ``train_dir/<class name>/*.txt``: the sub-folder names, sorted as text (``"10"``
    before ``"2"``, as Keras sorts them), are the classes. The splits are made as
    `from_csv` makes them.

    Args:
        train_dir: The training examples: one sub-folder of ``.txt`` files per class.
        validation_dir: Validation examples in the same layout; by default
            ``validation_fraction`` of the training examples, after the test split is
            held out.
        test_dir: Test examples in the same layout; by default ``test_fraction`` of the
            training examples.
        validation_fraction: Part of the training examples held out for validation,
            between 0 and 1.
        test_fraction: Part of the training examples held out for testing, between 0
            and 1.
        split_seed: Seed of the held-out splits.
        name: The dataset's name in messages and export names; the training folder's
            name by default.

    Returns:
        The train, validation and test splits and the class names.

    Raises:
        KerasformerError: A folder that does not exist or has no class folders of text
            files, an empty text, fewer than two classes, or a class too small to split.

    Examples:
        >>> from pathlib import Path
        >>> for label in ("neg", "pos"):
        ...     Path("movie_reviews", label).mkdir(parents=True, exist_ok=True)
        ...     for i in range(10):
        ...         text = f"A {label} review, number {i}."
        ...         _ = Path("movie_reviews", label, f"{i}.txt").write_text(text)
        >>> data = from_directory("movie_reviews")
        >>> data.class_names, data.sizes()
        (('neg', 'pos'), {'train': 16, 'validation': 2, 'test': 2})
    """
    return classification_data(
        name or data_name(train_dir),
        {"train": train_dir, "validation": validation_dir, "test": test_dir},
        folder_examples, validation_fraction, test_fraction, split_seed,
        class_order=sorted,  # as text_dataset_from_directory: "10" before "2"
    )  # fmt: skip


def folder_examples(folder) -> list[Example]:
    return [
        Example(str(path), " ".join(text.split()), label)
        for label, files in read_class_folders(folder).items()
        for path, text in files
    ]


def from_files(
    train_file: str | Path,
    validation_file: str | Path | None = None,
    test_file: str | Path | None = None,
    **options,
) -> TextClassificationData:
    """`from_directory` for a folder, `from_jsonl` for ``.jsonl``, `from_csv` otherwise.

    ``options`` are the chosen function's keyword arguments; one it does not take is
    refused in one line.
    """
    path = Path(train_file)
    if path.is_dir():
        read, kind = from_directory, "a folder of class folders"
    elif path.suffix.lower() in JSON_LINES_SUFFIXES:
        read, kind = from_jsonl, "a JSON Lines file"
    else:
        read, kind = from_csv, "a CSV or TSV file"
    given = {name: value for name, value in options.items() if value is not None}
    if "label_separator" in given and not given.get("multi_label"):
        raise KerasformerError("--label-separator goes with --multi-label; give both.")
    stray = sorted(set(given) - set(inspect.signature(read).parameters))
    if stray:
        flags = ", ".join("--" + name.replace("_", "-") for name in stray)
        raise KerasformerError(f"{flags} do(es) not apply to {path}, {kind}.")
    return read(train_file, validation_file, test_file, **given)


def read_labelled_file(
    path: str | Path, class_names: tuple[str, ...], known_by: str, **options
) -> LabeledTexts:
    """One file's (or class folder's) labelled texts, numbered by ``class_names`` (a
    model's): a label the model does not know is refused, naming ``known_by``.

    ``options`` are `from_csv`'s column options, refused for a folder or JSON Lines
    where they do not apply.
    """
    path = Path(path)
    given = {name: value for name, value in options.items() if value is not None}
    if path.is_dir():
        takes, read = (), folder_examples
    else:
        json_lines = path.suffix.lower() in JSON_LINES_SUFFIXES
        takes = ("text_column", "label_column") + (() if json_lines else ("delimiter",))
        settings = {"text_column": "text", "label_column": "label", "delimiter": None, **given}

        def read(file):
            return table_examples(
                file, settings["text_column"], settings["label_column"], settings["delimiter"]
            )

    stray = sorted(set(given) - set(takes))
    if stray:
        flags = ", ".join("--" + name.replace("_", "-") for name in stray)
        raise KerasformerError(f"{flags} do(es) not apply to {path}.")
    examples = read(path)
    require_texts_and_labels(examples)
    return labelled(examples, {name: i for i, name in enumerate(class_names)}, known_by)


def data_name(path: str | Path) -> str:
    """What your data is called in messages and export names: a file's stem, a folder's name."""
    path = Path(path).resolve()
    return path.name if path.is_dir() else path.stem


def table_examples(path, text_column, label_column, delimiter: str | None) -> list[Example]:
    table = read_table(path, delimiter)
    text_columns = table.column_names(text_column, "text_column")
    (label,) = table.column_names([label_column], "label_column")
    examples = []
    for row in table.rows:
        missing = [name for name in [*text_columns, label] if name not in row.values]
        if missing:
            raise KerasformerError(
                f"{row.where}: no {missing[0]!r}; give every row a text and a label."
            )
        texts = [row.values[name] for name in text_columns]
        if not all(isinstance(text, str) for text in texts):
            raise KerasformerError(
                f"{row.where}: the text is not a string; give texts as JSON strings."
            )
        examples.append(Example(row.where, " ".join(" ".join(texts).split()), row.values[label]))
    return examples


def classification_data(
    name: str,
    sources: dict[str, str | Path | None],
    read_examples: Callable[[str | Path], list[Example]],
    validation_fraction: float,
    test_fraction: float,
    split_seed: int,
    class_order: Callable[[set[str]], list[str]] | None = None,
    label_separator: str | None = None,
) -> TextClassificationData:
    """Read each split given, number the classes of train, check every split against them,
    and hold out of train the splits not given: the test split first, then validation
    from what is left.

    ``class_order`` sorts the class names (default: numerically where all are whole
    numbers, else as text). With a ``label_separator`` the data is multi-label.
    """
    parts = {split: read_examples(path) for split, path in sources.items() if path is not None}
    if label_separator is not None:
        return multi_label_data(
            name, parts, label_separator, validation_fraction, test_fraction, split_seed
        )
    for examples in parts.values():
        require_texts_and_labels(examples)
    labels = {example.class_name for example in parts["train"]}
    class_names = (class_order or sorted_class_names)(labels)
    if len(class_names) < 2:
        raise KerasformerError(
            f"{name}: every training example is of class {class_names[0]!r}; a classifier "
            "needs examples of at least two classes."
        )
    index = {label: i for i, label in enumerate(class_names)}
    splits = {split: labelled(examples, index) for split, examples in parts.items()}
    if "test" not in splits:
        splits["train"], splits["test"] = stratified_split(
            splits["train"], test_fraction, split_seed, class_names
        )
    if "validation" not in splits:
        splits["train"], splits["validation"] = stratified_split(
            splits["train"], validation_fraction, split_seed, class_names
        )
    data = TextClassificationData(
        name=name,
        class_names=tuple(class_names),
        splits={split: splits[split] for split in ("train", "validation", "test")},
    )
    require_trainable(data)
    return data


def multi_label_data(
    name: str,
    parts: dict[str, list[Example]],
    separator: str,
    validation_fraction: float,
    test_fraction: float,
    split_seed: int,
) -> TextClassificationData:
    """`classification_data` for texts of one or more classes each: rows of 0s and 1s."""
    if not separator:
        raise KerasformerError("--label-separator is empty; give the character(s) between labels.")
    names = {
        split: [label_set(e, separator) for e in examples] for split, examples in parts.items()
    }
    for examples in parts.values():
        require_texts_and_labels(examples, labels_checked=True)
    class_names = sorted_class_names({label for labels in names["train"] for label in labels})
    index = {label: i for i, label in enumerate(class_names)}
    splits = {
        split: LabeledTexts(
            np.array([example.text for example in parts[split]], dtype=object),
            multi_hot(parts[split], names[split], index),
        )
        for split in parts
    }
    for split, fraction in (("test", test_fraction), ("validation", validation_fraction)):
        if split not in splits:
            splits["train"], splits[split] = stratified_split(splits["train"], fraction, split_seed)
    data = TextClassificationData(
        name=name,
        class_names=tuple(class_names),
        splits={split: splits[split] for split in ("train", "validation", "test")},
        multi_label=True,
    )
    require_trainable(data)
    return data


def label_set(example: Example, separator: str) -> list[str]:
    """A multi-label example's class names: a list (JSON), or labels split at ``separator``."""
    label = example.label
    if isinstance(label, list):
        names = [str(item).strip() for item in label if not isinstance(item, dict | list)]
    elif isinstance(label, str) or (isinstance(label, int) and not isinstance(label, bool)):
        names = [part.strip() for part in str(label).split(separator)]
    else:
        names = []
    names = [name for name in names if name]
    if not names:
        raise KerasformerError(
            f"{example.where}: the labels are {label!r}; give every example one or more "
            f"labels, separated by {separator!r} (or a JSON list of strings)."
        )
    return sorted(set(names))


def multi_hot(examples: list[Example], names: list[list[str]], index: dict[str, int]) -> np.ndarray:
    rows = np.zeros((len(examples), len(index)), np.float32)
    for row, (example, labels) in enumerate(zip(examples, names, strict=True)):
        for label in labels:
            if label not in index:
                raise KerasformerError(
                    f"{example.where}: label {label!r} is not in the training data (its "
                    f"classes: {', '.join(index)}); add examples of {label!r} to the training "
                    "data, or remove it here."
                )
            rows[row, index[label]] = 1.0
    return rows


def require_texts_and_labels(examples: list[Example], labels_checked: bool = False) -> None:
    first_of_kind: dict[str, Example] = {}
    for example in examples:
        if not example.text.strip():
            raise KerasformerError(
                f"{example.where}: the text is empty; give every example a text, or remove it."
            )
        if labels_checked:
            continue
        kind = label_kind(example)
        first_of_kind.setdefault(kind, example)
        if len(first_of_kind) > 1:
            number, string = first_of_kind["number"], first_of_kind["string"]
            raise KerasformerError(
                f"{example.where}: labels mix numbers ({number.label!r} at {number.where}) "
                f"and strings ({string.label!r} at {string.where}); give every label the "
                "same way."
            )


def label_kind(example: Example) -> str:
    label = example.label
    if isinstance(label, str) and label.strip():
        return "string"
    if isinstance(label, int) and not isinstance(label, bool):
        return "number"
    raise KerasformerError(
        f"{example.where}: the label is {label!r}; give every example a label, a string or "
        "a whole number."
    )


def sorted_class_names(names: set[str]) -> list[str]:
    """Class names numerically sorted where all are whole numbers, else as text."""
    if all(re.fullmatch(r"-?[0-9]+", name) for name in names):
        return sorted(names, key=lambda name: (int(name), name))  # "01" and "1" differ
    return sorted(names)


def labelled(
    examples: list[Example], index: dict[str, int], known_by: str = "the training data"
) -> LabeledTexts:
    labels = []
    for example in examples:
        label = example.class_name
        if label not in index:
            fix = (
                f"add examples of {label!r} to the training data, or remove this one"
                if known_by == "the training data"
                else "use one of those class names, or remove this example"
            )
            raise KerasformerError(
                f"{example.where}: label {label!r} is not in {known_by} (its classes: "
                f"{', '.join(index)}); {fix}."
            )
        labels.append(index[label])
    texts = np.array([example.text for example in examples], dtype=object)
    return LabeledTexts(texts, np.array(labels, dtype=np.int64))
