"""The fixed sine/cosine position encoding of "Attention Is All You Need"."""

from __future__ import annotations

import numpy as np

from kerasformer.layers._base import Layer
from kerasformer.layers._validation import LayerError, require_positive_number
from kerasformer.layers.backend import ops, serializable


@serializable
class SinusoidalPositionEncoding(Layer):
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

    Example:

    >>> embeddings = np.zeros((2, 5, 8), "float32")
    >>> x = embeddings + SinusoidalPositionEncoding()(embeddings)
    >>> tuple(x.shape)
    (2, 5, 8)
    """

    def __init__(self, max_wavelength: float = 10_000.0, **kwargs):
        super().__init__(**kwargs)
        self.max_wavelength = require_positive_number("max_wavelength", max_wavelength)
        self.supports_masking = True

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
        inverse_frequencies = (1.0 / self.max_wavelength**exponents).astype("float32")
        positions = ops.cast(ops.arange(shape[-2]) + start_index, "float32")
        angles = positions[:, None] * inverse_frequencies[None, :]
        encoding = ops.where(np.arange(dim) % 2 == 0, ops.sin(angles), ops.cos(angles))
        return ops.broadcast_to(ops.cast(encoding, self.compute_dtype), shape)

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(max_wavelength=self.max_wavelength)
        return config


def _even_feature_size(size, layer: str) -> int:
    if size is None or size % 2:
        raise LayerError(
            f"{layer} needs an even, known last dimension (sine/cosine pairs), got {size}; "
            "use an even embedding or head size."
        )
    return int(size)
