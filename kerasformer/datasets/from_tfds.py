"""Any TensorFlow Datasets text classification dataset by name, read offline.

``from_tfds("imdb_reviews")`` (or ``"imdb_reviews/plain_text"``, or ``"tfds:imdb_reviews"``)
reads a dataset already prepared in a TFDS data folder; it never downloads. The text and
label come from the dataset's own features: a string ``Text`` feature (``"text"`` if there is
one) and a ``ClassLabel`` (``"label"`` if there is one), whose names, in the dataset's own
order, are the class names. The dataset's ``train``, ``validation`` and ``test`` splits are
used where it has them; a missing one is held out of train, stratified by class and seeded:
the test split first, then validation from what is left, as `from_csv` does.

`describe_picked` says in one line which features and splits were used.
"""

from __future__ import annotations

import difflib
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

PREFIX = "tfds:"
# The splits a classifier needs, in the order the missing ones are held out of train.
OWN_SPLITS = ("train", "validation", "test")
HELD_OUT_ORDER = ("test", "validation")
# ClassLabel's value for an example without a label (GLUE's test splits, for instance).
UNLABELLED = -1
# Examples read per step: batching keeps the Python loop short on 100k-example datasets.
READ_BATCH = 1024
# Class names shown in the one-line description before "…".
SHOWN_CLASS_NAMES = 10


@dataclass(frozen=True)
class PickedColumns:
    """The features a TFDS dataset's texts and labels are read from."""

    text: tuple[str, ...]
    label: str
    class_names: tuple[str, ...]
    other_text: tuple[str, ...] = ()
    other_labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class SplitPlan:
    """Which splits came from the dataset and which were held out of its train split."""

    own: tuple[str, ...]
    held_out: tuple[str, ...]
    unlabelled: tuple[str, ...] = ()
    skipped: int = 0


def from_tfds(
    name: str,
    data_dir: str | Path | None = None,
    *,
    text_column: str | list[str] | None = None,
    label_column: str | None = None,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    split_seed: int = 0,
    log: Callable[[str], object] | None = None,
) -> TextClassificationData:
    """A text classification dataset from TensorFlow Datasets, read without a download.

    Args:
        name: The TFDS name, optionally with a config and version:
            ``"imdb_reviews"``, ``"imdb_reviews/plain_text"``, ``"tfds:imdb_reviews"``.
        data_dir: The TFDS data folder the dataset is prepared in (``tfds build NAME
            --data_dir DIR``); TFDS's default (``~/tensorflow_datasets``) if None.
        text_column: The string feature(s) the text is read from; several (a list, or
            ``"title,description"``) are joined by a space. By default ``"text"``, else
            the first ``Text`` feature.
        label_column: The ``ClassLabel`` feature of the labels. By default ``"label"``,
            else the first ``ClassLabel``.
        validation_fraction: Part of train held out for validation where the dataset has
            no labelled validation split.
        test_fraction: Part of train held out for testing where the dataset has no
            labelled test split.
        split_seed: Seed of the held-out splits.
        log: Called with `describe_picked`'s line (``log=print`` shows it); silent if None.

    Returns:
        The data, named ``name`` with ``/`` and ``:`` as ``-`` (it becomes a folder name):
        ``"imdb_reviews-plain_text"``. Its class names are the ``ClassLabel``'s names.

    Raises:
        KerasformerError: A name TFDS does not know (with close matches), a config the
            dataset lacks, a ``text_column`` or ``label_column`` that is not a string or
            ``ClassLabel`` feature, no train split or no labelled one, or a dataset not
            prepared in ``data_dir`` (it is never downloaded).

    Examples:
        With ``imdb_reviews`` prepared in TFDS's folder, ``from_tfds("imdb_reviews",
        log=print)`` prints

        ```text
        tfds:imdb_reviews: text from 'text', labels from 'label' (2 classes: neg, pos); splits train, test (validation held out of train)
        ```

        and the data's ``class_names`` are ``('neg', 'pos')``. In a folder where it is
        not prepared, it says how to prepare it:

        >>> from_tfds("imdb_reviews", "empty_tfds")
        Traceback (most recent call last):
        ...
        kerasformer.errors.KerasformerError: tfds:imdb_reviews is not prepared in empty_tfds;
        run `tfds build imdb_reviews --data_dir empty_tfds` on a machine with internet, or
        pass --tfds-data-dir where it is prepared.
    """  # noqa: E501
    name = tfds_name(name)
    builder = open_builder(name, data_dir)
    columns = pick_columns(name, builder.info.features, text_column, label_column)
    own = own_split_names(name, builder)
    splits, skipped = drop_unlabelled(
        {split: read_split(name, builder, split, columns) for split in own}
    )
    unlabelled = tuple(split for split in own if split not in splits)
    if "train" in unlabelled:
        raise KerasformerError(
            f"{PREFIX}{name}: its train split has no labelled examples; pick a dataset whose "
            "train split is labelled."
        )
    held_out = tuple(split for split in HELD_OUT_ORDER if split not in splits)
    fractions = {"test": test_fraction, "validation": validation_fraction}
    for split in held_out:
        splits["train"], splits[split] = stratified_split(
            splits["train"], fractions[split], split_seed
        )
    data = TextClassificationData(
        name=tfds_data_name(name),
        class_names=columns.class_names,
        splits={split: splits[split] for split in OWN_SPLITS},
    )
    require_trainable(data)
    if log is not None:
        own = tuple(split for split in own if split in splits and split not in held_out)
        log(describe_picked(name, columns, SplitPlan(own, held_out, unlabelled, skipped)))
    return data


