"""Output file options replace only files of their own kind, whole, and join the manifest."""

import json

import pytest
from matplotlib.figure import Figure

from kerasformer.cli.outputs import require_output_file, save_json, save_picture
from kerasformer.errors import KerasformerError
from kerasformer.files.staged_directory import MARKER_FILE, staged_directory


def figure() -> Figure:
    drawn = Figure()
    drawn.subplots().plot([0, 1], [1, 0])
    return drawn


@pytest.mark.parametrize("name", ["notes.png", "notes.json", "notes.html", "notes"])
def test_a_file_of_another_kind_is_kept_unless_overwrite(tmp_path, name):
    path = tmp_path / name
    path.write_text("my notes, not an output")
    with pytest.raises(KerasformerError, match=f"--out {path} exists and is not a"):
        require_output_file(path, "--out", overwrite=False)
    assert path.read_text() == "my notes, not an output"
    assert require_output_file(path, "--out", overwrite=True) == path


def test_an_output_of_its_own_kind_is_replaced(tmp_path):
    picture = save_picture(figure(), tmp_path / "a.png", "--out", overwrite=False)
    first = picture.read_bytes()
    assert first.startswith(b"\x89PNG")
    save_picture(figure(), picture, "--out", overwrite=False)
    metrics = save_json({"accuracy": 0.5}, tmp_path / "m.json", "--output", overwrite=False)
    save_json({"accuracy": 0.75}, metrics, "--output", overwrite=False)
    assert json.loads(metrics.read_text()) == {"accuracy": 0.75}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "m.json"]  # no partials


def test_links_and_directories_are_never_replaced(tmp_path):
    target = tmp_path / "target.png"
    save_picture(figure(), target, "--out", overwrite=False)
    (tmp_path / "link.png").symlink_to(target)
    with pytest.raises(KerasformerError, match="is a symbolic link"):
        require_output_file(tmp_path / "link.png", "--out", overwrite=True)
    with pytest.raises(KerasformerError, match="is a directory"):
        require_output_file(tmp_path, "--out", overwrite=True)


def test_a_file_written_inside_an_export_joins_its_manifest(tmp_path):
    with staged_directory(tmp_path / "export", kind="classifier") as staging:
        (staging / "model.keras").write_text("model")
    save_picture(figure(), tmp_path / "export" / "confusion.png", "--out", overwrite=False)
    marker = json.loads((tmp_path / "export" / MARKER_FILE).read_text())
    assert marker["files"] == ["confusion.png", "model.keras"]
