"""The confusion matrix of a classifier on one split, as ``kerasformer evaluate`` prints it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from kerasformer.errors import KerasformerError


def plot_confusion_matrix(
    matrix: Sequence[Sequence[int]] | np.ndarray,
    class_names: Sequence[str],
    title: str | None = None,
) -> Figure:
    """Draw a confusion matrix: rows are true classes, columns predicted ones.

    Cells show counts; their colour is the count's share of its row (the recall of the
    row's class), so that rare classes are as readable as common ones.

    Args:
        matrix: Square array of counts (non-negative whole numbers), e.g.
            ``metrics["confusion_matrix"]`` from
            ``kerasformer.training.classification_metrics`` or ``metrics.json``.
        class_names: One name per row, in the matrix's order.
        title: Title over the matrix, e.g. the dataset and split; None (the default) for
            none.

    Returns:
        A matplotlib ``Figure`` (built without pyplot) with two axes: the matrix and its
        colour bar.

    Raises:
        KerasformerError: If ``matrix`` is not square, does not have one row per class
            name, or holds negative or fractional values.

    Examples:
        >>> class_names = ["business", "sport", "tech"]
        >>> matrix = [[8, 1, 1], [0, 10, 0], [2, 0, 7]]  # rows true, columns predicted
        >>> figure = plot_confusion_matrix(matrix, class_names, title="bbc_news test")
        >>> len(figure.axes)
        2
    """
    # Imported here: scikit-learn costs every plotting command 1.6 s, most drawing no matrix.
    from sklearn.metrics import ConfusionMatrixDisplay

    counts = checked_counts(matrix, class_names)
    row_totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, row_totals, out=np.zeros(counts.shape), where=row_totals > 0)
    size = 2.5 + 0.8 * len(class_names)
    figure = Figure(figsize=(size + 1.5, size), layout="constrained")
    ax = figure.subplots()
    display = ConfusionMatrixDisplay(shares, display_labels=list(class_names))
    display.plot(
        ax=ax, cmap="Blues", xticks_rotation=45, colorbar=False, im_kw={"vmin": 0, "vmax": 1}
    )
    for (row, column), text in np.ndenumerate(display.text_):
        text.set_text(str(counts[row, column]))
    figure.colorbar(display.im_, ax=ax, label="share of the true class")
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    if title:
        ax.set_title(title)
    return figure


def checked_counts(matrix, class_names: Sequence[str]) -> np.ndarray:
    counts = np.asarray(matrix)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise KerasformerError(
            f"a confusion matrix must be square, got shape {counts.shape}; pass the "
            "'confusion_matrix' entry of the metrics."
        )
    if counts.shape[0] != len(class_names):
        raise KerasformerError(
            f"{len(class_names)} class names for a {counts.shape[0]}x{counts.shape[0]} "
            "confusion matrix; pass one name per row."
        )
    if counts.size and (counts.min() < 0 or not np.all(np.equal(np.mod(counts, 1), 0))):
        raise KerasformerError(
            "a confusion matrix holds counts; found negative or fractional values."
        )
    return counts.astype(np.int64)
