"""Write a file whole or not at all: into a partial file, then renamed over the target."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from kerasformer.errors import KerasformerError


def write_whole_file(path: Path, write: Callable[[Path], object]) -> Path:
    """``write(partial)``, then the partial file renamed over ``path``: whole or nothing.

    Raises:
        KerasformerError: the file system refused (a folder not writable, a full disk):
            the message names ``path``, never the partial file, which is not the user's.
    """
    # A name of this process's own (not mkstemp's): the file gets the usual permissions.
    partial = path.parent / f".{path.name}.{os.getpid()}.partial{path.suffix}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(partial)
        os.replace(partial, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise KerasformerError(
                f"cannot write {path} ({error.strerror or error}); choose a folder you can "
                "write to, with room for it."
            ) from error
        raise
    from kerasformer.files.staged_directory import add_to_manifest

    add_to_manifest(path)
    return path
