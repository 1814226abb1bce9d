"""The single place where kerasformer chooses its Keras.

TF-Hub's ``KerasLayer`` and the Model Garden are built on Keras 2, which ships as the
``tf_keras`` package next to TensorFlow 2.16+. Importing it explicitly means nothing
depends on ``tf.keras`` or on the user having set ``TF_USE_LEGACY_KERAS``.
"""

import contextlib
import os
from collections.abc import Iterator

# TensorFlow's C++ INFO lines (no CUDA driver, CPU instruction sets) bury the output of
# every command; warnings and errors still show, and a user's own setting wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

__all__ = ["keras", "tf", "serializable", "global_dtype_policy"]


def serializable(cls):
    """Register a layer under the ``kerasformer`` package so saved models load again."""
    return keras.saving.register_keras_serializable(package="kerasformer")(cls)


@contextlib.contextmanager
def global_dtype_policy(name: str) -> Iterator[None]:
    """Keras's global dtype policy set to ``name`` for the block, then restored.

    Layers keep the policy they were built with, so the block is where they are built.
    """
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(name)
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(previous)
