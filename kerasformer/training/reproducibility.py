"""Seeding, so that the same seed gives the same weights, batches and metrics."""

from __future__ import annotations

from kerasformer.backend import keras, tf


def make_reproducible(seed: int) -> None:
    """Seed Python, NumPy and TensorFlow and make TensorFlow's ops deterministic.

    Determinism is process-wide and stays on: TensorFlow cannot switch it off again.
    """
    keras.utils.set_random_seed(seed)
    tf.config.experimental.enable_op_determinism()