def tfds_name(name: str) -> str:
    """``name`` without the ``tfds:`` the command line's ``--dataset`` takes."""
    name = name.strip()
    return name[len(PREFIX) :] if name.startswith(PREFIX) else name


def is_tfds(dataset: str) -> bool:
    """Whether ``--dataset`` names a TensorFlow Datasets dataset (``tfds:NAME``)."""
    return dataset.strip().startswith(PREFIX)


def tfds_data_name(name: str) -> str:
    """The data's name in messages and export folders: ``glue-sst2`` for ``tfds:glue/sst2``."""
    return tfds_name(name).replace("/", "-").replace(":", "-")


def describe_picked(name: str, columns: PickedColumns, plan: SplitPlan) -> str:
    """One line: which features the texts and labels came from, and where each split did.

    >>> describe_picked("imdb_reviews", PickedColumns(("text",), "label", ("neg", "pos")),
    ...                 SplitPlan(own=("train", "test"), held_out=("validation",)))
    "tfds:imdb_reviews: text from 'text', labels from 'label' (2 classes: neg, pos); splits train, test (validation held out of train)"
    """  # noqa: E501
    texts = " + ".join(repr(column) for column in columns.text)
    shown = ", ".join(columns.class_names[:SHOWN_CLASS_NAMES])
    if len(columns.class_names) > SHOWN_CLASS_NAMES:
        shown += ", …"
    line = (
        f"{PREFIX}{name}: text from {texts}, labels from {columns.label!r} "
        f"({len(columns.class_names)} classes: {shown}); splits {', '.join(plan.own)}"
    )
    if plan.held_out:
        line += f" ({' and '.join(plan.held_out)} held out of train)"
    notes = []
    if plan.unlabelled:
        several = len(plan.unlabelled) > 1
        notes.append(
            f"its {' and '.join(plan.unlabelled)} split{'s have' if several else ' has'} no labels"
        )
    if plan.skipped:
        notes.append(f"skipped {plan.skipped} unlabelled examples")
    # Say what else could have been picked, so a wrong guess is one flag away from right.
    if columns.other_text:
        notes.append(f"other text features: {', '.join(columns.other_text)} (--text-column)")
    if columns.other_labels:
        notes.append(f"other labels: {', '.join(columns.other_labels)} (--label-column)")
    return "; ".join([line, *notes])


def open_builder(name: str, data_dir: str | Path | None):
    """The TFDS builder of ``name``: its features and splits, without reading any data."""
    import tensorflow_datasets as tfds

    dataset, config = dataset_and_config(name)
    require_known_dataset(dataset, tfds.list_builders(with_community_datasets=False))
    require_known_config(dataset, config, tfds.builder_cls(dataset))
    try:
        # TFDS does not expand "~" itself.
        folder = None if data_dir is None else str(Path(data_dir).expanduser())
        return tfds.builder(name, data_dir=folder)
    except (ValueError, AssertionError) as error:  # e.g. a version the code cannot read
        raise KerasformerError(
            f"{PREFIX}{name}: TFDS cannot make it ({tfds_cause(error)}); give a name "
            f"`tfds.builder` takes, such as {PREFIX}{dataset}."
        ) from error


def dataset_and_config(name: str) -> tuple[str, str | None]:
    """``"glue/sst2:2.0.0"`` is dataset ``glue``, config ``sst2`` (the version is TFDS's)."""
    dataset, _, rest = name.partition("/")
    config = rest.partition(":")[0] or None
    return dataset.partition(":")[0], config


