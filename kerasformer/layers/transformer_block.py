"""A transformer encoder block: self-attention and a feed-forward network."""

from __future__ import annotations

from ._block import TransformerLayer, require_embed_dim

# Re-exported: it was defined here before the decoder block shared it.
from ._block import checked_key_dim as checked_key_dim
from ._residual import residual
from .backend import keras, serializable
from .multi_head_attention import MultiHeadAttention


@serializable
class TransformerBlock(TransformerLayer):
    """Multi-head self-attention followed by a position-wise feed-forward network.

    Each of the two sub-layers has dropout, a residual connection and layer
    normalisation. With ``norm_first=False`` (post-LN, as in the original Transformer and
    seed 001) the normalisation follows each residual sum; with ``norm_first=True``
    (pre-LN, seed 003) it is applied to the sub-layer input, which trains more stably
    without learning-rate warm-up.

    Positions: with absolute positions (learned or sinusoidal, added by
    `TokenAndPositionEmbedding`) keep ``position="none"``; ``"rotary"`` rotates queries and
    keys and ``"relative"`` adds T5 relative position biases inside the attention (seed
    003). ``attention_span`` lets each head learn how far it looks (seed 004).

    Masking: a Keras mask of shape ``(batch, length)`` (``True`` for real tokens), as
    produced by `TokenAndPositionEmbedding`, keeps every query from attending to padded
    keys, so appending padding leaves the outputs at real positions unchanged. The mask is
    passed on unchanged to the next layer.

    Args:
        embed_dim: Size of the input and output vectors.
        num_heads: Number of attention heads.
        ff_dim: Hidden size of the feed-forward network.
        dropout: Dropout rate after attention and after the feed-forward network
            (default 0.1). ``rate=`` is accepted as its other name, the one the Keras
            tutorial's ``TransformerBlock(embed_dim, num_heads, ff_dim, rate=0.1)`` uses.
        key_dim: Size of each head's query and key projections. Defaults to
            ``embed_dim // num_heads`` (which must then divide evenly); pass
            ``key_dim=embed_dim`` for the seed's wider heads.
        norm_first: Pre-LN (``True``) instead of post-LN (``False``).
        activation: Activation of the feed-forward hidden layer.
        attention_dropout: Dropout rate on the attention weights.
        layer_norm_epsilon: Epsilon of both layer normalisations.
        position: ``"none"``, ``"rotary"`` or ``"relative"``, for the attention.
        attention_span: If set, the largest adaptive span per head (`AdaptiveAttentionSpan`).
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: Float tensor of shape ``(batch, length, embed_dim)``.
        training: Whether dropout is active.
        mask: Optional boolean tensor ``(batch, length)``; ``False`` marks padding.
        return_attention_scores: If ``True``, also return the attention weights of shape
            ``(batch, num_heads, length, length)``, for visualisation.

    Examples:
        >>> import numpy as np
        >>> block = TransformerBlock(embed_dim=8, num_heads=2, ff_dim=16, position="rotary")
        >>> x = np.random.rand(1, 5, 8).astype("float32")
        >>> out, scores = block(x, return_attention_scores=True)
        >>> tuple(out.shape), tuple(scores.shape)
        ((1, 5, 8), (1, 2, 5, 5))
    """

    _config_arguments = (*TransformerLayer._config_arguments, "attention_span")

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
        attention_span: int | None = None,
        **kwargs,
    ):
        super().__init__(
            embed_dim, num_heads, ff_dim, dropout, key_dim, norm_first, activation,
            attention_dropout, layer_norm_epsilon, position, **kwargs,
        )  # fmt: skip
        self.attention_span = attention_span

        self.attention = MultiHeadAttention(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            dropout=self.attention_dropout,
            position=self.position,
            attention_span=attention_span,
            dtype=self.dtype_policy,
            name="attention",
        )
        self.attention_span = self.attention.attention_span
        self.attention_norm = self._norm("attention_norm")
        self.attention_dropout_layer = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="attention_output_dropout"
        )
        self._make_feed_forward()
        self.ff_dropout_layer = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="ff_output_dropout"
        )

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        require_embed_dim(input_shape, self.embed_dim, "TransformerBlock")
        self._build_sublayers(input_shape, self.attention, self.attention_norm)
        self.built = True

    def _attention_layers(self) -> tuple:
        return (self.attention,)

    def call(self, inputs, training=None, mask=None, return_attention_scores=False):
        def attend(x):
            return self.attention(
                x, x, query_mask=mask, value_mask=mask,
                return_attention_scores=True, training=training,
            )  # fmt: skip

        x, scores = residual(
            inputs, attend, self.attention_norm, self.attention_dropout_layer,
            self.norm_first, training,
        )  # fmt: skip
        x, _ = residual(
            x, self._feed_forward, self.ff_norm, self.ff_dropout_layer, self.norm_first,
            training,
        )  # fmt: skip
        if return_attention_scores:
            return x, scores
        return x
