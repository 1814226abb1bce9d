"""Reading back what the plots write: PNGs (size, blankness, the colour at a point) and
interactive pages."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PIL import Image


def read_png(path: Path) -> np.ndarray:
    """RGB pixels, rows from the top, as floats in [0, 1]."""
    with Image.open(path) as image:
        assert image.format == "PNG"
        return np.asarray(image.convert("RGB"), dtype=np.float64) / 255.0


def assert_not_blank(pixels: np.ndarray) -> None:
    not_white = np.any(pixels < 0.98, axis=-1)
    assert not_white.mean() > 0.02, "the picture is (almost) all white"
    colours = np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50, "the picture has too few colours to show anything"


def pixel_at(pixels: np.ndarray, ax, x: float, y: float) -> np.ndarray:
    """The colour drawn at data point ``(x, y)`` of ``ax`` (after the figure was saved)."""
    column, row_from_bottom = ax.transData.transform((x, y))
    return pixels[pixels.shape[0] - 1 - int(round(row_from_bottom)), int(round(column))]


def plotly_traces(page: str) -> int:
    """How many heatmaps the page's figures hold (each has a ``z``; the theme's do not)."""
    return len(re.findall(r'"z":\s*[\[{]', page))
