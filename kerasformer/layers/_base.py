"""The base class of kerasformer's layers: a Keras layer that says when it meets the other Keras."""

from __future__ import annotations

from kerasformer.validation import LayerError

from .backend import (
    OTHER_NAMESPACE_ADVICE,
    is_other_keras_tensor,
    keras,
    name_scope,
    policy_with_quantized_sublayers,
)


class Layer(keras.layers.Layer):
    """``keras.layers.Layer`` of the namespace's Keras, refusing inputs of the other one.

    A tf-keras layer given a Keras 3 ``keras.Input`` (or the reverse) fails deep inside
    the framework with a message about KerasTensors; this names the cause and the fix in
    one line instead.

    ``_config_arguments`` names the layer's own constructor arguments, each of which
    ``__init__`` stores under the same name: `get_config` returns them all, so a saved
    layer is made again with the arguments it was made with. Its ``dtype`` also names the
    policy of every quantized sub-layer, so a quantized layer loads quantized.
    """

    _config_arguments: tuple[str, ...] = ()

    def __call__(self, *args, **kwargs):
        if args and is_other_keras_tensor(args[0]):
            raise LayerError(f"{type(self).__name__} is {OTHER_NAMESPACE_ADVICE}")
        return super().__call__(*args, **kwargs)

    def get_config(self):
        config = super().get_config()
        policy = policy_with_quantized_sublayers(self)
        if policy is not self.dtype_policy:
            config["dtype"] = keras.dtype_policies.serialize(policy)
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
    if name.endswith("regularizer"):
        return None if value is None else keras.regularizers.serialize(value)
    if name.endswith("constraint"):
        return None if value is None else keras.constraints.serialize(value)
    return value
