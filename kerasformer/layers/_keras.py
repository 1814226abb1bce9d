"""The Keras of `kerasformer.layers`: Keras 3 (``import keras``), on the backend
``KERAS_BACKEND`` names (TensorFlow, JAX or PyTorch), with ``keras.ops``.

`kerasformer.tf_keras.layers` is the same layer code on tf-keras; its own ``_keras``
module stands where this one does.
"""

from __future__ import annotations

import contextlib
import os

# TensorFlow's C++ INFO lines bury the output when Keras 3 runs on TensorFlow.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import keras  # noqa: E402
from keras import ops  # noqa: E402, F401  (the layers take it from here)

from kerasformer.errors import KerasformerError  # noqa: E402

if int(keras.__version__.split(".")[0]) < 3:
    raise KerasformerError(
        f"kerasformer.layers needs Keras 3 and found keras {keras.__version__}; install "
        "keras>=3.10, or use kerasformer.tf_keras.layers with tf-keras."
    )

KERAS_VERSION = 3


def name_scope(name: str):
    """Keras 3 names a sub-layer's weights by its path already: no scope is needed."""
    del name
    return contextlib.nullcontext()


def attached_mask(tensor):
    """The Keras mask a previous layer attached to ``tensor``, or None."""
    # Keras 3 keeps masks of tensors that take no attributes (JAX arrays) in a table that
    # only this function reads; it fills ``*_mask`` call arguments itself.
    from keras.src.backend import get_keras_mask

    return None if tensor is None else get_keras_mask(tensor)


def is_other_keras_tensor(value) -> bool:
    """Whether ``value`` is a tf-keras symbolic tensor, which these layers cannot take."""
    return type(value).__module__.startswith("tf_keras")


OTHER_NAMESPACE_ADVICE = (
    "a Keras 3 layer and got a tf-keras tensor; import it from kerasformer.tf_keras.layers "
    "to use it in tf-keras models."
)