def require_known_dataset(dataset: str, known: list[str]) -> None:
    if dataset in known:
        return
    # list_builders can name a dataset twice (registered both eagerly and lazily).
    close = difflib.get_close_matches(dataset, sorted(set(known)), n=3)
    hint = f"did you mean {' or '.join(PREFIX + match for match in close)}? " if close else ""
    raise KerasformerError(
        f"{PREFIX}{dataset} is not a TensorFlow Datasets dataset; {hint}"
        "`tfds.list_builders()` lists the names, https://www.tensorflow.org/datasets/catalog "
        "describes them."
    )


def require_known_config(dataset: str, config: str | None, builder_class) -> None:
    configs = [each.name for each in builder_class.BUILDER_CONFIGS or ()]
    if config is None or config in configs:
        return
    if not configs:
        raise KerasformerError(
            f"{PREFIX}{dataset} has no configs, so not {config!r}; use {PREFIX}{dataset}."
        )
    close = difflib.get_close_matches(config, configs, n=1)
    best = close[0] if close else configs[0]
    raise KerasformerError(
        f"{PREFIX}{dataset} has no config {config!r} (its configs: {', '.join(configs)}); "
        f"use e.g. {PREFIX}{dataset}/{best}."
    )


def pick_columns(
    name: str,
    features,
    text_column: str | list[str] | None,
    label_column: str | None,
) -> PickedColumns:
    """The text and label features, as chosen or by default, checked against ``features``.

    ``features`` is the dataset's ``tfds.features.FeaturesDict``.
    """
    import tensorflow_datasets as tfds

    texts = [key for key, feature in features.items() if is_text_feature(feature)]
    labels = [
        key for key, feature in features.items() if isinstance(feature, tfds.features.ClassLabel)
    ]
    chosen_texts = text_columns_of(name, features, texts, text_column)
    chosen_label = label_column_of(name, features, labels, label_column)
    return PickedColumns(
        text=tuple(chosen_texts),
        label=chosen_label,
        class_names=tuple(features[chosen_label].names),
        other_text=tuple(key for key in texts if key not in chosen_texts),
        other_labels=tuple(key for key in labels if key != chosen_label),
    )


def is_text_feature(feature) -> bool:
    """A ``Text`` feature that holds strings (not token ids), one string an example."""
    import tensorflow_datasets as tfds

    return isinstance(feature, tfds.features.Text) and is_scalar_string(feature)


def is_scalar_string(feature) -> bool:
    import tensorflow_datasets as tfds

    # ClassLabel, Text and string Tensor features are all Tensors; strings are objects.
    return (
        isinstance(feature, tfds.features.Tensor)
        and tuple(feature.shape) == ()
        and np.dtype(feature.np_dtype) == np.dtype(object)
    )


def text_columns_of(
    name: str, features, texts: list[str], text_column: str | list[str] | None
) -> list[str]:
    if text_column is None:
        if not texts:
            raise KerasformerError(
                f"{PREFIX}{name} has no string Text feature (its features: "
                f"{feature_list(features)}); pass --text-column naming a string feature, or "
                "pick a dataset with text."
            )
        return ["text"] if "text" in texts else texts[:1]
    chosen = split_names(text_column)
    if not chosen:
        raise KerasformerError(
            f"--text-column is empty; name one or more of {PREFIX}{name}'s string features: "
            f"{', '.join(texts) or 'it has none'}."
        )
    for column in chosen:
        require_feature(name, features, column, "--text-column")
        # A string Tensor (an id, a date) is accepted when asked for by name.
        if not is_scalar_string(features[column]):
            raise KerasformerError(
                f"--text-column {column!r} of {PREFIX}{name} is not a string feature (its "
                f"features: {feature_list(features)}); pass --text-column one of: "
                f"{', '.join(texts) or 'none, it has no text'}."
            )
    return chosen


def label_column_of(name: str, features, labels: list[str], label_column: str | None) -> str:
    import tensorflow_datasets as tfds

    if label_column is None:
        if not labels:
            raise KerasformerError(
                f"{PREFIX}{name} has no ClassLabel feature (its features: "
                f"{feature_list(features)}), so it has no classes to learn; pick a dataset "
                "with one, which --label-column can name."
            )
        return "label" if "label" in labels else labels[0]
    column = label_column.strip()
    require_feature(name, features, column, "--label-column")
    if not isinstance(features[column], tfds.features.ClassLabel):
        raise KerasformerError(
            f"--label-column {column!r} of {PREFIX}{name} is not a ClassLabel feature (its "
            f"features: {feature_list(features)}); pass --label-column one of: "
            f"{', '.join(labels) or 'none, it has no ClassLabel'}."
        )
    return column


