import socket

import numpy as np
import pytest

from kerasformer.datasets import ag_news, load_ag_news, load_dataset
from kerasformer.errors import KerasformerError
from tests.conftest import synthetic_rows, write_ag_csv


def test_reads_original_csv_layout_with_and_without_header(tmp_path):
    write_ag_csv(tmp_path / "train.csv", synthetic_rows(40, seed=0), header=False)
    write_ag_csv(tmp_path / "test.csv", synthetic_rows(12, seed=1), header=True)
    data = load_ag_news(tmp_path, validation_fraction=0.25)
    assert data.class_names == ("World", "Sports", "Business", "Sci/Tech")
    assert data.sizes() == {"train": 30, "validation": 10, "test": 12}
    # Class index 1..4 becomes label 0..3, in file order for the test split.
    assert data.splits["test"].labels.tolist() == [0, 1, 2, 3] * 3
    first = synthetic_rows(12, seed=1)[0]
    assert data.splits["test"].texts[0] == f"{first[1]} {first[2]}"


def test_backslash_line_breaks_become_spaces_and_classes_txt_is_used(tmp_path):
    write_ag_csv(
        tmp_path / "train.csv",
        [("1", f"Bears Claw {i}", "Short-sellers, Wall Street's dwindling\\band") for i in range(4)]
        + [("2", f"b {i}", "c") for i in range(4)],
    )
    write_ag_csv(tmp_path / "test.csv", [("2", "x", "y")])
    (tmp_path / "classes.txt").write_text("Red\nBlue\n")
    data = load_ag_news(tmp_path, validation_fraction=0.25)
    assert data.class_names == ("Red", "Blue")
    assert "Short-sellers, Wall Street's dwindling band" in "".join(data.splits["train"].texts)


@pytest.mark.parametrize(
    "row, message",
    [
        (["1", "only two fields"], "expected 3 fields"),
        (["9", "title", "text"], "class index must be a number from 1 to 4, got '9'"),
        (["x", "title", "text"], "class index must be a number from 1 to 4, got 'x'"),
    ],
)
def test_malformed_row_names_file_and_line(tmp_path, row, message):
    rows = synthetic_rows(3, seed=0)
    with (tmp_path / "train.csv").open("w") as handle:
        handle.write("".join(f'"{a}","{b}","{c}"\n' for a, b, c in rows))
        handle.write(",".join(f'"{field}"' for field in row) + "\n")
    write_ag_csv(tmp_path / "test.csv", rows)
    with pytest.raises(KerasformerError, match=rf"train.csv:4: {message}"):
        load_ag_news(tmp_path)


def test_missing_folder_or_file_is_a_clear_error(tmp_path):
    with pytest.raises(KerasformerError, match="does not exist; pass --data-dir"):
        load_ag_news(tmp_path / "missing")
    write_ag_csv(tmp_path / "train.csv", synthetic_rows(8, seed=0))
    with pytest.raises(KerasformerError, match="test.csv is missing"):
        load_ag_news(tmp_path)


def test_shared_copy_matches_its_readme():
    from pathlib import Path

    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "ag_news_csv"
    if not shared.is_dir():
        pytest.fail(f"{shared} is missing: CI runs with shared/ beside the checkout")
    data = load_dataset("ag_news", shared)
    assert len(data.splits["test"]) == 7600
    assert np.bincount(data.splits["test"].labels).tolist() == [1900] * 4
    assert len(data.splits["train"]) + len(data.splits["validation"]) == 5534


class FakeBuilder:
    def __init__(self, prepared):
        self._prepared = prepared

    def is_prepared(self):
        return self._prepared


def fake_tfds(monkeypatch, prepared: bool, splits=None, error=None):
    import tensorflow_datasets as tfds

    def fake_load(name, data_dir=None, batch_size=None):
        assert name == "ag_news_subset" and batch_size == -1
        if error:
            raise error
        return splits

    monkeypatch.setattr(tfds, "builder", lambda name, data_dir=None: FakeBuilder(prepared))
    monkeypatch.setattr(tfds, "load", fake_load)
    monkeypatch.setattr(tfds, "as_numpy", lambda x: x)


def tfds_split(labels):
    return {
        "title": np.array([f"Title {i}".encode() for i in range(len(labels))]),
        "description": np.array([b"some\\description"] * len(labels)),
        "label": np.array(labels),
    }


def test_tfds_examples_become_title_plus_description(monkeypatch):
    splits = {"train": tfds_split([0, 1, 2, 3] * 5), "test": tfds_split([3, 2])}
    fake_tfds(monkeypatch, prepared=True, splits=splits)
    data = load_ag_news(validation_fraction=0.2)
    assert data.class_names == ("World", "Sports", "Business", "Sci/Tech")
    assert data.splits["test"].texts.tolist() == [
        "Title 0 some description",
        "Title 1 some description",
    ]
    assert data.splits["test"].labels.tolist() == [3, 2]
    assert data.sizes() == {"train": 16, "validation": 4, "test": 2}


def test_unreachable_download_fails_fast_with_the_fix(monkeypatch):
    fake_tfds(monkeypatch, prepared=False, error=AssertionError("must not try to download"))
    monkeypatch.setattr(ag_news, "download_url_of", lambda builder: "https://downloads.invalid/x")

    def refuse(address, timeout):
        raise OSError("Name or service not known")

    monkeypatch.setattr(socket, "create_connection", refuse)  # as kerasformer.network sees it
    with pytest.raises(KerasformerError, match="downloads.invalid is unreachable.*pass --data-dir"):
        load_ag_news()


def test_tfds_failure_is_one_line_with_the_fix(monkeypatch):
    fake_tfds(monkeypatch, prepared=True, error=RuntimeError("checksum mismatch\nmore detail"))
    with pytest.raises(KerasformerError) as caught:
        load_ag_news()
    assert "\n" not in str(caught.value)
    assert "RuntimeError: checksum mismatch" in str(caught.value)


def test_real_builder_names_a_download_url():
    import tensorflow_datasets as tfds

    builder = tfds.builder("ag_news_subset", data_dir=None)
    url = ag_news.download_url_of(builder)
    assert url and url.startswith("https://")
