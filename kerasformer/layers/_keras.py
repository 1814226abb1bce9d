"""The Keras of `kerasformer.layers`: Keras 3 (``import keras``), on the backend
``KERAS_BACKEND`` names (TensorFlow, JAX or PyTorch), with ``keras.ops``.

`kerasformer.tf_keras.layers` is the same layer code on tf-keras; its own ``_keras``
module stands where this one does.
"""

from __future__ import annotations

import contextlib
import functools
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


@contextlib.contextmanager
def masks_hidden(*tensors):
    """Within, ``tensors`` carry no Keras mask; their masks are put back after.

    Keras 3 warns when a layer that takes no mask (an ``EinsumDense``) gets an input
    carrying one; an attention layer has read its inputs' masks before projecting them.
    """
    from keras.src.backend import get_keras_mask, set_keras_mask

    saved = [(tensor, get_keras_mask(tensor)) for tensor in tensors if tensor is not None]
    for tensor, mask in saved:
        if mask is not None:
            set_keras_mask(tensor, None)
    try:
        yield
    finally:
        for tensor, mask in saved:
            if mask is not None:
                set_keras_mask(tensor, mask)


def flash_attention_default():
    """Keras's global flash-attention setting: None (the backend decides), True or False."""
    return keras.config.is_flash_attention_enabled()


def fused_attention(requested: bool = False):
    """``keras.ops.dot_product_attention`` where the backend has a fused attention kernel
    for this device, or where flash attention is ``requested``; otherwise None.

    The fused kernels are JAX's and PyTorch's on a GPU or TPU. On a CPU, and on TensorFlow
    (whose Keras op writes the same einsums out), the layer's own batched matmuls took
    0.74x to 0.96x of that op's time (``bench/attention_speed.py``), so it keeps them.
    """
    if requested or _has_fused_attention_kernel():
        return ops.dot_product_attention
    return None


@functools.cache
def _has_fused_attention_kernel() -> bool:
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return jax.default_backend() in ("gpu", "tpu")
    if backend == "torch":
        import torch

        return torch.cuda.is_available()
    return False


def traced_output_spec(layer, *args, **kwargs):
    """The outputs' specs, found by running ``layer.call`` on symbolic inputs."""
    return keras.Operation.compute_output_spec(layer, *args, **kwargs)


def policy_with_quantized_sublayers(layer):
    """``layer``'s dtype policy, or a ``DTypePolicyMap`` that also names the policy of each
    quantized sub-layer by its path.

    Keras saves a layer's own policy only; a layer that makes its sub-layers itself would
    make them again unquantized when loaded, and their int8 weights would not fit. With
    the map, each sub-layer is made with its saved policy (KerasHub's backbones do this).
    """
    policy = layer.dtype_policy
    if isinstance(policy, keras.dtype_policies.DTypePolicyMap):
        return policy
    quantized = [
        sublayer for sublayer in layer._flatten_layers(include_self=False)
        if sublayer.quantization_mode is not None
    ]  # fmt: skip
    if not quantized:
        return policy
    policy_map = keras.dtype_policies.DTypePolicyMap(default_policy=policy)
    for sublayer in quantized:
        policy_map[sublayer.path] = sublayer.dtype_policy
    return policy_map


def is_other_keras_tensor(value) -> bool:
    """Whether ``value`` is a tf-keras symbolic tensor, which these layers cannot take."""
    return type(value).__module__.startswith("tf_keras")


OTHER_NAMESPACE_ADVICE = (
    "a Keras 3 layer and got a tf-keras tensor; import it from kerasformer.tf_keras.layers "
    "to use it in tf-keras models."
)
