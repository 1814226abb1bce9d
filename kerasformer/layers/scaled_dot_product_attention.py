"""Scaled dot-product attention: softmax(QKᵀ/√d)V, as a function and as a layer."""

from __future__ import annotations

import math

from kerasformer.validation import require_rate

from ._base import Layer
from .backend import (
    compute_dtype_inputs,
    keras,
    keras_mask,
    ops,
    serializable,
)


def causal_mask(query_length, key_length, query_start=0):
    """``(query_length, key_length)`` booleans: query ``i`` may see key ``j`` iff ``j <= i``.

    Query ``i`` stands at position ``query_start + i`` (the tokens decoded so far when
    keys come from a cache), keys at positions ``0 .. key_length - 1``.
    """
    query_positions = ops.arange(query_length)[:, None] + query_start
    key_positions = ops.arange(key_length)[None, :]
    return ops.less_equal(key_positions, query_positions)


def combine_masks(*masks):
    """The logical AND of the masks that are not None (None if all are)."""
    combined = None
    for mask in masks:
        if mask is None:
            continue
        mask = ops.cast(mask, "bool")
        combined = mask if combined is None else ops.logical_and(combined, mask)
    return combined


def padding_attention_mask(query_mask=None, key_mask=None):
    """``(batch, query_length, key_length)`` from per-token masks (``True`` = real token).

    A padded key is hidden from every query; a padded query row is hidden entirely, as in
    Keras's own ``MultiHeadAttention`` (its output there is never used).
    """
    return combine_masks(
        None if query_mask is None else ops.expand_dims(ops.cast(query_mask, "bool"), 2),
        None if key_mask is None else ops.expand_dims(ops.cast(key_mask, "bool"), 1),
    )


def inputs_padding_mask(query, value, key, query_mask=None, value_mask=None, key_mask=None):
    """`padding_attention_mask` of an attention's inputs (``key`` may be ``value``).

    A mask not given is the Keras mask of its input: read before the inputs are cast,
    since a cast tensor no longer carries its Keras mask.
    """
    query_mask = keras_mask(query, query_mask)
    value_mask = keras_mask(value, value_mask)
    key_mask = value_mask if key is value else keras_mask(key, key_mask)
    return padding_attention_mask(query_mask, combine_masks(value_mask, key_mask))


def attention_scores(query, key, scale=None):
    """QKᵀ·scale in float32 (so float16 cannot overflow); ``scale`` defaults to 1/√depth."""
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = ops.matmul(query, ops.transpose(key, _swap_last_two(len(key.shape))))
    return ops.cast(scores, "float32") * scale


def masked_softmax(scores, mask=None, use_causal_mask=False, query_start=0, axis=-1):
    """Softmax over the keys, giving masked keys no weight.

    ``mask`` broadcasts to the scores, ``True`` where a query may attend to a key;
    ``use_causal_mask`` also hides every key after its query, counting queries from
    ``query_start``. ``axis`` is the keys' axis, or a tuple of axes when attention runs
    over several (Keras's ``attention_axes``): the softmax then normalises over them jointly.
    """
    if use_causal_mask:
        shape = ops.shape(scores)
        mask = combine_masks(mask, causal_mask(shape[-2], shape[-1], query_start))
    if mask is not None:
        mask = ops.cast(mask, scores.dtype)
        scores = scores + (1.0 - mask) * -1e9
    weights = _softmax(scores, axis)
    # A query with no key to attend to (a padded query) gets all-zero weights, as in
    # Keras 3's Softmax, not a uniform average over padding.
    return weights if mask is None else weights * mask


def _softmax(x, axis):
    if isinstance(axis, int):
        return ops.softmax(x, axis=axis)
    exponentials = ops.exp(x - ops.max(x, axis=axis, keepdims=True))
    return exponentials / ops.sum(exponentials, axis=axis, keepdims=True)


def attention_weights(query, key, mask=None, bias=None, use_causal_mask=False, scale=None):
    """softmax(QKᵀ·scale + bias) over the keys, with masked keys given no weight.

    Args:
        query: ``(..., query_length, depth)``.
        key: ``(..., key_length, depth)``.
        mask: Booleans broadcastable to ``(..., query_length, key_length)``; ``True``
            where a query may attend to a key.
        bias: Added to the scores before the softmax (relative positions), or None.
        use_causal_mask: Also hide every key that comes after its query.
        scale: Defaults to ``1 / sqrt(depth)``.

    Returns:
        Weights ``(..., query_length, key_length)`` whose rows sum to 1, in the query's
        dtype; the softmax itself runs in float32.
    """
    scores = attention_scores(query, key, scale)
    if bias is not None:
        scores = scores + ops.cast(bias, "float32")
    return ops.cast(masked_softmax(scores, mask, use_causal_mask), query.dtype)


