"""Early stopping that survives ``--resume``: the best epoch is read from the run's records.

Keras's ``EarlyStopping`` keeps its best value and weights in memory, so a run killed and
resumed forgets them. Here the best epoch is worked out from every epoch's record (a
resumed run has those of the epochs before the kill), and the best weights are kept in
the run directory beside the other backups.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kerasformer.backend import keras
from kerasformer.errors import KerasformerError
from kerasformer.training.weight_files import read_weights, write_weights

BEST_WEIGHTS_FILE = "best-weights.npz"
# Metrics that are better when lower; every other one (accuracy, f1, bleu ...) is better higher.
LOWER_IS_BETTER = ("loss", "perplexity", "error")


class EarlyStoppingOnRecords(keras.callbacks.Callback):
    """Stop after ``patience`` epochs without a better ``monitor``; keep the best weights.

    Place it before the `EpochLog` whose ``records`` it reads: it decides on the epoch
    that just ended from that epoch's ``logs`` and the earlier records, and saves the
    weights of a new best before the epoch counts as done.

    Args:
        monitor: The ``logs`` key watched, e.g. ``val_loss`` or ``val_accuracy``.
        patience: Epochs without improvement after which training stops.
        records: A function giving the epoch records so far (`EpochLog.records`), called
            when each epoch ends.
        store: The directory the best weights are kept in (the run directory), or None to
            keep them in memory only.
        writer: Whether this process writes them there (in multi-worker training only the
            chief does; the others read the chief's).
    """

    def __init__(
        self, monitor: str, patience: int, records, store: Path | None = None, writer=True
    ):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.records = records
        self.store = Path(store) if store is not None else None
        self.writer = writer
        self.lower_is_better = any(word in monitor for word in LOWER_IS_BETTER)
        self.best_weights: list[np.ndarray] | None = None
        self.stopped = False

    def best_epoch(self, records: list[dict]) -> int | None:
        """The 0-based epoch with the best ``monitor`` among ``records`` (the first on ties)."""
        scored = [r for r in records if math.isfinite(r.get(self.monitor, math.nan))]
        if not scored:
            return None
        sign = 1 if self.lower_is_better else -1
        return min(scored, key=lambda r: (sign * r[self.monitor], r["epoch"]))["epoch"]

    def should_stop(self, records: list[dict]) -> bool:
        best = self.best_epoch(records)
        return best is not None and records[-1]["epoch"] - best >= self.patience

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.monitor not in logs:
            raise KerasformerError(
                f"--monitor {self.monitor} is not a metric of this run; choose one of: "
                f"{', '.join(sorted(logs))}."
            )
        records = [r for r in self.records() if r["epoch"] < epoch]
        records.append({"epoch": epoch, self.monitor: float(logs[self.monitor])})
        if self.best_epoch(records) == epoch:
            self.keep_best(self.model.get_weights())
        if self.should_stop(records):
            self.stopped = True
            self.model.stop_training = True

    def keep_best(self, weights: list[np.ndarray]) -> None:
        self.best_weights = [np.array(w) for w in weights]
        if self.store is None or not self.writer:
            return
        write_weights(self.store / BEST_WEIGHTS_FILE, self.best_weights)

    def restore_best(self, model: keras.Model) -> None:
        """Give ``model`` the best epoch's weights (those kept before a ``--resume`` too)."""
        weights = self.best_weights
        if weights is None and self.store is not None:
            weights = read_weights(self.store / BEST_WEIGHTS_FILE)
        if weights is not None:
            model.set_weights(weights)


def early_stopping_for(config, records, run) -> EarlyStoppingOnRecords | None:
    """The run's `EarlyStoppingOnRecords` (None without ``config.early_stopping``), keeping
    its best weights in the run directory ``run`` (a `RunDirectory`, or None)."""
    if config.early_stopping is None:
        return None
    return EarlyStoppingOnRecords(
        config.monitor, config.early_stopping, records,
        store=None if run is None else run.path, writer=run is None or run.writer,
    )  # fmt: skip


def with_best_epoch(
    history: dict, early: EarlyStoppingOnRecords | None, model: keras.Model
) -> dict:
    """The history, and ``model`` given the best epoch's weights, when stopping early."""
    if early is None or not early.records():
        return history
    best = early.best_epoch(early.records())
    if best is None:
        return history
    early.restore_best(model)
    return {**history, "best_epoch": best + 1}
