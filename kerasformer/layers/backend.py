"""The Keras a layer namespace is built on, and the helpers every layer shares.

Every layer is written once, against the ``keras`` and ``ops`` exported here, which come
from the namespace's own ``_keras`` module:

- in `kerasformer.layers`, Keras 3 (``import keras``, on the backend ``KERAS_BACKEND``
  names) and ``keras.ops``;
- in `kerasformer.tf_keras.layers`, tf-keras and `kerasformer.tf_keras.layers._tf_ops`
  (the same functions, with the same names and meanings, written with TensorFlow).

So a layer's math reads the same under both, as in KerasNLP 0.6-0.8; unlike there, no
switch picks one Keras per process: both namespaces can be used side by side.
"""

from __future__ import annotations

import numpy as np

from ._keras import (
    KERAS_VERSION,
    OTHER_NAMESPACE_ADVICE,
    attached_mask,
    flash_attention_default,
    fused_attention,
    is_other_keras_tensor,
    keras,
    masks_hidden,
    name_scope,
    ops,
    policy_with_quantized_sublayers,
    traced_output_spec,
)


def keras_mask(tensor, given=None):
    """``given`` if not None, else the Keras mask a previous layer attached to ``tensor``."""
    return given if given is not None else attached_mask(tensor)


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


def checked_ids(ids, vocab_size: int, message: str):
    """``ids``, with a check that every one lies in ``[0, vocab_size)``, as each backend
    allows: a Python error on concrete values (eager calls, PyTorch); in a TensorFlow graph
    an assertion (a no-op under XLA, which clamps the lookup instead); in a compiled JAX
    step a host callback that fails the step, run only when some id is out of range.

    An embedding lookup on such an id raises on TensorFlow's CPU kernel, reads zeros on a
    GPU, and wraps a negative id to a row from the end under Keras 3: silent wrong numbers
    (a swapped ``vocab_size`` trained to chance on JAX, and reloaded as NaN).
    """
    name = backend_name()
    if name in ("tf_keras", "tensorflow"):
        import tensorflow as tf

        if tf.executing_eagerly() and not is_symbolic(ids):
            _require_ids_in_range(ops.convert_to_numpy(ids), vocab_size, message)
            return ids
        ids = tf.convert_to_tensor(ids)
        low, high = tf.reduce_min(ids), tf.reduce_max(ids)
        inside = tf.logical_or(tf.size(ids) == 0, (low >= 0) & (high < vocab_size))
        check = tf.debugging.Assert(inside, [message, "lowest id:", low, "highest id:", high])
        with tf.control_dependencies([check]):
            return tf.identity(ids)
    if name == "jax":
        import jax

        if isinstance(ids, jax.core.Tracer):
            _jax_checked_ids(ids, vocab_size, message)
            return ids
    if name == "torch" and str(getattr(ids, "device", "")) == "meta":
        return ids  # Keras traces shapes on PyTorch's "meta" device: no values yet
    _require_ids_in_range(ops.convert_to_numpy(ids), vocab_size, message)
    return ids


def is_symbolic(tensor) -> bool:
    import tensorflow as tf

    return tf.is_symbolic_tensor(tensor) or not hasattr(tensor, "numpy")


def _require_ids_in_range(values, vocab_size: int, message: str) -> None:
    from kerasformer.validation import LayerError

    if values.size and (values.min() < 0 or values.max() >= vocab_size):
        raise LayerError(f"{message} (lowest id {values.min()}, highest {values.max()})")


def _jax_checked_ids(ids, vocab_size: int, message: str) -> None:
    import jax
    import jax.numpy as jnp

    def fail(low, high):
        _require_ids_in_range(np.array([low, high]), vocab_size, message)

    outside = jnp.any((ids < 0) | (ids >= vocab_size))
    jax.lax.cond(outside, lambda: jax.debug.callback(fail, ids.min(), ids.max()), lambda: None)


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
    "KERAS_VERSION",
    "OTHER_NAMESPACE_ADVICE",
    "backend_name",
    "checked_ids",
    "checked_length",
    "compute_dtype_inputs",
    "flash_attention_default",
    "fresh_copy",
    "fused_attention",
    "is_other_keras_tensor",
    "keras",
    "keras_mask",
    "masks_hidden",
    "name_scope",
    "ops",
    "policy_with_quantized_sublayers",
    "serializable",
    "traced_output_spec",
]
