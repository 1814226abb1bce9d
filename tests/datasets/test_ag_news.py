import codecs
import re
from pathlib import Path

import numpy as np
import pytest

from kerasformer.datasets import ag_news, load_ag_news, load_dataset
from kerasformer.errors import KerasformerError
from tests.helpers.data import synthetic_rows, write_ag_csv
from tests.helpers.processes import run_commands, run_kerasformer


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


def test_unreachable_download_fails_fast_with_the_fix(monkeypatch, offline):
    fake_tfds(monkeypatch, prepared=False, error=AssertionError("must not try to download"))
    monkeypatch.setattr(ag_news, "download_url_of", lambda builder: "https://downloads.invalid/x")
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


# Issue 10: every bad training file gets one line naming the file, the line and the fix.

GOOD_ROWS = synthetic_rows(40, seed=0)  # lines 1-40, so a bad record starts on line 41


def quoted(rows) -> str:
    return "".join(f'"{label}","{title}","{text}"\n' for label, title, text in rows)


def unquoted(rows) -> str:
    return "".join(f"{label},{title},{text}\n" for label, title, text in rows)


BAD_FOLDERS = {
    "one class": (
        {"train.csv": quoted([("2", title, text) for _, title, text in GOOD_ROWS])},
        r"ag_news training data has 40 examples, all of class 'Sports'; "
        r"a classifier needs examples of at least two classes",
    ),
    "latin-1": (
        {"train.csv": quoted(GOOD_ROWS).encode() + '"1","Café","x"\n'.encode("latin-1")},
        r"train\.csv:41: not UTF-8 \(byte 0xe9\); save the file as UTF-8",
    ),
    "utf-16": (
        {"train.csv": quoted(GOOD_ROWS).encode("utf-16")},
        r"train\.csv:1: not UTF-8 \(byte 0xff\); save the file as UTF-8",
    ),
    "superscript label": (
        {"train.csv": quoted(GOOD_ROWS) + '"²","t","x"\n'},
        r"train\.csv:41: class index must be a number from 1 to 4, got '²'",
    ),
    "superscript label on line 1": (
        {"train.csv": '"²","t","x"\n' + quoted(GOOD_ROWS)},
        r"train\.csv:1: class index must be a number from 1 to 4, got '²'",
    ),
    "unclosed quote before quoted rows": (
        {"train.csv": quoted(GOOD_ROWS) + '"1","t","x\n' + quoted(synthetic_rows(20, seed=2))},
        r"train\.csv:41: bad quote in the record starting on this line",
    ),
    "unclosed quote before unquoted rows": (
        {"train.csv": quoted(GOOD_ROWS) + '"1","t","x\n' + unquoted(synthetic_rows(20, seed=2))},
        r"train\.csv:41: bad quote in the record starting on this line",
    ),
    "unclosed quote on the last line": (
        {"train.csv": quoted(GOOD_ROWS) + '"1","t","x\n'},
        r"train\.csv:41: bad quote in the record starting on this line",
    ),
    "NUL byte": (
        {"train.csv": quoted(GOOD_ROWS) + '"1","t\x00","x"\n'},
        r"train\.csv:41: contains a NUL byte, .*save the file as UTF-8",
    ),
    "empty file": (
        {"train.csv": ""},
        r"train\.csv has no rows; it needs rows of class index, title, description",
    ),
    "header only": (
        {"train.csv": '"Class Index","Title","Description"\n'},
        r"train\.csv has only a header line; it needs rows of class index, title, description",
    ),
    "classes.txt repeats a name": (
        {"train.csv": quoted(GOOD_ROWS), "classes.txt": "A\nB\nA\nC\n"},
        r"classes\.txt lists 'A' more than once; give every class a different name",
    ),
    "classes.txt in latin-1": (
        {"train.csv": quoted(GOOD_ROWS), "classes.txt": "Café\nB\nC\nD\n".encode("latin-1")},
        r"classes\.txt:1: not UTF-8 \(byte 0xe9\); save the file as UTF-8",
    ),
}


def write_bad_folder(root: Path, case: str) -> Path:
    files, _ = BAD_FOLDERS[case]
    root.mkdir(parents=True, exist_ok=True)
    write_ag_csv(root / "test.csv", synthetic_rows(12, seed=1), header=True)
    for name, content in files.items():
        if isinstance(content, str):
            content = content.encode()
        (root / name).write_bytes(content)
    return root


