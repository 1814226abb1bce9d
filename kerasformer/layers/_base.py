"""The base class of kerasformer's layers: a Keras layer that says when it meets the other Keras."""

from __future__ import annotations

from kerasformer.layers._validation import LayerError
from kerasformer.layers.backend import ENVIRONMENT_VARIABLE, KERAS_VERSION, keras, name_scope


class Layer(keras.layers.Layer):
    """``keras.layers.Layer`` of the chosen Keras, refusing inputs of the other one.

    A tf-keras layer given a Keras 3 ``keras.Input`` fails deep inside TensorFlow with a
    message about KerasTensors; this names the cause and the fix in one line instead.

    ``_config_arguments`` names the layer's own constructor arguments, each of which
    ``__init__`` stores under the same name: `get_config` returns them all, so a saved
    layer is made again with the arguments it was made with.
    """

    _config_arguments: tuple[str, ...] = ()

    def __call__(self, *args, **kwargs):
        if KERAS_VERSION == 2 and args and _is_keras3_tensor(args[0]):
            raise LayerError(
                f"{type(self).__name__} is a tf-keras layer and got a Keras 3 tensor; set "
                f"{ENVIRONMENT_VARIABLE}=3 before importing kerasformer to use its layers "
                "in Keras 3 models."
            )
        return super().__call__(*args, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(
            {name: _config_value(name, getattr(self, name)) for name in self._config_arguments}
        )
        return config


def build_in_scope(layer, *shapes) -> None:
    """Build a sub-layer inside its own name scope, so its weights are named after it."""
    with name_scope(layer.name):
        layer.build(*shapes)


def _config_value(name: str, value):
    # Initializers and activations are stored as the objects Keras calls; the config
    # holds their serialised form, which `from_config` turns back into those objects.
    if name.endswith("initializer"):
        return keras.initializers.serialize(value)
    if name == "activation":
        return keras.activations.serialize(value)
    return value


def _is_keras3_tensor(value) -> bool:
    return type(value).__module__.startswith("keras.src")
