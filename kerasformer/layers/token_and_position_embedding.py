"""Token embeddings plus learned position embeddings."""

from __future__ import annotations

from kerasformer.backend import keras, serializable, tf
from kerasformer.layers._validation import require_bool, require_positive_int


@serializable
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Sum of a token embedding and a learned embedding of each position.

    Positions are counted over the actual length of the input, so a batch of any length
    up to ``maxlen`` works and padding appended at the end does not move the positions of
    real tokens. Input longer than ``maxlen`` is an error rather than a silent truncation
    or a silently reused position, also under XLA (where the compiler reports it).

    Masking: with ``mask_zero=True`` (the default) token id 0 is padding, and the layer
    produces a Keras mask that is ``False`` at those positions, which downstream layers
    such as `TransformerBlock` and `GlobalAveragePooling1D` consume.

    Args:
        vocab_size: Number of token ids, including padding (0) and out-of-vocabulary (1).
        maxlen: The longest sequence the layer accepts; the number of learned positions.
        embed_dim: Size of each embedding vector.
        mask_zero: Whether token id 0 is padding and should be masked.
        embeddings_initializer: Initializer for both embedding tables.
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: Integer token ids of shape ``(batch, length)`` with ``length <= maxlen``.

    Example:

    >>> layer = TokenAndPositionEmbedding(vocab_size=100, maxlen=8, embed_dim=4)
    >>> out = layer(tf.constant([[5, 7, 0]]))
    >>> out.shape, layer.compute_mask(tf.constant([[5, 7, 0]])).numpy().tolist()
    (TensorShape([1, 3, 4]), [[True, True, False]])
    """

    def __init__(
        self,
        vocab_size: int,
        maxlen: int,
        embed_dim: int,
        mask_zero: bool = True,
        embeddings_initializer="uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocab_size = require_positive_int("vocab_size", vocab_size)
        self.maxlen = require_positive_int("maxlen", maxlen)
        self.embed_dim = require_positive_int("embed_dim", embed_dim)
        self.mask_zero = require_bool("mask_zero", mask_zero)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.supports_masking = self.mask_zero
        self.token_embedding = keras.layers.Embedding(
            self.vocab_size,
            self.embed_dim,
            embeddings_initializer=_fresh_copy(self.embeddings_initializer),
            name="token_embedding",
        )
        self.position_embedding = keras.layers.Embedding(
            self.maxlen,
            self.embed_dim,
            embeddings_initializer=_fresh_copy(self.embeddings_initializer),
            name="position_embedding",
        )

    def build(self, input_shape):
        self._require_static_length_within_maxlen(input_shape[-1])
        with tf.name_scope(self.token_embedding.name):
            self.token_embedding.build(input_shape)
        with tf.name_scope(self.position_embedding.name):
            self.position_embedding.build((None,))
        super().build(input_shape)

    def call(self, inputs):
        self._require_static_length_within_maxlen(inputs.shape[-1])
        positions = self._positions(tf.shape(inputs)[-1])
        return self.token_embedding(inputs) + self.position_embedding(positions)

    def _require_static_length_within_maxlen(self, length: int | None) -> None:
        # Known when tracing (eager calls, Keras inputs, NumPy data): a Python error. A
        # plain ValueError, because Keras re-raises an error from inside fit/predict with
        # its own type only for built-in types (a subclass would become a StagingError).
        if length is not None and length > self.maxlen:
            raise ValueError(
                f"TokenAndPositionEmbedding got a sequence of length {length}, longer than "
                f"maxlen={self.maxlen}; {_FIX}"
            )

    def _positions(self, length):
        """``0 .. length - 1``, refusing any ``length`` beyond ``maxlen``.

        In a graph the length is only known at run time, so an assert checks it. XLA
        drops asserts and clamps out-of-range gathers, which would silently reuse the
        last position's embedding; so the positions are also a slice of ``maxlen``
        positions, which XLA (compiling for each concrete shape) rejects when
        compiling: "Expected size[0] in [0, maxlen], but got length". Model Garden's
        and KerasHub's position embeddings slice their table for the same reason.
        """
        check = tf.debugging.Assert(
            length <= self.maxlen,
            [f"TokenAndPositionEmbedding got a sequence longer than maxlen={self.maxlen}; {_FIX}"],
        )
        with tf.control_dependencies([check]):
            return tf.slice(tf.range(self.maxlen), [0], [length], name="positions_up_to_maxlen")

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return tf.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(input_shape).concatenate([self.embed_dim])

    def get_config(self):
        config = super().get_config()
        config.update(
            vocab_size=self.vocab_size,
            maxlen=self.maxlen,
            embed_dim=self.embed_dim,
            mask_zero=self.mask_zero,
            embeddings_initializer=keras.initializers.serialize(self.embeddings_initializer),
        )
        return config


def _fresh_copy(initializer):
    # One initializer instance called twice returns the same values both times, which
    # would start the token and position tables from identical numbers.
    return initializer.__class__.from_config(initializer.get_config())


_FIX = "truncate the input or build the layer with a larger maxlen."
