"""The mean of a sequence over its real positions, zero for a sequence with none."""

from __future__ import annotations

from kerasformer.validation import LayerError

from ._base import Layer
from .backend import keras, ops, serializable


@serializable
class MaskedAveragePooling(Layer):
    """Averages ``(batch, length, dim)`` over the positions the mask keeps.

    Keras's ``GlobalAveragePooling1D`` divides by the number of real positions, which is
    0 for a text with no token (an empty string, or only punctuation once standardised):
    its output is NaN, and so is every gradient of the batch, which turns every weight
    NaN at the next step. Here such a sequence pools to zeros and its gradient is zero.

    Masking: positions where the mask is False are left out of the mean; with no mask
    every position counts. The output has no mask.

    Args:
        **kwargs: Standard layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: ``(batch, length, dim)``.
        mask: Optional ``(batch, length)`` booleans, True at real positions.

    Examples:
        >>> import numpy as np
        >>> x = np.ones((2, 3, 4), "float32")
        >>> pooled = MaskedAveragePooling()(x, mask=np.array([[1, 1, 0], [0, 0, 0]], bool))
        >>> ops.convert_to_numpy(pooled)[:, 0].tolist()
        [1.0, 0.0]
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    # With no arguments of its own, the layer keeps Keras's automatic config, which holds
    # the keyword arguments as given (tf-keras keeps a dtype policy by its name): the
    # configs it has always saved.
    get_config = keras.layers.Layer.get_config

    def build(self, input_shape):
        if len(input_shape) != 3:
            raise LayerError(
                f"MaskedAveragePooling averages (batch, length, dim) inputs over their "
                f"length; got shape {tuple(input_shape)}. Give each position a feature axis "
                "(ops.expand_dims(x, -1)) or pool the output of an Embedding."
            )
        super().build(input_shape)

    def call(self, inputs, mask=None):
        if mask is None:
            return ops.mean(inputs, axis=1)
        weights = ops.expand_dims(ops.cast(mask, inputs.dtype), -1)
        # At least one in the denominator: the sum is already 0 where nothing counts, and
        # dividing by max(count, 1) keeps both the value and its gradient finite there.
        count = ops.maximum(ops.sum(weights, axis=1), 1.0)
        return ops.sum(inputs * weights, axis=1) / count

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[-1])
