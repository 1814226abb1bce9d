"""``tf.data`` input pipelines for ``model.fit``: raw strings, or token ids made once.

A model that starts with a ``TextVectorization`` can train on token ids instead of
strings. The ids are computed once, kept unpadded in memory, and padded per batch:

- ``strings``: ``(text, label)`` batches; the model vectorizes every text every epoch.
- ``padded``: cached ids padded to ``maxlen``, as the vectorizer would give them.
- ``dynamic``: cached ids padded to the longest text of each batch.
- ``bucketed``: like ``dynamic``, but each batch is drawn from texts of similar length,
  so short texts are not padded to the length of a long one.

With padding masked, every pipeline trains the same model on the same examples; only
the work spent on padding, and for ``bucketed`` the mix of texts in a batch, differ.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kerasformer.backend import tf
from kerasformer.datasets.text_classification_data import LabeledTexts

INPUT_PIPELINES = ("strings", "padded", "dynamic", "bucketed")
TOKEN_ID_PIPELINES = INPUT_PIPELINES[1:]
_VECTORIZE_BATCH = 1024


def text_batches(
    part: LabeledTexts, batch_size: int, shuffle_seed: int | None = None
) -> tf.data.Dataset:
    """``(texts, labels)`` batches, reshuffled every epoch when ``shuffle_seed`` is given."""
    dataset = part.to_dataset()
    if shuffle_seed is not None:
        dataset = dataset.shuffle(len(part), seed=shuffle_seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def token_id_examples(
    part: LabeledTexts, vectorize: Callable[[tf.Tensor], tf.Tensor]
) -> tf.data.Dataset:
    """``(ids, label)`` pairs, each text's ids without padding, computed once and cached."""

    def padded_ids_and_lengths(texts, labels):
        ids = vectorize(texts)
        return ids, tf.reduce_sum(tf.cast(tf.not_equal(ids, 0), tf.int32), axis=-1), labels

    return (
        part.to_dataset()
        .batch(_VECTORIZE_BATCH)
        .map(padded_ids_and_lengths)
        .unbatch()
        .map(lambda ids, length, label: (ids[:length], label))
        .cache()
        .apply(tf.data.experimental.assert_cardinality(len(part)))
    )


def token_id_batches(
    examples: tf.data.Dataset,
    batch_size: int,
    pipeline: str,
    maxlen: int,
    shuffle_seed: int | None = None,
    fixed_shapes: bool = False,
    bucket_width: int | None = None,
) -> tf.data.Dataset:
    """Padded ``(ids, labels)`` batches from `token_id_examples`, as ``pipeline`` says.

    ``fixed_shapes`` pads ``bucketed`` batches to their bucket's upper bound instead of
    their longest text, so a compiler (XLA) sees a handful of shapes, not one per batch.
    ``bucket_width`` makes ``bucketed`` use buckets of that many tokens each instead of
    buckets that grow by half (see `length_bucket_boundaries`).
    """
    if pipeline not in TOKEN_ID_PIPELINES:
        raise ValueError(f"pipeline must be one of {TOKEN_ID_PIPELINES}, got {pipeline!r}.")
    unshuffled = examples
    if shuffle_seed is not None:
        size = int(examples.cardinality())
        examples = examples.shuffle(size, seed=shuffle_seed, reshuffle_each_iteration=True)
    if pipeline == "padded":
        label_shape = examples.element_spec[1].shape
        batches = examples.padded_batch(batch_size, padded_shapes=([maxlen], label_shape))
    elif pipeline == "dynamic":
        batches = examples.padded_batch(batch_size)
    else:
        boundaries = length_bucket_boundaries(maxlen, bucket_width)
        batches = examples.bucket_by_sequence_length(
            element_length_func=lambda ids, label: tf.shape(ids)[0],
            bucket_boundaries=boundaries,
            bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
            pad_to_bucket_boundary=fixed_shapes,
        )
        # The batch count does not depend on the order, so it is known before an epoch.
        # Keras then shows progress out of a total and treats every epoch alike.
        count = bucketed_batch_count(text_lengths(unshuffled), boundaries, batch_size)
        batches = batches.apply(tf.data.experimental.assert_cardinality(count))
    return batches.prefetch(tf.data.AUTOTUNE)


def text_lengths(examples: tf.data.Dataset) -> np.ndarray:
    """The number of token ids of every example (one pass, which also fills a cache)."""
    lengths = examples.map(lambda ids, label: tf.shape(ids)[0]).batch(_VECTORIZE_BATCH)
    return np.concatenate([np.zeros(0, np.int32), *(batch.numpy() for batch in lengths)])


