"""TF Serving's layout inside a kerasformer export: ``EXPORT/VERSION/`` holds the SavedModel.

TF Serving loads ``MODEL_BASE_PATH/VERSION/saved_model.pb`` and serves the highest
version it finds there; kerasformer writes its SavedModel at the top of an export
(``EXPORT/saved_model.pb``, beside ``model.keras`` and the metrics), which TF Serving
would not find. `add_serving_version` makes ``EXPORT/VERSION/`` with the SavedModel's
files hard-linked (copied where the file system cannot link), so
``--model_base_path=EXPORT`` serves the export as it is and no byte is stored twice.
Training writes it in the staging directory (``--serving-version N``), so it is swapped
in with the rest of the export, or not at all.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.files.export_kind import read_marker
from kerasformer.files.staged_directory import add_to_manifest
from kerasformer.validation import is_whole_number

SAVED_MODEL_FILE = "saved_model.pb"
# What TF Serving reads of a SavedModel directory.
SAVED_MODEL_PARTS = (SAVED_MODEL_FILE, "fingerprint.pb", "variables", "assets", "assets.extra")
# TF Serving's versions are int64.
MAX_VERSION = 2**63 - 1


def require_serving_version(version) -> None:
    """Refuse a version TF Serving would not read as one."""
    if not is_whole_number(version) or not 1 <= version <= MAX_VERSION:
        raise KerasformerError(
            f"serving_version must be a whole number from 1 up (the folder TF Serving reads "
            f"as the model's version), got {version!r}."
        )


def add_serving_version(export_dir: str | Path, version: int) -> Path:
    """``export_dir/VERSION/``: the export's SavedModel files, linked, where TF Serving
    looks for version ``VERSION`` of a model whose base path is ``export_dir``.

    Example:

    >>> add_serving_version("saved_models/bbc_news-transformer", 1)
    PosixPath('saved_models/bbc_news-transformer/1')
    """
    require_serving_version(version)
    export_dir = Path(export_dir)
    if not (export_dir / SAVED_MODEL_FILE).is_file():
        raise KerasformerError(
            f"{export_dir} holds no {SAVED_MODEL_FILE}; give a kerasformer export directory."
        )
    target = export_dir / str(version)
    if target.exists():
        raise KerasformerError(f"{target} already exists; choose another serving version.")
    target.mkdir()
    for name in SAVED_MODEL_PARTS:
        source = export_dir / name
        if source.is_dir():
            shutil.copytree(source, target / name, copy_function=link_or_copy)
        elif source.is_file():
            link_or_copy(source, target / name)
    if read_marker(export_dir) is not None:
        # An export already written: its manifest lists the version's files, so that
        # `train --overwrite` knows them for kerasformer's own.
        for written in sorted(target.rglob("*")):
            if written.is_file():
                add_to_manifest(written)
    return target


def link_or_copy(source: str | Path, destination: str | Path) -> str | Path:
    """A hard link where the file system allows one, else a copy."""
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)
    return destination
