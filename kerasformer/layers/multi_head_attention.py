"""Multi-head attention with Keras's signature, sub-layers and behaviour, and more."""

from __future__ import annotations

import inspect

from kerasformer.validation import (
    LayerError,
    is_whole_number,
    require_bool,
    require_positive_int,
    require_positive_number,
    require_rate,
)

from ._base import build_in_scope
from ._einsum_equations import attention_equations, projection_equation, resolved_attention_axes
from ._query_value_key import QueryValueKeyLayer
from .adaptive_attention_span import AdaptiveAttentionSpan
from .backend import (
    flash_attention_default,
    fresh_copy,
    fused_attention,
    keras,
    masks_hidden,
    ops,
    serializable,
    traced_output_spec,
)
from .relative_position_bias import RelativePositionBias
from .rotary_embedding import RotaryEmbedding
from .scaled_dot_product_attention import (
    attention_scores,
    causal_mask,
    combine_masks,
    inputs_padding_mask,
    masked_softmax,
)

POSITIONS = ("none", "rotary", "relative")
PROJECTIONS = ("query", "key", "value", "attention_output", "gate")
LORA_TARGETS = ("query", "value")


@serializable
class MultiHeadAttention(QueryValueKeyLayer):
    """Multi-head attention: per-head projections, attention, concatenation, projection.

    Each head projects queries, keys and values with its own weights, runs scaled
    dot-product attention, and the heads' outputs are concatenated and projected back
    (seed 003's "attention heads"). It takes every argument of Keras's
    ``keras.layers.MultiHeadAttention`` and passes Keras's own tests of that layer: the
    same ``EinsumDense`` sub-layers (``query_dense``, ``key_dense``, ``value_dense``,
    ``output_dense``, and ``_gate_dense`` with ``use_gate``), so the weights have the same
    shapes and order, ``set_weights(keras_mha.get_weights())`` works, and LoRA, int8
    quantisation and dtype-policy maps work as they do there (Keras 3 only: tf-keras's
    ``EinsumDense`` has neither LoRA nor quantisation). Where neither dropout nor the
    attention scores are needed and the backend has a fused attention kernel for the
    device (JAX or PyTorch on a GPU or TPU), or flash attention is asked for, it calls
    ``keras.ops.dot_product_attention``; elsewhere its own batched matmuls, which were
    faster on CPUs. A layer saved before the projections were sub-layers loads.

    On top of Keras's layer it can rotate queries and keys (``position="rotary"``), add
    T5 relative position biases (``position="relative"``), learn a soft span per head
    (``attention_span``) and decode incrementally with a key/value cache; these attend
    over the length of ``(batch, length, features)`` inputs only.

    Masking: Keras masks on ``query``, ``value`` and ``key`` (``True`` for real tokens)
    hide padded keys from every query, so appending padding changes no real position;
    ``attention_mask`` (``(query_length, key_length)``, with a batch axis, or with batch
    and heads axes), ``use_causal_mask`` and ``sliding_window`` combine with them. The
    output carries the query's mask.

    Args:
        num_heads: Number of attention heads.
        key_dim: Size of each head's queries and keys.
        value_dim: Size of each head's values; defaults to ``key_dim``.
        dropout: Dropout rate on the attention weights.
        use_bias: Whether the projections have biases.
        output_shape: Shape of each output vector (an int or a tuple); defaults to the
            query's last dimension. ``output_dim``, its earlier name, is still read.
        attention_axes: Axes attended over (an int or a tuple); ``None``: every axis but
            the batch and the features, as in Keras.
        sliding_window: If set, each query sees only keys fewer than this many positions
            away (with ``use_causal_mask``, the window of Mistral's attention).
        flash_attention: Ask the backend for flash attention (Keras 3); ``None`` follows
            ``keras.config.is_flash_attention_enabled()``. Refuses ``dropout``.
        kernel_initializer: Initializer of the projection kernels.
        bias_initializer: Initializer of the projection biases.
        kernel_regularizer: Regularizer of the projection kernels (a layer loss);
            ``activity_regularizer`` is the standard layer argument, on the output.
        bias_regularizer: Regularizer of the projection biases.
        kernel_constraint: Constraint applied to the projection kernels after each
            optimizer step, e.g. ``"non_neg"`` or ``keras.constraints.MaxNorm(2)``.
        bias_constraint: Constraint applied to the projection biases.
        use_gate: Gate each head's output by a sigmoid projection of the query (Gated
            Attention, Qiu et al. 2025), as Keras's ``use_gate``.
        seed: Seed of the attention dropout.
        position: ``"none"``, ``"rotary"`` or ``"relative"`` (see above).
        max_wavelength: Longest wavelength of the rotary embedding.
        num_buckets: Number of relative-distance buckets.
        max_distance: Distances beyond this share the last bucket.
        bidirectional: Whether keys after the query get relative buckets of their own;
            ``False`` (T5's decoder) for causal attention.
        attention_span: If set, the largest span of an `AdaptiveAttentionSpan` per head.
        span_ramp: Soft edge width ``R`` of the adaptive span.
        span_penalty: L1 penalty on the adaptive spans, added as a layer loss.
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        query: ``(batch, query_length, query_dim)``, or more axes with ``attention_axes``.
        value: ``(batch, key_length, value_dim_in)``.
        key: ``(batch, key_length, key_dim_in)``; defaults to ``value``.
        query_mask, value_mask, key_mask: ``(batch, length)`` booleans; taken from the
            inputs' Keras masks when not given.
        attention_mask: Booleans, ``True`` = attend: ``(query_length, key_length)``,
            ``(batch, query_length, key_length)`` or ``(batch, heads, query_length,
            key_length)``.
        use_causal_mask: Hide every key after its query (decoders).
        return_attention_scores: Also return the weights
            ``(batch, num_heads, query_length, key_length)``.
        training: Whether dropout is active.
        cache: Keys and values of the tokens decoded so far,
            ``(batch, 2, max_length, num_heads, key_dim)`` (see `empty_cache`); the new
            keys and values are written at ``cache_index`` and the updated cache is
            returned last. Used for self-attention in decoders.
        cache_index: Position of the first query token in the sequence being decoded.

    Examples:
        >>> import numpy as np
        >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
        >>> x = np.random.rand(3, 5, 8).astype("float32")
        >>> out, weights = mha(x, x, use_causal_mask=True, return_attention_scores=True)
        >>> tuple(out.shape), tuple(weights.shape)
        ((3, 5, 8), (3, 2, 5, 5))
    """

    _config_arguments = (
        "num_heads", "key_dim", "value_dim", "dropout", "use_bias", "attention_axes",
        "sliding_window", "flash_attention", "use_gate", "seed", "position",
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
        output_shape=None,
        attention_axes=None,
        sliding_window: int | None = None,
        flash_attention: bool | None = None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate: bool = False,
        seed: int | None = None,
        position: str = "none",
        max_wavelength: float = 10_000.0,
        num_buckets: int = 32,
        max_distance: int = 128,
        bidirectional: bool = True,
        attention_span: int | None = None,
        span_ramp: int = 32,
        span_penalty: float = 2e-6,
        **kwargs,
    ):
        output_shape = checked_output_shape(output_shape, kwargs.pop("output_dim", None))
        super().__init__(**kwargs)
        self.num_heads = require_size_argument("num_heads", num_heads)
        self.key_dim = require_size_argument("key_dim", key_dim)
        self.value_dim = (
            self.key_dim if value_dim is None else require_size_argument("value_dim", value_dim)
        )
        self.dropout = require_rate("dropout", dropout)
        self.use_bias = require_bool("use_bias", use_bias)
        # Not `self.output_shape`: Keras layers have an `output_shape` of their own.
        self._output_shape = output_shape
        self.attention_axes = checked_attention_axes(attention_axes)
        self.sliding_window = (
            None
            if sliding_window is None
            else require_positive_int("sliding_window", sliding_window)
        )
        self.flash_attention = flash_attention
        self._flash_attention = checked_flash_attention(flash_attention, self.dropout)
        self.use_gate = require_bool("use_gate", use_gate)
        self.seed = seed
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
            self.dropout, seed=seed, dtype=self.dtype_policy, name="weights_dropout"
        )
        # Keras's names, so that code written against Keras's layer finds them.
        self._query_dense = self._key_dense = self._value_dense = None
        self._output_dense = self._gate_dense = None

    @property
    def query_dense(self):
        return self._query_dense

    @property
    def key_dense(self):
        return self._key_dense

    @property
    def value_dense(self):
        return self._value_dense

    @property
    def output_dense(self):
        return self._output_dense

    def _make_weights(self, query_shape, value_shape, key_shape):
        require_same_positions(value_shape, key_shape)
        projected_rank = len(query_shape) + 1
        self._attention_axes = resolved_attention_axes(self.attention_axes, projected_rank)
        self._over_length_only = projected_rank == 4 and self._attention_axes == (1,)
        if not self._over_length_only and (self.position != "none" or self.span is not None):
            raise LayerError(
                "rotary and relative positions and attention spans attend over the length "
                "of (batch, length, features) inputs; this layer attends over axes "
                f"{self._attention_axes} of inputs of shape {tuple(query_shape)}."
            )
        self._scores_equation, self._combine_equation, scores_rank = attention_equations(
            projected_rank, self._attention_axes
        )
        self._scores_rank = scores_rank
        self._softmax_axes = tuple(range(scores_rank - len(self._attention_axes), scores_rank))
        heads, k, v = self.num_heads, self.key_dim, self.value_dim
        # Keras's order, which is the order of the weights.
        self._query_dense = self._projection("query", query_shape, (heads, k))
        self._key_dense = self._projection("key", key_shape, (heads, k))
        if self.use_gate:
            self._gate_dense = self._projection(
                "gate", query_shape, (heads, v), activation="sigmoid"
            )
        self._value_dense = self._projection("value", value_shape, (heads, v))
        output_shape = self._output_shape or (query_shape[-1],)
        self._output_dense = self._projection(
            "attention_output", tuple(query_shape[:-1]) + (heads, v), output_shape, bound_dims=2
        )
        for layer in (self.relative_position_bias, self.span):
            if layer is not None:
                build_in_scope(layer, None)

    def _projection(self, name, input_shape, output_shape, bound_dims=1, activation=None):
        free_dims = len(input_shape) - bound_dims
        equation, bias_axes, output_rank = projection_equation(
            free_dims, bound_dims, len(output_shape)
        )
        layer = keras.layers.EinsumDense(
            equation,
            output_shape=[None] * (output_rank - 1 - len(output_shape)) + list(output_shape),
            activation=activation,
            bias_axes=bias_axes if self.use_bias else None,
            kernel_initializer=fresh_copy(self.kernel_initializer),
            bias_initializer=fresh_copy(self.bias_initializer),
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            kernel_constraint=self.kernel_constraint,
            bias_constraint=self.bias_constraint,
            # A DTypePolicyMap stays a map, so each sub-layer finds its policy by path.
            dtype=self.dtype_policy,
            name=name,
        )
        build_in_scope(layer, tuple(input_shape))
        return layer

    def projections(self) -> dict:
        """The built projection sub-layers by name: ``query``, ``key``, ``value``,
        ``attention_output``, and ``gate`` with ``use_gate``."""
        layers = dict(zip(PROJECTIONS, (
            self._query_dense, self._key_dense, self._value_dense, self._output_dense,
            self._gate_dense,
        ), strict=True))  # fmt: skip
        return {name: layer for name, layer in layers.items() if layer is not None}

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
        query_start = 0 if cache_index is None else cache_index
        # Tokens written to a cache are all real: decoding appends no padding. Later
        # cache slots are still empty; the causal mask hides them.
        padding = None
        if cache is None:
            padding = inputs_padding_mask(query, value, key, query_mask, value_mask, key_mask)
        else:
            use_causal_mask = True
        # Causal attention and nothing else: the fused kernel can mask it itself.
        causal_only = (
            use_causal_mask and padding is None and attention_mask is None and cache is None
            and self.sliding_window is None and "use_causal_mask" in self._attention_arguments()
        )  # fmt: skip
        mask = None
        if not causal_only:
            mask = self._attention_mask(
                query, value, padding, attention_mask, use_causal_mask, query_start, cache
            )

        with masks_hidden(query, value, key):  # read above
            gate = self._gate_dense(query) if self._gate_dense is not None else None
            queries = self._query_dense(query)  # (batch, query_length, heads, key_dim)
            keys = self._key_dense(key)
            values = self._value_dense(value)
        if self.rotary is not None:
            queries = self.rotary(queries, start_index=query_start)
            # New keys stand where the queries do when they go into a cache; otherwise
            # the keys are the whole sequence from position 0.
            keys = self.rotary(keys, start_index=query_start if cache is not None else 0)
        if cache is not None:
            keys, values = cache_write(cache, keys, values, cache_index)

        extra = {"use_causal_mask": True} if causal_only else {}
        if cache_index is not None and "query_start" in self._attention_arguments():
            extra["query_start"] = query_start
        attended, weights = self._compute_attention(
            queries, keys, values, mask, training, return_attention_scores, **extra
        )
        if gate is not None:
            attended = attended * gate
        outputs = self._output_dense(attended)
        results = (outputs,)
        if return_attention_scores:
            results += (weights,)
        if cache is not None:
            results += (ops.stack([keys, values], axis=1),)
        return results[0] if len(results) == 1 else results

    def _attention_mask(self, query, value, padding, attention_mask, causal, query_start, cache):
        """Every mask of this call in one, ``(query_length, key_length)`` or with a batch
        axis (and a heads axis, where ``attention_mask`` has one)."""
        query_length = ops.shape(query)[1]
        key_length = ops.shape(value)[1] if cache is None else ops.shape(cache)[2]
        masks = [attention_mask, padding]
        if causal:
            masks.append(causal_mask(query_length, key_length, query_start))
        if self.sliding_window is not None:
            masks.append(self._sliding_window_mask(query_length, key_length, query_start))
        mask = None
        for part in masks:
            if part is not None:
                part = ops.cast(part, "bool")
                # A heads axis in one mask: give the others one too, where Keras puts it.
                if mask is not None and len(part.shape) != len(mask.shape):
                    mask, part = self._with_heads_axis(mask), self._with_heads_axis(part)
                mask = part if mask is None else ops.logical_and(mask, part)
        return mask

    def _with_heads_axis(self, mask):
        """``mask`` with axes added before the attention axes (the heads', then the
        batch's) until it has the scores' rank, as Keras broadcasts it."""
        while len(mask.shape) < self._scores_rank:
            mask = ops.expand_dims(mask, -len(self._attention_axes) * 2 - 1)
        return mask

    def _broadcastable_mask(self, mask):
        """``mask`` as the scores take it: a mask with no batch axis (length-1 leading
        axes dropped) broadcasts as it is; one with a batch axis gets a heads axis.

        TensorFlow's oneDNN kernels added a ``(1, 1, T, S)`` mask to the scores 150 times
        slower than a ``(T, S)`` one (70 ms against 0.5 ms for a batch of 8, 4 heads,
        length 128).
        """
        attention_rank = len(self._attention_axes) * 2
        while len(mask.shape) > attention_rank and mask.shape[0] == 1:
            mask = mask[0]
        if len(mask.shape) == attention_rank:
            return mask
        return self._with_heads_axis(mask)

    def _sliding_window_mask(self, query_length, key_length, query_start):
        query_positions = ops.arange(query_length)[:, None] + query_start
        key_positions = ops.arange(key_length)[None, :]
        return ops.less(ops.abs(query_positions - key_positions), self.sliding_window)

    def _attention_arguments(self):
        """The arguments this layer's ``_compute_attention`` takes; a subclass may have
        written it for Keras's earlier signature."""
        method = type(self)._compute_attention
        if getattr(self, "_attention_method", None) is not method:
            self._attention_method = method
            self._attention_parameters = frozenset(inspect.signature(method).parameters)
        return self._attention_parameters

    def _compute_attention(
        self,
        query,
        key,
        value,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
        query_start=0,
    ):
        """Attention of projected queries over projected keys and values, as Keras's
        layer's override point of the same name.

        Args:
            query: ``(batch, query_length, heads, key_dim)``.
            key: ``(batch, key_length, heads, key_dim)``.
            value: ``(batch, key_length, heads, value_dim)``.
            attention_mask: Booleans broadcastable to the scores once a heads axis is
                added, ``True`` = attend.
            training: Whether dropout is active.
            return_attention_scores: Whether the weights are needed.
            use_causal_mask: Also hide every key after its query.
            query_start: Position of the first query (decoding from a cache).

        Returns:
            ``(outputs, weights)``: outputs in the query's layout with ``value_dim``
            features, and the weights, or None where the fused kernel ran.
        """
        if self._flash_attention and return_attention_scores:
            raise LayerError(
                "Returning attention scores is not supported when flash attention is "
                "enabled. Please disable flash attention to access attention scores."
            )
        bias = None
        if self.relative_position_bias is not None:
            bias = self.relative_position_bias.bias(
                ops.shape(query)[1], ops.shape(key)[1], query_start
            )
        dropout_active = self.dropout > 0 and training is not None and training is not False
        fused = fused_attention(requested=bool(self._flash_attention))
        if (
            fused is not None and self._over_length_only and self.span is None
            and not return_attention_scores and not dropout_active
            # JAX's kernel takes values as deep as the keys only.
            and self.value_dim == self.key_dim
        ):  # fmt: skip
            if use_causal_mask and attention_mask is not None:
                # Both in one mask: PyTorch's kernel refuses a mask with is_causal.
                causal = causal_mask(ops.shape(query)[1], ops.shape(key)[1], query_start)
                attention_mask, use_causal_mask = combine_masks(attention_mask, causal), False
            mask = None if attention_mask is None else self._with_heads_axis(attention_mask)
            outputs = fused(
                query, key, value,
                bias=None if bias is None else ops.cast(bias, query.dtype),
                mask=mask, is_causal=bool(use_causal_mask), flash_attention=self._flash_attention,
            )  # fmt: skip
            if mask is not None:
                # A query with no key to attend to (padding) gets zeros, as on the other
                # path, where the kernel would average over every key.
                attends = ops.transpose(ops.any(mask, axis=-1), (0, 2, 1))[..., None]
                outputs = ops.where(attends, outputs, ops.zeros_like(outputs))
            return outputs, None
        if use_causal_mask:
            causal = causal_mask(ops.shape(query)[1], ops.shape(key)[1], query_start)
            attention_mask = combine_masks(attention_mask, causal)
        mask = None if attention_mask is None else self._broadcastable_mask(attention_mask)
        if self._over_length_only:
            return self._attention_over_length(query, key, value, mask, bias, training, query_start)
        scale = 1.0 / self.key_dim**0.5
        scores = ops.einsum(self._scores_equation, key, query * ops.cast(scale, query.dtype))
        weights = masked_softmax(ops.cast(scores, "float32"), mask, axis=self._softmax_axes)
        weights = ops.cast(weights, query.dtype)
        dropped = self.weights_dropout(weights, training=training)
        return ops.einsum(self._combine_equation, dropped, value), weights

    def _attention_over_length(self, query, key, value, mask, bias, training, query_start):
        # (batch, heads, length, depth): one attention per head, as batched matmuls.
        queries, keys, values = (ops.transpose(x, (0, 2, 1, 3)) for x in (query, key, value))
        scores = attention_scores(queries, keys)
        if bias is not None:
            scores = scores + bias
        weights = masked_softmax(scores, mask)
        if self.span is not None:
            weights = self.span(weights, query_start=query_start)
        weights = ops.cast(weights, queries.dtype)
        attended = ops.matmul(self.weights_dropout(weights, training=training), values)
        return ops.transpose(attended, (0, 2, 1, 3)), weights

    def load_own_variables(self, store):
        """Read a layer saved before the projections were sub-layers, when they were this
        layer's own weights (query, key, value and output kernels, each with its bias, in
        Keras's order), as well as one saved since (which has no weights of its own)."""
        if not len(store.keys()):
            return super().load_own_variables(store)
        projections = self.projections()
        targets = [
            variable
            for name in ("query", "key", "value", "attention_output")
            for variable in projections[name].weights
        ]
        if len(store.keys()) != len(targets):
            raise LayerError(
                f"MultiHeadAttention {self.name!r} was saved with {len(store.keys())} weights "
                f"of its own and reads {len(targets)} (use_bias={self.use_bias}); the file does "
                "not match its config."
            )
        for index, variable in enumerate(targets):
            variable.assign(store[str(index)])
        for layer in projections.values():
            _skip_next_load(layer)

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        query_shape, value_shape = tuple(query_shape), tuple(value_shape)
        require_same_positions(value_shape, value_shape if key_shape is None else tuple(key_shape))
        return query_shape[:-1] + (self._output_shape or query_shape[-1:])

    def compute_output_spec(self, *args, **kwargs):
        # Keras 3 only. Traced, not from compute_output_shape: the attention scores of
        # cross-attention have the keys' length.
        return traced_output_spec(self, *args, **kwargs)

    def get_config(self):
        return {**super().get_config(), "output_shape": self._output_shape}

    def enable_lora(
        self, rank: int, targets=LORA_TARGETS, a_initializer="he_uniform", b_initializer="zeros"
    ) -> None:
        """Fine-tune with LoRA: low-rank updates of the ``targets`` projections, every
        other weight of this layer frozen.

        ``targets`` are among ``query``, ``key``, ``value``, ``attention_output`` and
        ``gate``; the default, query and value, is the LoRA paper's and KerasHub's. A
        model saved afterwards holds the merged kernels, as Keras's LoRA layers save them.
        Keras 3 only.
        """
        projections = self._built_projections("enable_lora")
        unknown = sorted(set(targets) - set(projections))
        if unknown:
            raise LayerError(
                f"LoRA targets {unknown} are not projections of this layer; choose among "
                f"{sorted(projections)}."
            )
        require_positive_int("rank", rank)
        for variable in self.weights:
            variable.trainable = False
        for name in targets:
            projections[name].enable_lora(
                rank, a_initializer=a_initializer, b_initializer=b_initializer
            )

    def quantize(self, mode=None, type_check=True, config=None):
        """Quantize the projections' kernels (``"int8"``, or Keras's other modes), as
        ``Model.quantize`` does with each of them. Keras 3 only."""
        for layer in self._built_projections("quantize").values():
            layer.quantize(mode, type_check=type_check, config=config)

    def _built_projections(self, method: str) -> dict:
        projections = self.projections()
        if not projections:
            raise LayerError(f"build or call this layer before `{method}`: it has no weights yet.")
        if not hasattr(projections["query"], method):
            raise LayerError(
                f"`{method}` needs Keras 3, whose EinsumDense has it; tf-keras's has not. "
                "Use kerasformer.layers in a Keras 3 model."
            )
        return projections

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


