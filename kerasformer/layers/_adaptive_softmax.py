"""The arithmetic of an adaptive softmax over a tied token table (Grave et al. 2017).

Token ids are ranked by frequency, so the ids below the first cutoff are the frequent
words (the *head*) and each later range a *tail* cluster. The head softmax scores the head
words and one entry per tail; a tail word's probability is its cluster's head probability
times its share of a softmax over its own cluster, read through the cluster's projection
of the hidden vector. Every weight row of a word is its row of the token table.

`log_probabilities` forms every word's log-probability (for generation and for
evaluation against any id). `negative_log_likelihood` scores only each target's own
cluster, so training never forms a ``(tokens, vocab_size)`` tensor: on WikiText-2 (33,280
words, 77% of tokens in a 2,000-word head) that tensor, not the multiply-adds, bounds a
CPU step (`bench/language_model_steps.py`).
"""

from __future__ import annotations

from .backend import backend_name, ops


def _head_logits(rows, table, bias, cluster_kernel, cluster_bias, head_size: int):
    words = ops.matmul(rows, ops.transpose(table[:head_size])) + bias[:head_size]
    return ops.concatenate([words, ops.matmul(rows, cluster_kernel) + cluster_bias], axis=-1)


def _tail_logits(rows, table, bias, projection, start: int, end: int):
    projected = ops.matmul(rows, projection)
    return ops.matmul(projected, ops.transpose(table[start:end])) + bias[start:end]


def _bounds(cutoffs, vocab_size: int) -> list[tuple[int, int]]:
    edges = [*cutoffs, vocab_size]
    return list(zip(edges[:-1], edges[1:], strict=True))


def log_probabilities(rows, table, bias, cluster_kernel, cluster_bias, projections, cutoffs):
    """``(tokens, vocab_size)`` log-probabilities of every word for hidden ``rows``."""
    head_size = cutoffs[0]
    head = ops.log_softmax(
        _head_logits(rows, table, bias, cluster_kernel, cluster_bias, head_size), axis=-1
    )
    parts = [head[:, :head_size]]
    for cluster, (start, end) in enumerate(_bounds(cutoffs, table.shape[0])):
        tail = ops.log_softmax(_tail_logits(rows, table, bias, projections[cluster], start, end))
        parts.append(tail + head[:, head_size + cluster : head_size + cluster + 1])
    return ops.concatenate(parts, axis=-1)


def negative_log_likelihood(
    rows, targets, table, bias, cluster_kernel, cluster_bias, projections, cutoffs
):
    """``(tokens,)`` values of ``-log p(target)``, scoring only each target's cluster.

    JAX compiles for fixed shapes, and how many targets fall in each cluster changes
    from batch to batch; there every word's log-probability is formed instead (the same
    values, at the full softmax's cost).
    """
    if backend_name() == "jax":
        every = log_probabilities(
            rows, table, bias, cluster_kernel, cluster_bias, projections, cutoffs
        )
        return -ops.take_along_axis(every, targets[:, None], axis=-1)[:, 0]
    head_size = cutoffs[0]
    cluster = ops.sum(
        ops.cast(ops.greater_equal(targets[:, None], ops.convert_to_tensor(cutoffs)), "int32"),
        axis=-1,
    )  # 0 for a head word, k for a word of the k-th tail
    head_target = ops.where(ops.equal(cluster, 0), targets, head_size + cluster - 1)
    head = _head_logits(rows, table, bias, cluster_kernel, cluster_bias, head_size)
    losses = _crossentropy(head, head_target)
    for index, (start, end) in enumerate(_bounds(cutoffs, table.shape[0])):
        chosen = ops.nonzero(ops.equal(cluster, index + 1))[0]
        chosen_rows = ops.take(rows, chosen, axis=0)
        tail = _tail_logits(chosen_rows, table, bias, projections[index], start, end)
        tail_losses = _crossentropy(tail, ops.take(targets, chosen, axis=0) - start)
        losses = losses + ops.scatter(chosen[:, None], tail_losses, ops.shape(losses))
    return losses


def _crossentropy(logits, targets):
    # TensorFlow fuses the softmax and the pick into one kernel and one gradient.
    return ops.sparse_categorical_crossentropy(targets, logits, from_logits=True)
