"""Output files of the commands (pictures, JSON, HTML): never replace what they did not write.

An option such as ``--out``, ``--plot`` or ``--output`` writes a file of one kind. An
existing file there is replaced only if it is of that same kind (a PNG by a PNG...) and,
for the kinds a user writes by hand too (JSON, HTML), only if kerasformer wrote it, as
its content says (`GENERATOR`), unless ``--overwrite`` says to replace whatever it is;
a directory or a symbolic link is never replaced. The file is written whole through a
rename, and one written inside a kerasformer export joins that export's manifest, so
that a later ``--overwrite`` of the export knows it.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.files.whole_file import write_whole_file as write_output

# Marks the JSON and HTML files kerasformer writes, which a user may also write by hand:
# a JSON object's "generator" key, an HTML page's <meta name="generator">.
GENERATOR = "kerasformer"
GENERATOR_META = f'<meta name="generator" content="{GENERATOR}">'
# What each kind of output file starts with, to recognise an earlier one of its kind.
SIGNATURES = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".pdf": (b"%PDF",),
    ".svg": (b"<?xml", b"<svg"),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".html": (b"<html", b"<!DOCTYPE html", b"<!doctype html"),
}


def add_overwrite_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace output files whatever they hold (by default only files of their kind)",
    )


def require_output_file(path: str | Path, flag: str, overwrite: bool) -> Path:
    """Refuse, before any work, an output path whose file must not be replaced."""
    path = Path(path)
    if path.is_symlink():
        raise KerasformerError(
            f"{flag} {path} is a symbolic link; name the file itself, or remove the link."
        )
    if path.is_dir():
        raise KerasformerError(f"{flag} {path} is a directory; name a file to write.")
    if path.exists() and not overwrite and not same_kind(path):
        raise KerasformerError(
            f"{flag} {path} exists and is not {kind_of(path)} written by kerasformer; "
            "choose another file, or pass --overwrite to replace it."
        )
    existing = next((p for p in path.absolute().parents if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise KerasformerError(f"cannot write {flag} {path}: {existing} is a file.")
    # Checked with the others, so no output is written before one that cannot be.
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise KerasformerError(
            f"cannot write {flag} {path}: the folder {existing} is not writable; choose "
            "a folder you can write to."
        )
    return path


def same_kind(path: Path) -> bool:
    suffix = path.suffix.lower()
    try:
        with path.open("rb") as handle:
            raw = handle.read(64)
    except OSError:
        return False
    if suffix == ".json":
        try:
            written = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return False
        return isinstance(written, dict) and written.get("generator") == GENERATOR
    if suffix in (".html", ".htm"):
        try:
            head = path.read_bytes()[:2048].decode("utf-8", "replace")
        except OSError:
            return False
        return GENERATOR_META in head
    if suffix == ".tflite":  # a flatbuffer: its identifier follows the root offset
        return raw[4:8] == b"TFL3"
    return raw.lstrip().startswith(SIGNATURES.get(suffix or ".png", ()))


def kind_of(path: Path) -> str:
    suffix = path.suffix.lower().lstrip(".") or "png"
    return {
        "json": "a JSON file",
        "html": "an HTML page",
        "htm": "an HTML page",
        "tflite": "a LiteRT model",
    }.get(suffix, f"a {suffix.upper()} picture")


def save_picture(figure, path: str | Path, flag: str, overwrite: bool) -> Path:
    """A matplotlib figure written to ``path`` (PNG unless its suffix names another format)."""
    from kerasformer.plots import save_figure

    path = Path(path)
    if not path.suffix:
        path = path.with_suffix(".png")
    require_output_file(path, flag, overwrite)
    return write_output(path, lambda partial: save_figure(figure, partial))


def save_json(payload: dict, path: str | Path, flag: str, overwrite: bool) -> Path:
    """``payload`` as a JSON object marked as kerasformer's (its ``generator`` key)."""
    path = require_output_file(path, flag, overwrite)
    text = json.dumps({"generator": GENERATOR, **payload}, indent=2) + "\n"
    return write_output(path, lambda partial: partial.write_text(text, encoding="utf-8"))