def _skip_next_load(layer) -> None:
    """Make ``layer``'s next `load_own_variables` read nothing: a file of the earlier
    layout has no entry of its own for it, and its weights are already read."""

    def skip(store):
        del store
        del layer.load_own_variables  # the class's own method again

    layer.load_own_variables = skip


def require_size_argument(name: str, value) -> int:
    """A positive integer, refused in Keras's words ("argument `num_heads`")."""
    if not is_whole_number(value) or value <= 0:
        raise LayerError(
            f"Received an invalid value for argument `{name}`, expected a positive "
            f"integer. Received: {name}={value!r}"
        )
    return int(value)


def checked_output_shape(output_shape, output_dim=None):
    """``output_shape`` as a tuple (an int is one axis), or None; ``output_dim`` is its
    earlier name, still read from saved configs."""
    if output_dim is not None:
        if output_shape is not None:
            raise LayerError("`output_dim` is the earlier name of `output_shape`; give one.")
        output_shape = output_dim
    if output_shape is None:
        return None
    if is_whole_number(output_shape):
        output_shape = (output_shape,)
    if not isinstance(output_shape, (tuple, list)) or not all(
        is_whole_number(size) and size > 0 for size in output_shape
    ):
        raise LayerError(
            f"Invalid `output_shape`: {output_shape!r}. When specified, the `output_shape` "
            "should be a positive int, or a tuple or list of them."
        )
    return tuple(int(size) for size in output_shape)


