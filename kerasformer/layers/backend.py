"""The Keras that kerasformer's layers are built on, as `kerasformer.backend` chose it.

Every layer in `kerasformer.layers` is written once, against the ``keras`` and ``ops``
exported here, with the helpers every layer shares (masks, initializers, dtypes):

- **tf-keras** (Keras 2, the ``tf_keras`` package) is the default whenever it is
  installed. It is what TF-Hub and the Model Garden need, so the BERT family, the trainer
  and the ``kerasformer`` command always use it, and today's users see no change.
- **Keras 3** (``import keras``, with whichever backend ``KERAS_BACKEND`` names) is used
  when the environment variable ``KERASFORMER_KERAS=3`` is set before kerasformer is
  imported, or when tf-keras is not installed (a JAX- or PyTorch-only machine).

``ops`` is ``keras.ops`` under Keras 3 and `kerasformer.layers._tf_ops` (the same
functions, with the same names and meanings, written with TensorFlow) under tf-keras, so a
layer's math reads the same under both. This is the pattern of KerasNLP 0.6-0.8.
"""

from __future__ import annotations

import contextlib
import os

# The choice is kerasformer.backend's; these names stay here for the layers and users.
from kerasformer.backend import ENVIRONMENT_VARIABLE, KERAS_VERSION, chosen_keras_version

if KERAS_VERSION == 2:
    # kerasformer.backend imports tf_keras; the layers reuse it.
    from kerasformer.backend import keras, tf
    from kerasformer.layers import _tf_ops as ops

    def name_scope(name: str):
        """Scope under which a sub-layer's weights get its name (automatic in Keras 3)."""
        return tf.name_scope(name)

    def _attached_mask(tensor):
        return getattr(tensor, "_keras_mask", None)

else:
    # TensorFlow's C++ INFO lines bury the output when Keras 3 runs on TensorFlow.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    import keras
    from keras import ops

    def name_scope(name: str):
        del name  # Keras 3 names sub-layer weights by their path already.
        return contextlib.nullcontext()

    def _attached_mask(tensor):
        # Keras 3 keeps masks of tensors that take no attributes (JAX arrays) in a table
        # that only this function reads; it fills ``*_mask`` call arguments itself.
        from keras.src.backend import get_keras_mask

        return None if tensor is None else get_keras_mask(tensor)


def keras_mask(tensor, given=None):
    """``given`` if not None, else the Keras mask a previous layer attached to ``tensor``."""
    return given if given is not None else _attached_mask(tensor)


def fresh_copy(initializer):
    """A new initializer like ``initializer``.

    One initializer object called twice returns the same values, which would start two
    weights (token and position tables, query and key kernels) from identical numbers.
    """
    return initializer.__class__.from_config(initializer.get_config())


def checked_length(length, maxlen: int, message: str):
    """``length``, with a run-time check that it is at most ``maxlen`` where needed.

    Lengths known when tracing are checked in Python by the layers; TensorFlow graphs can
    leave them unknown until run time, so there an assertion carries ``message``.
    """
    if isinstance(length, int) or backend_name() not in ("tf_keras", "tensorflow"):
        return length
    import tensorflow as tf

    check = tf.debugging.Assert(length <= maxlen, [message])
    with tf.control_dependencies([check]):
        return tf.identity(length)


def compute_dtype_inputs(layer, *tensors):
    """``tensors`` cast to the layer's compute dtype (None stays None).

    Keras casts only a layer's first input under a mixed-precision policy; the others
    (values, keys, encoder outputs) would stay float32 and fail to multiply with it.
    """
    return tuple(None if x is None else ops.cast(x, layer.compute_dtype) for x in tensors)


def serializable(cls):
    """Register a layer under the ``kerasformer`` package so saved models load again."""
    return keras.saving.register_keras_serializable(package="kerasformer")(cls)


def backend_name() -> str:
    """``"tf_keras"`` or the Keras 3 backend: ``"tensorflow"``, ``"jax"``, ``"torch"``..."""
    return "tf_keras" if KERAS_VERSION == 2 else keras.backend.backend()


__all__ = [
    "ENVIRONMENT_VARIABLE",
    "KERAS_VERSION",
    "backend_name",
    "checked_length",
    "compute_dtype_inputs",
    "fresh_copy",
    "chosen_keras_version",
    "keras",
    "keras_mask",
    "name_scope",
    "ops",
    "serializable",
]
