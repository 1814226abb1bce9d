"""What kerasformer wrote in a directory: its kind, its files, and the outputs around it.

Every directory kerasformer writes names its kind in ``kerasformer.json``; directories
written before the marker existed are recognised by the files only their kind has.
A command given another kind of export says what it was given and which command
reads it (``exp/tr is a translator; use kerasformer translate``) instead of failing on
a file that kind never has. The marker also lists the files written, so ``--overwrite``
can tell a file someone else put there (`require_whole_output`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from kerasformer.errors import KerasformerError

MARKER_FILE = "kerasformer.json"
MANIFEST_KEY = "files"
RUN_SUFFIX = ".training"  # kerasformer.training.run_directory keeps a run's backups there
# What exports and conversions held before the marker existed, so --overwrite still
# replaces them: a directory holding only these names, with the ones that must be there.
LEGACY_LAYOUTS = (
    (
        {"saved_model.pb", "model.keras"},
        {"saved_model.pb", "fingerprint.pb", "variables", "assets", "model.keras",
         "history.json", "history.png", "metrics.json", "keras_metadata.pb"},
    ),
    ({"preprocess", "encoder"}, {"preprocess", "encoder"}),
)  # fmt: skip


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
TAGGER = ExportKind("tagger", "a tagger", "kerasformer tag", "kerasformer train --task ner")
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
                                      TAGGER, BERT_CONVERSION, BERT_PART)}  # fmt: skip

# Files only one kind holds, for directories written before kinds were recorded.
SETTINGS_FILES = {
    "translator.json": TRANSLATOR,
    "generator.json": LANGUAGE_MODEL,
    "question_answerer.json": QUESTION_ANSWERER,
    "tagger.json": TAGGER,
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


def require_outside_other_outputs(destination: Path, flag: str) -> None:
    """Nothing is written inside an export, a conversion or a run directory.

    Replacing the outer one would delete the inner one, and its kind's commands would
    meet files they do not know.
    """
    for parent in Path(os.path.abspath(destination)).parents:
        if (parent / MARKER_FILE).is_file():
            kind = export_kind(parent)
            what = kind.noun if kind is not None else "an output"
            raise KerasformerError(
                f"{destination} is inside {parent}, which is {what} written by kerasformer; "
                f"choose a {flag} outside it."
            )
        if parent.name.endswith(RUN_SUFFIX) and (parent / "config.json").is_file():
            raise KerasformerError(
                f"{destination} is inside {parent}, the backups of a training run; choose a "
                f"{flag} outside it."
            )


def require_whole_output(destination: Path, flag: str, kind: str | None = None) -> None:
    """``destination`` is wholly kerasformer's, of ``kind``: replacing it loses nothing else."""
    if not written_by_kerasformer(destination):
        raise KerasformerError(
            f"--overwrite only replaces a directory that kerasformer wrote, and {destination} "
            f"is not one (no {MARKER_FILE}); choose another {flag} or empty it yourself."
        )
    existing = export_kind(destination)
    if kind is not None and existing is not None and existing.name != kind:
        raise KerasformerError(
            f"{destination} is {existing.noun}, and --overwrite replaces only "
            f"{KINDS[kind].noun if kind in KINDS else kind}; choose another {flag}."
        )
    foreign = first_foreign_file(destination)
    if foreign is not None:
        raise KerasformerError(
            f"{destination} holds {foreign}, which kerasformer did not write there, so "
            f"--overwrite would delete it; move it out, or choose another {flag}."
        )


def written_by_kerasformer(directory: Path) -> bool:
    if (directory / MARKER_FILE).is_file():
        return True
    names = {path.name for path in directory.iterdir()}
    names = {name for name in names if not name.startswith("confusion_matrix-")}
    return any(required <= names <= allowed for required, allowed in LEGACY_LAYOUTS)


def first_foreign_file(directory: Path) -> Path | None:
    """The first file (or link) under ``directory`` that its manifest does not list.

    Directories written before the manifest existed have only their layout checked
    (`written_by_kerasformer`).
    """
    marker = read_marker(directory)
    if marker is None or not isinstance(marker.get(MANIFEST_KEY), list):
        return None
    written = set(marker[MANIFEST_KEY]) | {MARKER_FILE}
    for path in sorted(directory.rglob("*")):
        if (path.is_file() or path.is_symlink()) and (
            path.relative_to(directory).as_posix() not in written
        ):
            return path
    return None
