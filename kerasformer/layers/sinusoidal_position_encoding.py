"""The fixed sine/cosine position encoding of "Attention Is All You Need"."""

from __future__ import annotations

import numpy as np

from kerasformer.validation import LayerError

from ._sinusoids import SinusoidLayer
from .backend import ops, serializable


@serializable
class SinusoidalPositionEncoding(SinusoidLayer):
    """Position encodings PE(p, 2i) = sin(p / w^(2i/d)), PE(p, 2i+1) = cos(p / w^(2i/d)).

    Returns the encodings for the positions of ``inputs`` (broadcast to its shape), to be
    added to token embeddings (seed 002). Nothing is learned, so any length works, and a
    model trained on short texts can read longer ones.

    Masking: the encoding of a position does not depend on padding; the input's mask is
    passed on unchanged.

    Args:
        max_wavelength: ``w``, the longest wavelength (10,000 in the paper).
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: ``(batch, length, dim)`` with an even ``dim``; only its shape is read.
        start_index: Position of the first step (tokens already decoded), default 0.

    Examples:
        >>> import numpy as np
        >>> embeddings = np.zeros((2, 5, 8), "float32")
        >>> x = embeddings + SinusoidalPositionEncoding()(embeddings)
        >>> tuple(x.shape)
        (2, 5, 8)
    """

    # Checked when building, not in call: Keras wraps errors raised in call in lines of
    # its own, and this one should stay one line.
    def build(self, input_shape):
        _even_feature_size(input_shape[-1], "SinusoidalPositionEncoding")
        self.built = True

    def call(self, inputs, start_index=0):
        shape = ops.shape(inputs)
        dim = inputs.shape[-1]
        # Dimension 2i and 2i + 1 share the frequency 1 / w^(2i/d).
        exponents = (np.arange(dim) // 2 * 2 / dim).astype("float32")
        angles = self._angles(shape[-2], start_index, exponents)
        encoding = ops.where(np.arange(dim) % 2 == 0, ops.sin(angles), ops.cos(angles))
        return ops.broadcast_to(ops.cast(encoding, self.compute_dtype), shape)


def _even_feature_size(size, layer: str) -> int:
    if size is None or size % 2:
        raise LayerError(
            f"{layer} needs an even, known last dimension (sine/cosine pairs), got {size}; "
            "use an even embedding or head size."
        )
    return int(size)
