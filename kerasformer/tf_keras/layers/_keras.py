"""The Keras of `kerasformer.tf_keras.layers`: tf-keras, the one TF-Hub, the Model Garden
and kerasformer's models, trainer and exports use, with `_tf_ops` standing for
``keras.ops``.
"""

from __future__ import annotations

from kerasformer.backend import keras, tf
from kerasformer.tf_keras.layers import _tf_ops as ops  # noqa: F401  (the layers take it from here)

KERAS_VERSION = 2


def name_scope(name: str):
    """Scope under which a sub-layer's weights get its name (automatic in Keras 3)."""
    return tf.name_scope(name)


def attached_mask(tensor):
    """The Keras mask a previous layer attached to ``tensor``, or None."""
    return getattr(tensor, "_keras_mask", None)


def is_other_keras_tensor(value) -> bool:
    """Whether ``value`` is a Keras 3 symbolic tensor, which these layers cannot take."""
    return type(value).__module__.startswith("keras.src")


OTHER_NAMESPACE_ADVICE = (
    "a tf-keras layer and got a Keras 3 tensor; import it from kerasformer.layers (with "
    "KERASFORMER_KERAS unset) to use it in Keras 3 models."
)

__all__ = ["KERAS_VERSION", "keras", "ops", "tf"]
