"""Argument checks shared by the layers, so every layer words its errors the same way.

Each check returns the value as a plain Python number: NumPy scalars such as
``np.int64(32)`` (what a size read from an array or a NumPy config is) are accepted, and
storing them as ``int``/``float`` keeps ``get_config`` JSON-serialisable.
"""

from __future__ import annotations

import numbers

import numpy as np

from kerasformer.errors import KerasformerError


class LayerError(KerasformerError, ValueError):
    """A bad layer argument or input.

    A `KerasformerError`, so the command line prints it as one line, and a `ValueError`,
    which is what Keras users expect a layer to raise for a bad argument.
    """


def require_positive_int(name: str, value) -> int:
    if not _is_integer(value) or value <= 0:
        raise LayerError(f"`{name}` must be a positive integer, got {value!r}.")
    return int(value)


def require_rate(name: str, value) -> float:
    # `not 0 <= value < 1` is also true for NaN, which is rejected with the rest.
    if not _is_real(value) or not 0 <= value < 1:
        raise LayerError(f"`{name}` must be a number in [0, 1), got {value!r}.")
    return float(value)


def require_positive_number(name: str, value) -> float:
    if not _is_real(value) or not 0 < value < float("inf"):
        raise LayerError(f"`{name}` must be a positive number, got {value!r}.")
    return float(value)


def require_bool(name: str, value) -> bool:
    # bool("false") is True: a string from a hand-written config would flip the option.
    if not isinstance(value, (bool, np.bool_)):
        raise LayerError(f"`{name}` must be True or False, got {value!r}.")
    return bool(value)


def _is_integer(value) -> bool:
    # bool is an Integral too, but `maxlen=True` is a mistake, not the size 1.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