def scaled_dot_product_attention(
    query, key, value, mask=None, bias=None, use_causal_mask=False, scale=None
):
    """Scaled dot-product attention, softmax(QKᵀ/√d)V, as a function with no weights.

    Each query's output is the average of the values, weighted by the softmax of its dot
    products with the keys times ``scale``; masked keys get no weight, and a query that
    may attend to no key gets zero weights. The softmax runs in float32. Works on NumPy
    arrays and on tensors of the chosen Keras.

    Args:
        query: ``(..., query_length, depth)``.
        key: ``(..., key_length, depth)``.
        value: ``(..., key_length, value_depth)``.
        mask: Booleans broadcastable to ``(..., query_length, key_length)``, ``True``
            where a query may attend to a key; None (the default) hides no key.
        bias: Added to the scores before the softmax (e.g. relative position biases),
            broadcastable to them; None for none.
        use_causal_mask: Also hide every key that comes after its query (decoders).
        scale: Factor of the dot products; None (the default) is ``1 / sqrt(depth)``.

    Returns:
        ``(outputs, weights)``: the outputs ``(..., query_length, value_depth)`` and the
        attention weights ``(..., query_length, key_length)`` in the query's dtype, whose
        rows sum to 1 over the keys a query may see.

    Examples:
        >>> import numpy as np
        >>> q = k = v = np.eye(3, dtype="float32")[None]
        >>> outputs, weights = scaled_dot_product_attention(q, k, v, use_causal_mask=True)
        >>> ops.convert_to_numpy(weights)[0, 0].tolist()
        [1.0, 0.0, 0.0]
    """
    query, key, value = (ops.convert_to_tensor(x) for x in (query, key, value))
    weights = attention_weights(query, key, mask, bias, use_causal_mask, scale)
    return ops.matmul(weights, value), weights


@serializable
class ScaledDotProductAttention(Layer):
    """Attention of queries over keys and values, with no weights of its own (seeds 002-004).

    Each query's output is the average of the values, weighted by the softmax of its dot
    products with the keys divided by √depth.

    Masking: Keras masks on ``query`` and ``value`` (``True`` for real tokens) are
    honoured: padded keys get zero weight, so appending padding changes no real output.
    ``attention_mask`` adds any other pattern, ``use_causal_mask`` hides later keys, and
    all given masks are combined. The output carries the query's mask.

    Args:
        dropout: Dropout rate on the attention weights during training.
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        query: ``(batch, query_length, depth)``.
        value: ``(batch, key_length, value_depth)``.
        key: ``(batch, key_length, depth)``; defaults to ``value``.
        query_mask, value_mask, key_mask: ``(batch, length)`` booleans; taken from the
            inputs' Keras masks when not given.
        attention_mask: Booleans ``(batch, query_length, key_length)``, ``True`` = attend.
        use_causal_mask: Hide every key after its query (decoders).
        return_attention_scores: Also return the weights ``(batch, query_length,
            key_length)``.
        training: Whether dropout is active.

    Examples:
        >>> import numpy as np
        >>> layer = ScaledDotProductAttention()
        >>> x = np.random.rand(2, 5, 8).astype("float32")
        >>> out, weights = layer(x, x, use_causal_mask=True, return_attention_scores=True)
        >>> tuple(out.shape), tuple(weights.shape)
        ((2, 5, 8), (2, 5, 5))
    """

    _config_arguments = ("dropout",)

    def __init__(self, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.dropout = require_rate("dropout", dropout)
        self.supports_masking = True
        self.weights_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="weights_dropout"
        )

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        use_causal_mask=False,
        return_attention_scores=False,
        training=None,
    ):
        key = value if key is None else key
        mask = combine_masks(
            inputs_padding_mask(query, value, key, query_mask, value_mask, key_mask),
            attention_mask,
        )
        value, key = compute_dtype_inputs(self, value, key)
        weights = attention_weights(query, key, mask, use_causal_mask=use_causal_mask)
        outputs = ops.matmul(self.weights_dropout(weights, training=training), value)
        if return_attention_scores:
            return outputs, weights
        return outputs

    def compute_mask(self, query, mask=None):
        return keras_mask(query, mask)


def _swap_last_two(rank: int) -> tuple[int, ...]:
    return (*range(rank - 2), rank - 1, rank - 2)
