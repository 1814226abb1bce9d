"""What kind of output a directory holds, and the one-line refusal of the wrong kind.

Every directory kerasformer writes names its kind in ``kerasformer.json``; directories
written before the marker existed are recognised by the files only their kind has.
A command given another kind of export says what it was given and which command
reads it (``exp/tr is a translator; use kerasformer translate``) instead of failing on
a file that kind never has.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kerasformer.errors import KerasformerError

MARKER_FILE = "kerasformer.json"


@dataclass(frozen=True)
class ExportKind:
    """One kind of output: its name in ``kerasformer.json``, in words, and its readers."""

    name: str
    noun: str  # "a translator"
    used_by: str  # what to do with it instead, after "use"
    made_by: str  # the command that writes it

    @property
    def bare_noun(self) -> str:
        """The noun without its article: "translator"."""
        return self.noun.split(" ", 1)[1]


CLASSIFIER = ExportKind(
    "classifier", "a classifier", "kerasformer predict, evaluate or attention", "kerasformer train"
)
TRANSLATOR = ExportKind(
    "translator", "a translator", "kerasformer translate", "kerasformer train --task translation"
)
LANGUAGE_MODEL = ExportKind(
    "language-model", "a language model", "kerasformer generate",
    "kerasformer train --task language-model",
)  # fmt: skip
QUESTION_ANSWERER = ExportKind(
    "question answerer", "a question answerer", "kerasformer answer",
    "kerasformer train --task question-answering",
)  # fmt: skip
BERT_CONVERSION = ExportKind(
    "bert-conversion",
    "a BERT conversion (a preprocess model and an encoder)",
    "its preprocess/ and encoder/ as --preprocess and --encoder of kerasformer train --model bert",
    "kerasformer convert-bert",
)
BERT_PART = ExportKind(
    "bert-part",
    "one part of a BERT conversion",
    "it as --preprocess or --encoder of kerasformer train --model bert",
    "kerasformer convert-bert",
)
KINDS = {kind.name: kind for kind in (CLASSIFIER, TRANSLATOR, LANGUAGE_MODEL, QUESTION_ANSWERER,
                                      BERT_CONVERSION, BERT_PART)}  # fmt: skip

# Files only one kind holds, for directories written before kinds were recorded.
SETTINGS_FILES = {
    "translator.json": TRANSLATOR,
    "generator.json": LANGUAGE_MODEL,
    "question_answerer.json": QUESTION_ANSWERER,
}


def read_marker(directory: Path) -> dict | None:
    """The marker's contents, or None where there is no readable marker."""
    try:
        marker = json.loads((Path(directory) / MARKER_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def export_kind(directory: str | Path) -> ExportKind | None:
    """The kind of output ``directory`` holds, or None if kerasformer did not write it."""
    directory = Path(directory)
    if not directory.is_dir():
        return None
    marker = read_marker(directory)
    if marker is not None and marker.get("kind") in KINDS:
        return KINDS[marker["kind"]]
    for file_name, kind in SETTINGS_FILES.items():
        if (directory / file_name).is_file():
            return kind
    if (directory / "preprocess").is_dir() and (directory / "encoder").is_dir():
        return BERT_CONVERSION
    if directory.name in ("preprocess", "encoder") and export_kind(directory.parent) in (
        BERT_CONVERSION,
    ):
        return BERT_PART
    if (directory / "assets" / "class_names.txt").is_file():
        return CLASSIFIER
    return None


def require_export_kind(directory: str | Path, *accepted: ExportKind) -> None:
    """Refuse, in one line, an output of another kind than ``accepted``.

    Args:
        directory: What the user named.
        accepted: The kinds that fit.

    A directory of no known kind passes: the caller's own file checks say what is missing.
    """
    kind = export_kind(directory)
    if kind is None or kind in accepted:
        return
    wanted = " or ".join(dict.fromkeys(kind.noun for kind in accepted))
    raise KerasformerError(f"{directory} is {kind.noun}, not {wanted}; use {kind.used_by}.")
