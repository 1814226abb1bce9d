"""A user's table: CSV/TSV by its header, JSON Lines by its keys, each row with its place."""

import pytest

from kerasformer.errors import KerasformerError
from kerasformer.files.tables import read_table


def write(path, text: str, encoding="utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("t.csv", 'body,topic\n"Cheap flights, now",travel\nGoal!,sport\n'),
        ("t.tsv", "body\ttopic\nCheap flights, now\ttravel\nGoal!\tsport\n"),
        ("t.txt", "body;topic\nCheap flights, now;travel\nGoal!;sport\n"),
    ],
)
def test_the_delimiter_is_sniffed_from_the_header(tmp_path, name, text):
    table = read_table(write(tmp_path / name, text))
    assert table.columns == ("body", "topic")
    assert [row.values for row in table.rows] == [
        {"body": "Cheap flights, now", "topic": "travel"},
        {"body": "Goal!", "topic": "sport"},
    ]
    assert [row.where for row in table.rows] == [f"{tmp_path / name}:2", f"{tmp_path / name}:3"]


def test_a_named_delimiter_wins_and_a_quoted_line_break_keeps_the_row_place(tmp_path):
    path = write(tmp_path / "t.csv", 'a|b\n"one\ntwo"|x\nthree|y\n')
    table = read_table(path, delimiter="|")
    assert [row.values["a"] for row in table.rows] == ["one\ntwo", "three"]
    assert [row.where for row in table.rows] == [f"{path}:2", f"{path}:4"]


def test_columns_by_name_index_or_list(tmp_path):
    table = read_table(write(tmp_path / "t.csv", "label,title,description\n1,a,b\n"))
    assert table.column_names("title,description", "--text-column") == ["title", "description"]
    assert table.column_names("1,2", "--text-column") == ["title", "description"]
    assert table.column_names(0, "--label-column") == ["label"]
    with pytest.raises(KerasformerError, match=r"no column 'body' \(--text-column\).*'label'"):
        table.column_names("body", "--text-column")
    with pytest.raises(KerasformerError, match="no column '3'"):
        table.column_names("3", "--text-column")


def test_json_lines_keep_value_types_and_every_key(tmp_path):
    path = write(tmp_path / "t.jsonl", '{"text": "a", "label": 3}\n\n{"text": "b", "x": null}\n')
    table = read_table(path)
    assert table.columns == ("text", "label", "x")
    assert [row.values for row in table.rows] == [
        {"text": "a", "label": 3},
        {"text": "b", "x": None},
    ]
    assert [row.where for row in table.rows] == [f"{path}:1", f"{path}:3"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("t.csv", "a,b\n1,2\n3\n", r"t.csv:3: 1 fields, but the header has 2 \(a, b\)"),
        ("t.csv", 'a,b\n"open,2\n3,4\n', r"t.csv:2: bad quote"),
        ("t.csv", "a,a\n1,2\n", r"t.csv:1: the header names 'a' more than once"),
        ("t.csv", "", r"t.csv is empty"),
        ("t.jsonl", '{"a": 1}\n[1, 2]\n', r"t.jsonl:2: a JSON list, not an object"),
        ("t.jsonl", '{"a": 1}\n{"a": \n', r"t.jsonl:2: not JSON"),
        ("t.jsonl", "\n\n", r"t.jsonl is empty"),
    ],
)
def test_bad_tables_are_refused_at_their_line(tmp_path, name, text, message):
    with pytest.raises(KerasformerError, match=message):
        read_table(write(tmp_path / name, text))


def test_a_file_that_is_not_utf8_is_refused_at_its_line(tmp_path):
    path = write(tmp_path / "t.csv", "body,topic\ncafé,food\n", encoding="latin-1")
    with pytest.raises(KerasformerError, match=r"t.csv:2: not UTF-8 \(byte 0xe9\)"):
        read_table(path)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(KerasformerError, match="is not a file"):
        read_table(tmp_path / "missing.csv")


@pytest.mark.parametrize(
    ("name", "text", "columns"),
    [
        # a quoted header cell holding commas: the quotes are respected
        ("q.csv", '"A, b";label\n"Good, fast";pos\n', ("A, b", "label")),
        # one comma against one tab in a .tsv: tab wins the tie
        ("tie.tsv", "title, body\tlabel\nhello, world\tpos\n", ("title, body", "label")),
        # Excel's "CSV (Macintosh)": lines end in a bare carriage return
        ("mac.csv", 'text;label\r"a, b, c";pos\r', ("text", "label")),
    ],
)  # fmt: skip
def test_sniffing_respects_quotes_ties_and_bare_carriage_returns(tmp_path, name, text, columns):
    table = read_table(write(tmp_path / name, text))
    assert table.columns == columns
    assert len(table.rows) == 1 and table.rows[0].values[columns[1]] == "pos"


@pytest.mark.parametrize("named", ["\\t", "tab", "\t"])
def test_a_tab_may_be_named_as_typed(tmp_path, named):
    table = read_table(write(tmp_path / "t.txt", "a\tb,c\n1\t2,3\n"), delimiter=named)
    assert table.columns == ("a", "b,c")


def test_a_header_without_rows_is_refused(tmp_path):
    with pytest.raises(KerasformerError, match="t.csv has a header but no rows"):
        read_table(write(tmp_path / "t.csv", "text,label\n"))


def test_json_strings_may_hold_line_and_paragraph_separators(tmp_path):
    path = write(tmp_path / "t.jsonl", '{"text": "one\u2028two\u0085three"}\r\n{"text": "b"}\n')
    table = read_table(path)
    assert [row.values["text"] for row in table.rows] == ["one\u2028two\u0085three", "b"]
    assert [row.where for row in table.rows] == [f"{path}:1", f"{path}:2"]


def test_a_field_longer_than_pythons_csv_limit_is_read_whole(tmp_path):
    """One long document (200,000 characters) is no broken quote; Python's csv module
    refuses fields over 128 KiB unless told otherwise, and is left as it was."""
    import csv

    document = "word " * 40_000
    path = tmp_path / "long.csv"
    path.write_text(f'text,label\n"{document}",sport\nshort,news\n', "utf-8")
    limit = csv.field_size_limit()
    table = read_table(path)
    assert [row.values["text"] for row in table.rows] == [document, "short"]
    assert csv.field_size_limit() == limit


def test_a_delimiter_that_leaves_the_header_one_column_is_named(tmp_path):
    path = tmp_path / "comma.csv"
    path.write_text('text,label\n"a; b",sport\nshort,news\n', "utf-8")
    with pytest.raises(KerasformerError) as caught:
        read_table(path, ";")
    assert str(caught.value) == (
        f"{path}: its header reads as one column ('text,label') with the delimiter ';', and "
        "as 2 with ','; pass --delimiter ',', or leave it out to have it found."
    )
