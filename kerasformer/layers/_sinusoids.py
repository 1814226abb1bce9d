"""The base of the fixed sine/cosine position layers: rotary and sinusoidal positions."""

from __future__ import annotations

from kerasformer.validation import require_positive_number

from ._base import Layer
from .backend import ops


class SinusoidLayer(Layer):
    """A layer of sines and cosines of each position, at wavelengths up to ``max_wavelength``.

    Its output has the input's shape and mask: the positions of padding are counted like
    any other, so padding appended at the end moves no real token.
    """

    _config_arguments = ("max_wavelength",)

    def __init__(self, max_wavelength: float = 10_000.0, **kwargs):
        super().__init__(**kwargs)
        self.max_wavelength = require_positive_number("max_wavelength", max_wavelength)
        self.supports_masking = True

    def _angles(self, length, start_index, exponents):
        """``(length, len(exponents))`` float32: ``position / max_wavelength ** exponent``.

        Positions count from ``start_index``. The frequencies are computed in NumPy in the
        dtype of ``exponents`` and only then made float32, so each layer keeps the
        rounding its saved models were trained with.
        """
        inverse_frequencies = (1.0 / self.max_wavelength**exponents).astype("float32")
        positions = ops.cast(ops.arange(length) + start_index, "float32")
        return positions[:, None] * inverse_frequencies[None, :]

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)
