"""Rows of a user's table: a CSV or TSV file with a header, or JSON Lines of objects.

Every row keeps the file and line it came from (``reviews.csv:12``), so that whatever
is wrong with it later (a missing column, an empty text, an unknown label) is said in
one line that names the place and the fix.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.files.text_files import read_utf8_text

# Delimiters a table may use when none is named, in the order that breaks a tie; the
# header row decides.
SNIFFED_DELIMITERS = ",\t;|"
# How a delimiter may be named on a command line, where a tab is hard to type.
DELIMITER_NAMES = {"\\t": "\t", "tab": "\t"}
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson", ".json")


@dataclass(frozen=True)
class Row:
    """One row of a table: where it stands, and its value by column name."""

    where: str  # "path:line"
    values: dict


@dataclass(frozen=True)
class Table:
    """A file's column names (in order) and its rows."""

    path: Path
    columns: tuple[str, ...]
    rows: tuple[Row, ...]

    def column_names(self, spec: str | int | list, flag: str) -> list[str]:
        """The columns ``spec`` names: names or 0-based indices, one or a comma-separated list.

        Args:
            spec: ``"title,description"``, ``"1,2"``, ``2`` or ``["title", 2]``.
            flag: The option or argument that gave ``spec``, for the message.
        """
        parts = spec if isinstance(spec, list | tuple) else str(spec).split(",")
        names = [self.column_name(str(part).strip(), flag) for part in parts]
        if not names:
            raise KerasformerError(f"{flag} names no column; give a name or a 0-based index.")
        return names

    def column_name(self, part: str, flag: str) -> str:
        if part in self.columns:
            return part
        if part.isascii() and part.isdigit() and int(part) < len(self.columns):
            return self.columns[int(part)]
        raise KerasformerError(
            f"{self.path} has no column {part!r} ({flag}); its columns are "
            f"{', '.join(map(repr, self.columns))}: name one of them, or give its 0-based index."
        )


def read_table(path: str | Path, delimiter: str | None = None) -> Table:
    """The rows of a CSV/TSV file (by its header) or of a JSON Lines file (by its keys).

    Args:
        path: The file. ``.jsonl``, ``.ndjson`` and ``.json`` files are read as JSON
            Lines (one object per line); any other file as delimited text with a header.
        delimiter: The field separator of delimited text; by default it is sniffed from
            the header among comma, tab, semicolon and bar.

    Example:

    >>> table = read_table("reviews.csv")
    >>> table.columns
    ('body', 'topic')
    """
    path = Path(path)
    if not path.is_file():
        raise KerasformerError(f"{path} is not a file; give the path of a CSV, TSV or JSONL file.")
    if path.suffix.lower() in JSON_LINES_SUFFIXES:
        return read_json_lines(path)
    return read_delimited(path, delimiter)


def read_delimited(path: Path, delimiter: str | None = None) -> Table:
    text = read_utf8_text(path)
    delimiter = DELIMITER_NAMES.get(delimiter, delimiter) or sniff_delimiter(path, text)
    if len(delimiter) != 1:
        raise KerasformerError(f"a delimiter is one character (or tab), got {delimiter!r}.")
    records = records_of(path, text, delimiter)
    header = next(records, None)
    if header is None:
        raise KerasformerError(f"{path} is empty; give a header row, then one row per example.")
    columns = tuple(name.strip() for name in header[1])
    if len(columns) == 1:
        require_delimiter_splits_header(path, text, delimiter, columns[0])
    require_distinct_columns(path, columns)
    rows = []
    for line, fields in records:
        if not fields:
            continue  # a blank line between rows
        if len(fields) != len(columns):
            raise KerasformerError(
                f"{path}:{line}: {len(fields)} fields, but the header has {len(columns)} "
                f"({', '.join(columns)}); quote a field that holds the delimiter "
                f"{delimiter!r}, or name the file's own delimiter."
            )
        rows.append(Row(f"{path}:{line}", dict(zip(columns, fields, strict=True))))
    if not rows:
        raise KerasformerError(f"{path} has a header but no rows; give one row per example.")
    return Table(path, columns, tuple(rows))


