"""A transformer encoder block: self-attention and a feed-forward network."""

from __future__ import annotations

from kerasformer.layers._base import Layer
from kerasformer.layers._residual import residual
from kerasformer.layers._validation import (
    LayerError,
    require_bool,
    require_positive_int,
    require_positive_number,
    require_rate,
)
from kerasformer.layers.backend import keras, name_scope, serializable
from kerasformer.layers.multi_head_attention import MultiHeadAttention, require_position


@serializable
class TransformerBlock(Layer):
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
        dropout: Dropout rate after attention and after the feed-forward network.
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

    Example:

    >>> block = TransformerBlock(embed_dim=8, num_heads=2, ff_dim=16, position="rotary")
    >>> x = np.random.rand(1, 5, 8).astype("float32")
    >>> out, scores = block(x, return_attention_scores=True)
    >>> tuple(out.shape), tuple(scores.shape)
    ((1, 5, 8), (1, 2, 5, 5))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        ff_dim: int,
        dropout: float = 0.1,
        key_dim: int | None = None,
        norm_first: bool = False,
        activation="relu",
        attention_dropout: float = 0.0,
        layer_norm_epsilon: float = 1e-6,
        position: str = "none",
        attention_span: int | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.embed_dim = require_positive_int("embed_dim", embed_dim)
        self.num_heads = require_positive_int("num_heads", num_heads)
        self.ff_dim = require_positive_int("ff_dim", ff_dim)
        self.dropout = require_rate("dropout", dropout)
        self.key_dim = checked_key_dim(key_dim, self.embed_dim, self.num_heads)
        self.norm_first = require_bool("norm_first", norm_first)
        self.activation = keras.activations.get(activation)
        self.attention_dropout = require_rate("attention_dropout", attention_dropout)
        self.layer_norm_epsilon = require_positive_number("layer_norm_epsilon", layer_norm_epsilon)
        self.position = require_position(position)
        self.attention_span = attention_span
        self.supports_masking = True

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
        self.attention_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="attention_norm"
        )
        self.attention_dropout_layer = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="attention_output_dropout"
        )
        self.ff_hidden = keras.layers.Dense(
            self.ff_dim, activation=self.activation, dtype=self.dtype_policy, name="ff_hidden"
        )
        self.ff_output = keras.layers.Dense(
            self.embed_dim, dtype=self.dtype_policy, name="ff_output"
        )
        self.ff_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="ff_norm"
        )
        self.ff_dropout_layer = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="ff_output_dropout"
        )

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        require_embed_dim(input_shape, self.embed_dim, "TransformerBlock")
        # Built inside their own scopes so each weight is named after its sub-layer.
        for layer, shapes in (
            (self.attention, (input_shape, input_shape)),
            (self.attention_norm, (input_shape,)),
            (self.ff_hidden, (input_shape,)),
            (self.ff_output, (input_shape[:-1] + (self.ff_dim,),)),
            (self.ff_norm, (input_shape,)),
        ):
            with name_scope(layer.name):
                layer.build(*shapes)
        self.built = True

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

    def _feed_forward(self, x):
        return self.ff_output(self.ff_hidden(x))

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config.update(
            embed_dim=self.embed_dim,
            num_heads=self.num_heads,
            ff_dim=self.ff_dim,
            dropout=self.dropout,
            key_dim=self.key_dim,
            norm_first=self.norm_first,
            activation=keras.activations.serialize(self.activation),
            attention_dropout=self.attention_dropout,
            layer_norm_epsilon=self.layer_norm_epsilon,
            position=self.position,
            attention_span=self.attention_span,
        )
        return config


def checked_key_dim(key_dim, embed_dim: int, num_heads: int) -> int:
    """``key_dim`` if given, else ``embed_dim // num_heads`` when that divides evenly."""
    if key_dim is not None:
        return require_positive_int("key_dim", key_dim)
    if embed_dim % num_heads:
        raise LayerError(
            f"embed_dim={embed_dim} is not divisible by num_heads={num_heads}; "
            "pass key_dim explicitly or choose a divisor."
        )
    return embed_dim // num_heads


def require_embed_dim(input_shape: tuple, embed_dim: int, layer: str) -> None:
    if input_shape[-1] is not None and input_shape[-1] != embed_dim:
        # A plain ValueError: build can run inside Keras' traced fit/predict, which
        # re-raises built-in error types only.
        raise ValueError(
            f"{layer}(embed_dim={embed_dim}) got inputs with last dimension "
            f"{input_shape[-1]}; the residual connections need them equal."
        )
