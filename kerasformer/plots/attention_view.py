"""Attention as lines between tokens (one head) and as an interactive page (every head).

``plot_head_view`` draws one head the way BertViz's head view does: queries on the left,
keys on the right, a line from each query to each key as opaque as its weight.
``attention_html`` writes every layer and head of one or more attention maps to a single
offline HTML page, one plotly heatmap per map with a layer menu and a head slider.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path

from kerasformer.errors import KerasformerError

if TYPE_CHECKING:
    import plotly.graph_objects as go

# Head view: inches per token row, the width of the lines between the columns, font size.
ROW_INCHES = 0.25
LINES_INCHES = 2.5
TOKEN_POINTS = 10.0
LINE_COLOUR = "tab:blue"
# matplotlib cannot write a picture taller than 2**16 pixels; rows shrink to stay below.
MAX_HEIGHT_INCHES = 400.0
# Softmax in float32 can leave a weight a hair outside [0, 1]; that much is clipped.
TOLERANCE = 1e-5

# Interactive page: pixels per heatmap cell, and the least a figure may take.
CELL_PIXELS = 18
MIN_FIGURE_PIXELS = 420


class AttentionMapLike(Protocol):
    """What ``attention_html`` needs of an attention map (``kerasformer.models.AttentionMap``).

    A typing protocol: any object with these read-only attributes fits, so frozen
    dataclasses, named tuples and plain namespaces do as well. ``name`` heads the map,
    ``query_tokens`` label its rows and ``key_tokens`` its columns, and ``weights`` is
    ``(layers, heads, len(query_tokens), len(key_tokens))`` with values in ``[0, 1]``,
    each row summing to 1.

    Examples:
        >>> from types import SimpleNamespace
        >>> import numpy as np
        >>> tokens = ["time", "flies"]
        >>> attention_map = SimpleNamespace(
        ...     name="self-attention", query_tokens=tokens, key_tokens=tokens,
        ...     weights=np.full((1, 2, 2, 2), 0.5),  # (layers, heads, queries, keys)
        ... )
        >>> len(attention_figure(attention_map).data)  # one heatmap per (layer, head)
        2
    """

    @property
    def name(self) -> str: ...

    @property
    def query_tokens(self) -> Sequence[str]: ...

    @property
    def key_tokens(self) -> Sequence[str]: ...

    @property
    def weights(self) -> np.ndarray:
        """``(layers, heads, len(query_tokens), len(key_tokens))``, rows summing to 1."""
        ...


# --- head view ---------------------------------------------------------------------------


def plot_head_view(
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    weights: np.ndarray,
    title: str | None = None,
    *,
    segment_start: int | None = None,
) -> Figure:
    """Draw one head as lines from each query token to each key token, as in BertViz.

    Query tokens run down the left, key tokens down the right; the line from query ``i``
    to key ``j`` has opacity ``weights[i, j]``, so a weight of 1 is an opaque line and 0
    is invisible. The figure grows with the number of tokens, so every label stays legible.

    Args:
        query_tokens: The tokens that attend, top to bottom on the left.
        key_tokens: The tokens attended to, top to bottom on the right.
        weights: Array of shape ``(len(query_tokens), len(key_tokens))`` with values in
            ``[0, 1]``: one head of one layer, e.g. ``attention_map.weights[layer, head]``.
        title: Title over the picture; None (the default) for none.
        segment_start: Index of the first token of a second segment (as in a BERT
            sentence pair, e.g. ``attention_map.segment_start``), from 1 to the shorter
            side's last index; a thin line then separates the two segments on both
            sides. None (the default) for a single text.

    Returns:
        A matplotlib ``Figure`` (built without pyplot) with two axes: the query tokens on
        the left one and the key tokens on its twin on the right.

    Raises:
        KerasformerError: If ``weights`` is not of shape
            ``(len(query_tokens), len(key_tokens))``, a side has no token, a weight is
            not finite or lies outside ``[0, 1]``, or ``segment_start`` is not a valid
            index.

    Examples:
        >>> import numpy as np
        >>> tokens = ["[CLS]", "time", "[SEP]", "flies", "[SEP]"]
        >>> weights = np.full((5, 5), 0.2)  # one head: (queries, keys)
        >>> figure = plot_head_view(tokens, tokens, weights, segment_start=3)
        >>> len(figure.axes)
        2
    """
    weights = checked_head(query_tokens, key_tokens, weights)
    rows = max(weights.shape)
    check_segment_start(segment_start, weights.shape)
    label_inches = max(token_width(token) for token in [*query_tokens, *key_tokens]) / 72
    row_inches = min(ROW_INCHES, MAX_HEIGHT_INCHES / rows)
    width = LINES_INCHES + 2 * label_inches + 0.6
    height = 1.0 + row_inches * rows + (0.4 if title else 0.0)
    figure = Figure(figsize=(width, height), layout="constrained")
    left = figure.subplots()
    right = left.twinx()
    left.add_collection(head_lines(weights))
    left.set_xlim(0.0, 1.0)
    left.set_xticks([])
    for ax, tokens in ((left, query_tokens), (right, key_tokens)):
        # Row 0 at the top on both sides, whatever the column lengths, so lines stay level.
        ax.set_ylim(rows - 0.5, -0.5)
        ax.set_yticks(range(len(tokens)), tokens, fontsize=TOKEN_POINTS, parse_math=False)
        ax.tick_params(axis="y", length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        if segment_start is not None:
            separate_segments(ax, segment_start, label_inches)
    left.set_title("query", loc="left")
    left.set_title("key", loc="right")
    if title:
        figure.suptitle(title)
    return figure


def head_lines(weights: np.ndarray) -> LineCollection:
    """One line per (query, key) pair, in row-major order, its alpha the weight."""
    queries, keys = np.indices(weights.shape)
    starts = np.stack([np.zeros(weights.size), queries.ravel()], axis=-1)
    ends = np.stack([np.ones(weights.size), keys.ravel()], axis=-1)
    colours = np.tile(to_rgba(LINE_COLOUR), (weights.size, 1))
    colours[:, 3] = weights.ravel()
    return LineCollection(np.stack([starts, ends], axis=1), colors=colours, linewidths=1.5)


def separate_segments(ax, segment_start: int, label_inches: float) -> None:
    # A minor tick as long as the labels are wide draws the separator through the label
    # column itself, and constrained layout makes room for it like for any tick.
    ax.set_yticks([segment_start - 0.5], minor=True)
    ax.tick_params(axis="y", which="minor", length=label_inches * 72 + 6, width=0.8, color="0.4")


def token_width(token: str) -> float:
    """Width of a token label in points, measured with the font it will be drawn in."""
    width, _, _ = text_to_path.get_text_width_height_descent(
        token, FontProperties(size=TOKEN_POINTS), ismath=False
    )
    return width


def checked_head(query_tokens: Sequence[str], key_tokens: Sequence[str], weights) -> np.ndarray:
    weights = np.asarray(weights, dtype=np.float64)
    shape = (len(query_tokens), len(key_tokens))
    if weights.shape != shape or weights.size == 0:
        raise KerasformerError(
            f"head-view weights must have shape (query tokens, key tokens) = {shape} with "
            f"at least one token each, got {weights.shape}; pass one head, "
            f"e.g. attention_map.weights[layer, head]."
        )
    return checked_probabilities(weights, "head-view weights")


def check_segment_start(segment_start: int | None, shape: tuple[int, int]) -> None:
    if segment_start is None:
        return
    last = min(shape) - 1
    if not isinstance(segment_start, int | np.integer) or not 0 < segment_start <= last:
        raise KerasformerError(
            f"segment_start must be the index of the second segment's first token, from 1 "
            f"to {last}, got {segment_start!r}; leave it out for a single text."
        )


def checked_probabilities(weights: np.ndarray, what: str) -> np.ndarray:
    finite = np.all(np.isfinite(weights))
    if not finite or weights.min() < -TOLERANCE or weights.max() > 1.0 + TOLERANCE:
        raise KerasformerError(
            f"{what} must be finite and in [0, 1]; pass attention weights (each row a "
            f"softmax over the keys), not scores or logits."
        )
    return np.clip(weights, 0.0, 1.0)


# --- interactive page --------------------------------------------------------------------


def attention_html(maps: Sequence[AttentionMapLike], title: str) -> str:
    """An offline HTML page with every layer and head of each attention map.

    Each map gets a heading and a heatmap (queries down, keys across, weights on a fixed
    0 to 1 scale) with a menu to choose the layer and a slider to choose the head;
    hovering a cell shows its query, key and weight. plotly's JavaScript is inlined once,
    so the page works without a network; it grows with layers x heads x tokens².

    Args:
        maps: The attention maps to show, in order, e.g. what
            ``kerasformer.models.classifier_attention_maps`` returns; any objects that
            fit `AttentionMapLike`.
        title: The page's title, also its top heading.

    Returns:
        The whole HTML page as a string, to write to a ``.html`` file.

    Raises:
        KerasformerError: If ``maps`` is empty, or a map's weights are not of shape
            ``(layers, heads, len(query_tokens), len(key_tokens))`` with values in
            ``[0, 1]``.

    Examples:
        >>> from pathlib import Path
        >>> from types import SimpleNamespace
        >>> import numpy as np
        >>> tokens = ["time", "flies"]
        >>> attention_map = SimpleNamespace(name="self-attention", query_tokens=tokens,
        ...                                 key_tokens=tokens, weights=np.full((2, 4, 2, 2), 0.5))
        >>> page = attention_html([attention_map], "time flies")
        >>> Path("attention.html").write_text(page, encoding="utf-8") > 0
        True
    """
    if not maps:
        raise KerasformerError(
            "there are no attention maps to show; pass at least one, e.g. what "
            "kerasformer.models.classifier_attention_maps returns."
        )
    import plotly.io as pio

    sections = []
    for index, attention_map in enumerate(maps):
        figure = attention_figure(attention_map)
        # One copy of plotly.js serves every figure on the page.
        div = pio.to_html(figure, include_plotlyjs=index == 0, full_html=False)
        sections.append(f"<h2>{html.escape(str(attention_map.name))}</h2>\n{div}")
    heading = html.escape(title)
    body = "\n".join(sections)
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        # Tells a later `attention --html` that kerasformer wrote this page, not a user.
        '<meta name="generator" content="kerasformer">\n'
        f"<title>{heading}</title>\n</head>\n<body>\n<h1>{heading}</h1>\n{body}\n"
        f"</body>\n</html>\n"
    )


def attention_figure(attention_map: AttentionMapLike) -> go.Figure:
    """A plotly heatmap of one attention map with a layer menu and a head slider.

    There is one heatmap trace per (layer, head), layer-major, and only one is visible:
    the menu's layer buttons show that layer's first head and put in a slider over its
    heads, the slider's steps show one head of the layer, so plotly alone (no script of
    ours) reaches every (layer, head).

    Args:
        attention_map: Anything with ``name``, ``query_tokens``, ``key_tokens`` and
            ``weights`` of shape ``(layers, heads, queries, keys)`` (see
            `AttentionMapLike`), e.g. one of what
            ``kerasformer.models.classifier_attention_maps`` returns.

    Returns:
        A ``plotly.graph_objects.Figure`` with ``layers * heads`` heatmap traces; call its
        ``show()`` in a notebook, or see `attention_html` for a page.

    Raises:
        KerasformerError: If the weights are not of shape
            ``(layers, heads, len(query_tokens), len(key_tokens))``, or a weight is not
            finite or lies outside ``[0, 1]``.

    Examples:
        >>> from types import SimpleNamespace
        >>> import numpy as np
        >>> tokens = ["time", "flies"]
        >>> attention_map = SimpleNamespace(name="self-attention", query_tokens=tokens,
        ...                                 key_tokens=tokens, weights=np.full((2, 4, 2, 2), 0.5))
        >>> figure = attention_figure(attention_map)
        >>> type(figure).__name__, len(figure.data)  # one heatmap per (layer, head)
        ('Figure', 8)
    """
    import plotly.graph_objects as go

    weights = checked_map(attention_map)
    layers, heads, queries, keys = weights.shape
    query_labels = [html.escape(str(token)) for token in attention_map.query_tokens]
    key_labels = [html.escape(str(token)) for token in attention_map.key_tokens]
    hover = [[f"query: {q}<br>key: {k}" for k in key_labels] for q in query_labels]
    figure = go.Figure(
        [
            go.Heatmap(
                z=weights[layer, head],
                # Integer positions: string categories would merge repeated tokens.
                x=list(range(keys)),
                y=list(range(queries)),
                zmin=0.0,
                zmax=1.0,
                colorscale="Viridis",
                colorbar={"title": {"text": "weight"}},
                text=hover,
                hovertemplate="%{text}<br>weight: %{z:.3f}<extra></extra>",
                name=f"layer {layer + 1}, head {head + 1}",
                visible=layer == 0 and head == 0,
            )
            for layer in range(layers)
            for head in range(heads)
        ]
    )
    figure.update_layout(
        template="plotly_white",
        width=max(MIN_FIGURE_PIXELS, 260 + CELL_PIXELS * keys),
        height=max(MIN_FIGURE_PIXELS, 260 + CELL_PIXELS * queries),
        margin={"b": 170},
        xaxis={
            "title": {"text": "key"},
            "side": "top",
            "tickvals": list(range(keys)),
            "ticktext": key_labels,
            "tickangle": -90,
        },
        yaxis={
            "title": {"text": "query"},
            "autorange": "reversed",
            "tickvals": list(range(queries)),
            "ticktext": query_labels,
        },
        updatemenus=[layer_menu(layers, heads)],
        sliders=[head_slider(0, layers, heads)],
    )
    return figure


def layer_menu(layers: int, heads: int) -> dict:
    buttons = [
        {
            "label": f"layer {layer + 1}",
            "method": "update",
            "args": [
                {"visible": visible_trace(layer, 0, layers, heads)},
                {"sliders": [head_slider(layer, layers, heads)]},
            ],
        }
        for layer in range(layers)
    ]
    # Below the plot, above the slider: the key labels take the space above the plot, and
    # a small figure has no room for the two side by side.
    return {
        "type": "dropdown",
        "buttons": buttons,
        "active": 0,
        "x": 0.0,
        "xanchor": "left",
        "y": 0.0,
        "yanchor": "top",
        "pad": {"t": 30},
    }


def head_slider(layer: int, layers: int, heads: int) -> dict:
    steps = [
        {
            "label": f"head {head + 1}",
            "method": "update",
            "args": [{"visible": visible_trace(layer, head, layers, heads)}],
        }
        for head in range(heads)
    ]
    return {
        "active": 0,
        "steps": steps,
        "currentvalue": {"prefix": f"layer {layer + 1}, "},
        "x": 0.0,
        "len": 1.0,
        "y": 0.0,
        "yanchor": "top",
        "pad": {"t": 75},
    }


def visible_trace(layer: int, head: int, layers: int, heads: int) -> list[bool]:
    """Which of the layer-major traces to show for one (layer, head): that one alone."""
    shown = [False] * (layers * heads)
    shown[layer * heads + head] = True
    return shown


def checked_map(attention_map: AttentionMapLike) -> np.ndarray:
    weights = np.asarray(attention_map.weights)
    if not np.issubdtype(weights.dtype, np.floating):
        weights = weights.astype(np.float64)
    queries, keys = len(attention_map.query_tokens), len(attention_map.key_tokens)
    if weights.ndim != 4 or weights.shape[2:] != (queries, keys) or weights.size == 0:
        raise KerasformerError(
            f"the {attention_map.name} weights must have shape (layers, heads, {queries}, "
            f"{keys}) for {queries} query and {keys} key tokens, got {weights.shape}; "
            f"pass one (layers, heads, queries, keys) array a map."
        )
    what = f"the {attention_map.name} weights"
    # Keep the dtype: float32 weights make a page half the size of float64 ones.
    return checked_probabilities(weights, what).astype(weights.dtype, copy=False)
