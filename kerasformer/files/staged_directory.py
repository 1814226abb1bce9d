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
from kerasformer.files.export_kind import (  # noqa: F401  (MARKER_FILE, RUN_SUFFIX: old home)
    MANIFEST_KEY,
    MARKER_FILE,
    RUN_SUFFIX,
    read_marker,
    require_outside_other_outputs,
    require_whole_output,
)

STAGING = ".staging-"
REPLACED = ".replaced-"


def require_replaceable(
    destination: str | Path, overwrite: bool, flag: str, kind: str | None = None
) -> None:
    """Refuse, before any work, a destination that could not or must not be written.

    Args:
        destination: The directory to write.
        overwrite: Whether an existing kerasformer directory there may be replaced.
        flag: The command-line option that names ``destination``, for the messages.
        kind: What will be written there (``"classifier"``...): ``--overwrite`` replaces
            only an output of the same kind.
    """
    destination = Path(destination)
    require_free_to_write(
        destination, overwrite, flag, kind,
        refusal=f"{destination} already exists; pass --overwrite to replace it or {flag} to "
        "write somewhere else.",
    )  # fmt: skip
    require_writable_parent(destination, flag)


def require_free_to_write(
    destination: Path, overwrite: bool, flag: str, kind: str | None, refusal: str
) -> None:
    """Outside other outputs, and either absent or (with ``overwrite``) replaceable."""
    require_outside_other_outputs(destination, flag)
    if destination.exists() or destination.is_symlink():
        if not overwrite:
            raise KerasformerError(refusal)
        require_plain_directory(destination, flag)
        require_whole_output(destination, flag, kind)


def require_plain_directory(destination: Path, flag: str) -> None:
    """A directory itself, not a link, a file, or where the command runs."""
    if destination.is_symlink():
        raise KerasformerError(
            f"{destination} is a symbolic link (to {os.readlink(destination)}); --overwrite "
            f"does not replace through links: name the directory itself with {flag}, or "
            "remove the link."
        )
    if not destination.is_dir():
        raise KerasformerError(f"{destination} is a file; {flag} must name a directory.")
    resolved, working = destination.resolve(), Path.cwd().resolve()
    if resolved == working or resolved in working.parents:
        raise KerasformerError(
            f"--overwrite would delete {destination}, which holds the working directory; "
            f"name the directory to replace itself with {flag} (e.g. saved_models/NAME)."
        )


def manifest(directory: Path) -> list[str]:
    """Every file under ``directory``, relative to it, as the marker lists them."""
    return sorted(
        path.relative_to(directory).as_posix()
        for path in directory.rglob("*")
        if path.is_file() and path.name not in (MARKER_FILE, f".{MARKER_FILE}.partial")
    )


def add_to_manifest(path: Path) -> None:
    """A file kerasformer wrote inside one of its outputs joins that output's manifest."""
    for parent in Path(os.path.abspath(path)).parents:
        marker = read_marker(parent)
        if marker is None:
            continue
        if isinstance(marker.get(MANIFEST_KEY), list):
            relative = Path(os.path.abspath(path)).relative_to(parent).as_posix()
            marker[MANIFEST_KEY] = sorted({*marker[MANIFEST_KEY], relative})
            write_marker_contents(parent, marker)
        return


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
def staged_directory(
    destination: str | Path, kind: str, overwrite: bool = True, flag: str = "--export-dir"
) -> Iterator[Path]:
    """Yield an empty directory to fill; on success it replaces ``destination`` whole.

    If the body raises (or the process dies), ``destination`` is left as it was. What
    is at ``destination`` by then is checked again as `require_replaceable` checks it
    (a long run gives time for files to appear there); a refusal raises and replaces
    nothing.

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
        require_free_to_write(
            destination, overwrite, flag, kind,
            refusal=f"{destination} appeared while this was being written, and --overwrite "
            "was not given; nothing was replaced.",
        )  # fmt: skip
        swap_in(staging, destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_marker(directory: Path, kind: str) -> None:
    """Written last, through a rename: a staging directory with a marker is complete.

    It names the kind of output and lists every file written, so that ``--overwrite``
    can tell a file someone else put there.
    """
    from kerasformer import __version__

    write_marker_contents(
        directory,
        {"written_by": "kerasformer", "version": __version__, "kind": kind,
         MANIFEST_KEY: manifest(directory)},
    )  # fmt: skip


def write_marker_contents(directory: Path, marker: dict) -> None:
    partial = directory / f".{MARKER_FILE}.partial"
    partial.write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
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
