import pytest
from matplotlib.figure import Figure

from kerasformer.errors import KerasformerError
from kerasformer.plots import save_figure
from kerasformer.plots.figures import DPI
from tests.helpers.pictures import read_png


def test_save_figure_writes_a_png_of_the_figure_size_and_adds_the_suffix(tmp_path):
    figure = Figure(figsize=(4, 3))
    figure.subplots().plot([0, 1], [1, 0])
    path = save_figure(figure, tmp_path / "nested" / "picture")
    assert path == tmp_path / "nested" / "picture.png"
    assert read_png(path).shape == (3 * DPI, 4 * DPI, 3)


def test_an_unknown_format_is_a_one_line_error(tmp_path):
    with pytest.raises(KerasformerError, match=r"unknown format 'xyz'.*end the name with \.png"):
        save_figure(Figure(), tmp_path / "picture.xyz")
    assert not (tmp_path / "picture.xyz").exists()