def require_delimiter_splits_header(path: Path, text: str, delimiter: str, header: str) -> None:
    """A one-column header that another delimiter would split: the wrong delimiter."""
    likely = sniff_delimiter(path, text)
    if likely != delimiter and header_fields(header, likely) > 1:
        given, found = ("tab" if d == "\t" else d for d in (delimiter, likely))
        raise KerasformerError(
            f"{path}: its header reads as one column ({header[:60]!r}) with the delimiter "
            f"{given!r}, and as {header_fields(header, likely)} with {found!r}; pass "
            f"--delimiter {found!r}, or leave it out to have it found."
        )


@contextlib.contextmanager
def field_size_limit_at_least(size: int) -> Iterator[None]:
    """Python's csv module refuses a field over 128 KiB (``field_size_limit``), a limit
    meant for files streamed from who knows where; a file read whole needs none, and
    one long document is no broken quote."""
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, size))
    try:
        yield
    finally:
        csv.field_size_limit(limit)


def sniff_delimiter(path: Path, text: str) -> str:
    """The candidate that splits the header into the most fields, quotes respected.

    A tie (one column) goes to tab for a ``.tsv`` file and to comma otherwise.
    """
    header = re.split(r"\r\n|\r|\n", text, maxsplit=1)[0]
    preferred = "\t" if path.suffix.lower() == ".tsv" else ","
    candidates = sorted(SNIFFED_DELIMITERS, key=lambda delimiter: delimiter != preferred)
    return max(candidates, key=lambda delimiter: header_fields(header, delimiter))


def header_fields(header: str, delimiter: str) -> int:
    try:
        return len(next(csv.reader([header], delimiter=delimiter, strict=True), []))
    except csv.Error:
        return 0  # a quote this delimiter cannot explain


def records_of(path: Path, text: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Each record with the line it starts on; a broken quote is refused where it starts.

    Strict parsing: a lenient reader lets a never-closed quote swallow every later row
    into one field, silently.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    with field_size_limit_at_least(len(text) + 1):
        yield from numbered_records(path, reader)


def numbered_records(path: Path, reader) -> Iterator[tuple[int, list[str]]]:
    while True:
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise KerasformerError(
                f"{path}:{start}: bad quote in the record starting on this line ({error}); "
                'close every quoted field, and write a quote inside a field as two ("").'
            ) from error
        yield start, fields


def require_distinct_columns(path: Path, columns: tuple[str, ...]) -> None:
    repeated = sorted({name for name in columns if columns.count(name) > 1})
    if repeated:
        raise KerasformerError(
            f"{path}:1: the header names {', '.join(map(repr, repeated))} more than once; "
            "give every column a different name."
        )


def read_json_lines(path: Path) -> Table:
    rows, columns = [], {}
    # Lines end at "\n" only: JSON strings may hold U+2028 and U+0085 as they are.
    for line, raw in enumerate(read_utf8_text(path).split("\n"), start=1):
        raw = raw.removesuffix("\r")
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError as error:
            raise KerasformerError(
                f"{path}:{line}: not JSON ({error.msg} at column {error.colno}); give one "
                'JSON object per line, e.g. {"text": "...", "label": "..."}.'
            ) from None
        if not isinstance(value, dict):
            raise KerasformerError(
                f"{path}:{line}: a JSON {type(value).__name__}, not an object; give one "
                'JSON object per line, e.g. {"text": "...", "label": "..."}.'
            )
        columns.update(dict.fromkeys(value))
        rows.append(Row(f"{path}:{line}", value))
    if not rows:
        raise KerasformerError(f"{path} is empty; give one JSON object per line.")
    return Table(path, tuple(columns), tuple(rows))
