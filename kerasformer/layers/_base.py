"""The base class of kerasformer's layers: a Keras layer that says when it meets the other Keras."""

from __future__ import annotations

from kerasformer.layers._validation import LayerError
from kerasformer.layers.backend import ENVIRONMENT_VARIABLE, KERAS_VERSION, keras


class Layer(keras.layers.Layer):
    """``keras.layers.Layer`` of the chosen Keras, refusing inputs of the other one.

    A tf-keras layer given a Keras 3 ``keras.Input`` fails deep inside TensorFlow with a
    message about KerasTensors; this names the cause and the fix in one line instead.
    """

    def __call__(self, *args, **kwargs):
        if KERAS_VERSION == 2 and args and _is_keras3_tensor(args[0]):
            raise LayerError(
                f"{type(self).__name__} is a tf-keras layer and got a Keras 3 tensor; set "
                f"{ENVIRONMENT_VARIABLE}=3 before importing kerasformer to use its layers "
                "in Keras 3 models."
            )
        return super().__call__(*args, **kwargs)


def _is_keras3_tensor(value) -> bool:
    return type(value).__module__.startswith("keras.src")
