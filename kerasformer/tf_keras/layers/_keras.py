"""The Keras of `kerasformer.tf_keras.layers`: tf-keras, the one TF-Hub, the Model Garden
and kerasformer's models, trainer and exports use, with `_tf_ops` standing for
``keras.ops``.
"""

from __future__ import annotations

import contextlib

from kerasformer.backend import keras, tf
from kerasformer.tf_keras.layers import _tf_ops as ops  # noqa: F401  (the layers take it from here)

KERAS_VERSION = 2


def name_scope(name: str):
    """Scope under which a sub-layer's weights get its name (automatic in Keras 3)."""
    return tf.name_scope(name)


def attached_mask(tensor):
    """The Keras mask a previous layer attached to ``tensor``, or None."""
    return getattr(tensor, "_keras_mask", None)


def masks_hidden(*tensors):
    """tf-keras passes no implicit mask to a layer that takes none: nothing to hide."""
    del tensors
    return contextlib.nullcontext()


def flash_attention_default():
    """tf-keras has no flash attention."""
    return None


def fused_attention(requested: bool = False):
    """None: tf-keras has no ``dot_product_attention`` (and TensorFlow no fused kernel)."""
    del requested
    return None


def traced_output_spec(layer, *args, **kwargs):
    """Not used: tf-keras finds output shapes by running ``call`` itself."""
    raise NotImplementedError


def policy_with_quantized_sublayers(layer):
    """``layer``'s dtype policy: tf-keras layers cannot be quantized."""
    return layer.dtype_policy


def is_other_keras_tensor(value) -> bool:
    """Whether ``value`` is a Keras 3 symbolic tensor, which these layers cannot take."""
    return type(value).__module__.startswith("keras.src")


OTHER_NAMESPACE_ADVICE = (
    "a tf-keras layer and got a Keras 3 tensor; import it from kerasformer.layers (with "
    "KERASFORMER_KERAS unset) to use it in Keras 3 models."
)

__all__ = ["KERAS_VERSION", "keras", "ops", "tf"]
