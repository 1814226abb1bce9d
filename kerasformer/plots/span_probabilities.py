"""Where a question-answering model thinks the answer starts and ends in a context."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from kerasformer.errors import KerasformerError
from kerasformer.plots.attention_heads import MAX_LABELLED_TOKENS

INCHES_PER_TOKEN = 0.22
MAX_WIDTH_INCHES = 16.0


def plot_span_probabilities(
    tokens: Sequence[str],
    start_probabilities: np.ndarray,
    end_probabilities: np.ndarray,
    answer: tuple[int, int] | None = None,
    title: str | None = None,
) -> Figure:
    """Draw the start and end probability of every context token, one bar chart each.

    Args:
        tokens: The context's tokens in order, one bar each (labelled when there are at
            most 48 of them), e.g. ``token_probabilities(...)["tokens"]`` of a
            ``QuestionAnswerer``.
        start_probabilities: The probability that the answer starts at each token, one
            value in ``[0, 1]`` per token, e.g. ``token_probabilities(...)["start"]``.
        end_probabilities: The probability that the answer ends at each token, one value
            in ``[0, 1]`` per token, e.g. ``token_probabilities(...)["end"]``.
        answer: ``(first, last)`` token indices of the chosen answer, shaded in both
            charts; None (the default) shades nothing.
        title: Title over the charts; None (the default) for none.

    Returns:
        A matplotlib ``Figure`` (built without pyplot) with two axes sharing the token
        axis: start probabilities above, end probabilities below.

    Raises:
        KerasformerError: If the tokens are empty, the probabilities do not have one value
            per token or are not finite values in ``[0, 1]`` (logits instead of a
            softmax), or ``answer`` is not ``(first, last)`` with
            ``0 <= first <= last < len(tokens)``.

    Examples:
        >>> tokens = ["Brazil", "won", "the", "cup", "."]
        >>> start = [0.85, 0.05, 0.05, 0.04, 0.01]
        >>> end = [0.7, 0.1, 0.05, 0.14, 0.01]
        >>> figure = plot_span_probabilities(tokens, start, end, answer=(0, 0))
        >>> len(figure.axes)
        2
    """
    start = checked_probabilities("start_probabilities", start_probabilities, len(tokens))
    end = checked_probabilities("end_probabilities", end_probabilities, len(tokens))
    if answer is not None and not 0 <= answer[0] <= answer[1] < len(tokens):
        raise KerasformerError(
            f"answer must be (first, last) token indices with first <= last < {len(tokens)}, "
            f"got {answer!r}."
        )
    width = min(MAX_WIDTH_INCHES, 3.0 + INCHES_PER_TOKEN * len(tokens))
    figure = Figure(figsize=(width, 5.5 if len(tokens) <= MAX_LABELLED_TOKENS else 4.5),
                    layout="constrained")  # fmt: skip
    top, bottom = figure.subplots(2, 1, sharex=True)
    positions = np.arange(len(tokens))
    for ax, values, name in ((top, start, "start"), (bottom, end, "end")):
        ax.bar(positions, values, width=0.8, color="tab:blue" if name == "start" else "tab:orange")
        if answer is not None:
            ax.axvspan(answer[0] - 0.5, answer[1] + 0.5, color="tab:green", alpha=0.15, zorder=0)
        ax.set_ylim(0.0, 1.0)
        ax.set_ylabel(f"P({name})")
    if len(tokens) <= MAX_LABELLED_TOKENS:
        bottom.set_xticks(positions, tokens, rotation=90)
    else:
        bottom.set_xlabel("context token")
    if title:
        figure.suptitle(title)
    return figure


def checked_probabilities(name: str, values, count: int) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (count,) or count == 0:
        raise KerasformerError(
            f"{name} must hold one value per token ({count}), got shape {values.shape}; a "
            "context needs at least one token."
        )
    if not np.all(np.isfinite(values)) or values.min() < 0.0 or values.max() > 1.0:
        raise KerasformerError(
            f"{name} must be finite and in [0, 1]; pass probabilities (a softmax), not logits."
        )
    return values
