"""Bahdanau's additive attention: score(q, k) = vᵀ tanh(W₁q + W₂k)."""

from __future__ import annotations

from kerasformer.validation import require_positive_int, require_rate

from ._base import build_in_scope
from ._query_value_key import QueryValueKeyLayer
from .backend import (
    compute_dtype_inputs,
    fresh_copy,
    keras,
    keras_mask,
    ops,
    serializable,
)


@serializable
class AdditiveAttention(QueryValueKeyLayer):
    """Additive attention in Bahdanau's form, with the alignment weights out (seeds 000, 001).

    Each query (a decoder state) scores each key (an encoder annotation) with
    ``vᵀ tanh(W₁q + W₂k)``, the scores are softmaxed over the keys, and the output is the
    weighted sum of the values: the context vector of Bahdanau et al. (2015), eq. 5-6.

    Keras's ``AdditiveAttention`` computes ``sum(v * tanh(q + k))``: the same score, but
    without ``W₁`` and ``W₂``, which it leaves to the caller. This layer is those two
    learned projections (``units`` wide, no bias, as in the paper) in front of Keras's
    layer, whose ``scale`` is ``v``: the scores, masking and softmax are Keras's. The
    weighted sum is done here, because tf-keras's layer sizes ``v`` from the values,
    which only works when values are as wide as the projected keys.

    Masking: Keras masks on ``query`` and ``value`` (``True`` for real tokens) are
    honoured: padded keys get zero weight, and outputs at padded queries are zero. The
    output carries the query's mask.

    Args:
        units: Size of the projected space where queries and keys meet.
        dropout: Dropout rate on the attention weights.
        kernel_initializer: Initializer of ``W₁`` and ``W₂``.
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        query: ``(batch, query_length, query_dim)``, e.g. decoder states.
        value: ``(batch, key_length, value_dim)``, e.g. encoder outputs.
        key: ``(batch, key_length, key_dim)``; defaults to ``value``.
        query_mask, value_mask: ``(batch, length)`` booleans; taken from the inputs'
            Keras masks when not given.
        return_attention_scores: Also return the alignment weights
            ``(batch, query_length, key_length)``.
        training: Whether dropout is active.

    Examples:
        >>> import numpy as np
        >>> attention = AdditiveAttention(units=16)
        >>> states, annotations = np.ones((2, 3, 8), "float32"), np.ones((2, 7, 10), "float32")
        >>> context, alignment = attention(states, annotations, return_attention_scores=True)
        >>> tuple(context.shape), tuple(alignment.shape)
        ((2, 3, 10), (2, 3, 7))
    """

    _config_arguments = ("units", "dropout", "kernel_initializer")

    def __init__(
        self, units: int, dropout: float = 0.0, kernel_initializer="glorot_uniform", **kwargs
    ):
        super().__init__(**kwargs)
        self.units = require_positive_int("units", units)
        self.dropout = require_rate("dropout", dropout)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.query_projection = self._projection("query_projection")  # W₁
        self.key_projection = self._projection("key_projection")  # W₂
        self.attention = keras.layers.AdditiveAttention(
            use_scale=True, dtype=self.dtype_policy, name="attention"
        )
        self.weights_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="weights_dropout"
        )

    def _projection(self, name: str):
        initializer = fresh_copy(self.kernel_initializer)
        return keras.layers.Dense(
            self.units,
            use_bias=False,
            kernel_initializer=initializer,
            dtype=self.dtype_policy,
            name=name,
        )

    def _make_weights(self, query_shape, value_shape, key_shape):
        projected_query = (*tuple(query_shape)[:-1], self.units)
        projected_key = (*tuple(key_shape)[:-1], self.units)
        for layer, shape in (
            (self.query_projection, query_shape),
            (self.key_projection, key_shape),
            (self.attention, [projected_query, projected_key, projected_key]),
        ):
            build_in_scope(layer, shape)

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        return_attention_scores=False,
        training=None,
    ):
        key = self._key_after_building(query, value, key)
        query_mask = keras_mask(query, query_mask)
        value_mask = keras_mask(value, value_mask)
        value, key = compute_dtype_inputs(self, value, key)
        projected_key = self.key_projection(key)
        _, weights = self.attention(
            [self.query_projection(query), projected_key, projected_key],
            mask=[query_mask, value_mask],
            return_attention_scores=True,
        )
        context = ops.matmul(self.weights_dropout(weights, training=training), value)
        if query_mask is not None:
            context = context * ops.cast(query_mask, context.dtype)[..., None]
        if return_attention_scores:
            return context, weights
        return context
