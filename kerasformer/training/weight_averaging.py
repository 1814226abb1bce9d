"""Averaging the weights of the last epochs (Vaswani et al. 2017 average the last checkpoints).

The mean of the weights at the end of the last ``N`` epochs often scores better than the
last epoch alone: the optimiser's late steps wander around a minimum, and their mean sits
nearer its middle. With early stopping the ``N`` epochs end at the best one.

Each epoch's weights are kept in memory and, in a run directory, on disk, so a run
killed and resumed still averages epochs trained before the kill.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kerasformer.backend import keras
from kerasformer.training.weight_files import read_weights, write_weights

EPOCH_WEIGHTS_FILE = "epoch-weights-{}.npz"


class WeightAveraging(keras.callbacks.Callback):
    """Keep the weights of recent epochs; give the model the mean of the last ``last``.

    Args:
        last: How many epochs' weights are averaged (``N``).
        keep: How many recent epochs are kept, ``last`` plus early stopping's patience,
            so the ``N`` epochs ending at the best one are still there when it stops.
        store: The run directory they are also saved in, or None for memory only.
        writer: Whether this process writes them there (in multi-worker training only
            the chief does; the others read the chief's).
    """

    def __init__(self, last: int, keep: int, store: Path | None = None, writer: bool = True):
        super().__init__()
        if last < 1 or keep < last:
            raise ValueError(f"average at least 1 epoch and keep as many, got {last}, {keep}")
        self.last = last
        self.keep = keep
        self.store = Path(store) if store is not None else None
        self.writer = writer
        self.kept: dict[int, list[np.ndarray]] = {}

    def on_epoch_end(self, epoch, logs=None):
        self.kept[epoch] = [np.array(weight) for weight in self.model.get_weights()]
        for old in [e for e in self.kept if e <= epoch - self.keep]:
            del self.kept[old]
        if self.store is not None and self.writer:
            self.save(epoch)

    def save(self, epoch: int) -> None:
        write_weights(self.store / EPOCH_WEIGHTS_FILE.format(epoch), self.kept[epoch])
        old = self.store / EPOCH_WEIGHTS_FILE.format(epoch - self.keep)
        old.unlink(missing_ok=True)

    def weights_of(self, epoch: int) -> list[np.ndarray] | None:
        if epoch in self.kept:
            return self.kept[epoch]
        if self.store is None:
            return None
        return read_weights(self.store / EPOCH_WEIGHTS_FILE.format(epoch))

    def average_into(self, model: keras.Model, final_epoch: int, first_epoch: int) -> list[int]:
        """Give ``model`` the mean weights of the ``last`` epochs (0-based) up to
        ``final_epoch``, none before ``first_epoch``; returns those epochs, 1-based."""
        epochs = range(max(first_epoch, final_epoch - self.last + 1), final_epoch + 1)
        found = {epoch: self.weights_of(epoch) for epoch in epochs}
        found = {epoch: weights for epoch, weights in found.items() if weights is not None}
        if not found:
            return []
        per_weight = zip(*(found[epoch] for epoch in sorted(found)), strict=True)
        model.set_weights([mean_of(copies) for copies in per_weight])
        return [epoch + 1 for epoch in sorted(found)]


def weight_averaging_for(config, run) -> WeightAveraging | None:
    """The run's `WeightAveraging` (None without ``config.average_last``), keeping the
    epochs' weights in the run directory ``run`` (a `RunDirectory`, or None); it keeps
    early stopping's patience more epochs, so that it can average up to the best one."""
    if config.average_last is None:
        return None
    return WeightAveraging(
        config.average_last, config.average_last + (config.early_stopping or 0),
        store=None if run is None else run.path, writer=run is None or run.writer,
    )  # fmt: skip


def with_averaged_weights(
    history: dict, averaging: WeightAveraging | None, records: list[dict], phase: str, model
) -> dict:
    """The history, and ``model`` given the mean weights of the last (or best) epochs of
    ``phase`` (among the epoch ``records``), with ``averaged_epochs`` (1-based) naming them."""
    epochs = [record["epoch"] for record in records if record["phase"] == phase]
    if averaging is None or not epochs:
        return history
    final = history["best_epoch"] - 1 if "best_epoch" in history else epochs[-1]
    return {**history, "averaged_epochs": averaging.average_into(model, final, epochs[0])}


def mean_of(copies: tuple[np.ndarray, ...]) -> np.ndarray:
    """The mean of a weight's copies; the newest copy where a mean means nothing (counters,
    a vocabulary's strings)."""
    if not np.issubdtype(copies[-1].dtype, np.floating):
        return copies[-1]
    return np.mean(copies, axis=0).astype(copies[-1].dtype)
