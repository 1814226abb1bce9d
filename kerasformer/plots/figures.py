"""Writing figures to files, with one-line errors for names matplotlib cannot write."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from kerasformer.errors import KerasformerError

DPI = 100


def save_figure(figure: Figure, path: str | Path) -> Path:
    """Write ``figure`` to ``path`` in the format its suffix names (PNG if it has none).

    Missing parent folders are created; the figure is written at 100 dots per inch.

    Args:
        figure: A matplotlib ``Figure``, e.g. from one of the ``plot_*`` functions.
        path: The file to write. Its suffix names the format (``.png``, ``.svg``,
            ``.pdf``, ... : whatever the figure's canvas supports); a path without a
            suffix gets ``.png``.

    Returns:
        The path written, with the ``.png`` suffix added where it had none.

    Raises:
        KerasformerError: If the suffix names a format matplotlib cannot write.

    Examples:
        >>> figure = Figure(figsize=(3, 2))
        >>> _ = figure.subplots().plot([1, 2, 3], [0.9, 0.6, 0.5])
        >>> save_figure(figure, "loss").name  # no suffix: PNG
        'loss.png'
        >>> save_figure(figure, "pictures/loss.svg").exists()
        True
    """
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
