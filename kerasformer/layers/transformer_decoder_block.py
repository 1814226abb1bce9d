"""A transformer decoder block: causal self-attention, cross-attention, feed-forward."""

from __future__ import annotations

from kerasformer.validation import LayerError

from ._base import build_in_scope
from ._block import TransformerLayer, require_embed_dim
from ._residual import residual
from .backend import keras, keras_mask, serializable
from .multi_head_attention import MultiHeadAttention


@serializable
class TransformerDecoderBlock(TransformerLayer):
    """Masked self-attention, optional attention to an encoder, and a feed-forward network.

    Each query sees only itself and earlier positions (the causal mask of seeds 002 and
    003), so a later token never changes an earlier output. Given ``encoder_outputs``, a
    second attention lets every position look at the whole encoded source
    (encoder-decoder attention, seed 002); without it the block is a decoder-only (GPT)
    block. Each sub-layer has dropout, a residual connection and layer normalisation,
    pre-LN or post-LN as in `TransformerBlock`.

    Incremental decoding: pass ``cache`` (from `empty_cache`) and ``cache_index`` to feed
    one (or a few) new tokens at a time; keys and values of earlier tokens are read from
    the cache instead of being recomputed, and the outputs equal those of the full pass.

    A call returns the outputs; then the attention weights if asked; then the updated
    cache if a cache was given.

    Masking: the Keras mask of ``inputs`` (``True`` for real tokens) hides padded decoder
    positions; ``encoder_mask`` (or the Keras mask of ``encoder_outputs``) hides padded
    source tokens from the cross-attention. The output carries the inputs' mask. With a
    cache, tokens are taken to be real (decoding appends no padding).

    Args:
        embed_dim: Size of the input and output vectors.
        num_heads: Number of attention heads.
        ff_dim: Hidden size of the feed-forward network.
        dropout: Dropout rate after each sub-layer (default 0.1; ``rate=`` is accepted
            as its other name, as for `TransformerBlock`).
        key_dim: Size of each head; defaults to ``embed_dim // num_heads``.
        norm_first: Pre-LN (``True``) instead of post-LN (``False``).
        activation: Activation of the feed-forward hidden layer.
        attention_dropout: Dropout rate on the attention weights.
        layer_norm_epsilon: Epsilon of the layer normalisations.
        position: ``"none"``, ``"rotary"`` or ``"relative"``, for the self-attention.
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: ``(batch, length, embed_dim)``, the target sequence so far.
        encoder_outputs: ``(batch, source_length, encoder_dim)`` or None.
        mask: ``(batch, length)`` booleans; the inputs' Keras mask when not given.
        encoder_mask: ``(batch, source_length)``; the encoder outputs' Keras mask when
            not given.
        cache: ``(batch, 2, max_length, num_heads, key_dim)`` keys and values so far.
        cache_index: Position of the first token of ``inputs`` in the sequence.
        return_attention_scores: Also return the self-attention and cross-attention
            weights (the latter None without an encoder).
        training: Whether dropout is active.

    Examples:
        >>> import numpy as np
        >>> block = TransformerDecoderBlock(embed_dim=8, num_heads=2, ff_dim=16)
        >>> target, source = np.ones((2, 4, 8), "float32"), np.ones((2, 6, 8), "float32")
        >>> tuple(block(target, source).shape)
        (2, 4, 8)
        >>> cache = block.empty_cache(batch_size=2, max_length=10)
        >>> step, cache = block(target[:, :1], source, cache=cache, cache_index=0)
        >>> tuple(step.shape), tuple(cache.shape)
        ((2, 1, 8), (2, 2, 10, 2, 4))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        ff_dim: int,
        dropout: float | None = None,
        key_dim: int | None = None,
        norm_first: bool = False,
        activation="relu",
        attention_dropout: float = 0.0,
        layer_norm_epsilon: float = 1e-6,
        position: str = "none",
        **kwargs,
    ):
        super().__init__(
            embed_dim, num_heads, ff_dim, dropout, key_dim, norm_first, activation,
            attention_dropout, layer_norm_epsilon, position, **kwargs,
        )  # fmt: skip
        self._encoder_shape = None

        def attention(name, position, bidirectional=True):
            return MultiHeadAttention(
                self.num_heads, self.key_dim, dropout=self.attention_dropout,
                position=position, bidirectional=bidirectional,
                dtype=self.dtype_policy, name=name,
            )  # fmt: skip

        # T5's decoder buckets: past distances only, as future keys are always hidden.
        self.self_attention = attention("self_attention", self.position, bidirectional=False)
        self.self_attention_norm = self._norm("self_attention_norm")
        self.self_attention_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        # Source and target positions are unrelated, so cross-attention gets none.
        self.cross_attention = attention("cross_attention", "none")
        self.cross_attention_norm = self._norm("cross_attention_norm")
        self.cross_attention_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self._make_feed_forward()
        self.ff_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    # Keras 3 passes the encoder's shape too; tf-keras passes the inputs' only, so then
    # the cross-attention is built on the first call with encoder outputs.
    def build(self, inputs_shape, encoder_outputs_shape=None):
        inputs_shape = tuple(inputs_shape)
        require_embed_dim(inputs_shape, self.embed_dim, "TransformerDecoderBlock")
        self._inputs_shape = inputs_shape
        self._build_sublayers(inputs_shape, self.self_attention, self.self_attention_norm)
        if encoder_outputs_shape is not None:
            self._build_cross_attention(encoder_outputs_shape)
        self.built = True

    def _build_cross_attention(self, encoder_outputs_shape):
        self._encoder_shape = tuple(encoder_outputs_shape)
        for layer, shapes in (
            (self.cross_attention, (self._inputs_shape, self._encoder_shape)),
            (self.cross_attention_norm, (self._inputs_shape,)),
        ):
            build_in_scope(layer, *shapes)

    def _attention_layers(self) -> tuple:
        if self._encoder_shape is None:
            return (self.self_attention,)
        return (self.self_attention, self.cross_attention)

    def get_build_config(self):
        return {
            "inputs_shape": self._inputs_shape,
            "encoder_outputs_shape": self._encoder_shape,
        }

    def build_from_config(self, config):
        self.build(**config)

    def call(
        self,
        inputs,
        encoder_outputs=None,
        mask=None,
        encoder_mask=None,
        cache=None,
        cache_index=None,
        return_attention_scores=False,
        training=None,
    ):
        mask = None if cache is not None else keras_mask(inputs, mask)

        def attend_to_self(x):
            results = self.self_attention(
                x, x, query_mask=mask, value_mask=mask, use_causal_mask=True,
                return_attention_scores=True, cache=cache, cache_index=cache_index,
                training=training,
            )  # fmt: skip
            return results[0], results[1:]

        x, (self_scores, *new_cache) = residual(
            inputs, attend_to_self, self.self_attention_norm, self.self_attention_dropout,
            self.norm_first, training,
        )  # fmt: skip

        cross_scores = None
        if encoder_outputs is not None:
            if self._encoder_shape is None:
                self._build_cross_attention(encoder_outputs.shape)
            source_mask = keras_mask(encoder_outputs, encoder_mask)

            def attend_to_source(x):
                return self.cross_attention(
                    x, encoder_outputs, query_mask=mask, value_mask=source_mask,
                    return_attention_scores=True, training=training,
                )  # fmt: skip

            x, cross_scores = residual(
                x, attend_to_source, self.cross_attention_norm, self.cross_attention_dropout,
                self.norm_first, training,
            )  # fmt: skip
        elif self._encoder_shape is not None:
            raise LayerError(
                "this TransformerDecoderBlock was built with encoder outputs; pass "
                "`encoder_outputs` on every call."
            )

        x, _ = residual(
            x, self._feed_forward, self.ff_norm, self.ff_dropout, self.norm_first, training
        )
        results = (x,)
        if return_attention_scores:
            results += (self_scores, cross_scores)
        results += tuple(new_cache)
        return results[0] if len(results) == 1 else results

    def empty_cache(self, batch_size: int, max_length: int):
        """Zeros for the self-attention keys and values of ``max_length`` tokens."""
        return self.self_attention.empty_cache(batch_size, max_length)
