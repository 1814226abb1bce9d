"""Seeded train/validation/test splits that keep every group of items in one split."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple

import numpy as np

from kerasformer.datasets.splits import SPLITS
from kerasformer.errors import KerasformerError
from kerasformer.validation import is_real_number


def require_fractions(validation_fraction: float, test_fraction: float) -> None:
    fractions = (validation_fraction, test_fraction)
    if (
        any(not is_real_number(f) or not 0 < f < 1 for f in fractions)
        or validation_fraction + test_fraction >= 1
    ):
        raise KerasformerError(
            "validation_fraction and test_fraction must each be between 0 and 1 and sum to "
            f"less than 1, got {validation_fraction!r} and {test_fraction!r}."
        )


class HeldOut(NamedTuple):
    """How the splits without a file of their own are dealt out of the training data: the
    shares of it they take, and the seed. Made checked by `held_out`."""

    validation_fraction: float
    test_fraction: float
    seed: int


def held_out(validation_fraction: float, test_fraction: float, seed: int) -> HeldOut:
    """The `HeldOut` of a reader's arguments, refused in one line if the shares are wrong."""
    require_fractions(validation_fraction, test_fraction)
    return HeldOut(validation_fraction, test_fraction, seed)


def grouped_split(
    group_keys: Sequence[Hashable], validation_fraction: float, test_fraction: float, seed: int
) -> dict[str, np.ndarray]:
    """Indices of the train, validation and test items; each group lies in one split.

    Groups (items sharing a key: translations of one sentence, questions on one article)
    are shuffled and dealt to test, then validation, then train, each split taking
    whole groups until its share of the items is reached; the indices are then shuffled
    inside each split. The same seed gives the same result.

    Example:

    >>> grouped_split(["a", "a", "b", "c"], 0.25, 0.25, seed=0)["train"]
    array([...])
    """
    group_of: dict[Hashable, int] = {}
    group = np.array([group_of.setdefault(key, len(group_of)) for key in group_keys], dtype=int)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(group_of))
    sizes = np.bincount(group, minlength=len(group_of))[order]
    items_before = np.cumsum(sizes) - sizes
    total = len(group)
    # 2 = test, 1 = validation, 0 = train: indices into SPLITS.
    dealt = np.where(
        items_before < test_fraction * total,
        2,
        np.where(items_before < (test_fraction + validation_fraction) * total, 1, 0),
    )
    split_of_group = np.empty(len(group_of), dtype=int)
    split_of_group[order] = dealt
    split_of_item = split_of_group[group]
    return {
        name: rng.permutation(np.flatnonzero(split_of_item == index))
        for index, name in enumerate(SPLITS)
    }


def splits_of_files(
    files: dict[str, object],
    read: Callable[[object], object],
    group_keys: Callable[[object], Sequence[Hashable]],
    take: Callable[[object, np.ndarray], object],
    dealing: HeldOut,
) -> dict[str, object]:
    """A user's train, validation and test splits: each file given, read; the splits
    without a file dealt from the training file by `grouped_split`.

    Args:
        files: The path of each split (``train`` required), None where not given.
        read: One file's items.
        group_keys: The items' group keys (a group lands in one split).
        take: The items at some indices, in their order.
        dealing: How the splits without a file are dealt.
    """
    splits = {split: read(path) for split, path in files.items() if path is not None}
    return with_dealt_splits(splits, group_keys, take, dealing)


def with_dealt_splits(
    splits: dict[str, object],
    group_keys: Callable[[object], Sequence[Hashable]],
    take: Callable[[object, np.ndarray], object],
    dealing: HeldOut,
) -> dict[str, object]:
    """The three splits: those in ``splits`` (train required) as they are, the others
    dealt from train by `grouped_split`, train keeping the rest."""
    train = splits["train"]
    indices = grouped_split(
        group_keys(train),
        0.0 if "validation" in splits else dealing.validation_fraction,
        0.0 if "test" in splits else dealing.test_fraction,
        dealing.seed,
    )
    dealt = dict(splits)
    for split, chosen in indices.items():
        if split == "train" or split not in splits:
            dealt[split] = take(train, chosen)
    return {split: dealt[split] for split in SPLITS}


def require_every_split(name: str, sizes: dict[str, int], noun: str, fix: str) -> None:
    """A one-line error naming the first empty split of a user's data and the fixes."""
    for split in SPLITS:
        if sizes[split] == 0:
            fixes = f"{fix}, a --{split}-file, or a larger --{split}-fraction"
            if split == "train":  # the held-out splits took every group there was
                fixes = f"{fix}, or --validation-file and --test-file"
            raise KerasformerError(f"{name}: the {split} split would have no {noun}; give {fixes}.")
