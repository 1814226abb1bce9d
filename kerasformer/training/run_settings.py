"""Reproducible runs: the full settings an export was trained with, and reading them back.

Every export holds ``config.json``: each `TrainingConfig` setting with its default
resolved (recipe, input pipeline, the model's options), the task's own settings, and the
SHA-256 of every data file it read. ``kerasformer train --config EXPORT/config.json``
trains the same run again (flags given beside it win); the file may also be YAML when a
YAML library is installed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from kerasformer.errors import KerasformerError

SETTINGS_FILE = "config.json"
# Written beside the settings, not settings themselves.
DATA_FILES = "data_files"
VERSION = "kerasformer_version"
# How one run was started, not what it trains: never carried into the next.
NOT_CARRIED = ("overwrite", "resume")
FILE_SETTINGS = ("train_file", "validation_file", "test_file", "data_dir")
YAML_SUFFIXES = (".yaml", ".yml")
HASH_CHUNK = 1 << 20
# Settings added after runs were first kept, with the value a run saved without them used.
ADDED_SETTINGS = {
    "weight_decay": 0.0, "clip_norm": None, "lr_schedule": "constant", "average_last": None
}  # fmt: skip
ADDED_MODEL_OPTIONS = {
    "tie_embeddings": False,
    # The classifier's: resolved into its options since they joined its DEFAULTS.
    "norm_first": False,
    "position": "learned",
}


def run_settings(config) -> dict:
    """Every setting of ``config`` with its defaults resolved, and the data files' hashes."""
    settings = resolved_settings(config)
    # "absolute": where the file was, so that the settings rerun from another folder.
    settings[DATA_FILES] = {
        name: {
            "path": str(settings[name]),
            "absolute": str(Path(settings[name]).resolve()),
            "sha256": file_hash(Path(settings[name])),
        }
        for name in FILE_SETTINGS
        if settings.get(name) is not None and Path(settings[name]).exists()
    }
    from kerasformer import __version__  # the package imports this module while it loads

    settings[VERSION] = __version__
    return settings


def resolved_settings(config) -> dict:
    """Every setting of ``config`` that the next run carries, with its defaults resolved."""
    settings = dataclasses.asdict(config)
    for name in NOT_CARRIED:
        settings.pop(name)
    settings.update(config.resolved_settings())
    return settings


def compared_settings(config) -> dict:
    """The settings two runs must share to be one run (resumed, or on several workers):
    `run_settings` without the data files' hashes (the data is compared by its
    fingerprint instead, so the files are not read for this) and the version, as JSON
    holds them."""
    return json.loads(json.dumps(resolved_settings(config), default=str))


def differing_settings(saved: dict, ours: dict) -> list[str]:
    """The names of the compared settings that differ between a run's saved ``config.json``
    and ours; settings added since an earlier release saved it count at the values that
    release trained with (so its runs can still be resumed)."""
    saved, ours = with_added_settings(saved), with_added_settings(ours)
    return sorted(key for key in saved.keys() | ours.keys() if saved.get(key) != ours.get(key))


def with_added_settings(saved: dict) -> dict:
    """Compared settings saved by an earlier release, with the settings added since then
    at the values that release trained with (so its runs can still be resumed)."""
    saved = {**ADDED_SETTINGS, **saved}
    options = saved.get("model_options")
    if isinstance(options, dict):
        saved["model_options"] = {**ADDED_MODEL_OPTIONS, **options}
    return saved


def file_hash(path: Path) -> str:
    """SHA-256 of a file, or of a folder's files (their relative paths and contents)."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with open(file, "rb") as stream:
            while chunk := stream.read(HASH_CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


# Settings that hold options by name (`--embed-dim 64` as {"embed_dim": 64}).
OPTIONS_BY_NAME = ("model_options", "task_options", "data_options")


def read_run_settings(path: str | Path, known: set[str] | None = None) -> dict:
    """The settings in a ``config.json`` (or YAML) file, checked against ``known`` names
    (when given).

    Returns the settings without the data files' hashes and the version; see
    `changed_data_files` for those.
    """
    path = Path(path)
    if not path.is_file():
        raise KerasformerError(
            f"--config {path} is not a file; give the config.json of an export, or a JSON or "
            "YAML file of settings."
        )
    settings = parse_settings(path)
    if not isinstance(settings, dict):
        raise KerasformerError(
            f"--config {path} holds a {type(settings).__name__}, not settings by name; "
            'give an object such as {"task": "classification", "epochs": 5}.'
        )
    unknown = sorted(set(settings) - (known or set(settings)) - {DATA_FILES, VERSION})
    if unknown:
        raise KerasformerError(
            f"--config {path}: unknown setting(s) {', '.join(unknown)}; use the names of "
            "an export's config.json (the TrainingConfig fields)."
        )
    for name in OPTIONS_BY_NAME:
        if name in settings and not isinstance(settings[name], dict):
            raise KerasformerError(
                f"--config {path}: {name} holds a {type(settings[name]).__name__}, not "
                f'options by name; give an object such as {{"embed_dim": 64}}, or leave it out.'
            )
    return settings


def parse_settings(path: Path):
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in YAML_SUFFIXES:
        try:
            import yaml
        except ImportError:
            raise KerasformerError(
                f"--config {path} is YAML, and no YAML library is installed; "
                "`pip install pyyaml`, or give the settings as JSON."
            ) from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise KerasformerError(f"--config {path} is not YAML ({error}).") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise KerasformerError(
            f"--config {path}:{error.lineno}: not JSON ({error.msg}); give the config.json "
            "of an export, or a .yaml file."
        ) from None


def rebased_data_paths(settings: dict) -> list[str]:
    """Point each relative data path of ``settings`` that is not there from this folder at
    the file that run read (its recorded absolute path), where that is still there; one
    note for each."""
    notes = []
    for name, recorded in (settings.get(DATA_FILES) or {}).items():
        given, absolute = settings.get(name), recorded.get("absolute")
        if given is None or str(given) != recorded.get("path") or not absolute:
            continue
        if not Path(given).exists() and Path(absolute).exists():
            settings[name] = absolute
            notes.append(
                f"{name} {given} is not in {Path.cwd()}; reading {absolute}, where that run read it"
            )
    return notes


def changed_data_files(settings: dict, config) -> list[str]:
    """One line for each data file the settings recorded that differs now (a warning)."""
    changes = []
    for name, recorded in (settings.get(DATA_FILES) or {}).items():
        now = getattr(config, name, None)
        if now is None or str(now) not in (recorded.get("path"), recorded.get("absolute")):
            continue  # another file was given this time: nothing to compare
        path = Path(now)
        if not path.exists():
            where = recorded.get("absolute") or now
            changes.append(f"{now} ({name}) is gone since that run, which read {where}")
        elif file_hash(path) != recorded.get("sha256"):
            changes.append(f"{now} ({name}) changed since that run (its SHA-256 differs)")
    return changes
