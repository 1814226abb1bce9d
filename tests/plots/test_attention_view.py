import html
import json
import re
from dataclasses import dataclass

import numpy as np
import pytest
from plotly.offline import get_plotlyjs

from kerasformer.errors import KerasformerError
from kerasformer.plots import attention_figure, attention_html, plot_head_view, save_figure
from tests.helpers.arrays import random_attention_weights
from tests.helpers.pictures import assert_not_blank, read_png

SOURCE = "the cat sat on the mat".split()
TARGET = "el gato se <script> sentó".split()


@dataclass(frozen=True)
class Map:
    name: str
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    weights: np.ndarray


def maps() -> list[Map]:
    return [
        Map(
            "self-attention",
            tuple(SOURCE),
            tuple(SOURCE),
            random_attention_weights((2, 3, 6, 6), seed=1),
        ),
        Map(
            "cross-attention",
            tuple(TARGET),
            tuple(SOURCE),
            random_attention_weights((3, 2, 5, 6), seed=2),
        ),
    ]


# --- head view ---------------------------------------------------------------------------


def test_head_view_draws_one_line_per_pair_as_opaque_as_its_weight(tmp_path):
    weights = random_attention_weights((len(TARGET), len(SOURCE)), seed=0)
    weights[0, 0] = 1.0  # the extremes must map to opaque and invisible
    weights[0, 1] = 0.0
    figure = plot_head_view(TARGET, SOURCE, weights, title="head 1")
    assert_not_blank(read_png(save_figure(figure, tmp_path / "head_view.png")))
    left = next(ax for ax in figure.axes if ax.collections)
    (lines,) = left.collections
    segments, colours = lines.get_segments(), lines.get_colors()
    assert len(segments) == len(colours) == weights.size
    for (query, key), weight in np.ndenumerate(weights):
        index = query * len(SOURCE) + key
        np.testing.assert_allclose(segments[index], [[0, query], [1, key]])
        assert colours[index][3] == pytest.approx(weight)
    assert len({tuple(colour[:3]) for colour in colours}) == 1


def test_head_view_puts_queries_left_and_keys_right_in_order():
    figure = plot_head_view(
        TARGET, SOURCE, random_attention_weights((len(TARGET), len(SOURCE)), seed=0)
    )
    left, right = figure.axes
    assert [label.get_text() for label in left.get_yticklabels()] == TARGET
    assert [label.get_text() for label in right.get_yticklabels()] == SOURCE
    assert left.get_title(loc="left") == "query"
    assert left.get_title(loc="right") == "key"
    for ax in (left, right):  # the first token is at the top on both sides
        assert ax.transData.transform((0, 0))[1] > ax.transData.transform((0, 1))[1]
    # A label with two dollar signs is the token itself, not mathtext.
    figure = plot_head_view(["$5", "$x$"], ["a"], np.ones((2, 1)))
    figure.draw_without_rendering()
    labels = figure.axes[0].get_yticklabels()
    assert [label.get_text() for label in labels] == ["$5", "$x$"]
    assert not any(label.get_parse_math() for label in labels)


def test_head_view_separates_the_segments_of_a_sentence_pair():
    tokens = "[CLS] a b [SEP] c d [SEP]".split()
    weights = random_attention_weights((len(tokens), len(tokens)), seed=0)
    plain = plot_head_view(tokens, tokens, weights)
    assert all(not ax.get_yticks(minor=True).size for ax in plain.axes)
    paired = plot_head_view(tokens, tokens, weights, segment_start=4)
    for ax in paired.axes:
        np.testing.assert_allclose(ax.get_yticks(minor=True), [3.5])


def test_head_view_grows_with_the_tokens():
    short, long = (
        plot_head_view(tokens, tokens, np.eye(len(tokens)))
        for tokens in ([f"w{i}" for i in range(10)], [f"w{i}" for i in range(80)])
    )
    assert long.get_figheight() > 4 * short.get_figheight()


def test_head_view_rejects_weights_that_do_not_fit_with_a_one_line_error():
    cases = [
        (np.ones((len(SOURCE), len(TARGET))), r"shape \(query tokens, key tokens\) = \(5, 6\)"),
        (np.ones((1, len(TARGET), len(SOURCE))), r"shape .* = \(5, 6\)"),
        (np.full((len(TARGET), len(SOURCE)), 3.0), r"in \[0, 1\]"),
    ]
    for weights, message in cases:
        with pytest.raises(KerasformerError, match=message) as error:
            plot_head_view(TARGET, SOURCE, weights)
        assert "\n" not in str(error.value)
    with pytest.raises(KerasformerError, match="segment_start .* from 1 to 4"):
        plot_head_view(TARGET, SOURCE, np.ones((5, 6)) / 6, segment_start=5)


# --- interactive page --------------------------------------------------------------------


