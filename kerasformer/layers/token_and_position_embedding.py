"""Token embeddings plus position embeddings (learned or sinusoidal)."""

from __future__ import annotations

import math

from kerasformer.validation import LayerError, is_whole_number, require_bool, require_positive_int

from . import _adaptive_softmax
from ._base import Layer, build_in_scope
from .backend import (
    checked_ids,
    checked_length,
    fresh_copy,
    keras,
    name_scope,
    ops,
    serializable,
)
from .sinusoidal_position_encoding import SinusoidalPositionEncoding

POSITIONS = ("learned", "sinusoidal", "none")


@serializable
class TokenAndPositionEmbedding(Layer):
    """Sum of a token embedding and an embedding of each token's position.

    ``position="learned"`` (the default, as in the seeds) learns one vector per position
    up to ``maxlen``; ``"sinusoidal"`` adds the fixed encodings of
    `SinusoidalPositionEncoding` to token vectors scaled by √embed_dim (as in
    "Attention Is All You Need"); ``"none"`` adds nothing, for attention that encodes
    positions itself (``TransformerBlock(position="rotary" | "relative")``).

    Positions are counted over the actual length of the input, so a batch of any length
    up to ``maxlen`` works and padding appended at the end does not move the positions of
    real tokens. Input longer than ``maxlen`` is an error rather than a silent truncation
    or a silently reused position, also under XLA (where the compiler reports it).

    Masking: with ``mask_zero=True`` (the default) token id 0 is padding, and the layer
    produces a Keras mask that is ``False`` at those positions, which downstream layers
    such as `TransformerBlock` and ``GlobalAveragePooling1D`` consume. Called with
    ``reverse=True`` it passes the mask of its hidden input on to the logits.

    With ``reversible=True`` the layer can also be called the other way: hidden vectors
    ``(batch, length, embed_dim)`` in, next-token logits ``(batch, length, vocab_size)``
    out, through the transposed token embedding and an output bias. A language model
    whose output layer is its input embedding (tied weights, Press & Wolf 2017) learns
    one table instead of two. With ``adaptive_cutoffs`` that output is an adaptive
    softmax (Grave et al. 2017) over the same table: ids below the first cutoff (the
    frequent words, when ids are ranked by frequency) and one entry per later range
    share a head softmax, and each range is a cluster with a softmax of its own, read
    through a ``embed_dim``-square projection of the hidden vector. A reverse call then
    returns every word's log-probability (valid logits: their softmax is the model's
    distribution), and a reverse call with ``targets`` returns each position's
    ``-log p(target)`` scoring only the target's cluster, which is how a large
    vocabulary trains fast (the loss never forms a ``(length, vocab_size)`` tensor).

    Arguments come in the order of the Keras tutorial's own layer,
    ``TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)``, so code written against
    it runs unchanged. A token id outside ``[0, vocab_size)`` is an error on every backend
    (see `checked_ids`), so sizes given the other way round cannot train silently.

    Args:
        maxlen: The longest sequence the layer accepts; the number of learned positions.
        vocab_size: Number of token ids, including padding (0) and out-of-vocabulary (1).
        embed_dim: Size of each embedding vector.
        mask_zero: Whether token id 0 is padding and should be masked.
        embeddings_initializer: Initializer for the embedding tables.
        position: ``"learned"``, ``"sinusoidal"`` or ``"none"``.
        reversible: Whether ``reverse=True`` calls map hidden vectors to token logits
            (this adds an output bias of ``vocab_size`` weights).
        adaptive_cutoffs: None for a full softmax, or the ascending ids where the
            adaptive softmax's clusters start, each from 1 to ``vocab_size - 1``, e.g.
            ``[2000, 10000]`` (only with ``reversible=True``).
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: Integer token ids of shape ``(batch, length)`` with ``length <= maxlen``.
        start_index: Position of the first token (default 0), for incremental decoding:
            a decoder fed one new token at a time embeds token ``i`` at position ``i``.
            ``start_index + length`` must not exceed ``maxlen``.
        reverse: Whether ``inputs`` are hidden vectors ``(batch, length, embed_dim)`` to
            turn into float32 token logits (only for a ``reversible`` layer).
        targets: With ``reverse=True``, the ids ``(batch, length)`` to score: the call
            returns float32 ``-log p(target)`` ``(batch, length)`` instead of logits.

    Examples:
        >>> import numpy as np
        >>> layer = TokenAndPositionEmbedding(maxlen=8, vocab_size=100, embed_dim=4)
        >>> ids = np.array([[5, 7, 0]])
        >>> tuple(layer(ids).shape), ops.convert_to_numpy(layer.compute_mask(ids)).tolist()
        ((1, 3, 4), [[True, True, False]])
        >>> tied = TokenAndPositionEmbedding(8, 100, 4, reversible=True)
        >>> tuple(tied(tied(ids), reverse=True).shape)
        (1, 3, 100)
        >>> adaptive = TokenAndPositionEmbedding(8, 100, 4, reversible=True, adaptive_cutoffs=[20])
        >>> tuple(adaptive(adaptive(ids), reverse=True, targets=np.array([[7, 0, 0]])).shape)
        (1, 3)
    """

    _config_arguments = (
        "maxlen", "vocab_size", "embed_dim", "mask_zero", "embeddings_initializer", "position",
        "reversible", "adaptive_cutoffs",
    )  # fmt: skip

    def __init__(
        self,
        maxlen: int,
        vocab_size: int,
        embed_dim: int,
        mask_zero: bool = True,
        embeddings_initializer="uniform",
        position: str = "learned",
        reversible: bool = False,
        adaptive_cutoffs=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocab_size = require_positive_int("vocab_size", vocab_size)
        self.maxlen = require_positive_int("maxlen", maxlen)
        self.embed_dim = require_positive_int("embed_dim", embed_dim)
        self.mask_zero = require_bool("mask_zero", mask_zero)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        if position not in POSITIONS:
            raise LayerError(
                f"`position` must be one of {', '.join(POSITIONS)}, got {position!r}; "
                "rotary and relative positions are set on TransformerBlock instead."
            )
        if position == "sinusoidal" and self.embed_dim % 2:
            raise LayerError(f"sinusoidal positions need an even embed_dim, got {self.embed_dim}.")
        self.position = position
        self.reversible = require_bool("reversible", reversible)
        self.adaptive_cutoffs = self._checked_cutoffs(adaptive_cutoffs)
        self.supports_masking = self.mask_zero
        self.token_embedding = self._embedding(self.vocab_size, "token_embedding")
        self.position_embedding = None
        if position == "learned":
            self.position_embedding = self._embedding(self.maxlen, "position_embedding")
        elif position == "sinusoidal":
            self.position_embedding = SinusoidalPositionEncoding(
                dtype=self.dtype_policy, name="position_encoding"
            )

    def _embedding(self, input_dim: int, name: str):
        return keras.layers.Embedding(
            input_dim,
            self.embed_dim,
            embeddings_initializer=fresh_copy(self.embeddings_initializer),
            dtype=self.dtype_policy,
            name=name,
        )

    def build(self, input_shape):
        self._require_static_length_within_maxlen(input_shape[-1])
        build_in_scope(self.token_embedding, input_shape)
        if self.position == "learned":
            build_in_scope(self.position_embedding, (None,))
        self.output_bias = None
        if self.reversible:
            self.output_bias = self.add_weight(
                name="output_bias", shape=(self.vocab_size,), initializer="zeros"
            )
        if self.adaptive_cutoffs:
            clusters = len(self.adaptive_cutoffs)
            self.cluster_kernel = self.add_weight(
                name="cluster_kernel", shape=(self.embed_dim, clusters),
                initializer="glorot_uniform",
            )  # fmt: skip
            self.cluster_bias = self.add_weight(
                name="cluster_bias", shape=(clusters,), initializer="zeros"
            )
            # Identity at first: each cluster starts as the tied full softmax restricted to it.
            self.tail_projections = [
                self.add_weight(
                    name=f"tail_projection_{index}",
                    shape=(self.embed_dim, self.embed_dim),
                    initializer="identity",
                )  # fmt: skip
                for index in range(clusters)
            ]
        self.built = True

    def _checked_cutoffs(self, cutoffs):
        if cutoffs is None:
            return None
        cutoffs = list(cutoffs) if isinstance(cutoffs, (list, tuple)) else cutoffs
        if (
            not isinstance(cutoffs, list)
            or not cutoffs
            or not all(is_whole_number(c) and 1 <= c < self.vocab_size for c in cutoffs)
            or any(a >= b for a, b in zip(cutoffs[:-1], cutoffs[1:], strict=True))
        ):
            raise LayerError(
                f"`adaptive_cutoffs` must be ascending whole numbers from 1 to vocab_size - 1 "
                f"= {self.vocab_size - 1}, e.g. [2000, 10000]; got {cutoffs!r}."
            )
        if not self.reversible:
            raise LayerError("`adaptive_cutoffs` is an output layer: it needs reversible=True.")
        return tuple(int(c) for c in cutoffs)

    def __call__(self, *args, reverse=False, **kwargs):
        # Checked before Keras's __call__, which would wrap an error raised in call in
        # lines of its own; this should stay one line.
        if reverse and not self.reversible:
            raise LayerError(
                "reverse=True needs a TokenAndPositionEmbedding built with reversible=True."
            )
        if kwargs.get("targets") is not None and not reverse:
            raise LayerError("`targets` are scored only by a reverse=True call.")
        if reverse:  # passed only when set, so a forward call is recorded as before
            kwargs["reverse"] = True
        return super().__call__(*args, **kwargs)

    def call(self, inputs, start_index=0, reverse=False, targets=None):
        if reverse and targets is not None:
            return self._negative_log_likelihood(inputs, targets)
        if reverse:
            return self._logits(inputs)
        static_length = inputs.shape[-1]
        if static_length is not None and isinstance(start_index, int):
            static_length += start_index
        self._require_static_length_within_maxlen(static_length)
        length = ops.shape(inputs)[-1]
        end = length + start_index
        checked_end = checked_length(end, self.maxlen, self._too_long())
        # A TensorFlow graph checks at run time; the check must feed the positions.
        count = length if checked_end is end else checked_end - start_index
        embedded = self.token_embedding(checked_ids(inputs, self.vocab_size, self._bad_ids()))
        if self.position == "learned":
            positions = self._positions(count, start_index)
            return embedded + self.position_embedding(positions)
        if self.position == "sinusoidal":
            # As in the paper (section 3.4): token vectors scaled by √d, so the fixed
            # encodings in [-1, 1] do not drown small initial embeddings.
            embedded = embedded * math.sqrt(self.embed_dim)
            return embedded + self.position_embedding(embedded, start_index=start_index)
        return embedded

    def _logits(self, hidden):
        # One (tokens, embed_dim) x (embed_dim, vocab) product: TensorFlow's gradient of a
        # batched or broadcast einsum keeps a (batch, vocab, embed_dim) or larger tensor
        # before summing it, which ran a WikiText-2 model (33,280 words) out of memory.
        shape = ops.shape(hidden)
        rows = ops.reshape(ops.cast(hidden, "float32"), (-1, self.embed_dim))
        if self.adaptive_cutoffs:
            logits = _adaptive_softmax.log_probabilities(rows, *self._output_weights())
        else:
            logits = self._full_logits(rows)
        return ops.reshape(logits, (shape[0], shape[1], self.vocab_size))

    def _negative_log_likelihood(self, hidden, targets):
        shape = ops.shape(hidden)
        rows = ops.reshape(ops.cast(hidden, "float32"), (-1, self.embed_dim))
        targets = ops.reshape(ops.cast(targets, "int32"), (-1,))
        if self.adaptive_cutoffs:
            losses = _adaptive_softmax.negative_log_likelihood(
                rows, targets, *self._output_weights()
            )
        else:
            logits = self._full_logits(rows)
            losses = ops.sparse_categorical_crossentropy(targets, logits, from_logits=True)
        return ops.reshape(losses, (shape[0], shape[1]))

    def _full_logits(self, rows):
        table, bias = self._output_weights()[:2]
        return ops.matmul(rows, ops.transpose(table)) + bias

    def _output_weights(self) -> tuple:
        """The table, output bias and (adaptive) cluster weights and cutoffs, as float32.

        float32, so the softmax is stable under mixed precision (the table is read as
        the policy autocasts it inside the call, so a float16 table is rounded).
        """
        table = ops.cast(self.token_embedding.embeddings, "float32")
        bias = ops.cast(self.output_bias, "float32")
        if not self.adaptive_cutoffs:
            return table, bias
        return (
            table, bias, ops.cast(self.cluster_kernel, "float32"),
            ops.cast(self.cluster_bias, "float32"),
            [ops.cast(projection, "float32") for projection in self.tail_projections],
            self.adaptive_cutoffs,
        )  # fmt: skip

    def _require_static_length_within_maxlen(self, length: int | None) -> None:
        # Known when tracing (eager calls, Keras inputs, NumPy data): a Python error. A
        # plain ValueError, because Keras re-raises an error from inside fit/predict with
        # its own type only for built-in types (a subclass would become a StagingError).
        if length is not None and length > self.maxlen:
            raise ValueError(
                f"TokenAndPositionEmbedding got a sequence of length {length}, longer than "
                f"maxlen={self.maxlen}; {_FIX}"
            )

    def _too_long(self) -> str:
        return f"TokenAndPositionEmbedding got a sequence longer than maxlen={self.maxlen}; {_FIX}"

    def _bad_ids(self) -> str:
        return (
            f"TokenAndPositionEmbedding {self.name!r} got a token id outside 0 to "
            f"{self.vocab_size - 1} (vocab_size={self.vocab_size}); give the vocabulary's "
            "size as vocab_size, in the tutorial's order: TokenAndPositionEmbedding(maxlen, "
            "vocab_size, embed_dim)"
        )

    def _positions(self, length, start_index=0):
        """``start_index .. start_index + length - 1``, checked against ``maxlen`` already.

        In a TensorFlow graph the length may only be known at run time, where an
        assertion checks it. XLA drops assertions and clamps out-of-range gathers, which
        would silently reuse the last position's embedding; so the positions are a slice
        of ``maxlen`` positions, which XLA (compiling for each concrete shape) rejects
        when compiling: "Expected size[0] in [0, maxlen], but got length". Model
        Garden's and KerasHub's position embeddings slice their table for the same reason.
        """
        # The scope names the op in TensorFlow's error message.
        with name_scope("positions_up_to_maxlen"):
            return ops.slice(ops.arange(self.maxlen), [start_index], [length])

    def compute_mask(self, inputs, mask=None):
        if len(inputs.shape) == 3:  # hidden vectors, called with reverse=True
            return mask
        if not self.mask_zero:
            return None
        return ops.not_equal(inputs, 0)

    def compute_output_spec(self, inputs, start_index=0, reverse=False, targets=None):
        # Keras 3 only (tf-keras traces call): logits are float32 whatever the policy.
        dtype = "float32" if reverse else self.compute_dtype
        if reverse and targets is not None:
            return keras.KerasTensor(tuple(inputs.shape)[:-1], dtype=dtype)
        return keras.KerasTensor(self.compute_output_shape(inputs.shape), dtype=dtype)

    def compute_output_shape(self, input_shape):
        if len(input_shape) == 3:  # hidden vectors, called with reverse=True
            return (*tuple(input_shape)[:-1], self.vocab_size)
        return (*tuple(input_shape), self.embed_dim)


_FIX = "truncate the input or build the layer with a larger maxlen."
