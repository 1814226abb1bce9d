"""The one family of argument checks: what counts as a whole number or a real number, the
layers' argument checks, and the ``argparse`` types of the command line, built on the same
tests.

``True`` is an ``int`` to Python, but ``maxlen=True`` or ``--epochs true`` is a mistake,
not the size 1, so no check here takes a bool for a number. NumPy scalars
(``np.int64(32)``, what a size read from an array is) are numbers.
"""

from __future__ import annotations

import argparse
import math
import numbers
from collections.abc import Callable

import numpy as np

from kerasformer.errors import KerasformerError


def is_whole_number(value: object) -> bool:
    """An integer (Python or NumPy) that is not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real_number(value: object) -> bool:
    """A real number (Python or NumPy, NaN and infinities included) that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_whole_number_from(value: object, least: int) -> bool:
    """A whole number no smaller than ``least``."""
    return is_whole_number(value) and value >= least


def is_finite_in(value: object, low: float, high: float, closed: str = "[)") -> bool:
    """A finite real number in the interval from ``low`` to ``high``.

    ``closed`` says which ends belong to it: ``"[]"``, ``"[)"``, ``"(]"`` or ``"()"``.
    NaN is in no interval.
    """
    if not is_real_number(value) or not math.isfinite(value):
        return False
    above = value >= low if closed[0] == "[" else value > low
    below = value <= high if closed[1] == "]" else value < high
    return above and below


class LayerError(KerasformerError, ValueError):
    """A bad layer argument or input.

    A `KerasformerError`, so the command line prints it as one line, and a `ValueError`,
    which is what Keras users expect a layer to raise for a bad argument. One class for
    both layer namespaces (`kerasformer.layers`, `kerasformer.tf_keras.layers`), so one
    ``except LayerError`` catches either.
    """


# The layers' checks return plain Python numbers: NumPy scalars such as ``np.int64(32)``
# are accepted, and storing them as int/float keeps ``get_config`` JSON-serialisable.


def require_positive_int(name: str, value) -> int:
    if not is_whole_number(value) or value <= 0:
        raise LayerError(f"`{name}` must be a positive integer, got {value!r}.")
    return int(value)


def require_rate(name: str, value) -> float:
    if not is_finite_in(value, 0, 1):
        raise LayerError(f"`{name}` must be a number in [0, 1), got {value!r}.")
    return float(value)


def require_positive_number(name: str, value) -> float:
    if not is_finite_in(value, 0, math.inf, "()"):
        raise LayerError(f"`{name}` must be a positive number, got {value!r}.")
    return float(value)


def require_bool(name: str, value) -> bool:
    # bool("false") is True: a string from a hand-written config would flip the option.
    if not isinstance(value, (bool, np.bool_)):
        raise LayerError(f"`{name}` must be True or False, got {value!r}.")
    return bool(value)


def checked(convert: Callable[[str], float], accept: Callable[[float], bool], wanted: str):
    """An argparse type that converts, checks, and says what it wanted on failure."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
        return value

    parse.__name__ = wanted
    return parse


positive_int = checked(int, lambda v: v >= 1, "a whole number >= 1")
non_negative_int = checked(int, lambda v: v >= 0, "a whole number >= 0")
positive_float = checked(float, lambda v: 0 < v < math.inf, "a positive finite number")
non_negative_float = checked(float, lambda v: 0 <= v < math.inf, "a finite number >= 0")
fraction = checked(float, lambda v: 0 < v < 1, "a number between 0 and 1")
rate = checked(float, lambda v: 0 <= v < 1, "a number in [0, 1)")
share = checked(float, lambda v: 0 <= v <= 1, "a number from 0 to 1")
