"""Write a directory completely, then swap it in, so that no crash leaves half of one.

Every directory kerasformer writes (an export, a BERT conversion) is built in a hidden
sibling, ``.NAME.staging-*``, and marked complete by a marker file written last. The
swap renames the old directory aside (``.NAME.replaced-*``), renames the new one in,
and only then deletes the old one. A process killed at any point leaves either the old
or the new directory complete, and the next write to the same place finishes or undoes
what was left (see `recover_interrupted`).

The marker is also how ``--overwrite`` recognises a directory that kerasformer wrote:
it never replaces anything else, nor the working directory or one of its parents.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.export.export_kind import MARKER_FILE

STAGING = ".staging-"
REPLACED = ".replaced-"
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


def require_replaceable(destination: str | Path, overwrite: bool, flag: str) -> None:
    """Refuse, before any work, a destination that could not or must not be written.

    Args:
        destination: The directory to write.
        overwrite: Whether an existing kerasformer directory there may be replaced.
        flag: The command-line option that names ``destination``, for the messages.
    """
    destination = Path(destination)
    if destination.exists() or destination.is_symlink():
        if not overwrite:
            raise KerasformerError(
                f"{destination} already exists; pass --overwrite to replace it or {flag} "
                "to write somewhere else."
            )
        require_own_directory(destination, flag)
    require_writable_parent(destination, flag)


def require_own_directory(destination: Path, flag: str) -> None:
    if not destination.is_dir():
        raise KerasformerError(f"{destination} is a file; {flag} must name a directory.")
    resolved, working = destination.resolve(), Path.cwd().resolve()
    if resolved == working or resolved in working.parents:
        raise KerasformerError(
            f"--overwrite would delete {destination}, which holds the working directory; "
            f"name the directory to replace itself with {flag} (e.g. saved_models/NAME)."
        )
    if not written_by_kerasformer(destination):
        raise KerasformerError(
            f"--overwrite only replaces a directory that kerasformer wrote, and {destination} "
            f"is not one (no {MARKER_FILE}); choose another {flag} or empty it yourself."
        )


def written_by_kerasformer(directory: Path) -> bool:
    if (directory / MARKER_FILE).is_file():
        return True
    names = {path.name for path in directory.iterdir()}
    names = {name for name in names if not name.startswith("confusion_matrix-")}
    return any(required <= names <= allowed for required, allowed in LEGACY_LAYOUTS)


def require_writable_parent(destination: Path, flag: str) -> None:
    """Create and remove a directory where the new one will be staged."""
    existing = next(p for p in [destination.parent, *destination.parent.parents] if p.exists())
    if not existing.is_dir():
        raise KerasformerError(
            f"cannot create {destination}: {existing} is a file; choose another {flag}."
        )
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".kerasformer-probe-", dir=existing))
    except OSError as error:
        raise KerasformerError(
            f"cannot write to {existing} ({error.strerror or error}); choose a writable {flag}."
        ) from None


@contextlib.contextmanager
def staged_directory(destination: str | Path, kind: str) -> Iterator[Path]:
    """Yield an empty directory to fill; on success it replaces ``destination`` whole.

    If the body raises (or the process dies), ``destination`` is left as it was.

    Example:

    >>> with staged_directory("saved_models/mine", kind="classifier") as staging:
    ...     (staging / "notes.txt").write_text("complete")
    """
    destination = Path(destination)
    recover_interrupted(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}{STAGING}", dir=destination.parent))
    try:
        yield staging
        write_marker(staging, kind)
        swap_in(staging, destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_marker(directory: Path, kind: str) -> None:
    """Written last, through a rename: a staging directory with a marker is complete."""
    from kerasformer import __version__

    partial = directory / f".{MARKER_FILE}.partial"
    partial.write_text(
        json.dumps({"written_by": "kerasformer", "version": __version__, "kind": kind}) + "\n",
        encoding="utf-8",
    )
    os.replace(partial, directory / MARKER_FILE)


def swap_in(staging: Path, destination: Path) -> None:
    aside = None
    if destination.exists() or destination.is_symlink():
        aside = destination.parent / (
            f".{destination.name}{REPLACED}{staging.name.rsplit(STAGING, 1)[-1]}"
        )
        os.rename(destination, aside)
    os.rename(staging, destination)
    if aside is not None:
        shutil.rmtree(aside)


def leftovers(destination: Path, infix: str) -> list[Path]:
    prefix = f".{destination.name}{infix}"
    if not destination.parent.is_dir():
        return []
    return sorted(p for p in destination.parent.iterdir() if p.name.startswith(prefix))


def recover_interrupted(destination: str | Path) -> list[str]:
    """Finish or undo a replacement of ``destination`` that a killed process left.

    - a complete staged directory is swapped in (it is newer than what is there);
    - an incomplete one is deleted;
    - an old directory renamed aside is deleted once ``destination`` is complete, or
      renamed back if ``destination`` is missing and nothing newer is complete.

    Returns what was done, one sentence each, and prints it to standard error.
    """
    destination = Path(destination)
    done = []
    for staging in leftovers(destination, STAGING):
        if (staging / MARKER_FILE).is_file():
            swap_in(staging, destination)
            done.append(f"finished an interrupted write of {destination} from {staging.name}")
        else:
            shutil.rmtree(staging, ignore_errors=True)
            done.append(f"removed {staging}, an incomplete write of {destination}")
    for aside in leftovers(destination, REPLACED):
        if destination.exists():
            shutil.rmtree(aside, ignore_errors=True)
            done.append(f"removed {aside}, the replaced copy of {destination}")
        else:
            os.rename(aside, destination)
            done.append(f"restored {destination} from {aside.name}, an interrupted replacement")
    for sentence in done:
        print(f"kerasformer: {sentence}.", file=sys.stderr)
    return done
