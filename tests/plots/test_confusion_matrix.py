import numpy as np
import pytest
from matplotlib import colormaps

from kerasformer.errors import KerasformerError
from kerasformer.plots import plot_confusion_matrix, save_figure
from tests.helpers.pictures import assert_not_blank, pixel_at, read_png

CLASSES = ["world", "sports", "business", "sci/tech"]
MATRIX = np.array([[50, 2, 0, 1], [3, 40, 5, 0], [0, 1, 60, 2], [0, 0, 3, 10]])


def test_cells_show_counts_and_are_coloured_by_their_share_of_the_row(tmp_path):
    figure = plot_confusion_matrix(MATRIX, CLASSES, title="AG News test")
    pixels = read_png(save_figure(figure, tmp_path / "confusion.png"))
    assert_not_blank(pixels)
    ax = figure.axes[0]
    texts = {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts
    }
    assert texts == {(i, j): str(MATRIX[i, j]) for i in range(4) for j in range(4)}
    shares = MATRIX / MATRIX.sum(axis=1, keepdims=True)
    for (i, j), share in np.ndenumerate(shares):
        # Off the centre, where the count is written.
        drawn = pixel_at(pixels, ax, j + 0.3, i + 0.3)
        np.testing.assert_allclose(drawn, colormaps["Blues"](share)[:3], atol=4 / 255)
    assert [label.get_text() for label in ax.get_yticklabels()] == CLASSES


def test_a_matrix_that_does_not_fit_the_classes_is_a_clear_error():
    with pytest.raises(KerasformerError, match="3 class names for a 4x4"):
        plot_confusion_matrix(MATRIX, CLASSES[:3])
    with pytest.raises(KerasformerError, match="must be square"):
        plot_confusion_matrix(MATRIX[:3], CLASSES)
    with pytest.raises(KerasformerError, match="holds counts"):
        plot_confusion_matrix(MATRIX * 0.5, CLASSES)
