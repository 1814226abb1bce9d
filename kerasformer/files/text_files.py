"""Reading and writing the text files kerasformer reads and exports hold, refusing bad bytes."""

from __future__ import annotations

import json
from pathlib import Path

from kerasformer.errors import KerasformerError


def read_utf8_text(path: Path) -> str:
    """The file's text, refusing what would silently change it: a bad encoding, NUL bytes.

    A leading byte order mark (Excel writes one) is dropped, so the first row survives.
    """
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise KerasformerError(
            f"{path}:{line}: not UTF-8 (byte 0x{raw[error.start]:02x}); "
            "save the file as UTF-8 text (e.g. from Latin-1 or Windows-1252)."
        ) from error
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise KerasformerError(
            f"{path}:{line}: contains a NUL byte, which text never holds; "
            "save the file as UTF-8 text (not UTF-16 or a binary format)."
        )
    return text


def write_lines(path: Path, lines) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def write_settings(path: Path, settings: dict) -> None:
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def read_settings(directory: Path, file_name: str, kind: str, task: str) -> dict:
    """An export's settings file, or a one-line error saying which export was expected."""
    if not (directory / file_name).is_file():
        raise KerasformerError(
            f"{directory} is not an exported {kind} (no {file_name}); pass the "
            f"directory that `kerasformer train --task {task}` wrote."
        )
    return json.loads((directory / file_name).read_text(encoding="utf-8"))
