"""Early stopping decided from the epochs' records, with the best weights kept across a resume."""

import numpy as np
import pytest

from kerasformer.errors import KerasformerError
from kerasformer.training.early_stopping import BEST_WEIGHTS_FILE, EarlyStoppingOnRecords
from tests.helpers.tiny_models import tiny_model


def weights_of_epoch(epoch):
    """Weights a test can tell apart: every value is the epoch number."""
    return [np.full((3, 2), float(epoch)), np.full((2,), float(epoch))]


def run_epochs(callback, model, values, first_epoch=0, records=None):
    """Feed ``values`` of the monitor epoch by epoch, as model.fit would; the records as
    `EpochLog` keeps them. Returns the epochs run."""
    records = [] if records is None else records
    callback.records = lambda: records
    callback.set_model(model)
    ran = []
    for epoch, value in enumerate(values, start=first_epoch):
        model.set_weights(weights_of_epoch(epoch))
        callback.on_epoch_end(epoch, {"val_loss": value, "val_accuracy": -value})
        records.append({"epoch": epoch, "val_loss": value, "val_accuracy": -value})
        ran.append(epoch)
        if model.stop_training:
            break
    return ran, records


def test_it_stops_after_patience_epochs_without_improvement_and_restores_the_best():
    model = tiny_model()
    model.stop_training = False
    early = EarlyStoppingOnRecords("val_loss", 2, lambda: [])
    ran, _ = run_epochs(early, model, [3.0, 2.0, 2.5, 2.0, 2.7, 1.0])
    # Epoch 1 is best; 2.0 again at epoch 3 is no improvement; epochs 2 and 3 use it up.
    assert ran == [0, 1, 2, 3] and early.stopped
    early.restore_best(model)
    for got, want in zip(model.get_weights(), weights_of_epoch(1), strict=True):
        np.testing.assert_array_equal(got, want)


def test_accuracy_is_better_higher():
    early = EarlyStoppingOnRecords("val_accuracy", 1, lambda: [])
    records = [{"epoch": e, "val_accuracy": a} for e, a in enumerate([0.5, 0.7, 0.6])]
    assert early.best_epoch(records) == 1
    assert early.should_stop(records)
    assert not early.should_stop(records[:2])


def test_a_resumed_run_reads_the_best_weights_kept_before_the_kill(tmp_path):
    model = tiny_model()
    model.stop_training = False
    first = EarlyStoppingOnRecords("val_loss", 2, lambda: [], store=tmp_path)
    _, records = run_epochs(first, model, [3.0, 1.0])
    assert (tmp_path / BEST_WEIGHTS_FILE).is_file()
    # A new process: the records come back from the run directory, the weights from disk.
    model = tiny_model()
    model.stop_training = False
    resumed = EarlyStoppingOnRecords("val_loss", 2, lambda: [], store=tmp_path)
    ran, _ = run_epochs(resumed, model, [1.5, 1.2, 0.5], first_epoch=2, records=records)
    assert ran == [2, 3] and resumed.stopped
    resumed.restore_best(model)
    np.testing.assert_array_equal(model.get_weights()[1], weights_of_epoch(1)[1])


def test_a_monitor_the_run_does_not_log_names_the_ones_it_does():
    model = tiny_model()
    early = EarlyStoppingOnRecords("val_f1", 2, lambda: [])
    early.set_model(model)
    with pytest.raises(KerasformerError, match="--monitor val_f1 is not a metric of this run; "
                       "choose one of: loss, val_loss"):  # fmt: skip
        early.on_epoch_end(0, {"loss": 1.0, "val_loss": 1.0})
