"""kerasformer: transformer text classifiers, translators and language models for Keras.

Importing the package registers its layers, so models that use them load again with
``load_model``: `kerasformer.layers` in Keras 3 (``import keras``), and, when TensorFlow
and tf-keras are installed, `kerasformer.tf_keras.layers` with the TF-Hub/BERT family,
training, export and the command line, which all use tf-keras.
"""

import importlib.util

from kerasformer.errors import KerasformerError

# Without any Keras (a device with only ai-edge-litert), `kerasformer.litert` still loads.
if any(importlib.util.find_spec(name) for name in ("keras", "tf_keras")):
    from kerasformer import layers
if all(importlib.util.find_spec(name) for name in ("tensorflow", "tf_keras")):
    # Every class a saved model can name is registered here, whatever the user imports
    # next: Keras finds custom classes only by their registered names.
    from kerasformer import models  # noqa: F401  (HubLayer, SpanLogitMask)
    from kerasformer.training import distillation_loss  # noqa: F401

__version__ = "0.1.0"

__all__ = ["KerasformerError", "layers", "__version__"]
