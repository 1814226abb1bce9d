"""The Keras model of any export (``model.keras``), with kerasformer's layers, uncompiled."""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import keras
from kerasformer.errors import KerasformerError
from kerasformer.files.export_files import require_hub_handles, require_intact_keras_file

KERAS_FILE = "model.keras"


def load_keras_model(export_dir: str | Path) -> keras.Model:
    """The Keras model of an export (``model.keras``), with kerasformer's layers, uncompiled.

    Use it to look inside a model (its layers, attention weights) or to train it further;
    serving is faster and needs no kerasformer through ``ExportedClassifier``. A BERT
    classifier's ``model.keras`` refers to its preprocess and encoder by their handles,
    which must still exist.

    Args:
        export_dir: A directory ``kerasformer train`` wrote, of any task.

    Returns:
        The tf-keras model, not compiled: compile it before training it further.

    Raises:
        KerasformerError: ``export_dir`` has no ``model.keras``, the file is damaged, a
            TF-Hub handle it names is gone, or Keras cannot load it.

    Examples:
        >>> model = load_keras_model("saved_models/bbc_news-transformer")
        >>> model.name, model.output_shape
        ('transformer_classifier', (None, 5))
    """
    path = Path(export_dir) / KERAS_FILE
    if not path.is_file():
        raise KerasformerError(
            f"{export_dir} has no {KERAS_FILE}; pass a directory written by `kerasformer train`."
        )
    require_intact_keras_file(path)
    custom_objects = hub_custom_objects() if require_hub_handles(path) else {}
    # kerasformer's classes are registered by name as tf-keras loads
    # (`kerasformer.registration`).
    try:
        return keras.models.load_model(path, compile=False, custom_objects=custom_objects)
    except (OSError, ValueError, TypeError) as error:
        raise KerasformerError(f"cannot load {path}: {' '.join(str(error).split())}") from None


def hub_custom_objects() -> dict:
    """What a model with TF-Hub layers needs to load; only such a model imports TF-Hub."""
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401  (ops of BERT preprocess models)

    import kerasformer.models.hub_layer  # noqa: F401  (registers HubLayer)

    # BERT classifiers exported before HubLayer existed hold plain hub.KerasLayer layers,
    # which Keras cannot find by name. Not HubLayer: their weights are stored under the
    # class's own name.
    return {"KerasLayer": hub.KerasLayer}
