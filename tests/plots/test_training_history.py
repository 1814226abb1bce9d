import numpy as np
import pytest

from kerasformer.backend import keras
from kerasformer.errors import KerasformerError
from kerasformer.plots import plot_training_history, save_figure
from kerasformer.plots.figures import DPI
from tests.helpers.pictures import assert_not_blank, read_png

HISTORY = {
    "loss": [1.2, 0.8, 0.6, 0.5],
    "accuracy": [0.5, 0.7, 0.8, 0.85],
    "val_loss": [1.0, 0.9, 0.7, 0.75],
    "val_accuracy": [0.6, 0.65, 0.75, 0.74],
    "phase": ["frozen", "unfrozen", "unfrozen", "unfrozen"],
    "seconds": [3.0, 9.0, 9.0, 9.0],
}


def test_each_panel_draws_train_and_validation_per_epoch(tmp_path):
    figure = plot_training_history(HISTORY, title="run")
    loss_ax, accuracy_ax = figure.axes
    for ax, key in ((loss_ax, "loss"), (accuracy_ax, "accuracy")):
        train, validation = [line for line in ax.get_lines() if line.get_label() != "_child"][:2]
        np.testing.assert_array_equal(train.get_xdata(), [1, 2, 3, 4])
        np.testing.assert_array_equal(train.get_ydata(), HISTORY[key])
        np.testing.assert_array_equal(validation.get_ydata(), HISTORY[f"val_{key}"])
        assert ax.get_ylabel() == key
        # The unfrozen phase starts at epoch 2: a marker between epochs 1 and 2.
        markers = [line for line in ax.get_lines() if list(line.get_xdata()) == [1.5, 1.5]]
        assert len(markers) == 1
    pixels = read_png(save_figure(figure, tmp_path / "history.png"))
    assert pixels.shape[:2] == (round(3.8 * DPI), 10 * DPI)
    assert_not_blank(pixels)


def test_a_keras_history_object_is_accepted_and_one_phase_has_no_marker():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(np.ones((8, 2)), np.zeros(8), epochs=3, verbose=0)
    figure = plot_training_history(history)
    assert len(figure.axes) == 1  # loss only: this model has no accuracy
    (line,) = figure.axes[0].get_lines()
    np.testing.assert_allclose(line.get_ydata(), history.history["loss"])


def test_a_history_without_epochs_is_a_clear_error():
    with pytest.raises(KerasformerError, match="no epochs to plot"):
        plot_training_history({"loss": [], "phase": []})
