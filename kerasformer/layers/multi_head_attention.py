"""Multi-head attention written from scratch on scaled dot-product attention."""

from __future__ import annotations

from kerasformer.validation import (
    LayerError,
    require_bool,
    require_positive_int,
    require_positive_number,
    require_rate,
)

from ._base import build_in_scope
from ._query_value_key import QueryValueKeyLayer
from .adaptive_attention_span import AdaptiveAttentionSpan
from .backend import compute_dtype_inputs, fresh_copy, keras, ops, serializable
from .relative_position_bias import RelativePositionBias
from .rotary_embedding import RotaryEmbedding
from .scaled_dot_product_attention import (
    attention_scores,
    combine_masks,
    inputs_padding_mask,
    masked_softmax,
)

POSITIONS = ("none", "rotary", "relative")


@serializable
class MultiHeadAttention(QueryValueKeyLayer):
    """Multi-head attention: per-head projections, attention, concatenation, projection.

    Each head projects queries, keys and values with its own weights, runs scaled
    dot-product attention, and the heads' outputs are concatenated and projected back
    (seed 003's "attention heads"). The weights have the shapes and order of Keras's
    ``MultiHeadAttention`` (query, key, value, output: kernel then bias), and given the
    same weights the outputs are the same; ``set_weights(keras_mha.get_weights())`` works.

    On top of Keras's layer it can rotate queries and keys (``position="rotary"``), add
    T5 relative position biases (``position="relative"``), learn a soft span per head
    (``attention_span``) and decode incrementally with a key/value cache.

    Masking: Keras masks on ``query``, ``value`` and ``key`` (``True`` for real tokens)
    hide padded keys from every query, so appending padding changes no real position;
    ``attention_mask`` and ``use_causal_mask`` combine with them. The output carries the
    query's mask.

    Args:
        num_heads: Number of attention heads.
        key_dim: Size of each head's queries and keys.
        value_dim: Size of each head's values; defaults to ``key_dim``.
        dropout: Dropout rate on the attention weights.
        use_bias: Whether the projections have biases.
        output_dim: Size of the output vectors; defaults to the query's last dimension.
        position: ``"none"``, ``"rotary"`` or ``"relative"`` (see above).
        max_wavelength: Longest wavelength of the rotary embedding.
        num_buckets: Number of relative-distance buckets.
        max_distance: Distances beyond this share the last bucket.
        bidirectional: Whether keys after the query get relative buckets of their own;
            ``False`` (T5's decoder) for causal attention.
        attention_span: If set, the largest span of an `AdaptiveAttentionSpan` per head.
        span_ramp: Soft edge width ``R`` of the adaptive span.
        span_penalty: L1 penalty on the adaptive spans, added as a layer loss.
        kernel_initializer: Initializer of the projection kernels.
        bias_initializer: Initializer of the projection biases.
        kernel_regularizer: Regularizer of the projection kernels (a layer loss), as in
            Keras's layer; ``activity_regularizer`` is a standard layer argument.
        bias_regularizer: Regularizer of the projection biases.
        kernel_constraint: Constraint applied to the projection kernels after each
            optimizer step, e.g. ``"non_neg"`` or ``keras.constraints.MaxNorm(2)``.
        bias_constraint: Constraint applied to the projection biases.
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        query: ``(batch, query_length, query_dim)``.
        value: ``(batch, key_length, value_dim_in)``.
        key: ``(batch, key_length, key_dim_in)``; defaults to ``value``.
        query_mask, value_mask, key_mask: ``(batch, length)`` booleans; taken from the
            inputs' Keras masks when not given.
        attention_mask: Booleans ``(batch, query_length, key_length)``, ``True`` = attend.
        use_causal_mask: Hide every key after its query (decoders).
        return_attention_scores: Also return the weights
            ``(batch, num_heads, query_length, key_length)``.
        training: Whether dropout is active.
        cache: Keys and values of the tokens decoded so far,
            ``(batch, 2, max_length, num_heads, key_dim)`` (see `empty_cache`); the new
            keys and values are written at ``cache_index`` and the updated cache is
            returned last. Used for self-attention in decoders.
        cache_index: Position of the first query token in the sequence being decoded.

    Example:

    >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
    >>> x = np.random.rand(3, 5, 8).astype("float32")
    >>> out, weights = mha(x, x, use_causal_mask=True, return_attention_scores=True)
    >>> tuple(out.shape), tuple(weights.shape)
    ((3, 5, 8), (3, 2, 5, 5))
    """

    _config_arguments = (
        "num_heads", "key_dim", "value_dim", "dropout", "use_bias", "output_dim", "position",
        "max_wavelength", "num_buckets", "max_distance", "bidirectional", "attention_span",
        "span_ramp", "span_penalty", "kernel_initializer", "bias_initializer",
        "kernel_regularizer", "bias_regularizer", "kernel_constraint", "bias_constraint",
    )  # fmt: skip

    def __init__(
        self,
        num_heads: int,
        key_dim: int,
        value_dim: int | None = None,
        dropout: float = 0.0,
        use_bias: bool = True,
        output_dim: int | None = None,
        position: str = "none",
        max_wavelength: float = 10_000.0,
        num_buckets: int = 32,
        max_distance: int = 128,
        bidirectional: bool = True,
        attention_span: int | None = None,
        span_ramp: int = 32,
        span_penalty: float = 2e-6,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_heads = require_positive_int("num_heads", num_heads)
        self.key_dim = require_positive_int("key_dim", key_dim)
        self.value_dim = (
            self.key_dim if value_dim is None else require_positive_int("value_dim", value_dim)
        )
        self.dropout = require_rate("dropout", dropout)
        self.use_bias = require_bool("use_bias", use_bias)
        self.output_dim = (
            None if output_dim is None else require_positive_int("output_dim", output_dim)
        )
        self.position = require_position(position)
        if self.position == "rotary" and self.key_dim % 2:
            raise LayerError(
                f"rotary positions rotate pairs of features: key_dim={self.key_dim} must be even."
            )
        self.max_wavelength = require_positive_number("max_wavelength", max_wavelength)
        self.num_buckets = require_positive_int("num_buckets", num_buckets)
        self.max_distance = require_positive_int("max_distance", max_distance)
        self.bidirectional = require_bool("bidirectional", bidirectional)
        self.attention_span = (
            None
            if attention_span is None
            else require_positive_int("attention_span", attention_span)
        )
        self.span_ramp = require_positive_int("span_ramp", span_ramp)
        self.span_penalty = float(span_penalty)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.bias_regularizer = keras.regularizers.get(bias_regularizer)
        self.kernel_constraint = keras.constraints.get(kernel_constraint)
        self.bias_constraint = keras.constraints.get(bias_constraint)

        self.rotary = (
            RotaryEmbedding(self.max_wavelength, dtype=self.dtype_policy, name="rotary")
            if self.position == "rotary" else None
        )  # fmt: skip
        # float32 layers: scores and weights stay float32 under mixed precision.
        self.relative_position_bias = (
            RelativePositionBias(
                self.num_heads, self.num_buckets, self.max_distance, self.bidirectional,
                name="relative_position_bias", dtype="float32",
            )
            if self.position == "relative" else None
        )  # fmt: skip
        self.span = (
            AdaptiveAttentionSpan(
                self.num_heads, self.attention_span, ramp=self.span_ramp,
                span_penalty=self.span_penalty, name="attention_span", dtype="float32",
            )
            if self.attention_span is not None else None
        )  # fmt: skip
        self.weights_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="weights_dropout"
        )

    def _make_weights(self, query_shape, value_shape, key_shape):
        heads, k, v = self.num_heads, self.key_dim, self.value_dim
        output_dim = self.output_dim or query_shape[-1]
        for name, shape, bias in (
            ("query", (query_shape[-1], heads, k), (heads, k)),
            ("key", (key_shape[-1], heads, k), (heads, k)),
            ("value", (value_shape[-1], heads, v), (heads, v)),
            ("attention_output", (heads, v, output_dim), (output_dim,)),
        ):
            # "query_kernel", not "query/kernel": Keras 3 allows no "/" in weight names.
            kernel = self._weight(f"{name}_kernel", shape, "kernel")
            setattr(self, f"{name}_kernel", kernel)
            bias_weight = self._weight(f"{name}_bias", bias, "bias") if self.use_bias else None
            setattr(self, f"{name}_bias", bias_weight)
        for layer in (self.relative_position_bias, self.span):
            if layer is not None:
                build_in_scope(layer, None)

    def _weight(self, name, shape, kind: str):
        """A ``kind`` ("kernel" or "bias") weight with that kind's initializer,
        regularizer and constraint."""
        return self.add_weight(
            name=name, shape=shape,
            initializer=fresh_copy(getattr(self, f"{kind}_initializer")),
            regularizer=getattr(self, f"{kind}_regularizer"),
            constraint=getattr(self, f"{kind}_constraint"),
        )  # fmt: skip

    def __call__(self, *args, cache=None, cache_index=None, **kwargs):
        # Checked before Keras's __call__, which would wrap an error raised in call in
        # lines of its own; these should stay one line.
        if cache is not None:
            self._require_cacheable(cache, cache_index)
        return super().__call__(*args, cache=cache, cache_index=cache_index, **kwargs)

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
        cache=None,
        cache_index=None,
    ):
        key = self._key_after_building(query, value, key)
        # Tokens written to a cache are all real: decoding appends no padding.
        mask = None
        if cache is None:
            mask = inputs_padding_mask(query, value, key, query_mask, value_mask, key_mask)
        value, key = compute_dtype_inputs(self, value, key)
        query_start = 0 if cache_index is None else cache_index

        queries = self._project(query, self.query_kernel, self.query_bias)  # (b, q, h, k)
        keys = self._project(key, self.key_kernel, self.key_bias)
        values = self._project(value, self.value_kernel, self.value_bias)
        if self.rotary is not None:
            queries = self.rotary(queries, start_index=query_start)
            # New keys stand where the queries do when they go into a cache; otherwise
            # the keys are the whole sequence from position 0.
            keys = self.rotary(keys, start_index=query_start if cache is not None else 0)

        if cache is not None:
            keys, values = cache_write(cache, keys, values, cache_index)
            # Later cache slots are still empty; the causal mask hides them.
            use_causal_mask = True
        mask = combine_masks(mask, attention_mask)
        if mask is not None:
            mask = ops.expand_dims(mask, 1)  # the same for every head

        # (batch, heads, length, depth): one attention per head.
        queries, heads_keys, heads_values = (
            ops.transpose(x, (0, 2, 1, 3)) for x in (queries, keys, values)
        )
        scores = attention_scores(queries, heads_keys)
        if self.relative_position_bias is not None:
            scores = self.relative_position_bias(scores, query_start=query_start)
        weights = masked_softmax(scores, mask, use_causal_mask, query_start)
        if self.span is not None:
            weights = self.span(weights, query_start=query_start)
        weights = ops.cast(weights, queries.dtype)
        attended = ops.matmul(self.weights_dropout(weights, training=training), heads_values)

        outputs = self._concatenate_heads_and_project(attended)
        results = (outputs,)
        if return_attention_scores:
            results += (weights,)
        if cache is not None:
            results += (ops.stack([keys, values], axis=1),)
        return results[0] if len(results) == 1 else results

    def _project(self, x, kernel, bias):
        projected = ops.einsum("btd,dhk->bthk", x, kernel)
        return projected if bias is None else projected + bias

    def _concatenate_heads_and_project(self, attended):
        # (batch, heads, length, value_dim) -> (batch, length, heads * value_dim)
        attended = ops.transpose(attended, (0, 2, 1, 3))
        shape = ops.shape(attended)
        concatenated = ops.reshape(attended, (shape[0], shape[1], self.num_heads * self.value_dim))
        kernel = ops.reshape(self.attention_output_kernel, (self.num_heads * self.value_dim, -1))
        outputs = ops.matmul(concatenated, kernel)
        return (
            outputs if self.attention_output_bias is None else outputs + self.attention_output_bias
        )

    def _require_cacheable(self, cache, cache_index):
        if cache_index is None:
            raise LayerError("a key/value cache needs `cache_index`, the position decoded next.")
        if self.value_dim != self.key_dim:
            raise LayerError(
                f"a key/value cache holds keys and values of one size; this layer has "
                f"key_dim={self.key_dim} and value_dim={self.value_dim}: make them equal."
            )
        expected = (2, self.num_heads, self.key_dim)
        got = (cache.shape[1], cache.shape[3], cache.shape[4]) if len(cache.shape) == 5 else ()
        if got != expected:
            raise LayerError(
                f"cache of shape {tuple(cache.shape)} does not fit this layer; expected "
                f"(batch, 2, max_length, {self.num_heads}, {self.key_dim}): use empty_cache()."
            )

    def empty_cache(self, batch_size: int, max_length: int):
        """A cache of zeros for decoding up to ``max_length`` tokens."""
        return ops.zeros(
            (batch_size, 2, max_length, self.num_heads, self.key_dim), dtype=self.compute_dtype
        )


def cache_write(cache, keys, values, cache_index):
    """The cache's keys and values with ``keys``/``values`` written from ``cache_index``.

    Written with a one-hot matrix rather than an in-place update, so it runs the same
    under every backend and inside XLA, with fixed shapes for a decoding loop.
    """
    max_length = cache.shape[2] if cache.shape[2] is not None else ops.shape(cache)[2]
    new_length = ops.shape(keys)[1]
    slots = ops.arange(max_length)[None, :]
    steps = ops.arange(new_length)[:, None] + cache_index
    placement = ops.cast(ops.equal(slots, steps), keys.dtype)  # (new, max_length)
    written = ops.cast(ops.sum(placement, axis=0), "bool")[None, :, None, None]

    def write(old, new):
        return ops.where(written, ops.einsum("sm,bshk->bmhk", placement, new), old)

    return write(cache[:, 0], keys), write(cache[:, 1], values)


def require_position(position) -> str:
    if position not in POSITIONS:
        raise LayerError(
            f"`position` must be one of {', '.join(POSITIONS)} for attention, got "
            f"{position!r}; learned and sinusoidal positions are added by the embedding."
        )
    return position
