"""Loss and accuracy per epoch, train and validation, as written to ``history.json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from kerasformer.errors import KerasformerError

PANELS = (("loss", "loss"), ("accuracy", "accuracy"))


def plot_training_history(
    history: Mapping[str, Sequence] | object, title: str | None = None
) -> Figure:
    """Plot training and validation loss and accuracy against the epoch.

    Args:
        history: A Keras ``History`` (what ``model.fit`` returns), its ``.history`` dict,
            or the dict ``kerasformer train`` writes to ``history.json``. When it has a
            ``phase`` entry (the frozen-then-unfrozen recipe), a dotted line marks where
            each phase begins; a ``best_epoch`` (early stopping) is marked too.
        title: Title over both panels; None (the default) for none.

    Returns:
        A matplotlib ``Figure`` (built without pyplot) with one panel per metric found:
        loss, then accuracy; validation values (``val_loss``, ``val_accuracy``) are drawn
        dashed in the same panel.

    Raises:
        KerasformerError: If the history has neither loss nor accuracy values (no epoch
            to plot).

    Examples:
        >>> history = {"loss": [0.9, 0.6, 0.5], "val_loss": [0.8, 0.7, 0.65],
        ...            "accuracy": [0.6, 0.8, 0.85], "val_accuracy": [0.7, 0.75, 0.8]}
        >>> figure = plot_training_history(history, title="bbc_news")
        >>> len(figure.axes)  # loss, then accuracy
        2
    """
    history = getattr(history, "history", history)
    panels = [(key, label) for key, label in PANELS if history.get(key)]
    if not panels:
        raise KerasformerError(
            "the history has no epochs to plot (no 'loss' values); train for at least one "
            "epoch first."
        )
    epochs = len(history[panels[0][0]])
    figure = Figure(figsize=(5 * len(panels), 3.8), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for ax, (key, label) in zip(axes, panels, strict=True):
        draw_metric(ax, history, key, label, epochs)
        mark_phases(ax, history.get("phase"))
        mark_best_epoch(ax, history.get("best_epoch"))
    if title:
        figure.suptitle(title)
    return figure


def draw_metric(ax, history: Mapping[str, Sequence], key: str, label: str, epochs: int) -> None:
    x = range(1, epochs + 1)
    ax.plot(x, history[key], marker="o", label="train")
    if history.get(f"val_{key}"):
        ax.plot(x, history[f"val_{key}"], marker="o", linestyle="--", label="validation")
    ax.set_xlabel("epoch")
    ax.set_ylabel(label)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    ax.legend()


def mark_best_epoch(ax, best_epoch: int | None) -> None:
    """A green line at the epoch early stopping kept (``best_epoch``, counted from 1)."""
    if best_epoch is None:
        return
    ax.axvline(best_epoch, color="tab:green", linestyle="-.", linewidth=1)
    ax.text(
        best_epoch, 0.02, f" best epoch {best_epoch}", transform=ax.get_xaxis_transform(),
        va="bottom", fontsize="small", color="tab:green",
    )  # fmt: skip


def mark_phases(ax, phases: Sequence[str] | None) -> None:
    """A dotted line and the phase's name where each phase after the first begins."""
    for epoch in range(1, len(phases or ())):
        if phases[epoch] != phases[epoch - 1]:
            ax.axvline(epoch + 0.5, color="grey", linestyle=":")
            ax.text(
                epoch + 0.55, 0.98, phases[epoch], transform=ax.get_xaxis_transform(),
                va="top", fontsize="small", color="grey",
            )  # fmt: skip
