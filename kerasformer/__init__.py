"""kerasformer: transformer text classifiers, translators and language models for Keras.

``import kerasformer`` is light: it imports no Keras, TensorFlow or NumPy. Its
subpackages (`kerasformer.layers`, `kerasformer.models`, `kerasformer.datasets`, ...)
are imported on first use (PEP 562), so ``kerasformer --help`` answers in a fraction of
a second and a Keras 3 project on JAX loads no TensorFlow.

Saved models still load after ``import kerasformer`` alone: every class a saved model
can name is registered with its Keras as soon as that Keras is imported, before or after
kerasformer (see `kerasformer.registration`).
"""

import lazy_loader

from kerasformer import registration
from kerasformer.errors import KerasformerError

__version__ = "0.1.0"

_SUBPACKAGES = [
    "backend", "convert", "datasets", "export", "files", "layers", "litert", "loading",
    "models", "plots", "registry", "tf_keras", "training", "validation",
]  # fmt: skip
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submodules=_SUBPACKAGES)
__all__ = ["KerasformerError", "layers", "__version__"]

registration.register_on_import()