def split_names(columns: str | list[str]) -> list[str]:
    """``"title,description"`` or ``["title", "description"]`` as a list of names."""
    parts = columns.split(",") if isinstance(columns, str) else list(columns)
    return [part.strip() for part in parts if part.strip()]


def require_feature(name: str, features, column: str, flag: str) -> None:
    if column not in features:
        raise KerasformerError(
            f"{flag} {column!r} is not a feature of {PREFIX}{name} (its features: "
            f"{feature_list(features)}); pass {flag} one of them."
        )


def feature_list(features) -> str:
    """``"text (Text), label (ClassLabel)"``: each feature's name and kind, for messages."""
    return ", ".join(f"{key} ({type(feature).__name__})" for key, feature in features.items())


def own_split_names(name: str, builder) -> tuple[str, ...]:
    """The dataset's own train, validation and test splits, as its metadata lists them.

    Metadata without splits (``tfds.testing.mock_data`` without metadata files, or data
    not prepared) names none: then train is read, and reading it says whether it is there.
    """
    recorded = list(builder.info.splits)
    if not recorded:
        return ("train",)
    if "train" not in recorded:
        raise KerasformerError(
            f"{PREFIX}{name} has no train split (its splits: {', '.join(recorded)}); pick a "
            "dataset with one."
        )
    return tuple(split for split in OWN_SPLITS if split in recorded)


def read_split(name: str, builder, split: str, columns: PickedColumns) -> LabeledTexts:
    """One split's texts (joined, whitespace normalised) and labels, read without a download."""
    import tensorflow_datasets as tfds

    needed = [*columns.text, columns.label]
    try:
        # Decoding only the chosen features skips the images or audio a dataset may hold.
        dataset = builder.as_dataset(
            split=split, decoders=tfds.decode.PartialDecoding(dict.fromkeys(needed, True))
        )
        dataset = dataset.map(lambda example: {key: example[key] for key in needed})
        texts, labels = [], []
        for batch in tfds.as_numpy(dataset.batch(READ_BATCH)):
            texts.extend(joined_texts(batch, columns.text))
            labels.extend(batch[columns.label].tolist())
    except missing_data_errors() as error:
        raise not_prepared_error(name, builder) from error
    return LabeledTexts(np.array(texts, dtype=object), np.array(labels, dtype=np.int64))


def joined_texts(batch: dict, text_columns: tuple[str, ...]) -> list[str]:
    # A public dataset's stray bad byte should not stop training, hence "replace".
    return [
        " ".join(" ".join(value.decode("utf-8", "replace") for value in values).split())
        for values in zip(*(batch[column] for column in text_columns), strict=True)
    ]


def missing_data_errors() -> tuple[type[BaseException], ...]:
    """What reading a split raises where its data is not there, without a download."""
    import tensorflow_datasets as tfds

    from kerasformer.backend import tf

    # as_dataset asserts the data folder exists; a half-copied folder fails on a file.
    return (AssertionError, tfds.core.registered.DatasetNotFoundError, tf.errors.NotFoundError)


def not_prepared_error(name: str, builder) -> KerasformerError:
    data_dir = builder.data_dir_root
    return KerasformerError(
        f"{PREFIX}{name} is not prepared in {data_dir}; run `tfds build {name} --data_dir "
        f"{data_dir}` on a machine with internet, or pass --tfds-data-dir where it is prepared."
    )


def drop_unlabelled(parts: dict[str, LabeledTexts]) -> tuple[dict[str, LabeledTexts], int]:
    """The splits without their examples of label -1 (TFDS's "no label"), leaving out a
    split with no label at all (it is then held out of train like a missing one), and how
    many examples went from the splits that stay."""
    kept, skipped = {}, 0
    for split, part in parts.items():
        labelled = part.labels != UNLABELLED
        if labelled.any():
            kept[split] = LabeledTexts(part.texts[labelled], part.labels[labelled])
            skipped += int((~labelled).sum())
    return kept, skipped


def tfds_cause(error: BaseException) -> str:
    """The first line of TFDS's reason, without its 'Failed to construct dataset ...: '."""
    lines = str(error).strip().splitlines()
    if not lines:
        return type(error).__name__
    return lines[0].rpartition('": ')[2].strip().rstrip(".")
