"""`HubLayer`: ``hub.KerasLayer`` registered under kerasformer's name, so models reload."""

from __future__ import annotations

import tensorflow_hub as hub

from kerasformer.backend import hidden_modules, serializable

# An encoder SavedModel's variable saying its gradient compiles once under XLA; only
# `kerasformer convert-bert`'s encoders have it (`GatheredPositionEmbedding` says why).
COMPILES_GRADIENT_ONCE = "xla_compiles_gradient_once"


@serializable
class HubLayer(hub.KerasLayer):
    """``hub.KerasLayer`` registered as ``kerasformer>HubLayer``, so saved models reload.

    Keras finds a plain ``KerasLayer`` in a ``model.keras`` by name only when the caller
    passes it in ``custom_objects``; registered, it loads after ``import kerasformer``.
    ``hub.KerasLayer.get_config`` already round-trips the handle, ``trainable`` and the
    output keys, so nothing else is needed here.
    """

    def __init__(self, handle, **kwargs):
        # BERT preprocess models use tensorflow_text's ops, which exist in this process
        # only once the package is imported; loading the handle would fail without them.
        import tensorflow_text  # noqa: F401

        # TF-Hub probes Keras 3's saving module before it falls back to TensorFlow's;
        # hidden, Keras 3 (and scikit-learn and matplotlib behind it) stays unloaded.
        with hidden_modules("keras"):
            super().__init__(handle, **kwargs)

    @property
    def xla_compiles_gradient_once(self) -> bool:
        """Whether XLA compiles a training step through this SavedModel once, rather than
        at every step, as its writer says (`COMPILES_GRADIENT_ONCE`). tfhub.dev's BERT
        encoders say nothing; they slice their position embeddings, which recompiles."""
        marker = getattr(self.resolved_object, COMPILES_GRADIENT_ONCE, None)
        return marker is not None and bool(marker.numpy())
