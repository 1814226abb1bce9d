"""Averaging the last epochs' weights, kept in memory and across a resume."""

import numpy as np
import pytest

from kerasformer.backend import keras
from kerasformer.training.weight_averaging import EPOCH_WEIGHTS_FILE, WeightAveraging
from tests.helpers.tiny_models import tiny_model


def epoch_weights(epoch):
    rng = np.random.default_rng(epoch)
    return [rng.normal(size=(3, 2)).astype("float32"), rng.normal(size=(2,)).astype("float32")]


def run_epochs(averaging, model, epochs):
    averaging.set_model(model)
    for epoch in epochs:
        model.set_weights(epoch_weights(epoch))
        averaging.on_epoch_end(epoch, {})


def assert_weights_are_the_mean_of(model, epochs):
    for index, got in enumerate(model.get_weights()):
        expected = sum(epoch_weights(e)[index].astype("float64") for e in epochs) / len(epochs)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def test_the_model_ends_with_the_mean_of_the_last_epochs():
    model = tiny_model()
    averaging = WeightAveraging(last=3, keep=3)
    run_epochs(averaging, model, range(6))
    assert averaging.average_into(model, final_epoch=5, first_epoch=0) == [4, 5, 6]
    assert_weights_are_the_mean_of(model, [3, 4, 5])
    assert sorted(averaging.kept) == [3, 4, 5]  # older epochs are not held


def test_with_early_stopping_the_epochs_end_at_the_best_one():
    model = tiny_model()
    averaging = WeightAveraging(last=2, keep=2 + 2)  # patience 2
    run_epochs(averaging, model, range(5))
    assert averaging.average_into(model, final_epoch=2, first_epoch=0) == [2, 3]
    assert_weights_are_the_mean_of(model, [1, 2])


def test_only_the_last_phases_epochs_and_at_most_those_trained_are_averaged():
    model = tiny_model()
    averaging = WeightAveraging(last=4, keep=4)
    run_epochs(averaging, model, range(3))
    assert averaging.average_into(model, final_epoch=2, first_epoch=1) == [2, 3]
    assert_weights_are_the_mean_of(model, [1, 2])


def test_a_resumed_run_reads_the_epochs_kept_before_the_kill(tmp_path):
    first = WeightAveraging(last=3, keep=3, store=tmp_path)
    run_epochs(first, tiny_model(), range(4))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        EPOCH_WEIGHTS_FILE.format(epoch) for epoch in (1, 2, 3)
    ]
    # A new process: nothing in memory; epochs 2 and 3 come from the run directory.
    model = tiny_model()
    resumed = WeightAveraging(last=3, keep=3, store=tmp_path)
    run_epochs(resumed, model, [4])
    assert resumed.average_into(model, final_epoch=4, first_epoch=0) == [3, 4, 5]
    assert_weights_are_the_mean_of(model, [2, 3, 4])


def test_a_worker_that_does_not_write_leaves_the_directory_alone(tmp_path):
    run_epochs(WeightAveraging(last=2, keep=2, store=tmp_path, writer=False), tiny_model(), [0])
    assert not any(tmp_path.iterdir())


def test_nothing_to_average_is_a_programming_error():
    with pytest.raises(ValueError):
        WeightAveraging(last=0, keep=0)


def test_weights_that_are_not_real_numbers_are_the_newest_epochs():
    vocabulary = [np.array([b"[UNK]", b"goal"]), np.array([b"[UNK]", b"match"])]
    counts = [np.array(3, "int64"), np.array(4, "int64")]
    averaging = WeightAveraging(last=2, keep=2)
    averaging.kept = {0: [vocabulary[0], counts[0]], 1: [vocabulary[1], counts[1]]}
    model = keras.Model()
    kept = []
    model.set_weights = kept.extend
    averaging.average_into(model, final_epoch=1, first_epoch=0)
    np.testing.assert_array_equal(kept[0], vocabulary[1])
    assert kept[1] == 4
