"""The input contract of every command that reads text: arguments, stdin, a file; records out.

Inputs come from the command's arguments, where ``-`` (at most once) stands for the
lines of standard input, and from ``--input-file FILE``, one input a line, in that order.
Each input gets exactly one record, in input order: with ``--json`` one JSON line
whose ``"status"`` is ``"ok"``, ``"warning"`` or ``"error"`` (with a ``"message"``),
otherwise the command's own lines. An input that fails gets its own error record, also
one line on standard error, and the others go on.

Exit status: 0 every input answered (warnings allowed); 1 some inputs failed; 2 nothing
was read (bad arguments, model or standard input).
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kerasformer.errors import KerasformerError

STDIN = "-"
EXIT_STATUS = """\
exit status: 0 every input answered (warnings allowed); 1 some inputs failed; 2 nothing
was read (bad arguments, model or standard input)."""


@dataclass(frozen=True)
class InputText:
    """One input as read: where it came from, its text, and why it cannot be used."""

    where: str  # "text argument 2", "line 5 of standard input", "line 3 of notes.txt"
    text: str  # for display when `problem` is set (undecodable bytes shown as \\xNN)
    problem: str | None = None


def add_input_arguments(parser: argparse.ArgumentParser, metavar: str, noun: str) -> None:
    """TEXT arguments (``-`` for stdin), ``--input-file`` and ``--json``."""
    parser.add_argument(
        "texts", metavar=metavar, nargs="*",
        help=f"a {noun}, or '{STDIN}' for one {noun} per line of standard input",
    )  # fmt: skip
    parser.add_argument(
        "--input-file", type=Path, metavar="FILE", help=f"read one {noun} per line of FILE (UTF-8)"
    )
    add_json_argument(parser)


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON record per input instead of text"
    )


def read_inputs(
    arguments: Sequence[str], input_file: Path | None = None, noun: str = "text"
) -> list[InputText]:
    """Every input in order: the arguments with stdin's lines where '-' stands, then the file's.

    ``noun`` names an argument in messages: "text argument 2".
    """
    if list(arguments).count(STDIN) > 1:
        raise KerasformerError(
            f"'{STDIN}' is given {list(arguments).count(STDIN)} times, but standard input can "
            f"be read only once; give '{STDIN}' once, where its lines belong among the inputs."
        )
    inputs = []
    for position, argument in enumerate(arguments, start=1):
        if argument == STDIN:
            inputs += read_stdin_lines()
        else:
            # Python keeps undecodable bytes of argv as surrogate escapes; fsencode gives
            # the original bytes back, so arguments are checked like stdin lines.
            inputs.append(decode(os.fsencode(argument), f"{noun} argument {position}"))
    if input_file is not None:
        inputs += read_file_lines(input_file)
    if not inputs:
        raise KerasformerError(
            f"nothing to read: give the inputs as arguments, '{STDIN}' for standard input, "
            "or --input-file FILE."
        )
    return inputs


def read_stdin_lines() -> list[InputText]:
    lines = split_lines(read_stdin_bytes())
    if not lines:
        raise KerasformerError(
            f"'{STDIN}' reads inputs from standard input, but it was empty; pipe one input "
            f"per line into it, or drop '{STDIN}'."
        )
    return [
        decode(line, f"line {number} of standard input")
        for number, line in enumerate(lines, start=1)
    ]


def read_file_lines(path: Path) -> list[InputText]:
    if not path.is_file():
        raise KerasformerError(f"--input-file {path} is not a file; give a UTF-8 text file.")
    lines = split_lines(path.read_bytes())
    if not lines:
        raise KerasformerError(f"--input-file {path} is empty; give one input per line.")
    return [decode(line, f"line {number} of {path}") for number, line in enumerate(lines, start=1)]


def read_file_text(path: Path, flag: str) -> InputText:
    """A whole UTF-8 file as one input (a leading byte order mark dropped)."""
    if not path.is_file():
        raise KerasformerError(f"{flag} {path} does not exist; give a UTF-8 text file.")
    where = f"{flag} {path}"
    given = decode(path.read_bytes().removeprefix(codecs.BOM_UTF8), where)
    if given.problem is None and "\x00" in given.text:
        return InputText(where, given.text, f"{where} holds a NUL byte; save it as UTF-8 text")
    return given


def read_stdin_bytes() -> bytes:
    # Bytes, so that one badly encoded line is reported alone instead of ending the read.
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # replaced by a text stream, e.g. in a notebook
        return sys.stdin.read().encode("utf-8", "surrogateescape")
    return stream.read()


def split_lines(data: bytes) -> list[bytes]:
    """One entry per line, blank lines kept; a final newline ends a line, not a new one."""
    if not data:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return [line.removesuffix(b"\r") for line in lines]


def decode(raw: bytes, where: str) -> InputText:
    try:
        return InputText(where, raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        return InputText(
            where,
            raw.decode("utf-8", "backslashreplace"),
            f"{where} is not valid UTF-8 (byte 0x{raw[error.start]:02x} at position "
            f"{error.start}); save the text as UTF-8",
        )


def with_problems(inputs: list[InputText], problem: Callable[[str], str | None]) -> list[InputText]:
    """The inputs, each that ``problem`` refuses marked with its reason (naming where it is)."""
    checked = []
    for item in inputs:
        reason = None if item.problem else problem(item.text)
        checked.append(item if reason is None else InputText(item.where, item.text,
                                                             f"{item.where} {reason}"))  # fmt: skip
    return checked


def records_for(inputs: list[InputText], answer: Callable[[list[str]], list[dict]]) -> list[dict]:
    """One record per input: ``answer`` on every usable text at once, errors for the rest."""
    usable = [item.text for item in inputs if item.problem is None]
    answered = iter(answer(usable) if usable else [])
    records = []
    for number, item in enumerate(inputs, start=1):
        record = {"input": number, "text": item.text}
        if item.problem is not None:
            record.update(status="error", message=item.problem)
        else:
            record.update({"status": "ok"} | next(answered))
        records.append(record)
    return records


def unknown_words_warning(fields: dict, known_words: int, what: str) -> dict:
    """``fields`` as a warning record when the model knew none of the input's words."""
    if known_words:
        return {"status": "ok", **fields}
    message = (
        "no word the model knows (only words outside its vocabulary), so its "
        f"{what} is a guess; give text in the language the model was trained on"
    )
    return {"status": "warning", "message": message, **fields}


def print_records(
    inputs: list[InputText],
    records: list[dict],
    as_json: bool,
    as_text: Callable[[dict], str],
) -> int:
    """Print each record (JSON or ``as_text``), its problem on stderr; the exit status."""
    for item, record in zip(inputs, records, strict=True):
        print(json.dumps(record, ensure_ascii=False) if as_json else as_text(record), flush=True)
        report_problem(item, record)
    return 1 if any(record["status"] == "error" for record in records) else 0


def report_problem(item: InputText, record: dict) -> None:
    if record["status"] == "error":
        print(f"kerasformer: error: {record['message']}.", file=sys.stderr)
    elif record["status"] == "warning":
        print(f"kerasformer: warning: {item.where} has {record['message']}.", file=sys.stderr)
