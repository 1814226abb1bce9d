"""The part of ``keras.ops`` the layers use, written with TensorFlow for tf-keras.

Names, arguments and results follow ``keras.ops`` (Keras 3), so a layer calls
``ops.softmax(x, axis=-1)`` the same way under both Kerases. Only what the layers need is
here; the layer tests run under tf-keras and Keras 3 and would catch a difference.
"""

from __future__ import annotations

import tensorflow as tf


def convert_to_tensor(x, dtype=None):
    return tf.convert_to_tensor(x, dtype=dtype)


def cast(x, dtype):
    return tf.cast(x, dtype)


def shape(x):
    """Static sizes where known, scalar tensors where not (as ``keras.ops.shape``)."""
    x = tf.convert_to_tensor(x)
    dynamic = tf.shape(x)
    return tuple(dynamic[i] if size is None else size for i, size in enumerate(x.shape.as_list()))


def reshape(x, newshape):
    return tf.reshape(x, newshape)


def transpose(x, axes=None):
    return tf.transpose(x, perm=axes)


def expand_dims(x, axis):
    return tf.expand_dims(x, axis)


def squeeze(x, axis=None):
    return tf.squeeze(x, axis=axis)


def einsum(subscripts, *operands):
    return tf.einsum(subscripts, *operands)


def softmax(x, axis=-1):
    return tf.nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    return tf.nn.log_softmax(x, axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    if axis not in (-1, len(output.shape) - 1):
        raise ValueError("sparse_categorical_crossentropy scores the last axis here.")
    if not from_logits:
        output = tf.math.log(output)
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)


def where(condition, x1, x2):
    return tf.where(condition, x1, x2)


def nonzero(x):
    """The indices of ``x``'s true (non-zero) entries, one tensor per axis."""
    return tuple(tf.unstack(tf.where(x), num=len(x.shape), axis=1))


def scatter(indices, values, shape):
    """A ``shape`` tensor of zeros plus ``values`` at ``indices`` (repeats are summed)."""
    return tf.scatter_nd(tf.cast(indices, tf.int32), values, tf.cast(shape, tf.int32))


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    return tf.range(start, stop, step, dtype=dtype or "int32")


# TensorFlow's own functions where they take keras.ops' one argument, ``x``.
logical_not = tf.logical_not
sin = tf.sin
cos = tf.cos
tanh = tf.tanh
exp = tf.exp
log = tf.math.log
sqrt = tf.sqrt
abs = tf.abs  # noqa: A001  (keras.ops.abs)
floor = tf.floor
square = tf.square


def _binary(tf_function):
    """``tf_function`` under keras.ops' argument names, ``x1`` and ``x2``.

    TensorFlow names them ``x`` and ``y`` (``a`` and ``b`` for ``matmul``): a caller
    passing them by keyword would need to know which Keras it runs under.
    """

    def function(x1, x2):
        return tf_function(x1, x2)

    return function


matmul = _binary(tf.linalg.matmul)
logical_and = _binary(tf.logical_and)
logical_or = _binary(tf.logical_or)
equal = _binary(tf.equal)
not_equal = _binary(tf.not_equal)
less = _binary(tf.less)
less_equal = _binary(tf.less_equal)
greater = _binary(tf.greater)
greater_equal = _binary(tf.greater_equal)
power = _binary(tf.pow)
minimum = _binary(tf.minimum)
maximum = _binary(tf.maximum)


def clip(x, x_min, x_max):
    return tf.clip_by_value(x, x_min, x_max)


def sum(x, axis=None, keepdims=False):  # noqa: A001  (keras.ops.sum)
    return tf.reduce_sum(x, axis=axis, keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    return tf.reduce_mean(x, axis=axis, keepdims=keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001  (keras.ops.max)
    return tf.reduce_max(x, axis=axis, keepdims=keepdims)


def concatenate(xs, axis=0):
    return tf.concat(xs, axis=axis)


def stack(x, axis=0):
    return tf.stack(x, axis=axis)


def split(x, indices_or_sections, axis=0):
    return tf.split(x, indices_or_sections, axis=axis)


def ones_like(x, dtype=None):
    return tf.ones_like(x, dtype=dtype)


def zeros_like(x, dtype=None):
    return tf.zeros_like(x, dtype=dtype)


def zeros(shape, dtype=None):
    return tf.zeros(shape, dtype=dtype or "float32")


def ones(shape, dtype=None):
    return tf.ones(shape, dtype=dtype or "float32")


def full(shape, fill_value, dtype=None):
    return tf.fill(shape, tf.cast(fill_value, dtype or "float32"))


def take(x, indices, axis=None):
    return tf.gather(x, indices, axis=axis)


def one_hot(x, num_classes, axis=-1, dtype=None):
    return tf.one_hot(x, num_classes, axis=axis, dtype=dtype or "float32")


def slice(inputs, start_indices, shape):  # noqa: A001  (keras.ops.slice)
    return tf.slice(inputs, start_indices, shape)


def broadcast_to(x, shape):
    return tf.broadcast_to(x, shape)


def convert_to_numpy(x):
    return x.numpy() if hasattr(x, "numpy") else tf.get_static_value(x)
