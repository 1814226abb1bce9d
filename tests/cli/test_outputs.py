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
    assert json.loads(metrics.read_text()) == {"generator": "kerasformer", "accuracy": 0.75}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "m.json"]  # no partials


@pytest.mark.parametrize(
    "name, mine",
    [
        ("settings.json", '{"learning_rate": 0.001, "notes": "my own settings"}'),
        ("page.html", "<!DOCTYPE html>\n<html><head><title>Mine</title></head></html>\n"),
    ],
)
def test_a_json_or_html_file_of_the_users_own_is_kept_unless_overwrite(tmp_path, name, mine):
    """JSON and HTML are the kinds a user writes by hand too: only what kerasformer
    wrote (its generator mark) is replaced without --overwrite."""
    path = tmp_path / name
    path.write_text(mine)
    with pytest.raises(KerasformerError, match="exists and is not an? .* written by kerasformer"):
        require_output_file(path, "--output", overwrite=False)
    assert path.read_text() == mine


def test_an_attention_page_is_known_as_kerasformers_own(tmp_path):
    from collections import namedtuple

    import numpy as np

    from kerasformer.plots import attention_html

    Map = namedtuple("Map", "name query_tokens key_tokens weights")
    maps = [Map("self", ["a", "b"], ["a", "b"], np.full((1, 1, 2, 2), 0.5))]
    page = tmp_path / "attention.html"
    page.write_text(attention_html(maps, title="two words"), "utf-8")
    assert require_output_file(page, "--html", overwrite=False) == page


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


def test_an_output_in_a_folder_that_cannot_be_written_is_refused_before_any_work(
    tmp_path, monkeypatch
):
    """Refused with the other checks, so a command writes none of its outputs (attention
    once wrote its PNG, then failed on --html). Simulated: tests run as root, whom a
    folder's mode does not stop."""
    import os

    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: p != locked and real_access(p, mode))
    with pytest.raises(KerasformerError) as refused:
        require_output_file(locked / "sub" / "page.html", "--html", overwrite=False)
    assert str(refused.value) == (
        f"cannot write --html {locked / 'sub' / 'page.html'}: the folder {locked} is not "
        "writable; choose a folder you can write to."
    )
    require_output_file(tmp_path / "page.html", "--html", overwrite=False)  # elsewhere: fine


def test_a_refused_write_names_the_output_not_its_partial_file(tmp_path):
    """The file system's refusal (a read-only folder, a full disk) names the file asked
    for; the partial file kerasformer writes first is never mentioned, nor left behind."""
    from kerasformer.files.whole_file import write_whole_file

    def refuse(partial):
        partial.write_text("half")
        raise PermissionError(13, "Permission denied", str(partial))

    with pytest.raises(KerasformerError) as refused:
        write_whole_file(tmp_path / "model.vocab.txt", refuse)
    assert str(refused.value) == (
        f"cannot write {tmp_path / 'model.vocab.txt'} (Permission denied); choose a folder "
        "you can write to, with room for it."
    )
    assert list(tmp_path.iterdir()) == []