def figures_in(page: str) -> list[tuple[list, dict]]:
    """The data and layout of every plotly figure on the page, as plotly.js receives them."""
    decoder, figures = json.JSONDecoder(), []
    for match in re.finditer(r'Plotly\.newPlot\(\s*"[0-9a-f-]{36}",\s*', page):
        data, end = decoder.raw_decode(page, match.end())
        layout, _ = decoder.raw_decode(page, page.index("{", end))
        figures.append((data, layout))
    return figures


def test_the_page_is_offline_with_plotly_inlined_once_and_one_figure_a_map():
    page = attention_html(maps(), "attention")
    assert "<script src=" not in page.replace(" ", "")
    assert page.count(get_plotlyjs()[:2000]) == 1
    figures = figures_in(page)
    assert len(figures) == len(maps())
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert headings == [attention_map.name for attention_map in maps()]
    for (data, _), attention_map in zip(figures, maps(), strict=True):
        layers, heads = attention_map.weights.shape[:2]
        assert [trace["type"] for trace in data] == ["heatmap"] * (layers * heads)
        assert [trace["visible"] for trace in data].count(True) == 1
    assert page.index("<h2>self-attention") < page.index("<h2>cross-attention")


def test_each_trace_is_one_layer_and_head_on_a_fixed_scale():
    for attention_map in maps():
        figure = attention_figure(attention_map)
        layers, heads = attention_map.weights.shape[:2]
        pairs = [(layer, head) for layer in range(layers) for head in range(heads)]
        assert len(figure.data) == len(pairs)
        for trace, (layer, head) in zip(figure.data, pairs, strict=True):
            np.testing.assert_array_equal(trace.z, attention_map.weights[layer, head])
            assert (trace.zmin, trace.zmax) == (0, 1)
            assert trace.name == f"layer {layer + 1}, head {head + 1}"
        assert [trace.visible for trace in figure.data] == [True] + [False] * (len(pairs) - 1)


def test_the_layer_menu_and_head_slider_reach_every_layer_and_head():
    for attention_map in maps():
        figure = attention_figure(attention_map)
        layers, heads = attention_map.weights.shape[:2]
        shown = [trace.name for trace in figure.data]
        (menu,) = figure.layout.updatemenus
        assert [button.label for button in menu.buttons] == [
            f"layer {layer + 1}" for layer in range(layers)
        ]
        for layer, button in enumerate(menu.buttons):
            assert button.method == "update"
            data_update, layout_update = button.args
            assert visible_names(shown, data_update) == [f"layer {layer + 1}, head 1"]
            (slider,) = layout_update["sliders"]
            assert len(slider["steps"]) == heads
            for head, step in enumerate(slider["steps"]):
                assert step["method"] == "update"
                assert step["label"] == f"head {head + 1}"
                names = visible_names(shown, step["args"][0])
                assert names == [f"layer {layer + 1}, head {head + 1}"]
        # Before any choice, the slider is layer 1's.
        (slider,) = figure.layout.sliders
        assert [visible_names(shown, step.args[0]) for step in slider.steps] == [
            [f"layer 1, head {head + 1}"] for head in range(heads)
        ]


def visible_names(names: list[str], update: dict) -> list[str]:
    assert len(update["visible"]) == len(names)
    return [name for name, visible in zip(names, update["visible"], strict=True) if visible]


def test_repeated_tokens_keep_their_own_rows_and_columns():
    attention_map = maps()[0]  # "the" twice
    figure = attention_figure(attention_map)
    escaped = [html.escape(token) for token in SOURCE]
    for axis in (figure.layout.xaxis, figure.layout.yaxis):
        assert list(axis.ticktext) == escaped
        assert list(axis.tickvals) == list(range(len(SOURCE)))
    for trace in figure.data:
        assert list(trace.x) == list(range(len(SOURCE)))
        assert list(trace.y) == list(range(len(SOURCE)))


def test_tokens_and_titles_are_escaped():
    page = attention_html(maps(), "<script>alert(1)</script>")
    head = page[: page.index("<h2>")]
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>" in head
    assert "<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>" in head
    assert "alert(1)" not in page.replace("&lt;script&gt;alert(1)&lt;/script&gt;", "")
    figure = attention_figure(maps()[1])
    assert "&lt;script&gt;" in figure.layout.yaxis.ticktext
    assert "<script>" not in figure.layout.yaxis.ticktext
    assert all("<script>" not in cell for row in figure.data[0].text for cell in row)


def test_maps_that_do_not_fit_their_tokens_are_a_clear_error():
    bad = Map("cross-attention", tuple(TARGET), tuple(SOURCE), np.ones((2, 2, 6, 5)) / 5)
    with pytest.raises(KerasformerError, match=r"shape \(layers, heads, 5, 6\)") as error:
        attention_html([bad], "attention")
    assert "\n" not in str(error.value)
    with pytest.raises(KerasformerError, match=r"shape \(layers, heads, 5, 6\)"):
        attention_figure(Map("x", tuple(TARGET), tuple(SOURCE), np.ones((5, 6)) / 6))
    with pytest.raises(KerasformerError, match="no attention maps"):
        attention_html([], "attention")
