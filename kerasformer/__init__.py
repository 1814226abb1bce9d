"""kerasformer: transformer text classifiers for Keras.

Importing the package registers its layers, so models that use them load again with
``tf_keras.models.load_model``.
"""

from kerasformer import (
    layers,
    models,  # noqa: F401  (registers HubLayer, for BERT model.keras files)
)
from kerasformer.errors import KerasformerError

__version__ = "0.1.0"

__all__ = ["KerasformerError", "layers", "__version__"]
