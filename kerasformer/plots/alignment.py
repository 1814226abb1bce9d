"""The alignment of a translation: how much each target word attended to each source word."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from kerasformer.errors import KerasformerError
from kerasformer.plots.attention_heads import MAX_LABELLED_TOKENS

# Inches per token along each side, and the most a side may take.
CELL_INCHES = 0.3
MAX_SIDE_INCHES = 12.0


def plot_alignment(
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    weights: np.ndarray,
    title: str | None = None,
) -> Figure:
    """Draw one alignment matrix as in Bahdanau et al. (2015), figure 3.

    Source words run across the top, target words down the left, one square cell per
    pair; a cell's grey is its weight on a fixed scale, white for 1 and black for 0, so
    pictures of different sentences can be compared.

    Args:
        source_tokens: The source sentence's tokens, one per column.
        target_tokens: The translation's tokens, one per row.
        weights: Array of shape ``(len(target_tokens), len(source_tokens))`` with values in
            ``[0, 1]``; row ``i`` is how target token ``i`` attended to the source tokens
            (it usually sums to 1, which is not required).
        title: Title over the matrix; None (the default) for none.

    Returns:
        A matplotlib ``Figure`` (built without pyplot) with one axes, the matrix; write it
        with `save_figure`.

    Raises:
        KerasformerError: If ``weights`` does not have the shape
            ``(len(target_tokens), len(source_tokens))``, a side has no token, or a weight
            is not finite or lies outside ``[0, 1]`` (scores or logits instead of weights).

    Examples:
        >>> import numpy as np
        >>> weights = np.array([[0.9, 0.1, 0.0], [0.1, 0.8, 0.1], [0.0, 0.1, 0.9]])
        >>> figure = plot_alignment(["the", "cat", "<end>"], ["el", "gato", "<end>"], weights)
        >>> len(figure.axes)
        1
    """
    weights = checked_alignment(source_tokens, target_tokens, weights)
    rows, columns = weights.shape
    scale = min(1.0, MAX_SIDE_INCHES / (CELL_INCHES * max(rows, columns)))
    width = 1.5 + CELL_INCHES * columns * scale
    height = 1.5 + CELL_INCHES * rows * scale + (0.8 if title else 0.0)
    figure = Figure(figsize=(width, height), layout="constrained")
    ax = figure.subplots()
    ax.imshow(weights, cmap="gray", vmin=0.0, vmax=1.0, aspect="equal")
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    if columns > MAX_LABELLED_TOKENS:
        ax.set_xticks([])
    else:
        ax.set_xticks(range(columns), source_tokens, rotation=90)
    if rows > MAX_LABELLED_TOKENS:
        ax.set_yticks([])
    else:
        ax.set_yticks(range(rows), target_tokens)
    ax.set_xlabel("source")
    ax.set_ylabel("target")
    if title:
        figure.suptitle(title)
    return figure


def checked_alignment(
    source_tokens: Sequence[str], target_tokens: Sequence[str], weights
) -> np.ndarray:
    weights = np.asarray(weights, dtype=np.float64)
    rows, columns = len(target_tokens), len(source_tokens)
    if weights.shape != (rows, columns) or weights.size == 0:
        raise KerasformerError(
            f"alignment weights must have shape (target tokens, source tokens) = "
            f"({rows}, {columns}) with at least one token each, got {weights.shape}."
        )
    if not np.all(np.isfinite(weights)) or weights.min() < 0.0 or weights.max() > 1.0:
        raise KerasformerError(
            "alignment weights must be finite and in [0, 1]; pass attention weights "
            "(each row a softmax over the source tokens), not scores or logits."
        )
    return weights
