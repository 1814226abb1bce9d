"""Writing figures to files, with one-line errors for names matplotlib cannot write."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from kerasformer.errors import KerasformerError

DPI = 100


def save_figure(figure: Figure, path: str | Path) -> Path:
    """Write ``figure`` to ``path`` in the format its suffix names (PNG if it has none)."""
    path = Path(path)
    if not path.suffix:
        path = path.with_suffix(".png")
    supported = figure.canvas.get_supported_filetypes()
    file_format = path.suffix.lstrip(".").lower()
    if file_format not in supported:
        raise KerasformerError(
            f"cannot write a picture to {path}: unknown format {file_format!r}; "
            f"end the name with .png (or one of {', '.join(sorted(supported))})."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=DPI, format=file_format)
    return path
