"""The single place where kerasformer chooses its Keras.

Two choices are made here and nowhere else:

- **Everything but the layers** (the TF-Hub/BERT family, the Model Garden, training,
  export and the command line) uses tf-keras (Keras 2, the ``tf_keras`` package next to
  TensorFlow 2.16+), imported explicitly as ``keras``, with TensorFlow as ``tf``. Nothing
  depends on ``tf.keras`` or on the user having set ``TF_USE_LEGACY_KERAS``.
- **The layers** come in two namespaces of the same classes: `kerasformer.tf_keras.layers`
  (tf-keras, what the rest of kerasformer uses) and `kerasformer.layers`, which follows
  ``KERAS_VERSION``: 3 (Keras 3, ``import keras``, any backend) unless
  ``KERASFORMER_KERAS=2`` is set before kerasformer is imported (or Keras 3 is missing),
  which makes it the tf-keras namespace, as it was before Keras 3 became the default.

``keras`` and ``tf`` are imported on first use (`ModuleOnFirstUse`), so a machine with
Keras 3 on JAX and no TensorFlow can still import this module for the layers, and the
command line answers ``--help`` without TensorFlow.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import sys
import types
from collections.abc import Iterator

from kerasformer.errors import KerasformerError

# TensorFlow's C++ INFO lines (no CUDA driver, CPU instruction sets) bury the output of
# every command; warnings and errors still show, and a user's own setting wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

ENVIRONMENT_VARIABLE = "KERASFORMER_KERAS"
_CHOICES = {"2": 2, "tf_keras": 2, "tf-keras": 2, "3": 3, "keras": 3}


def chosen_keras_version(environ=os.environ) -> int:
    """The Keras of `kerasformer.layers`: 2 (tf-keras) or 3 (Keras 3), from
    ``KERASFORMER_KERAS`` or, when it is unset, what is installed (3 whenever it can be).
    """
    value = environ.get(ENVIRONMENT_VARIABLE, "").strip().lower()
    if value:
        if value not in _CHOICES:
            raise KerasformerError(
                f"{ENVIRONMENT_VARIABLE}={environ[ENVIRONMENT_VARIABLE]!r} is not a Keras "
                f"kerasformer knows; set it to 2 (tf-keras) or 3 (Keras 3), or unset it."
            )
        return _CHOICES[value]
    return 3 if _keras3_is_installed() else 2


def _keras3_is_installed() -> bool:
    try:
        return int(importlib.metadata.version("keras").split(".")[0]) >= 3
    except importlib.metadata.PackageNotFoundError:
        return False


KERAS_VERSION = chosen_keras_version()


class ModuleOnFirstUse(types.ModuleType):
    """A module imported when one of its attributes is first read, and not before.

    ``from kerasformer.backend import keras, tf`` gives these, so a kerasformer module
    that uses TensorFlow only inside its functions imports none until one runs: the
    command line builds its parsers and refuses bad arguments from such modules, with
    no TensorFlow in ``sys.modules``. A module that uses ``tf`` at import time (a layer
    class, a ``tf.function``) imports TensorFlow then, as before.
    """

    def __init__(self, name: str):
        super().__init__(name)

    # What introspection asks of any object (inspect, doctest, typing, IPython): answered
    # without importing the module while it is not imported yet.
    PROBES = frozenset(
        {"__wrapped__", "__file__", "__path__", "__all__", "__signature__", "__origin__",
         "__mro_entries__", "__set_name__", "__class_getitem__"}
    )  # fmt: skip

    def __getattr__(self, attribute: str):
        module = sys.modules.get(self.__name__)
        if module is None:
            if attribute in self.PROBES:
                raise AttributeError(attribute)
            module = importlib.import_module(self.__name__)
        return getattr(module, attribute)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(self.__name__))

    def __repr__(self) -> str:
        return f"<module {self.__name__!r}, imported on first use>"


@contextlib.contextmanager
def hidden_modules(*names: str) -> Iterator[None]:
    """In the block, importing any of ``names`` not imported yet fails as if the package
    were not installed (``ImportError``); afterwards they import as usual.

    For libraries that import a Keras only to probe it and do without it where none is
    installed: TensorFlow's own start (Keras's optimizers) and TF-Hub's ``KerasLayer``
    (Keras 3's saving module, with scikit-learn and matplotlib behind it, which it cannot
    use and falls back from).
    """
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # what an import of a missing module finds: ImportError
    try:
        yield
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def import_tensorflow_without_keras() -> None:
    """Import TensorFlow, if no one has yet, without the Keras it loads by default.

    ``import tensorflow`` imports Keras's optimizers eagerly (tf-keras's, or Keras 3's),
    a second of a command's start, and does without them where no Keras is installed.
    A process that only serves SavedModels needs none; a Keras imported afterwards (by
    a SavedModel that holds an optimizer, or by the caller) loads as usual.
    """
    if "tensorflow" not in sys.modules:
        with hidden_modules("keras", "tf_keras"):
            import tensorflow  # noqa: F401


def is_tensor(value) -> bool:
    """Whether ``value`` is a TensorFlow tensor; no value can be before TensorFlow is
    imported, so this never imports it."""
    tensorflow = sys.modules.get("tensorflow")
    return tensorflow is not None and isinstance(value, tensorflow.Tensor)


# tf-keras, as ``keras`` everywhere outside the layers, and TensorFlow.
keras = ModuleOnFirstUse("tf_keras")
tf = ModuleOnFirstUse("tensorflow")


def serializable(cls):
    """Register a layer under the ``kerasformer`` package so saved models load again."""
    import tf_keras

    return tf_keras.saving.register_keras_serializable(package="kerasformer")(cls)


@contextlib.contextmanager
def global_dtype_policy(name: str) -> Iterator[None]:
    """Keras's global dtype policy set to ``name`` for the block, then restored.

    Layers keep the policy they were built with, so the block is where they are built.
    """
    import tf_keras

    previous = tf_keras.mixed_precision.global_policy()
    tf_keras.mixed_precision.set_global_policy(name)
    try:
        yield
    finally:
        tf_keras.mixed_precision.set_global_policy(previous)


@contextlib.contextmanager
def without_layer_traces() -> Iterator[None]:
    """``tf.saved_model.save`` in the block skips tf-keras's trace of every layer's call.

    What ``model.save(save_format="tf", save_traces=False)`` does, for a SavedModel whose
    root is not a Keras model: its own signatures are traced as ever, the layers and their
    variables are kept, and only the per-layer functions (which nothing serving a
    signature calls) are left out. Those traces are most of what saving costs, and much
    of what loading the SavedModel costs (an LSTM's more than most).
    """
    from tf_keras.src.saving.legacy.saved_model import utils  # no public switch for this

    with utils.keras_option_scope(
        save_traces=False, in_tf_saved_model_scope=utils.in_tf_saved_model_scope()
    ):
        yield


@contextlib.contextmanager
def without_optimizer(model: object) -> Iterator[None]:
    """``tf.saved_model.save`` in the block leaves ``model``'s optimizer out, with its slots.

    What ``model.save(save_format="tf", include_optimizer=False)`` does, for a SavedModel
    whose root is not the model. Serving needs no optimizer; Adam's two slots per weight
    would triple a BERT export's variables, and a SavedModel holding tf-keras's legacy
    optimizer (the Model Garden's AdamW is one) makes ``tf.saved_model.load`` import
    tf-keras. The optimizer is the model's again after the block, however it ends.

    Args:
        model: A tf-keras model, compiled or not (then nothing changes).

    Example:

    >>> with without_optimizer(model):
    ...     tf.saved_model.save(serving_module_holding_model, "export/")
    """
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None:
        yield
        return
    try:
        model.optimizer = None
        model._delete_tracking("optimizer")  # what tf-keras's include_optimizer=False does
        yield
    finally:
        model.optimizer = optimizer


__all__ = [
    "ENVIRONMENT_VARIABLE", "KERAS_VERSION", "ModuleOnFirstUse", "chosen_keras_version",
    "global_dtype_policy", "hidden_modules", "import_tensorflow_without_keras", "is_tensor",
    "keras", "serializable", "tf", "without_layer_traces", "without_optimizer",
]  # fmt: skip
