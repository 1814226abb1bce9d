"""Session fixtures made once for every pytest-xdist worker of a run, not once per worker.

pytest-xdist makes a session fixture in each worker. For one that only writes files (a
converted BERT, a checkpoint), the first worker to ask makes it in the run's shared
temporary folder while the others wait on a file lock, then every worker reads the same
files: pytest-xdist's own recipe ("Making session-scoped fixtures execute only once").
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock


def made_once(tmp_path_factory, name: str, make: Callable[[Path], object]) -> Path:
    """``directory``, which ``make(directory)`` has filled, once in this test run.

    ``directory`` does not exist when ``make`` is called. If ``make`` raises, nothing is
    marked as made and the next worker to ask tries again (and fails the same way).
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the workers' base folders share this one
    directory, made = root / name, root / f"{name}.made"
    with FileLock(str(root / f"{name}.lock")):
        if not made.is_file():
            shutil.rmtree(directory, ignore_errors=True)
            make(directory)
            made.touch()
    return directory
