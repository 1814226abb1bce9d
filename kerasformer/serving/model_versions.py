"""A served model's versions, as TF Serving finds them: ``BASE/N/`` folders, polled.

Every numbered folder holding a SavedModel is a version; the highest one that loaded is
what ``/v1/models/NAME`` serves, and each is served under ``/versions/N``. A base path
with no numbered folder, a kerasformer export as ``train`` writes it, is served as
version 1 until a numbered version appears.

Polling finds new versions without a restart. A folder is loaded only once its files
have stayed the same for one poll (a copy still being written is left alone), and it
is served only after it loaded and answered a warm-up request; until then the version
before it goes on serving. A folder that fails either is never served: its status says
why, one log line says so once, and it is tried again only when its files change. A
folder removed from disk stops being served.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from kerasformer.export.serving_layout import MAX_VERSION, SAVED_MODEL_FILE
from kerasformer.files.export_kind import ExportKind, export_kind
from kerasformer.serving.servable import Servable, first_line

LOG = logging.getLogger("kerasformer.serving")


@dataclass(frozen=True)
class VersionState:
    """What the status endpoint says of one version it has seen."""

    version: int
    state: str  # TF Serving's: START, LOADING, AVAILABLE, END
    error: str = ""

    def status_json(self) -> dict:
        return {
            "version": str(self.version),
            "state": self.state,
            "status": {"error_code": "UNKNOWN" if self.error else "OK",
                       "error_message": self.error},
        }  # fmt: skip


class ServedModel:
    """One model on the server: its base path, the versions loaded, and the ones that failed.

    Args:
        name: The model's name in URLs.
        base_path: The export (or TF Serving model base path) it serves.
    """

    def __init__(self, name: str, base_path: str | Path):
        self.name = name
        self.base_path = Path(base_path)
        self.kind: ExportKind | None = export_kind(self.base_path)
        # Replaced whole, never changed in place: a request reads one consistent map.
        self.available: dict[int, Servable] = {}
        self.states: dict[int, VersionState] = {}
        self._seen: dict[int, tuple] = {}  # version -> files' fingerprint when last seen
        self._failed: dict[int, tuple] = {}  # version -> fingerprint that failed
        self._lock = threading.Lock()
        self.problem = ""  # why the base path itself cannot be served

    @property
    def latest(self) -> Servable | None:
        available = self.available
        return available[max(available)] if available else None

    def poll(self, wait_until_stable: bool = True) -> None:
        """Load the versions that appeared or changed, drop the ones that went away.

        ``wait_until_stable=False`` (the first poll, at start-up) loads what is there
        without waiting a poll for its files to settle.
        """
        with self._lock:
            found = self.version_folders()
            for version in sorted(set(self.states) - set(found) - set(self.available)):
                del self.states[version]
                self._seen.pop(version, None)
            for version, folder in sorted(found.items()):
                self.consider(version, folder, wait_until_stable)
            # A version gone from disk stops serving once one found there serves in its
            # place: an export served as version 1 goes on until its first numbered
            # folder has loaded.
            if not found or any(version in self.available for version in found):
                for version in sorted(set(self.available) - set(found)):
                    self.unload(version)

    def version_folders(self) -> dict[int, Path]:
        """``{version: folder}`` on disk now (an unreadable base path gives none)."""
        try:
            entries = list(self.base_path.iterdir())
        except OSError as error:
            self.report_problem(f"cannot read {self.base_path}: {error.strerror or error}")
            return {}
        numbered = {
            int(entry.name): entry
            for entry in entries
            if entry.name.isdigit() and entry.name.isascii() and entry.is_dir()
            and int(entry.name) <= MAX_VERSION
        }  # fmt: skip
        if numbered:
            self.problem = ""
            return numbered
        if (self.base_path / SAVED_MODEL_FILE).is_file():
            self.problem = ""
            return {1: self.base_path}
        self.report_problem(
            f"{self.base_path} holds no SavedModel and no numbered version folder "
            "(N/saved_model.pb)"
        )
        return {}

    def consider(self, version: int, folder: Path, wait_until_stable: bool) -> None:
        fingerprint = files_fingerprint(folder)
        previous = self._seen.get(version)
        self._seen[version] = fingerprint
        if version in self.available and previous == fingerprint:
            return
        if self._failed.get(version) == fingerprint:
            return  # damaged as it was: reported once, tried again when it changes
        if not (folder / SAVED_MODEL_FILE).is_file():
            if version not in self.available:
                self.states[version] = VersionState(version, "START")
            return
        if wait_until_stable and previous != fingerprint:
            if version not in self.available:
                self.states[version] = VersionState(version, "START")
            return  # still being written, perhaps: look again at the next poll
        self.load(version, folder, fingerprint)

    def load(self, version: int, folder: Path, fingerprint: tuple) -> None:
        if version not in self.available:
            self.states[version] = VersionState(version, "LOADING")
        try:
            servable = Servable.load(self.name, version, folder, self.kind)
        except Exception as error:  # a damaged file raises anything from OSError to OpError
            self._failed[version] = fingerprint
            message = f"version {version} at {folder} failed to load: {first_line(error)}"
            if version in self.available:
                message += "; the version loaded before goes on serving"
            else:
                self.states[version] = VersionState(version, "END", message)
            LOG.error("%s: %s", self.name, message)
            return
        self._failed.pop(version, None)
        self.available = {**self.available, version: servable}
        self.states[version] = VersionState(version, "AVAILABLE")
        LOG.info("%s: serving version %d from %s", self.name, version, folder)

    def unload(self, version: int) -> None:
        self.available = {key: value for key, value in self.available.items() if key != version}
        self.states.pop(version, None)
        self._seen.pop(version, None)
        self._failed.pop(version, None)
        LOG.info("%s: version %d is gone from disk; no longer served", self.name, version)

    def report_problem(self, problem: str) -> None:
        if problem != self.problem:
            LOG.error("%s: %s", self.name, problem)
        self.problem = problem

    def status(self, version: int | None = None) -> list[VersionState]:
        """Every version seen (or only ``version``), newest first."""
        states = dict(self.states)
        if version is not None:
            return [states[version]] if version in states else []
        return [states[key] for key in sorted(states, reverse=True)]


def files_fingerprint(folder: Path) -> tuple:
    """Every file under ``folder`` with its size and modification time, sorted."""
    entries = []
    try:
        for path in sorted(folder.rglob("*")):
            if folder == path.parent and path.name.isdigit():
                continue  # a base path served as version 1: its numbered folders are not it
            stat = path.stat()
            entries.append((str(path.relative_to(folder)), stat.st_size, stat.st_mtime_ns))
    except OSError:
        return ("unreadable",)
    return tuple(entries)
