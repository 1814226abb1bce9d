"""A model's weights as one NumPy file, for the copies training keeps beside its backups
(early stopping's best epoch, the epochs that weight averaging will average)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kerasformer.files.whole_file import write_whole_file


def write_weights(path: Path, weights: list[np.ndarray]) -> Path:
    """``weights`` (as ``model.get_weights()`` gives them) written whole to ``path``."""
    return write_whole_file(path, lambda partial: np.savez(partial, *weights))


def read_weights(path: Path) -> list[np.ndarray] | None:
    """The weights `write_weights` wrote to ``path``, in order; None if there is no file."""
    if not path.is_file():
        return None
    with np.load(path) as saved:
        return [saved[f"arr_{i}"] for i in range(len(saved.files))]
