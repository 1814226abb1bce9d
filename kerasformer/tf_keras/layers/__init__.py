"""Keras layers for transformers, for tf-keras (Keras 2) models.

The same classes as `kerasformer.layers`, from the same source files: this package reads
its modules from ``kerasformer/layers/`` but imports them with its own ``_keras`` (tf-keras
and `_tf_ops`), so each layer is a tf-keras layer here and a Keras 3 layer there.
kerasformer's models, trainer and exports use these.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Modules here come first (``_keras``, ``_tf_ops``); the layers' own modules after them.
__path__.append(str(Path(__file__).resolve().parents[2] / "layers"))

from ._public import *  # noqa: E402, F403
from ._public import __all__  # noqa: E402, F401


def stand_in_for(namespace: str) -> None:
    """Make ``namespace`` and its modules this package and its modules in ``sys.modules``.

    One set of classes is registered under ``kerasformer`` in tf-keras; a second import of
    the same files under another name would register look-alike classes over them.
    """
    prefix = __name__ + "."
    for name, module in list(sys.modules.items()):
        if name.startswith(prefix):
            sys.modules[namespace + "." + name.removeprefix(prefix)] = module
    sys.modules[namespace] = sys.modules[__name__]
