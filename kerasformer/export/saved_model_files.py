"""What every export writes the same way: its SavedModel, and the Keras model beside it.

    saved_model.pb, variables/, assets/   the SavedModel: raw strings in, answers out,
                                          served without kerasformer (TF Serving,
                                          ``tf.saved_model.load``)
    model.keras                           the Keras model, for kerasformer: to look
                                          inside or train further

Each writer (`write_classifier`, `write_translator` ...) adds its own settings and
vocabularies beside these.
"""

from __future__ import annotations

from pathlib import Path

from kerasformer.backend import keras, tf, without_layer_traces, without_optimizer
from kerasformer.loading.exported_classifier import INPUT_NAME
from kerasformer.loading.keras_model import KERAS_FILE

__all__ = ["INPUT_NAME", "save_signatures", "write_saved_model"]


def write_saved_model(
    directory: str | Path, serving: tf.Module, signatures: dict, model: keras.Model
) -> None:
    """Save ``serving`` into ``directory`` with ``signatures`` (name: traced function),
    and ``model`` beside it as ``model.keras`` (with its optimizer, to train further; the
    SavedModel has none)."""
    with without_optimizer(model):
        save_signatures(serving, directory, signatures)
    model.save(Path(directory) / KERAS_FILE)


def save_signatures(module: tf.Module, directory: str | Path, signatures: dict) -> None:
    """Save ``module`` as a SavedModel that serves ``signatures``, and nothing more: the
    Keras models it holds keep their variables but not a traced call of each layer."""
    with without_layer_traces():
        tf.saved_model.save(module, str(directory), signatures=signatures)
