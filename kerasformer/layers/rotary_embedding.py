"""Rotary position embedding (RoPE, Su et al. 2021) for queries and keys."""

from __future__ import annotations

import numpy as np

from kerasformer.validation import LayerError

from ._sinusoids import SinusoidLayer
from .backend import ops, serializable


@serializable
class RotaryEmbedding(SinusoidLayer):
    """Rotate each pair of features by an angle proportional to the token's position.

    Applied to queries and keys (not values) before their dot products, it makes the
    attention score of a query at position m and a key at position n depend on their
    content and on ``m - n`` only (seed 003). The pairs are feature ``i`` and ``i + d/2``
    ("rotate half", as in GPT-NeoX, LLaMA and KerasHub), rotated by ``position / w^(2i/d)``.

    Masking: positions are counted from the start whether or not tokens are padding, so
    appended padding moves nothing; the input's mask is passed on unchanged.

    Args:
        max_wavelength: ``w``, the longest wavelength (10,000 in the paper).
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: ``(batch, length, ..., dim)``: positions along axis 1, features last
            (an even ``dim``), e.g. per-head queries ``(batch, length, heads, head_dim)``.
        start_index: Position of the first step (tokens already decoded), default 0.

    Examples:
        >>> import numpy as np
        >>> queries = np.random.rand(2, 5, 4, 8).astype("float32")  # (batch, len, heads, dim)
        >>> tuple(RotaryEmbedding()(queries).shape)
        (2, 5, 4, 8)
    """

    # Checked when building, not in call: Keras wraps errors raised in call in lines of
    # its own, and these should stay one line.
    def build(self, input_shape):
        if len(input_shape) < 3:
            raise LayerError(
                f"RotaryEmbedding needs inputs (batch, length, ..., dim), got shape "
                f"{tuple(input_shape)}; add the batch and position axes."
            )
        dim = input_shape[-1]
        if dim is None or dim % 2:
            raise LayerError(
                f"RotaryEmbedding needs an even, known last dimension, got {dim}; "
                "use an even head size."
            )
        self.built = True

    def call(self, inputs, start_index=0):
        dim = inputs.shape[-1]
        half = dim // 2
        angles = self._angles(ops.shape(inputs)[1], start_index, np.arange(half) * 2 / dim)
        angles = ops.concatenate([angles, angles], axis=-1)
        # (length, dim) -> (1, length, 1, ..., dim), to broadcast over batch and heads.
        angles = ops.reshape(angles, (1, -1, *([1] * (len(inputs.shape) - 3)), dim))
        x = ops.cast(inputs, "float32")
        first, second = ops.split(x, 2, axis=-1)
        rotated_half = ops.concatenate([-second, first], axis=-1)
        rotated = x * ops.cos(angles) + rotated_half * ops.sin(angles)
        return ops.cast(rotated, inputs.dtype)
