"""A word's vector from its characters: embedding, convolution, max over the characters."""

from __future__ import annotations

from kerasformer.validation import require_positive_int

from ._base import Layer, build_in_scope
from .backend import keras, ops, serializable

# Added to padded characters' activations before the max, so that they never win it.
NOT_A_CHARACTER = -1e4


@serializable
class CharacterCNN(Layer):
    """Character-level word features, as in Ma & Hovy (2016) for named-entity tagging.

    Each character id is embedded, a 1-D convolution runs over the characters of each
    word, and the maximum over the word's characters is its feature vector. Case and
    shape (``Obama``, ``U.S.``, ``1996-08-22``) are in the characters, so a tagger sees
    them even where its word vocabulary is lower-cased or the word is unknown.

    Masking: character id 0 is padding. Padded characters never take the maximum, so
    appending padding leaves every word's features unchanged; a word with no character
    (a padded word) gets zeros. The output's mask is ``(batch, words)``, True for a word
    with at least one character.

    Args:
        vocab_size: Number of character ids, padding (0) and unknown included.
        embed_dim: Size of each character's embedding.
        filters: Size of the output: one feature per convolution filter.
        kernel_size: Characters each filter sees at once.
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: Integer character ids ``(batch, words, characters)``, 0 for padding.

    Examples:
        >>> import numpy as np
        >>> layer = CharacterCNN(vocab_size=60, embed_dim=8, filters=16)
        >>> ids = np.array([[[5, 6, 7, 0], [8, 0, 0, 0], [0, 0, 0, 0]]])
        >>> tuple(layer(ids).shape)
        (1, 3, 16)
    """

    _config_arguments = ("vocab_size", "embed_dim", "filters", "kernel_size")

    def __init__(
        self, vocab_size: int, embed_dim: int = 25, filters: int = 50, kernel_size: int = 3,
        **kwargs,
    ):  # fmt: skip
        super().__init__(**kwargs)
        self.vocab_size = require_positive_int("vocab_size", vocab_size)
        self.embed_dim = require_positive_int("embed_dim", embed_dim)
        self.filters = require_positive_int("filters", filters)
        self.kernel_size = require_positive_int("kernel_size", kernel_size)
        self.supports_masking = True
        self.embedding = keras.layers.Embedding(
            vocab_size, embed_dim, dtype=self.dtype_policy, name="character_embedding"
        )
        self.convolution = keras.layers.Conv1D(
            filters, kernel_size, padding="same", activation="tanh",
            dtype=self.dtype_policy, name="convolution",
        )  # fmt: skip

    def build(self, input_shape):
        build_in_scope(self.embedding, input_shape)
        build_in_scope(self.convolution, (None, input_shape[-1], self.embed_dim))
        super().build(input_shape)

    def call(self, inputs):
        shape = ops.shape(inputs)
        characters = ops.reshape(inputs, (-1, shape[-1]))  # one row per word
        real = ops.expand_dims(ops.cast(ops.not_equal(characters, 0), self.compute_dtype), -1)
        # Padding embeds as zeros, as the convolution pads the word's ends: a word's
        # features do not depend on how much padding follows it.
        activations = self.convolution(self.embedding(characters) * real)
        best = ops.max(activations + (1.0 - real) * NOT_A_CHARACTER, axis=1)
        best = best * ops.expand_dims(ops.cast(has_characters(characters), best.dtype), -1)
        return ops.reshape(best, (shape[0], shape[1], self.filters))

    def compute_mask(self, inputs, mask=None):
        return has_characters(inputs)

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape)[:2], self.filters)


def has_characters(ids):
    """Whether each row of character ids (last axis) holds a character, not only padding."""
    return ops.greater(ops.sum(ops.cast(ops.not_equal(ids, 0), "int32"), axis=-1), 0)
