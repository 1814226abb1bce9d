"""A transformer encoder block: self-attention and a feed-forward network."""

from __future__ import annotations

from kerasformer.backend import keras, serializable, tf
from kerasformer.layers._validation import (
    LayerError,
    require_bool,
    require_positive_int,
    require_positive_number,
    require_rate,
)


@serializable
class TransformerBlock(keras.layers.Layer):
    """Multi-head self-attention followed by a position-wise feed-forward network.

    Each of the two sub-layers has dropout, a residual connection and layer
    normalisation. With ``norm_first=False`` (post-LN, as in the original Transformer and
    seed 001) the normalisation follows each residual sum; with ``norm_first=True``
    (pre-LN, seed 003) it is applied to the sub-layer input, which trains more stably
    without learning-rate warm-up.

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
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: Float tensor of shape ``(batch, length, embed_dim)``.
        training: Whether dropout is active.
        mask: Optional boolean tensor ``(batch, length)``; ``False`` marks padding.
        return_attention_scores: If ``True``, also return the attention weights of shape
            ``(batch, num_heads, length, length)``, for visualisation.

    Example:

    >>> block = TransformerBlock(embed_dim=8, num_heads=2, ff_dim=16)
    >>> x = tf.random.normal((1, 5, 8))
    >>> out, scores = block(x, return_attention_scores=True)
    >>> out.shape, scores.shape
    (TensorShape([1, 5, 8]), TensorShape([1, 2, 5, 5]))
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
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.embed_dim = require_positive_int("embed_dim", embed_dim)
        self.num_heads = require_positive_int("num_heads", num_heads)
        self.ff_dim = require_positive_int("ff_dim", ff_dim)
        self.dropout = require_rate("dropout", dropout)
        self.key_dim = self._checked_key_dim(key_dim)
        self.norm_first = require_bool("norm_first", norm_first)
        self.activation = keras.activations.get(activation)
        self.attention_dropout = require_rate("attention_dropout", attention_dropout)
        self.layer_norm_epsilon = require_positive_number("layer_norm_epsilon", layer_norm_epsilon)
        self.supports_masking = True

        self.attention = keras.layers.MultiHeadAttention(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            dropout=self.attention_dropout,
            name="attention",
        )
        self.attention_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, name="attention_norm"
        )
        self.attention_dropout_layer = keras.layers.Dropout(
            self.dropout, name="attention_output_dropout"
        )
        self.ff_hidden = keras.layers.Dense(
            self.ff_dim, activation=self.activation, name="ff_hidden"
        )
        self.ff_output = keras.layers.Dense(self.embed_dim, name="ff_output")
        self.ff_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, name="ff_norm"
        )
        self.ff_dropout_layer = keras.layers.Dropout(self.dropout, name="ff_output_dropout")

    def _checked_key_dim(self, key_dim) -> int:
        if key_dim is not None:
            return require_positive_int("key_dim", key_dim)
        if self.embed_dim % self.num_heads:
            raise LayerError(
                f"embed_dim={self.embed_dim} is not divisible by num_heads={self.num_heads}; "
                "pass key_dim explicitly or choose a divisor."
            )
        return self.embed_dim // self.num_heads

    def build(self, input_shape):
        input_shape = tf.TensorShape(input_shape)
        if input_shape[-1] is not None and input_shape[-1] != self.embed_dim:
            # A plain ValueError: build can run inside Keras' traced fit/predict, which
            # re-raises built-in error types only.
            raise ValueError(
                f"TransformerBlock(embed_dim={self.embed_dim}) got inputs with last "
                f"dimension {input_shape[-1]}; the residual connections need them equal."
            )
        # MultiHeadAttention creates its weights on its first call and has no public way
        # to build them from a shape, so call it once on a one-token probe.
        with tf.init_scope():
            probe = tf.zeros((1, 1, self.embed_dim), dtype=self.compute_dtype)
            self.attention(probe, probe)
        # Built inside their own scopes so each weight is named after its sub-layer.
        for layer, shape in (
            (self.attention_norm, input_shape),
            (self.ff_hidden, input_shape),
            (self.ff_output, input_shape[:-1].concatenate([self.ff_dim])),
            (self.ff_norm, input_shape),
        ):
            with tf.name_scope(layer.name):
                layer.build(shape)
        super().build(input_shape)

    def call(self, inputs, training=None, mask=None, return_attention_scores=False):
        attention_mask = None if mask is None else tf.cast(mask, tf.bool)[:, tf.newaxis, :]
        x = inputs
        attention_input = self.attention_norm(x) if self.norm_first else x
        attended, scores = self.attention(
            attention_input,
            attention_input,
            attention_mask=attention_mask,
            return_attention_scores=True,
            training=training,
        )
        x = x + self.attention_dropout_layer(attended, training=training)
        if not self.norm_first:
            x = self.attention_norm(x)

        ff_input = self.ff_norm(x) if self.norm_first else x
        ff = self.ff_output(self.ff_hidden(ff_input))
        x = x + self.ff_dropout_layer(ff, training=training)
        if not self.norm_first:
            x = self.ff_norm(x)

        if return_attention_scores:
            return x, scores
        return x

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(input_shape)

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
        )
        return config
