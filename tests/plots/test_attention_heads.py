import numpy as np
import pytest
from matplotlib import colormaps

from kerasformer.errors import KerasformerError
from kerasformer.plots import plot_attention_heads, save_figure
from tests.helpers.arrays import random_attention_weights
from tests.helpers.pictures import assert_not_blank, pixel_at, read_png

TOKENS = "time flies like an arrow".split()


def head_axes(figure) -> list:
    return [ax for ax in figure.axes if ax.get_title().startswith("head")]


def assert_one_colour_scale(pixels, axes, weights) -> None:
    """Each head's weights drawn in viridis, from the least weight of all heads to the most."""
    for ax, head in zip(axes, weights, strict=True):
        for (query, key), weight in np.ndenumerate(head):
            share = (weight - weights.min()) / (weights.max() - weights.min())
            expected = colormaps["viridis"](share)[:3]
            np.testing.assert_allclose(pixel_at(pixels, ax, key, query), expected, atol=4 / 255)


def test_every_head_is_drawn_on_one_colour_scale_from_the_least_to_the_most(tmp_path):
    weights = random_attention_weights((3, len(TOKENS), len(TOKENS)))
    figure = plot_attention_heads(TOKENS, weights, title="block 1", columns=2)
    pixels = read_png(save_figure(figure, tmp_path / "attention.png"))
    assert_not_blank(pixels)
    axes = head_axes(figure)
    assert [ax.get_title() for ax in axes] == ["head 1", "head 2", "head 3"]
    for ax in axes:
        assert [label.get_text() for label in ax.get_xticklabels()] == TOKENS
    assert_one_colour_scale(pixels, axes, weights)


def test_long_texts_keep_the_heatmap_but_drop_the_labels():
    tokens = [f"w{i}" for i in range(60)]
    weights = np.full((2, 60, 60), 1 / 60)
    figure = plot_attention_heads(tokens, weights)
    assert all(not ax.get_xticks().size for ax in figure.axes if ax.get_title())


def test_weights_that_do_not_fit_the_tokens_are_a_clear_error():
    with pytest.raises(KerasformerError, match=r"shape \(heads, 5, 5\)"):
        plot_attention_heads(TOKENS, np.ones((2, 4, 4)))
    with pytest.raises(KerasformerError, match=r"shape \(heads, 5, 5\)"):
        plot_attention_heads(TOKENS, np.ones((5, 5)))


def test_nearly_uniform_attention_still_shows_its_pattern(tmp_path):
    weights = np.full((1, 5, 5), 0.2)
    weights[0, :, 0] += 0.002
    weights[0, :, 1:] -= 0.0005
    figure = plot_attention_heads(TOKENS, weights)
    pixels = read_png(save_figure(figure, tmp_path / "attention.png"))
    (ax,) = [ax for ax in figure.axes if ax.get_title() == "head 1"]
    first, other = pixel_at(pixels, ax, 0, 2), pixel_at(pixels, ax, 3, 2)
    np.testing.assert_allclose(first, colormaps["viridis"](1.0)[:3], atol=4 / 255)
    np.testing.assert_allclose(other, colormaps["viridis"](0.0)[:3], atol=4 / 255)


SOURCE = "the cat sat on the mat".split()
TARGET = "el gato se sentó".split()


def test_cross_attention_puts_target_tokens_down_and_source_tokens_across(tmp_path):
    weights = random_attention_weights((2, len(TARGET), len(SOURCE)))
    figure = plot_attention_heads(TARGET, weights, key_tokens=SOURCE)
    pixels = read_png(save_figure(figure, tmp_path / "cross_attention.png"))
    axes = head_axes(figure)
    assert len(axes) == 2
    for ax in axes:
        assert [label.get_text() for label in ax.get_xticklabels()] == SOURCE
        assert [label.get_text() for label in ax.get_yticklabels()] == TARGET
        (image,) = ax.get_images()
        assert image.get_array().shape == (len(TARGET), len(SOURCE))
    assert_one_colour_scale(pixels, axes, weights)


def test_cross_attention_drops_only_the_labels_of_the_long_side():
    source = [f"w{i}" for i in range(60)]
    weights = np.full((1, len(TARGET), 60), 1 / 60)
    figure = plot_attention_heads(TARGET, weights, key_tokens=source)
    (ax,) = [ax for ax in figure.axes if ax.get_title() == "head 1"]
    assert not ax.get_xticks().size
    assert [label.get_text() for label in ax.get_yticklabels()] == TARGET


def test_cross_attention_weights_that_do_not_fit_the_tokens_are_a_clear_error():
    weights = random_attention_weights((2, len(TARGET), len(SOURCE)))
    with pytest.raises(KerasformerError, match=r"shape \(heads, 6, 4\) for 6 query and 4 key"):
        plot_attention_heads(SOURCE, weights, key_tokens=TARGET)
    with pytest.raises(KerasformerError, match=r"shape \(heads, 4, 4\) for 4 tokens"):
        plot_attention_heads(TARGET, weights)
    with pytest.raises(KerasformerError, match=r"shape \(heads, 4, 6\)"):
        plot_attention_heads(TARGET, weights[0], key_tokens=SOURCE)
