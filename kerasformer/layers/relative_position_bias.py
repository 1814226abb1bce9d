"""T5's relative position bias: one learned scalar per head and bucketed distance."""

from __future__ import annotations

import math

from kerasformer.validation import LayerError, require_bool, require_positive_int

from ._base import Layer
from .backend import keras, ops, serializable


def relative_position_buckets(
    relative_positions, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
):
    """Raffel et al.'s buckets for ``key_position - query_position``.

    Half the buckets hold exact distances up to ``num_buckets // 2`` (a quarter each way
    when ``bidirectional``); the rest cover longer distances logarithmically up to
    ``max_distance``, beyond which all distances share the last bucket.
    """
    buckets = 0
    distance = -relative_positions  # positive: the key comes before the query
    if bidirectional:
        num_buckets //= 2
        buckets = ops.cast(ops.less(distance, 0), "int32") * num_buckets
        distance = ops.abs(distance)
    else:
        distance = ops.maximum(distance, 0)
    max_exact = num_buckets // 2
    is_small = ops.less(distance, max_exact)
    # max(distance, 1) only keeps log() finite where the small branch is taken anyway.
    log_ratio = ops.log(ops.cast(ops.maximum(distance, 1), "float32") / max_exact) / math.log(
        max_distance / max_exact
    )
    if_large = max_exact + ops.cast(log_ratio * (num_buckets - max_exact), "int32")
    if_large = ops.minimum(if_large, num_buckets - 1)
    return buckets + ops.where(is_small, ops.cast(distance, "int32"), if_large)


@serializable
class RelativePositionBias(Layer):
    """Add a learned bias, per head, for each query-key distance to attention scores.

    Relative positions as in T5 (Raffel et al. 2020): the score of a query at position i
    and a key at position j gets ``table[bucket(j - i), head]``; distances are bucketed
    (exact when short, logarithmic when long), so any length works (seed 003).

    Masking: the bias depends on positions only; masks are applied by the attention.

    Args:
        num_heads: Number of attention heads (one bias per head and bucket).
        num_buckets: Number of distance buckets.
        max_distance: Distances beyond this share the last bucket.
        bidirectional: Whether keys after the query get buckets of their own (encoders);
            ``False`` for causal attention.
        embeddings_initializer: Initializer of the ``(num_buckets, num_heads)`` table.
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        attention_scores: ``(batch, num_heads, query_length, key_length)``.
        query_start: Position of the first query (tokens already decoded), default 0.

    Examples:
        >>> import numpy as np
        >>> scores = np.zeros((1, 2, 4, 4), "float32")
        >>> tuple(RelativePositionBias(num_heads=2)(scores).shape)
        (1, 2, 4, 4)
    """

    _config_arguments = (
        "num_heads", "num_buckets", "max_distance", "bidirectional", "embeddings_initializer",
    )  # fmt: skip

    def __init__(
        self,
        num_heads: int,
        num_buckets: int = 32,
        max_distance: int = 128,
        bidirectional: bool = True,
        embeddings_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_heads = require_positive_int("num_heads", num_heads)
        self.num_buckets = require_positive_int("num_buckets", num_buckets)
        self.max_distance = require_positive_int("max_distance", max_distance)
        self.bidirectional = require_bool("bidirectional", bidirectional)
        exact = self.num_buckets // (4 if self.bidirectional else 2)
        if exact < 1 or self.max_distance <= exact:
            raise LayerError(
                f"RelativePositionBias(num_buckets={self.num_buckets}, max_distance="
                f"{self.max_distance}) leaves no room for logarithmic buckets; use at least "
                f"{4 if self.bidirectional else 2} buckets and max_distance > {exact}."
            )
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)

    def build(self, input_shape=None):
        self.table = self.add_weight(
            name="table",
            shape=(self.num_buckets, self.num_heads),
            initializer=self.embeddings_initializer,
            trainable=True,
        )
        self.built = True

    def bias(self, query_length, key_length, query_start=0):
        """``(1, num_heads, query_length, key_length)`` in float32."""
        query_positions = ops.arange(query_length)[:, None] + query_start
        key_positions = ops.arange(key_length)[None, :]
        buckets = relative_position_buckets(
            key_positions - query_positions, self.bidirectional, self.num_buckets,
            self.max_distance,
        )  # fmt: skip
        values = ops.take(ops.cast(self.table, "float32"), buckets, axis=0)  # (q, k, heads)
        return ops.transpose(values, (2, 0, 1))[None]

    def call(self, attention_scores, query_start=0):
        shape = ops.shape(attention_scores)
        bias = self.bias(shape[-2], shape[-1], query_start)
        return attention_scores + ops.cast(bias, attention_scores.dtype)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)
