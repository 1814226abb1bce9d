"""Write a file whole or not at all: into a partial file, then renamed over the target."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def write_whole_file(path: Path, write: Callable[[Path], object]) -> Path:
    """``write(partial)``, then the partial file renamed over ``path``: whole or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A name of this process's own (not mkstemp's): the file gets the usual permissions.
    partial = path.parent / f".{path.name}.{os.getpid()}.partial{path.suffix}"
    try:
        write(partial)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    from kerasformer.files.staged_directory import add_to_manifest

    add_to_manifest(path)
    return path
