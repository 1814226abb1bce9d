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
    *,
    key_tokens: Sequence[str] | None = None,
) -> Figure:
    """Draw each head's attention weights as a heatmap, queries down and keys across.

    All heads share one colour scale, from the smallest weight to the largest, so they can
    be compared and nearly uniform attention still shows its pattern; the colour bar gives
    the actual values. Padding is not shown: ``kerasformer.models.attention_weights``
    returns the weights of the text's own tokens only.

    Args:
        tokens: The text's tokens, one per row (the queries) and, unless ``key_tokens``
            is given, one per column (the keys).
        weights: Array of shape ``(num_heads, len(tokens), len(key_tokens or tokens))``;
            row ``i`` of a head is how token ``i`` distributes its attention over the keys.
        title: Title over all heads; None (the default) for none.
        columns: Heads per row of the grid (at least 1; fewer when there are fewer heads).
        key_tokens: The tokens along the columns when they differ from the rows, as in
            cross-attention: target tokens down, source tokens across. None (the default)
            uses ``tokens``, as for self-attention.

    Returns:
        A matplotlib ``Figure`` (built without pyplot) with one axes per cell of the grid
        (cells past the last head are blank) and one for the colour bar.

    Raises:
        KerasformerError: If ``weights`` is not of shape
            ``(num_heads, len(tokens), len(key_tokens or tokens))`` with at least one head.

    Examples:
        >>> import numpy as np
        >>> tokens = ["time", "flies", "fast"]
        >>> weights = np.full((2, 3, 3), 1 / 3)  # (heads, queries, keys)
        >>> figure = plot_attention_heads(tokens, weights, title="layer 1", columns=2)
        >>> len(figure.axes)  # two heads and the colour bar
        3
    """
    keys = tokens if key_tokens is None else key_tokens
    weights = checked_weights(tokens, weights, key_tokens)
    heads = weights.shape[0]
    columns = max(1, min(columns, heads))
    rows = math.ceil(heads / columns)
    width, height = (min(2.0 + 0.28 * len(axis), 8.0) for axis in (keys, tokens))
    figure = Figure(figsize=(width * columns + 1.0, height * rows + 0.6), layout="constrained")
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
        label_tokens(ax, tokens, keys)
        ax.set_xlabel("key (attended to)")
        if head % columns == 0:
            ax.set_ylabel("query")
    figure.colorbar(image, ax=axes.tolist(), label="attention weight", shrink=0.8)
    if title:
        figure.suptitle(title)
    return figure


def label_tokens(ax, query_tokens: Sequence[str], key_tokens: Sequence[str]) -> None:
    if len(key_tokens) > MAX_LABELLED_TOKENS:
        ax.set_xticks([])
    else:
        ax.set_xticks(range(len(key_tokens)), key_tokens, rotation=90, fontsize="small")
    if len(query_tokens) > MAX_LABELLED_TOKENS:
        ax.set_yticks([])
    else:
        ax.set_yticks(range(len(query_tokens)), query_tokens, fontsize="small")


def checked_weights(
    tokens: Sequence[str], weights, key_tokens: Sequence[str] | None = None
) -> np.ndarray:
    weights = np.asarray(weights, dtype=np.float64)
    n = len(tokens)
    m = n if key_tokens is None else len(key_tokens)
    if weights.ndim != 3 or weights.shape[1:] != (n, m) or weights.shape[0] == 0:
        which = f"{n} tokens" if key_tokens is None else f"{n} query and {m} key tokens"
        raise KerasformerError(
            f"attention weights must have shape (heads, {n}, {m}) for {which}, got "
            f"{weights.shape}; pass what kerasformer.models.attention_weights returns."
        )
    return weights