def bucketed_batch_count(lengths: np.ndarray, boundaries: list[int], batch_size: int) -> int:
    """How many batches bucketing makes: each bucket ends with one partial batch, if any."""
    buckets = np.searchsorted(boundaries, lengths, side="right")
    sizes = np.bincount(buckets, minlength=len(boundaries) + 1)
    return int(np.sum(-(-sizes // batch_size)))


def length_bucket_boundaries(maxlen: int, width: int | None = None) -> list[int]:
    """Bucket limits for texts of 1 to ``maxlen`` tokens, each about 1.5x the last.

    With ``width``, every bucket spans ``width`` tokens instead: less padding, more
    buckets (and, under XLA, more shapes to compile). A text of ``n`` tokens goes to the
    first bucket whose limit exceeds ``n``.
    """
    if width is not None:
        return [*range(width, maxlen + 1, width), maxlen + 1]
    boundaries, limit = [], 8
    while limit <= maxlen:
        boundaries.append(limit)
        limit = max(limit + 8, int(limit * 1.5) // 8 * 8)
    return [*boundaries, maxlen + 1]


def sequence_pair_examples(
    pairs: tf.data.Dataset,
    source_ids: Callable[[tf.Tensor], tf.RaggedTensor],
    target_ids: Callable[[tf.Tensor], tf.RaggedTensor],
    maxlen: int,
) -> tf.data.Dataset:
    """``(source ids, target ids)`` of string pairs, computed once and cached.

    Pairs with a side longer than ``maxlen`` ids are left out (a model cannot read them).
    """

    def padded_ids_and_lengths(sources, targets):
        sources, targets = source_ids(sources), target_ids(targets)
        return (
            sources.to_tensor(),
            sources.row_lengths(),
            targets.to_tensor(),
            targets.row_lengths(),
        )

    def unpadded(source, source_length, target, target_length):
        return source[:source_length], target[:target_length]

    def fits(source, target):
        return tf.logical_and(tf.size(source) <= maxlen, tf.size(target) <= maxlen)

    return (
        pairs.batch(_VECTORIZE_BATCH)
        .map(padded_ids_and_lengths)
        .unbatch()
        .map(unpadded)
        .filter(fits)
        .cache()
    )


def teacher_forcing_batches(
    examples: tf.data.Dataset,
    batch_size: int,
    maxlen: int,
    shuffle_seed: int | None = None,
    fixed_shapes: bool = False,
    inputs: tuple[str, str] = ("source_ids", "target_ids"),
) -> tf.data.Dataset:
    """``({source, target[:-1]}, target[1:])`` batches of pairs of similar length.

    The decoder reads the target up to each position and predicts the next token.
    Batches are bucketed by the longer side of each pair and padded with 0 per batch,
    or with ``fixed_shapes`` to the bucket's limit (a handful of shapes for XLA).
    """
    lengths = np.concatenate(
        [np.zeros(0, np.int32)]
        + [
            batch.numpy()
            for batch in examples.map(
                lambda source, target: tf.maximum(tf.size(source), tf.size(target))
            ).batch(_VECTORIZE_BATCH)
        ]
    )
    examples = examples.apply(tf.data.experimental.assert_cardinality(len(lengths)))
    if shuffle_seed is not None:
        examples = examples.shuffle(len(lengths), seed=shuffle_seed, reshuffle_each_iteration=True)
    boundaries = length_bucket_boundaries(maxlen)
    source_name, target_name = inputs

    def shifted(source, target):
        return {source_name: source, target_name: target[:-1]}, target[1:]

    batches = examples.map(shifted).bucket_by_sequence_length(
        element_length_func=lambda inputs, labels: tf.maximum(
            tf.size(inputs[source_name]), tf.size(labels) + 1
        ),
        bucket_boundaries=boundaries,
        bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
        pad_to_bucket_boundary=fixed_shapes,
    )
    count = bucketed_batch_count(lengths, boundaries, batch_size)
    return batches.apply(tf.data.experimental.assert_cardinality(count)).prefetch(tf.data.AUTOTUNE)


def next_token_windows(ids: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """A token stream cut into inputs and next-token targets of ``window`` tokens.

    Windows do not overlap, as in the PyTorch word_language_model example; the tokens
    left over at the end (fewer than a window) are dropped. A stream shorter than one
    window is one shorter window, so a small text's split still trains and validates.
    """
    window = max(1, min(window, len(ids) - 1))
    count = max(0, (len(ids) - 1) // window)
    inputs = ids[: count * window].reshape(count, window)
    targets = ids[1 : count * window + 1].reshape(count, window)
    return inputs, targets


def strided_next_token_windows(
    ids: np.ndarray, window: int, stride: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overlapping windows that score every next token once, each with enough context.

    Windows start every ``stride`` tokens; the first scores all its targets, each later
    one only those the previous windows did not, so every target after the first window
    is read with at least ``window - stride`` tokens before it. Returns ``inputs`` and
    ``targets`` of shape ``(windows, window)``, padded with 0 at the end, and ``weights``:
    1 where a target is scored, 0 elsewhere.
    """
    if not 1 <= stride <= window:
        raise ValueError(f"stride must be from 1 to the window ({window}), got {stride}.")
    last_target = len(ids) - 1
    inputs, targets, weights = [], [], []
    scored = 0  # targets 1..scored are scored already
    start = 0
    while scored < last_target:
        length = min(window, last_target - start)
        row = np.zeros((3, window), ids.dtype)
        row[0, :length] = ids[start : start + length]
        row[1, :length] = ids[start + 1 : start + length + 1]
        first_new = scored - start  # index of target scored + 1 in this window
        row[2, first_new:length] = 1
        inputs.append(row[0]), targets.append(row[1]), weights.append(row[2])
        scored = start + length
        start += stride
    if not inputs:  # fewer than two tokens: nothing to predict
        return (np.zeros((0, window), ids.dtype),) * 2 + (np.zeros((0, window), np.float32),)
    return np.array(inputs), np.array(targets), np.array(weights, np.float32)


def next_token_batches(
    ids: np.ndarray, window: int, batch_size: int, shuffle_seed: int | None = None
) -> tf.data.Dataset:
    """``(inputs, targets)`` batches of `next_token_windows`, reshuffled every epoch."""
    inputs, targets = next_token_windows(ids, window)
    dataset = tf.data.Dataset.from_tensor_slices((inputs, targets))
    if shuffle_seed is not None:
        dataset = dataset.shuffle(len(inputs), seed=shuffle_seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)
