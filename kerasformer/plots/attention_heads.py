"""Attention weights of one transformer block, one heatmap per head."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from kerasformer.errors import KerasformerError

# Beyond this many tokens the labels overlap and are left off; the heatmap stays.
MAX_LABELLED_TOKENS = 48


def plot_attention_heads(
    tokens: Sequence[str],
    weights: np.ndarray,
    title: str | None = None,
    columns: int = 4,
) -> Figure:
    """Draw each head's attention weights as a heatmap, queries down and keys across.

    All heads share one colour scale, from the smallest weight to the largest, so they can
    be compared and nearly uniform attention still shows its pattern; the colour bar gives
    the actual values. Padding is not shown: ``kerasformer.models.attention_weights``
    returns the weights of the text's own tokens only.

    Args:
        tokens: The text's tokens, one per row and column.
        weights: Array of shape ``(num_heads, len(tokens), len(tokens))``; row ``i`` of a
            head is how token ``i`` distributes its attention over the tokens.
        title: Title over all heads.
        columns: Heads per row of the grid.

    Example:

    >>> tokens, weights = attention_weights(model, "time flies like an arrow")
    >>> save_figure(plot_attention_heads(tokens, weights), "attention.png")
    """
    weights = checked_weights(tokens, weights)
    heads = weights.shape[0]
    columns = max(1, min(columns, heads))
    rows = math.ceil(heads / columns)
    side = min(2.0 + 0.28 * len(tokens), 8.0)
    figure = Figure(figsize=(side * columns + 1.0, side * rows + 0.6), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    low, high = float(weights.min()), float(weights.max())
    if high - low < 1e-9:  # all equal: any scale would paint one colour; keep it mid-range
        low, high = low - 0.5, high + 0.5
    image = None
    for head, ax in enumerate(axes):
        if head >= heads:
            ax.set_axis_off()
            continue
        image = ax.imshow(weights[head], cmap="viridis", vmin=low, vmax=high)
        ax.set_title(f"head {head + 1}")
        label_tokens(ax, tokens)
        ax.set_xlabel("key (attended to)")
        if head % columns == 0:
            ax.set_ylabel("query")
    figure.colorbar(image, ax=axes.tolist(), label="attention weight", shrink=0.8)
    if title:
        figure.suptitle(title)
    return figure


def label_tokens(ax, tokens: Sequence[str]) -> None:
    if len(tokens) > MAX_LABELLED_TOKENS:
        ax.set_xticks([])
        ax.set_yticks([])
        return
    positions = range(len(tokens))
    ax.set_xticks(positions, tokens, rotation=90, fontsize="small")
    ax.set_yticks(positions, tokens, fontsize="small")


def checked_weights(tokens: Sequence[str], weights) -> np.ndarray:
    weights = np.asarray(weights, dtype=np.float64)
    n = len(tokens)
    if weights.ndim != 3 or weights.shape[1:] != (n, n) or weights.shape[0] == 0:
        raise KerasformerError(
            f"attention weights must have shape (heads, {n}, {n}) for {n} tokens, got "
            f"{weights.shape}; pass what kerasformer.models.attention_weights returns."
        )
    return weights
