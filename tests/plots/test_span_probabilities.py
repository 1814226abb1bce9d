import numpy as np
import pytest
from matplotlib.colors import to_rgb

from kerasformer.errors import KerasformerError
from kerasformer.plots import plot_span_probabilities, save_figure
from tests.helpers.pictures import assert_not_blank, pixel_at, read_png

TOKENS = "the broncos beat the panthers 24 - 10 in super bowl 50".split()


def probabilities(peak: int) -> np.ndarray:
    values = np.full(len(TOKENS), 0.02)
    values[peak] = 1.0 - 0.02 * (len(TOKENS) - 1)
    return values


def test_each_token_has_a_start_bar_and_an_end_bar_of_its_probability(tmp_path):
    start, end = probabilities(1), probabilities(4)
    figure = plot_span_probabilities(TOKENS, start, end, answer=(1, 4), title="Who won?")
    pixels = read_png(save_figure(figure, tmp_path / "span.png"))
    assert_not_blank(pixels)
    top, bottom = figure.axes
    for ax, values, colour in ((top, start, "tab:blue"), (bottom, end, "tab:orange")):
        # Inside a tall bar, just under its top, the bar's colour; above a short one, not.
        tall = int(np.argmax(values))
        inside = pixel_at(pixels, ax, tall, values[tall] - 0.05)
        np.testing.assert_allclose(inside, to_rgb(colour), atol=6 / 255)
        short = (tall + 6) % len(TOKENS)
        assert not np.allclose(pixel_at(pixels, ax, short, 0.5), to_rgb(colour), atol=0.1)
    assert [label.get_text() for label in bottom.get_xticklabels()] == TOKENS
    assert figure.get_suptitle() == "Who won?"


@pytest.mark.parametrize(
    "start, answer, message",
    [
        (np.full(3, 0.1), None, r"one value per token \(12\)"),
        (np.full(12, 2.0), None, "pass probabilities"),
        (np.full(12, 0.1), (5, 2), "first <= last < 12"),
    ],
)
def test_bad_input_is_one_clear_error(start, answer, message):
    with pytest.raises(KerasformerError, match=message):
        plot_span_probabilities(TOKENS, start, np.full(12, 0.1), answer=answer)