@pytest.mark.parametrize("case", BAD_FOLDERS)
def test_bad_training_folder_is_one_line_naming_the_problem(tmp_path, case):
    with pytest.raises(KerasformerError, match=BAD_FOLDERS[case][1]) as caught:
        load_ag_news(write_bad_folder(tmp_path, case))
    assert "\n" not in str(caught.value)


def test_byte_order_mark_keeps_the_first_row(tmp_path):
    (tmp_path / "train.csv").write_bytes(codecs.BOM_UTF8 + quoted(GOOD_ROWS).encode())
    (tmp_path / "classes.txt").write_bytes(codecs.BOM_UTF8 + b"Red\nBlue\nGreen\nGold\n")
    write_ag_csv(tmp_path / "test.csv", synthetic_rows(12, seed=1))
    data = load_ag_news(tmp_path, validation_fraction=0.25)
    texts = [*data.splits["train"].texts, *data.splits["validation"].texts]
    assert len(texts) == 40
    assert f"{GOOD_ROWS[0][1]} {GOOD_ROWS[0][2]}" in texts


def test_byte_order_mark_is_not_part_of_the_first_class_name(tmp_path):
    write_ag_csv(tmp_path / "train.csv", GOOD_ROWS)
    (tmp_path / "classes.txt").write_bytes(codecs.BOM_UTF8 + b"Red\nBlue\nGreen\nGold\n")
    write_ag_csv(tmp_path / "test.csv", synthetic_rows(12, seed=1))
    assert load_ag_news(tmp_path).class_names == ("Red", "Blue", "Green", "Gold")


def test_well_formed_quoting_is_still_read(tmp_path):
    # Strict parsing must keep what CSV allows: a field over two lines, a doubled quote.
    rows = '"1","Two ""quoted"" words","line one\nline two"\n' + quoted(GOOD_ROWS)
    (tmp_path / "train.csv").write_text(rows, encoding="utf-8")
    write_ag_csv(tmp_path / "test.csv", synthetic_rows(12, seed=1))
    data = load_ag_news(tmp_path, validation_fraction=0.25)
    texts = [*data.splits["train"].texts, *data.splits["validation"].texts]
    assert len(texts) == 41
    assert 'Two "quoted" words line one line two' in texts


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory) -> dict:
    """`kerasformer train` on every bad folder, in one interpreter: TensorFlow loads once."""
    root = tmp_path_factory.mktemp("bad_ag_news")
    folders = [write_bad_folder(root / f"case{i}", case) for i, case in enumerate(BAD_FOLDERS)]
    results = run_commands(
        *(["train", "--dataset", "ag_news", "--data-dir", folder, "--epochs", "1",
           "--maxlen", "16", "--vocab-size", "100", "--export-dir", folder / "export"]
          for folder in folders),
        timeout=600,
    )  # fmt: skip
    return dict(zip(BAD_FOLDERS, results, strict=True))


@pytest.mark.parametrize("case", BAD_FOLDERS)
def test_cli_refuses_bad_training_folder_in_one_line_before_training(cli_results, case):
    result = cli_results[case]
    assert result["code"] == 2, result["stderr"][-2000:]
    assert re.fullmatch(
        rf"kerasformer: error: [^\n]*{BAD_FOLDERS[case][1]}[^\n]*\n", result["stderr"]
    )
    assert result["stdout"] == ""  # nothing read, built or trained: no size line, no epochs


@pytest.mark.slow
def test_cli_entry_point_prints_one_line_for_a_latin_1_file(tmp_path):
    folder = write_bad_folder(tmp_path / "data", "latin-1")
    finished = run_kerasformer(
        "train", "--dataset", "ag_news", "--data-dir", str(folder), "--epochs", "1",
        "--export-dir", str(tmp_path / "export"),
    )  # fmt: skip
    assert finished.returncode == 2
    assert finished.stderr == (
        f"kerasformer: error: {folder / 'train.csv'}:41: not UTF-8 (byte 0xe9); save the file "
        "as UTF-8 text (e.g. from Latin-1 or Windows-1252).\n"
    )
    assert not (tmp_path / "export").exists()
