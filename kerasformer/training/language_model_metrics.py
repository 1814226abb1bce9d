"""A language model's perplexity on a token stream, under the two protocols in use.

``perplexity`` reads the stream in windows that each start afresh, so a window's first
tokens are predicted from little context (what a model is trained on); ``strided_perplexity``
slides windows by half their length, so every token after the first window is predicted
from at least half a window (`strided_next_token_windows`), as the literature reports
WikiText-2. The trainer and ``kerasformer evaluate`` both score with `stream_metrics`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from kerasformer.backend import tf
from kerasformer.datasets.pipeline import next_token_batches, strided_next_token_windows


def stream_metrics(model, ids: np.ndarray, window: int, batch_size: int, loss_model=None) -> dict:
    """``{"loss", "perplexity", "token_accuracy", "tokens", "strided_perplexity"}`` of
    ``model`` (token ids in, next-token logits out) on the token ids ``ids``.

    Args:
        model: The language model.
        ids: The stream's token ids, in order.
        window: The model's window (``maxlen``).
        batch_size: Windows per batch.
        loss_model: ``model``'s `next_token_loss_model`, where its output is an adaptive
            softmax: the strided losses are then read from it, each in its target's
            cluster, instead of from every word's logit.

    Example:

    >>> stream_metrics(generator.model, ids, generator.maxlen, 32)["strided_perplexity"]
    152.3...
    """
    loss, accuracy = loss_and_accuracy(model, next_token_batches(ids, window, batch_size))
    return {
        "loss": float(loss),
        "perplexity": math.exp(loss),
        "token_accuracy": float(accuracy),
        "tokens": int((len(ids) - 1) // window * window),
        "strided_perplexity": strided_perplexity(model, ids, window, batch_size, loss_model),
    }


def vocabulary_index(vocabulary: Sequence[str]) -> dict[str, int]:
    """Each word's id: the vocabulary follows padding (0) and the unknown token (1)."""
    return {token: i + 2 for i, token in enumerate(vocabulary)}


def token_ids(tokens, index: dict[str, int]) -> np.ndarray:
    """Each token's id; tokens outside the vocabulary get the unknown id 1."""
    return np.fromiter((index.get(token, 1) for token in tokens), np.int32, len(tokens))


def loss_and_accuracy(model, batches: tf.data.Dataset) -> tuple[float, float]:
    """Mean next-token cross-entropy and accuracy of ``model`` over every target token."""
    every_token = batches.map(lambda x, y: (x, y, tf.ones_like(y, tf.float32)))
    loss, correct, count = summed_scores(model, every_token)
    if not count:
        return math.nan, math.nan
    return loss / count, correct / count


def strided_perplexity(
    model, ids: np.ndarray, window: int, batch_size: int, loss_model=None
) -> float:
    """exp of the mean loss of every next token of ``ids``, windows sliding by half.

    ``loss_model``, where given, is ``model``'s `next_token_loss_model`: each loss is then
    read from it instead of from ``model``'s logits.
    """
    inputs, targets, weights = strided_next_token_windows(ids, window, max(window // 2, 1))
    batches = tf.data.Dataset.from_tensor_slices((inputs, targets, weights)).batch(batch_size)
    if not weights.sum():
        return math.nan  # fewer than two tokens: no next token to predict
    if loss_model is None:
        loss, _, count = summed_scores(model, batches)
    else:
        loss, count = summed_losses(loss_model, batches)
    return math.exp(loss / count)


def summed_losses(loss_model, batches: tf.data.Dataset) -> tuple[float, float]:
    """Weighted sums of a `next_token_loss_model`'s losses and of the weights over
    ``(inputs, targets, weights)`` batches."""

    @tf.function
    def summed(x, y, w):
        losses = tf.cast(loss_model([x, y], training=False), tf.float32)
        return tf.reduce_sum(losses * w), tf.reduce_sum(w)

    totals = np.zeros(2)
    for x, y, w in batches:
        totals += [float(value) for value in summed(x, y, w)]
    return float(totals[0]), float(totals[1])


def summed_scores(model, batches: tf.data.Dataset) -> tuple[float, float, float]:
    """Weighted sums of next-token cross-entropy, right guesses and weights over
    ``(inputs, targets, weights)`` batches."""

    @tf.function
    def summed(x, y, w):
        logits = tf.cast(model(x, training=False), tf.float32)
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        right = tf.cast(tf.equal(tf.argmax(logits, axis=-1, output_type=y.dtype), y), tf.float32)
        return tf.reduce_sum(losses * w), tf.reduce_sum(right * w), tf.reduce_sum(w)

    totals = np.zeros(3)
    for x, y, w in batches:
        totals += [float(value) for value in summed(x, y, w)]
    return tuple(float(total) for total in totals)