def checked_attention_axes(attention_axes):
    if attention_axes is None:
        return None
    if is_whole_number(attention_axes):
        return (int(attention_axes),)
    if isinstance(attention_axes, (tuple, list)) and all(map(is_whole_number, attention_axes)):
        return tuple(int(axis) for axis in attention_axes)
    raise LayerError(
        "`attention_axes` must be an int, list, or tuple. Received: "
        f"attention_axes={attention_axes!r}"
    )


def checked_flash_attention(flash_attention, dropout: float):
    """Whether to ask for flash attention: the argument, else Keras's global setting."""
    flash = flash_attention or flash_attention_default()
    if flash and fused_attention(requested=True) is None:
        raise LayerError(
            "flash attention needs Keras 3's ops.dot_product_attention; tf-keras has none. "
            "Leave flash_attention unset here."
        )
    if flash and dropout > 0:
        raise LayerError(
            "Dropout is not supported when flash attention is enabled. Please set dropout to "
            "0.0 to use flash attention."
        )
    return flash


def require_same_positions(value_shape, key_shape) -> None:
    if tuple(value_shape)[1:-1] != tuple(key_shape)[1:-1]:
        raise LayerError(
            "All dimensions of `value` and `key`, except the last one, must be equal. "
            f"Received: value_shape={tuple(value_shape)} and key_shape={tuple(key_shape)}"
        )
