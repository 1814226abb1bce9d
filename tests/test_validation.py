"""kerasformer.validation: one meaning of a whole and a real number everywhere."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest

from kerasformer.validation import (
    is_finite_in,
    is_real_number,
    is_whole_number,
    is_whole_number_from,
    positive_int,
    rate,
)


@pytest.mark.parametrize(
    "value, whole, real",
    [
        (3, True, True),
        (np.int64(3), True, True),
        (True, False, False),
        (np.bool_(True), False, False),
        (3.0, False, True),
        (np.float32(0.5), False, True),
        (math.nan, False, True),
        ("3", False, False),
        (None, False, False),
    ],
)
def test_whole_and_real_numbers(value, whole, real):
    assert is_whole_number(value) is whole
    assert is_real_number(value) is real


def test_intervals_and_lower_bounds():
    assert is_whole_number_from(1, 1) and not is_whole_number_from(0, 1)
    assert is_finite_in(0.0, 0, 1, "[)") and not is_finite_in(1.0, 0, 1, "[)")
    assert is_finite_in(1.0, 0, 1, "(]") and not is_finite_in(0.0, 0, 1, "(]")
    assert not is_finite_in(math.nan, 0, 1, "[]") and not is_finite_in(math.inf, 0, math.inf)


def test_command_line_types_say_what_they_wanted():
    assert positive_int("4") == 4 and rate("0.5") == 0.5
    with pytest.raises(argparse.ArgumentTypeError, match="expected a whole number >= 1, got 0"):
        positive_int("0")
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected a number in \[0, 1\), got 'x'"):
        rate("x")
