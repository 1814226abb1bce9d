"""Registering kerasformer's serializable classes with each Keras when it is imported.

Keras finds a saved model's custom classes by their registered names only
(``kerasformer>TransformerBlock``), so they must be registered before ``load_model``.
Importing them with ``import kerasformer`` would import Keras, TensorFlow and TF-Hub for
every use of the package, even a ``--help``. Instead, `register_on_import` asks for a
post-import hook (``wrapt``'s, TensorFlow's own dependency) on each library the classes
extend; a hook runs at once if its library is already imported:

- ``keras`` (Keras 3): the layers of `kerasformer.layers`;
- ``tf_keras``: the layers of `kerasformer.tf_keras.layers`, the span mask of BERT
  question answering and the losses a compiled model names;
- ``tensorflow_hub``: `kerasformer.models.hub_layer.HubLayer`. Until TF-Hub is imported,
  `HubLayerOnFirstUse` stands for it in tf-keras's registry, so a BERT ``model.keras``
  loads after ``import kerasformer`` alone, and a model without TF-Hub layers never
  imports TF-Hub.

A hook imports only modules whose own imports are its library and what that library
already imported, so it never runs into a half-imported TF-Hub or Keras.
"""

from __future__ import annotations

import importlib
import os
import sys

import wrapt

# The modules each library's hook imports; every ``@serializable`` class lives in one.
REGISTERED_MODULES = {
    "tf_keras": (
        "kerasformer.tf_keras.layers",
        "kerasformer.models.span_logit_mask",
        "kerasformer.training.distillation_loss",
        "kerasformer.training.token_crossentropy",
    ),
    "tensorflow_hub": ("kerasformer.models.hub_layer",),
}
# Keras 3's hook, for `kerasformer.layers` when it is the Keras 3 namespace.
KERAS3_LAYERS = "kerasformer.layers"


def register_on_import() -> None:
    """Register kerasformer's classes with each Keras as it is (or once it is) imported."""
    wrapt.register_post_import_hook(_register_keras3_layers, "keras")
    # Before TF-Hub's own hook, which puts the real HubLayer in this stand-in's place.
    wrapt.register_post_import_hook(_hold_hub_layer_place, "tf_keras")
    for library, modules in REGISTERED_MODULES.items():
        wrapt.register_post_import_hook(_importer(modules), library)


def _importer(modules: tuple[str, ...]):
    def import_modules(_library) -> None:
        for module in modules:
            importlib.import_module(module)

    return import_modules


def _hold_hub_layer_place(tf_keras) -> None:
    if "tensorflow_hub" not in sys.modules:
        tf_keras.saving.register_keras_serializable("kerasformer", "HubLayer")(HubLayerOnFirstUse)


class HubLayerOnFirstUse:
    """Stands for `kerasformer.models.hub_layer.HubLayer` in tf-keras's registry until
    TF-Hub is imported: a saved model that names it imports TF-Hub, and the real class
    (which then takes its place in the registry), as it loads."""

    @classmethod
    def from_config(cls, config: dict):
        from kerasformer.models.hub_layer import HubLayer

        return HubLayer.from_config(config)

    def get_config(self) -> dict:  # tf-keras registers only classes that have one
        raise NotImplementedError("HubLayerOnFirstUse is never made; HubLayer is.")


def _register_keras3_layers(keras) -> None:
    # `import tensorflow` with TF_USE_LEGACY_KERAS=1, or Keras 2 itself, is not Keras 3;
    # KERASFORMER_KERAS=2 makes `kerasformer.layers` tf-keras, registered by its own hook.
    if not str(getattr(keras, "__version__", "3")).startswith("2"):
        from kerasformer.backend import chosen_keras_version

        if chosen_keras_version(os.environ) == 3:
            importlib.import_module(KERAS3_LAYERS)
