"""Per-epoch validation curves of several benchmark runs in one picture."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

# Matplotlib's default cycle has 10 colours; past ten runs the line style and marker
# change too, so no two runs are drawn alike.
STYLES = [("-", "o"), ("--", "s"), (":", "^")]


def plot_validation_curves(
    runs: Mapping[str, Mapping], panels: Mapping[str, Callable[[Mapping], list]], path: Path
) -> None:
    """One panel per entry of ``panels`` (its y label, and a function from a run's
    history to one value per epoch), one line per run; saved as ``path``."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(5.5 * len(panels), 4), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for ax, (label, values_of) in zip(axes, panels.items(), strict=True):
        for index, (name, run) in enumerate(runs.items()):
            values = values_of(run["history"])
            linestyle, marker = STYLES[index // 10 % len(STYLES)]
            ax.plot(
                range(1, len(values) + 1), values, linestyle=linestyle, marker=marker,
                color=f"C{index % 10}", label=name,
            )  # fmt: skip
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    figure.savefig(path, dpi=110)
