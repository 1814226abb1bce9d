"""Seeded NumPy inputs: the same numbers in every run."""

from __future__ import annotations

import numpy as np

from tests.helpers.numpy_reference import softmax


def normal(seed: int, *shape: int) -> np.ndarray:
    """Standard normal float32 values of ``shape``."""
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


def random_attention_weights(shape: tuple[int, ...], seed: int = 0, dtype="float64"):
    """Rows that sum to 1 along the last axis: the softmax of standard normal scores."""
    scores = np.random.default_rng(seed).normal(size=shape)
    return softmax(scores).astype(dtype)
