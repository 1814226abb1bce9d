"""Labelled texts split into train, validation and test, as NumPy arrays and ``tf.data``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kerasformer.backend import tf
from kerasformer.datasets.splits import SPLITS, AlignedArrays, Splits
from kerasformer.errors import KerasformerError


@dataclass(frozen=True)
class LabeledTexts(AlignedArrays):
    """Texts with integer labels, aligned by position.

    One split of a `TextClassificationData`; ``len(part)`` is its number of examples.

    Args:
        texts: The texts, a 1-D NumPy array of ``str`` (``dtype=object``).
        labels: Their labels, aligned with ``texts``: integer class ids (0 to classes - 1),
            or for a multi-label dataset rows of 0s and 1s, one column per class.

    Examples:
        >>> import numpy as np
        >>> part = LabeledTexts(np.array(["Shares rose.", "City won 2-0."], dtype=object),
        ...                     np.array([0, 1]))
        >>> len(part)
        2
        >>> text, label = next(iter(part.to_dataset()))
        >>> text.numpy(), int(label)
        (b'Shares rose.', 0)
    """

    texts: np.ndarray
    labels: np.ndarray

    def to_dataset(self) -> tf.data.Dataset:
        """A ``tf.data.Dataset`` of ``(text, label)`` pairs, unbatched.

        Labels are int64 class ids, or float32 rows where they are not integers (such as a
        teacher's probabilities for distillation).
        """
        kind = tf.int64 if np.issubdtype(np.asarray(self.labels).dtype, np.integer) else tf.float32
        return tf.data.Dataset.from_tensor_slices(
            (tf.constant(self.texts, dtype=tf.string), tf.constant(self.labels, dtype=kind))
        )


@dataclass(frozen=True)
class TextClassificationData(Splits):
    """A text classification dataset: three splits and the class names.

    ``train``, ``validation`` and ``test`` are ``tf.data`` datasets of ``(text, label)``;
    ``splits`` holds the same data as NumPy arrays. A ``multi_label`` dataset's labels are
    rows of 0s and 1s, one column per class (float32): a text may be of several classes.
    Every loader (`load_bbc_news`, `from_csv` ...) returns one, and ``train(config,
    data=...)`` trains on one you make yourself.

    Args:
        name: The dataset's name in messages and export names.
        class_names: The classes' names, label ``i`` naming ``class_names[i]``.
        splits: The ``train``, ``validation`` and ``test`` `LabeledTexts` by name.
        multi_label: Whether the labels are rows of 0s and 1s (keyword-only).

    Examples:
        >>> import numpy as np
        >>> part = LabeledTexts(np.array(["good", "bad"], dtype=object), np.array([1, 0]))
        >>> data = TextClassificationData("reviews", ("negative", "positive"),
        ...                               {"train": part, "validation": part, "test": part})
        >>> data.num_classes, data.sizes()
        (2, {'train': 2, 'validation': 2, 'test': 2})
        >>> data.train.element_spec
        (TensorSpec(shape=(), dtype=tf.string, name=None),
         TensorSpec(shape=(), dtype=tf.int64, name=None))
    """

    name: str
    class_names: tuple[str, ...]
    splits: dict[str, LabeledTexts]
    # Keyword-only: subclasses (distillation's data) keep their positional fields.
    multi_label: bool = field(default=False, kw_only=True)

    @property
    def num_classes(self) -> int:
        return len(self.class_names)

    @property
    def train(self) -> tf.data.Dataset:
        return self.splits["train"].to_dataset()

    @property
    def validation(self) -> tf.data.Dataset:
        return self.splits["validation"].to_dataset()

    @property
    def test(self) -> tf.data.Dataset:
        return self.splits["test"].to_dataset()


def stratified_split(
    data: LabeledTexts, fraction: float, seed: int, class_names: Sequence[str] | None = None
) -> tuple[LabeledTexts, LabeledTexts]:
    """Split off ``fraction`` of the examples, keeping class proportions, reproducibly.

    ``class_names`` (by label) name a class too rare to split in the error.

    Identical texts always land on the same side: BBC News holds 100 articles twice, and
    a copy in train would leak its twin's label into test. Multi-label rows (one column
    per class) are split at random: their label sets are too many to stratify by.
    """
    if not 0 < fraction < 1:
        raise KerasformerError(f"a split fraction must be between 0 and 1, got {fraction!r}.")
    # Imported here: scikit-learn costs a command that reads no data a second to start.
    from sklearn.model_selection import train_test_split

    _, first, group = np.unique(data.texts.astype(str), return_index=True, return_inverse=True)
    if np.ndim(data.labels) == 1:
        require_two_of_each_class(data.labels[first], class_names)
    try:
        _, held_groups = train_test_split(
            np.arange(len(first)),
            test_size=fraction,
            random_state=seed,
            stratify=data.labels[first] if np.ndim(data.labels) == 1 else None,
        )
    except ValueError as error:
        raise KerasformerError(
            f"cannot split {len(data)} examples {fraction:.0%} stratified by class ({error}); "
            "give more examples of every class."
        ) from error
    held = np.isin(group, held_groups)
    return (
        LabeledTexts(data.texts[~held], data.labels[~held]),
        LabeledTexts(data.texts[held], data.labels[held]),
    )


def require_two_of_each_class(labels: np.ndarray, class_names: Sequence[str] | None) -> None:
    """A stratified split puts some of every class on each side: a class of one distinct
    text cannot be split (scikit-learn would name it by its index)."""
    found, counts = np.unique(labels, return_counts=True)
    alone = [int(label) for label, count in zip(found, counts, strict=True) if count < 2]
    if alone:
        names = [repr(class_names[i]) if class_names else f"label {i}" for i in alone]
        raise KerasformerError(
            f"class {', '.join(names)} has only one example (distinct text) to split between "
            "training and held-out data; give it more examples, give your own validation "
            "and test files, or drop it."
        )


def with_validation_split(
    name: str,
    class_names: tuple[str, ...],
    train: LabeledTexts,
    test: LabeledTexts,
    validation_fraction: float,
    split_seed: int,
) -> TextClassificationData:
    """Hold out a stratified validation split of ``train``; ``test`` stays untouched."""
    require_two_classes(name, "training data", train, tuple(class_names))
    train, validation = stratified_split(train, validation_fraction, split_seed, class_names)
    data = TextClassificationData(
        name=name,
        class_names=tuple(class_names),
        splits={"train": train, "validation": validation, "test": test},
    )
    require_trainable(data)
    return data


def require_trainable(data: TextClassificationData) -> None:
    """Refuse data that would train or evaluate a model that means nothing, without a word.

    A single training class gives a classifier that always answers it; an empty split
    gives no metrics; a label past the class names cannot be a class.
    """
    missing = [name for name in SPLITS if name not in data.splits]
    if missing:
        raise KerasformerError(
            f"{data.name} has no {', '.join(missing)} split; give "
            f"TextClassificationData splits named {', '.join(SPLITS)}."
        )
    if data.num_classes < 2:
        raise KerasformerError(
            f"{data.name} names {data.num_classes} class(es) {data.class_names!r}; "
            "a classifier needs at least two class names."
        )
    if data.multi_label:
        require_label_rows(data)
        return
    for name in SPLITS:
        require_usable_split(data.name, name, data.splits[name], data.num_classes)
    require_two_classes(data.name, "train split", data.splits["train"], data.class_names)


def require_label_rows(data: TextClassificationData) -> None:
    """Multi-label splits: rows of 0s and 1s, one per class, and two classes in train."""
    for name in SPLITS:
        part = data.splits[name]
        if len(part) == 0:
            raise KerasformerError(
                f"{data.name} {name} split is empty; give it examples to measure the model on."
            )
        labels = np.asarray(part.labels)
        if (
            labels.ndim != 2
            or labels.shape[1] != data.num_classes
            or not np.isin(labels, (0, 1)).all()
        ):
            raise KerasformerError(
                f"{data.name} {name} labels of a multi-label dataset must be rows of 0s and 1s, "
                f"one column per class ({data.num_classes}), got shape {labels.shape}."
            )
    seen = np.flatnonzero(np.asarray(data.splits["train"].labels).sum(axis=0))
    if len(seen) < 2:
        raise KerasformerError(
            f"{data.name} train split has examples of {len(seen)} class(es); a classifier "
            "needs examples of at least two classes."
        )


def require_usable_split(dataset: str, split: str, part: LabeledTexts, num_classes: int) -> None:
    if len(part) == 0:
        raise KerasformerError(
            f"{dataset} {split} split is empty; give it examples to measure the model on."
        )
    labels = np.asarray(part.labels)
    if not np.issubdtype(labels.dtype, np.integer):
        raise KerasformerError(
            f"{dataset} {split} labels are {labels.dtype}, not integers; "
            f"give class indices 0 to {num_classes - 1}."
        )
    outside = labels[(labels < 0) | (labels >= num_classes)]
    if outside.size:
        raise KerasformerError(
            f"{dataset} {split} split has label {int(outside[0])} ({outside.size} outside "
            f"0 to {num_classes - 1}); give one class name per label."
        )


def require_two_classes(
    dataset: str, what: str, part: LabeledTexts, class_names: tuple[str, ...]
) -> None:
    if len(part) == 0:
        raise KerasformerError(f"{dataset} {what} has no examples; give it examples to learn.")
    present = np.unique(part.labels)
    if len(present) == 1:
        only = int(present[0])
        name = repr(class_names[only]) if 0 <= only < len(class_names) else f"label {only}"
        raise KerasformerError(
            f"{dataset} {what} has {len(part)} examples, all of class {name}; a classifier "
            "needs examples of at least two classes: add examples of the other classes."
        )
