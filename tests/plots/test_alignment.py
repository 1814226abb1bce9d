import numpy as np
import pytest

from kerasformer.errors import KerasformerError
from kerasformer.plots import plot_alignment, save_figure
from tests.helpers.pictures import assert_not_blank, pixel_at, read_png

SOURCE = "the agreement was signed in august <end>".split()
TARGET = "el acuerdo fue firmado en agosto <end>".split()


def alignment(rows: int, columns: int, seed: int = 0) -> np.ndarray:
    scores = 3.0 * np.random.default_rng(seed).normal(size=(rows, columns))
    return np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)


def test_each_cell_is_grey_with_white_for_one_and_black_for_zero(tmp_path):
    weights = alignment(len(TARGET), len(SOURCE))
    weights[0, :] = 0.0
    weights[0, 0] = 1.0  # one pure white and several pure black cells
    figure = plot_alignment(SOURCE, TARGET, weights, title="en → es")
    pixels = read_png(save_figure(figure, tmp_path / "alignment.png"))
    assert_not_blank(pixels)
    (ax,) = figure.axes
    for (target, source), weight in np.ndenumerate(weights):
        expected = np.full(3, weight)
        np.testing.assert_allclose(pixel_at(pixels, ax, source, target), expected, atol=4 / 255)
    assert figure.get_suptitle() == "en → es"


def test_the_grey_scale_is_fixed_not_stretched_to_the_weights(tmp_path):
    weights = np.full((2, 3), 0.25)
    weights[:, 1] = 0.5
    figure = plot_alignment(SOURCE[:3], TARGET[:2], weights)
    pixels = read_png(save_figure(figure, tmp_path / "alignment.png"))
    (ax,) = figure.axes
    np.testing.assert_allclose(pixel_at(pixels, ax, 0, 1), [0.25] * 3, atol=4 / 255)
    np.testing.assert_allclose(pixel_at(pixels, ax, 1, 0), [0.5] * 3, atol=4 / 255)
    (image,) = ax.get_images()
    assert image.get_cmap().name == "gray"
    assert (image.norm.vmin, image.norm.vmax) == (0.0, 1.0)


def test_source_words_run_across_the_top_and_target_words_down_the_left():
    weights = alignment(len(TARGET) - 2, len(SOURCE))
    figure = plot_alignment(SOURCE, TARGET[:-2], weights)
    (ax,) = figure.axes
    (image,) = ax.get_images()
    np.testing.assert_array_equal(image.get_array(), weights)
    rows, columns = len(TARGET) - 2, len(SOURCE)
    assert image.get_extent() == pytest.approx([-0.5, columns - 0.5, rows - 0.5, -0.5])
    assert ax.xaxis.get_ticks_position() == "top"
    assert ax.xaxis.get_label_position() == "top"
    assert [label.get_text() for label in ax.get_xticklabels()] == SOURCE
    assert all(label.get_rotation() == 90 for label in ax.get_xticklabels())
    assert [label.get_text() for label in ax.get_yticklabels()] == TARGET[:-2]
    assert ax.yaxis.get_ticks_position() == "left"


def test_every_cell_is_square_on_the_page(tmp_path):
    figure = plot_alignment(SOURCE, TARGET[:3], alignment(3, len(SOURCE)))
    save_figure(figure, tmp_path / "alignment.png")  # lays the figure out
    (ax,) = figure.axes
    (x0, y0), (x1, y1) = ax.transData.transform([(0, 0), (1, 1)])
    assert abs(x1 - x0) == pytest.approx(abs(y1 - y0), rel=1e-6)
    assert abs(x1 - x0) > 5  # pixels: a visible cell


def test_long_sentences_keep_the_matrix_but_drop_the_labels():
    source = [f"w{i}" for i in range(60)]
    figure = plot_alignment(source, TARGET, np.full((len(TARGET), 60), 1 / 60))
    (ax,) = figure.axes
    assert not ax.get_xticks().size
    assert [label.get_text() for label in ax.get_yticklabels()] == TARGET


@pytest.mark.parametrize("shape", [(7, 5), (5, 8), (1, 5, 7), (35,)])
def test_weights_that_do_not_fit_the_tokens_are_a_clear_error(shape):
    target = TARGET[:5]
    with pytest.raises(KerasformerError, match=r"\(target tokens, source tokens\) = \(5, 7\)"):
        plot_alignment(SOURCE, target, np.full(shape, 0.1))


def test_no_tokens_is_a_clear_error():
    with pytest.raises(KerasformerError, match=r"at least one token"):
        plot_alignment([], TARGET, np.zeros((len(TARGET), 0)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -0.01, 1.01, 3.5])
def test_weights_outside_zero_to_one_are_a_clear_error(bad):
    weights = alignment(len(TARGET), len(SOURCE))
    weights[2, 3] = bad
    with pytest.raises(KerasformerError, match=r"finite and in \[0, 1\]"):
        plot_alignment(SOURCE, TARGET, weights)
