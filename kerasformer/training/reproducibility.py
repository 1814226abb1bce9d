"""Seeding, so that the same seed gives the same weights, batches and metrics."""

from __future__ import annotations

from kerasformer.backend import keras, tf


def make_reproducible(seed: int, deterministic_ops: bool = False) -> None:
    """Seed Python, NumPy and TensorFlow; optionally make TensorFlow's ops deterministic.

    On CPU, seeding alone reproduces a run exactly (tests/training checks it). GPU
    kernels may reduce in any order; ``deterministic_ops`` forbids that, at some speed,
    for the whole process and for good: TensorFlow cannot switch it off again, and it
    rejects SavedModels with unseeded random ops, such as a TF-Hub encoder's dropout.

    Args:
        seed: The seed of Python's ``random``, NumPy and TensorFlow (Keras's
            ``set_random_seed``), a whole number >= 0.
        deterministic_ops: Also call ``tf.config.experimental.enable_op_determinism()``.

    Examples:
        >>> import numpy as np
        >>> make_reproducible(0)
        >>> first = np.random.rand(), float(tf.random.uniform([]))
        >>> make_reproducible(0)
        >>> (np.random.rand(), float(tf.random.uniform([]))) == first
        True
    """
    keras.utils.set_random_seed(seed)
    if deterministic_ops:
        tf.config.experimental.enable_op_determinism()
