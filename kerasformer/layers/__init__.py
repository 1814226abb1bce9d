"""Keras layers for transformers, for Keras 3 projects: ``import keras`` and use them.

The layer code is written once. It is imported twice, as two namespaces of the same
classes, each registered under ``kerasformer`` with its own Keras:

- `kerasformer.layers` (here): Keras 3 layers, on the backend ``KERAS_BACKEND`` names.
- `kerasformer.tf_keras.layers`: tf-keras layers, for TF-Hub, the Model Garden and
  kerasformer's own models, trainer and exports.

Both can be used in one process. ``KERASFORMER_KERAS=2`` (set before kerasformer is
imported) makes this namespace `kerasformer.tf_keras.layers`, module for module, for code
written when tf-keras was the default here. `kerasformer.layers.backend` says which Keras a
namespace's layers use.
"""

from kerasformer.backend import KERAS_VERSION

if KERAS_VERSION == 2:
    from kerasformer.tf_keras.layers import stand_in_for

    stand_in_for(__name__)
else:
    from ._public import *  # noqa: F403
    from ._public import __all__  # noqa: F401
