"""Training that survives being killed: per-epoch backups in a run directory, ``--resume``.

While a run that exports to ``saved_models/NAME`` trains, ``saved_models/NAME.training/``
holds its configuration, a fingerprint of its data, a backup of the model and optimizer
after every epoch (Keras's ``BackupAndRestore``, one folder per recipe phase), the
history so far, and a lock: the kernel's ``flock`` on ``run.lock`` (filelock), which ends
with the process that trains, and ``lock.json`` naming that process for messages. The same
command with ``--resume`` continues from the last completed epoch and ends with the
configured number of epochs; a successful export deletes the run directory.

The directory is checked when training is set up (`RunDirectory`), but written only just
before the first epoch (`RunDirectory.start`), so a run refused before it trains leaves
nothing behind; `RunDirectory.close` removes a directory that holds no completed epoch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import socket
import time
from collections.abc import Mapping
from pathlib import Path

import filelock
import numpy as np

from kerasformer.backend import keras, tf
from kerasformer.errors import KerasformerError
from kerasformer.training.run_settings import compared_settings, differing_settings

CONFIG_FILE = "config.json"
EPOCHS_FILE = "epochs.json"
DATA_FILE = "data.json"
LOCK_FILE = "lock.json"  # who holds the run's lock, and since when: for the message
RUN_LOCK_FILE = "run.lock"  # the lock itself (flock)
# A resumed run must be the same run: these settings may differ between the attempts.
MAY_DIFFER = frozenset({"overwrite", "resume", "tensorboard", "tensorboard_update_freq"})
# Fields of a data object that are not training data: its name, and caches filled later.
NOT_DATA = frozenset({"name"})
# Sequences of at least this many strings are hashed in one piece (lengths, then text).
BULK_STRINGS = 64


def run_directory_for(export_dir: Path) -> Path:
    return export_dir.parent / f"{export_dir.name}.training"


class RunDirectory:
    """The backups of one training run, and its history epoch by epoch.

    Checks what ``path`` holds when made: a run in progress there (its lock) is refused;
    a run with completed epochs is continued with ``resume`` and the same settings, and
    refused otherwise; a run that completed no epoch is deleted, to start over.

    Args:
        path: The directory (see `run_directory_for`).
        config: The run's settings (`compared_settings` of its ``TrainingConfig``).
        resume: Continue the run that ``path`` holds, instead of refusing to touch it.
        writer: Whether this process writes (in multi-worker training only the chief does).
        fingerprint: The training data's `data_fingerprint`; a resumed run must train on
            the same data.
        start: Write the directory and take its lock at once (see `start`); otherwise
            call `start` just before training, and `close` once the run ends.
    """

    def __init__(
        self,
        path: Path,
        config: dict,
        resume: bool,
        writer: bool = True,
        fingerprint: dict | None = None,
        start: bool = True,
    ):
        self.path = Path(path)
        kept = {key: value for key, value in config.items() if key not in MAY_DIFFER}
        self.config = json.loads(json.dumps(kept, default=str))  # compared with what was saved
        self.writer = writer
        self.resume = resume
        self.fingerprint = fingerprint
        self.epochs: list[dict] = []
        self.continued = False  # it holds completed epochs of this run, to continue
        self.created = False  # this process made the directory (see close)
        self.lock: HeldLock | None = None  # the lock this process holds
        self._made_from: Path | None = None  # the first of the folders this process made
        if writer:
            self._check()
        elif (self.path / CONFIG_FILE).is_file():
            self._read_epochs()  # a worker's view of the chief's run: nothing to check
            self._require_same_settings()
            self.continued = True
        if start:
            self.start()

    def _check(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise self._not_a_run_directory()
        if not self.path.exists():
            return
        require_not_locked(self.path)
        if (self.path / CONFIG_FILE).is_file():
            self._read_epochs()
        if not self.epochs:
            # No epoch was completed: nothing there is worth keeping, whatever its settings.
            if (self.path / CONFIG_FILE).is_file() or not foreign_contents(self.path):
                shutil.rmtree(self.path, ignore_errors=True)
                self.epochs = []
                return
            raise self._not_a_run_directory()
        progress = f"{len(self.epochs)} epoch(s) done"
        if not self.resume:
            raise KerasformerError(
                f"{self.path} holds an interrupted training run ({progress}); pass --resume "
                "to continue it, or delete that directory to start over."
            )
        self._require_same_settings()
        if self.fingerprint is not None:
            self._require_same_data()
        self.continued = True

    def _not_a_run_directory(self) -> KerasformerError:
        return KerasformerError(
            f"{self.path} exists but holds no kerasformer training run; move it away "
            "so that training can keep its backups there."
        )

    def _read_epochs(self) -> None:
        epochs_file = self.path / EPOCHS_FILE
        if epochs_file.is_file():
            self.epochs = read_json(epochs_file, default=[])

    def _require_same_settings(self) -> None:
        changed = differing_settings(read_json(self.path / CONFIG_FILE, default={}), self.config)
        if changed:
            raise KerasformerError(
                f"--resume continues the run in {self.path}, which was started with other "
                f"settings ({', '.join(changed)}); use the same settings, or delete that "
                "directory to start over."
            )

    def _require_same_data(self) -> None:
        data_file = self.path / DATA_FILE
        if not data_file.is_file():
            return  # a run started before data was fingerprinted
        changes = data_changes(read_json(data_file, default={}), self.fingerprint)
        if changes:
            raise KerasformerError(
                f"--resume continues the run in {self.path}, but the training data changed "
                f"since the run started ({'; '.join(changes)}); train on the same data, or "
                "delete that directory to start over."
            )

    def start(self) -> None:
        """Make the directory, take its lock and record the run: training begins.

        Call it once nothing can refuse the run any more; calling it again does nothing.
        """
        if not self.writer or self.lock is not None:
            return
        if not self.path.exists():
            self._made_from = first_missing_folder(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.lock = take_lock(self.path)
        if (self.path / CONFIG_FILE).is_file() != self.continued:
            # Another run started here since this one was checked, or ended the one found.
            lock, self.lock = self.lock, None
            release_lock(self.path, lock)
            if self._made_from is not None:
                self.delete()
                remove_made_folders(self.path, self._made_from)
            raise KerasformerError(
                f"another training run started or ended in {self.path} while this one was "
                "being set up; run the command again."
            )
        if self.continued:
            return
        self.created = True
        if self.fingerprint is not None:
            write_json_atomically(self.path / DATA_FILE, self.fingerprint)
        write_json_atomically(self.path / CONFIG_FILE, self.config)

    def close(self) -> None:
        """The run ended, however: release its lock, or delete it if it completed no epoch.

        A directory this process made is deleted when no epoch was completed (the run
        failed, was refused or interrupted in its first epoch); one with completed
        epochs stays for ``--resume``.
        """
        if not self.writer or self.lock is None:
            return
        lock, self.lock = self.lock, None
        if self.created and not self.epochs:
            self.delete()
            remove_made_folders(self.path, self._made_from)
        else:
            release_lock(self.path, lock)

    def backup_callback(self, phase_index: int) -> keras.callbacks.Callback:
        """Keras's backup of model, optimizer and epoch, restored when ``fit`` starts."""
        return keras.callbacks.BackupAndRestore(
            str(self.path / f"phase-{phase_index}"), delete_checkpoint=False
        )

    def record_epoch(self, record: dict) -> None:
        """Keep one finished epoch's numbers, dropping any of a later epoch left by a kill."""
        self.epochs = [kept for kept in self.epochs if kept["epoch"] < record["epoch"]]
        self.epochs.append(record)
        if self.writer:
            write_json_atomically(self.path / EPOCHS_FILE, self.epochs)

    def forget_from(self, epoch: int) -> None:
        """Training restarts at ``epoch``: numbers of that epoch on were never backed up."""
        self.epochs = [kept for kept in self.epochs if kept["epoch"] < epoch]

    def delete(self) -> None:
        if self.writer:
            shutil.rmtree(self.path, ignore_errors=True)


class RunBackups:
    """The run directory beside an export, for one run: checked, trained in, kept or removed.

    The chief checks it when made (a run in progress, ``--resume``), before the model
    is built; another worker sees the chief's once the model is built
    (`for_training`). When the run ends it is released; when it ends well (``with``
    exits without an error) it is deleted, or kept for ``--resume`` if training was
    interrupted (``interrupted``), and a worker removes the empty folders it left.

    Args:
        export_dir: The export of the run; None for a run that exports nothing.
        config: The run's `TrainingConfig`.
        data: The training data, fingerprinted so that ``--resume`` trains on the same.
        chief: Whether this process keeps what training writes.
    """

    def __init__(self, export_dir: Path | None, config, data, chief: bool):
        self.export_dir = export_dir
        self.config = config
        self.chief = chief
        self.interrupted = False
        self.directory: RunDirectory | None = None
        if export_dir is not None and chief:
            self.directory = RunDirectory(
                run_directory_for(export_dir), compared_settings(config), config.resume,
                fingerprint=data_fingerprint(data), start=False,
            )  # fmt: skip

    def for_training(self) -> RunDirectory | None:
        """The directory the fit loop backs up into (call it once the model is built)."""
        if self.export_dir is not None and not self.chief:
            self.directory = chief_run_directory(self.export_dir, self.config)
        return self.directory

    def __enter__(self) -> RunBackups:
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        if self.directory is None:
            return
        try:
            if error is None:
                self._end_well()
        finally:
            self.directory.close()  # releases the lock; deletes a directory with no epoch

    def _end_well(self) -> None:
        run = self.directory
        if not self.chief:
            remove_empty_directories(run.path)  # the chief keeps or deletes its own
        elif not self.interrupted:
            run.delete()
        elif run.epochs:  # else nothing to continue: closing deletes the directory
            print(
                f"Backups of the completed epochs stay in {run.path}; the same command with "
                "--resume continues the run."
            )


# The lock: which process trains in a run directory.


def chief_run_directory(export_dir: Path, config) -> RunDirectory:
    """A non-chief worker's view of the chief's run directory, where it writes nothing.

    Called once the model is built: building waits for the chief to send the initial
    weights, and the chief has checked its run directory before that (and removed one
    left with no completed epoch), so the run found there is this one; a new run's
    directory is written by the chief just before its first epoch. The chief alone
    holds the directory's lock. Keras restores every worker from the chief's backups
    there, so resuming needs a filesystem that all workers share.
    """
    path = run_directory_for(export_dir)
    require_settings_of_the_chief(path, config)
    return RunDirectory(path, compared_settings(config), resume=True, writer=False, start=False)


def require_settings_of_the_chief(path: Path, config) -> None:
    """Refuse to train with other settings than the chief: the workers would disagree.

    Only possible where this worker sees the chief's run directory (a shared filesystem).
    """
    saved_file = path / CONFIG_FILE
    if not saved_file.is_file():
        return
    saved = json.loads(saved_file.read_text(encoding="utf-8"))
    ours = compared_settings(config)  # as the chief saved its own
    differing = [key for key in differing_settings(saved, ours) if key not in MAY_DIFFER]
    if differing:
        raise KerasformerError(
            f"this worker's settings differ from the chief's ({', '.join(differing)}); start "
            "every worker with the same command, only TF_CONFIG's task index differing."
        )


@dataclasses.dataclass
class HeldLock:
    """The kernel's lock on a run directory, held by this process, and what
    ``lock.json`` says of its holder."""

    lock: filelock.BaseFileLock
    holder: dict


def run_lock(path: Path) -> filelock.BaseFileLock:
    """The lock of the run directory ``path``: ``flock`` on ``run.lock``, which the kernel
    drops when its process ends, however it ends (not per thread: Keras may call back from
    another)."""
    return filelock.FileLock(str(path / RUN_LOCK_FILE), thread_local=False)


def take_lock(path: Path) -> HeldLock:
    """Lock the run directory ``path`` for this process, and say who holds it in
    ``lock.json``; refused if a run holds it (or may, on another host)."""
    require_no_lock_of_another_host(path)
    lock = run_lock(path)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        raise run_in_progress(path) from None
    except NotImplementedError:  # filelock's word for a filesystem without flock
        raise KerasformerError(
            f"the filesystem of {path} cannot lock files (no flock), so two runs there could "
            "overwrite each other's backups; give an --export-dir on a local disk."
        ) from None
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }
    write_json_atomically(path / LOCK_FILE, holder)
    return HeldLock(lock, holder)


def release_lock(path: Path, held: HeldLock) -> None:
    """Say that nobody holds ``path`` any more, then let the lock go."""
    (path / LOCK_FILE).unlink(missing_ok=True)
    # run.lock stays: deleting it could let a run that opened it just before lock the
    # deleted file while a third one locks a new one.
    held.lock.release()


def require_not_locked(path: Path) -> None:
    """Refuse a run directory locked by a live run, or whose ``lock.json`` names a run on
    another host. Writes nothing."""
    require_no_lock_of_another_host(path)
    if not (path / RUN_LOCK_FILE).is_file():
        return  # never locked (a run writes run.lock before it trains)
    lock = run_lock(path)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        raise run_in_progress(path) from None
    except NotImplementedError:
        return  # take_lock says what to do, if this run gets that far
    lock.release()


def require_no_lock_of_another_host(path: Path) -> None:
    """A ``lock.json`` written on another host, on a filesystem both share: whether that
    run still holds its lock cannot be told from here where the filesystem's ``flock``
    does not reach across hosts (NFS without a lock manager), so the run is refused."""
    holder = read_json(path / LOCK_FILE, default=None)
    if not isinstance(holder, dict) or holder.get("host") in (None, socket.gethostname()):
        return
    raise KerasformerError(
        f"{path} is locked by a run on {holder['host']} (PID {holder.get('pid')}, since "
        f"{holder.get('started')}), which cannot be checked from {socket.gethostname()}; if "
        f"that run is no longer alive, delete {path / LOCK_FILE} and run the command again."
    )


def run_in_progress(path: Path) -> KerasformerError:
    """The refusal of a directory whose lock a live run holds, naming it if it said who."""
    holder = read_json(path / LOCK_FILE, default=None)
    holder = holder if isinstance(holder, dict) else {}
    who = f" (PID {holder['pid']} on {holder.get('host')})" if holder.get("pid") else ""
    since = f", started {holder['started']}" if "started" in holder else ""
    return KerasformerError(
        f"a run is in progress{who} in {path}{since}; wait for it to end, or stop it and "
        "continue it with --resume."
    )


# The data's fingerprint: what --resume compares.


def data_fingerprint(data) -> dict[str, dict]:
    """Size and SHA-256 of each split of ``data`` (and of its other training inputs).

    ``data`` is a task's data object: ``splits`` maps split names to examples (arrays of
    texts and labels, sentence pairs, SQuAD questions, token sequences). Other list-like
    fields of a dataclass, such as class names or unlabelled texts, count as well.
    """
    parts = dict(getattr(data, "splits", None) or {})
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        for field in dataclasses.fields(data):
            value = getattr(data, field.name)
            if field.name not in parts and field.name not in NOT_DATA and field.name != "splits":
                if isinstance(value, (tuple, list, np.ndarray)):  # not caches (dicts)
                    parts[field.name] = value
    return {
        str(name): {"examples": example_count(part), "sha256": content_hash(part)}
        for name, part in parts.items()
    }


def example_count(part) -> int | None:
    try:
        return len(part)
    except TypeError:
        return None


def content_hash(value) -> str:
    digest = hashlib.sha256()
    feed(digest, value)
    return digest.hexdigest()


def feed(digest, value) -> None:
    """Add ``value`` to ``digest``, tagged by kind, so that different values differ."""
    if value is None:
        digest.update(b"N")
    elif isinstance(value, str):
        text = value.encode("utf-8", "surrogatepass")
        digest.update(b"s%d:" % len(text) + text)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        digest.update(b"b%d:" % len(value) + bytes(value))
    elif isinstance(value, (bool, int, float, complex, np.generic)):
        item = value.item() if isinstance(value, np.generic) else value
        if isinstance(item, (str, bytes)):
            feed(digest, item)
        else:
            digest.update(f"{type(item).__name__}:{item!r};".encode())
    elif isinstance(value, np.ndarray):
        feed_array(digest, value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        digest.update(f"D{type(value).__qualname__}(".encode())
        for field in dataclasses.fields(value):
            digest.update(f"{field.name}=".encode())
            feed(digest, getattr(value, field.name))
        digest.update(b")")
    elif isinstance(value, Mapping):
        digest.update(b"M%d{" % len(value))
        for key in sorted(value, key=repr):
            feed(digest, key)
            feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, (tuple, list)):
        feed_sequence(digest, value)
    elif isinstance(value, tf.Tensor):
        feed(digest, value.numpy())
    elif isinstance(value, tf.data.Dataset):
        if int(value.cardinality()) == int(tf.data.INFINITE_CARDINALITY):
            digest.update(b"endless dataset")
        else:
            feed_sequence(digest, list(value.as_numpy_iterator()))
    elif hasattr(value, "__len__") and hasattr(value, "__iter__"):
        feed_sequence(digest, list(value))
    else:
        text = repr(value)
        # A default repr names a memory address, which differs from run to run.
        digest.update((type(value).__qualname__ if " at 0x" in text else text).encode())


def feed_array(digest, array: np.ndarray) -> None:
    digest.update(f"A{array.dtype.str}{array.shape}".encode())
    if array.dtype.hasobject:
        feed_sequence(digest, array.ravel().tolist())
    else:
        digest.update(np.ascontiguousarray(array).tobytes())


def feed_sequence(digest, items) -> None:
    digest.update(b"L%d[" % len(items))
    if len(items) >= BULK_STRINGS and all(type(item) is str for item in items):
        # Many texts at once: their lengths, then all of them (fast for 100,000s).
        digest.update(np.fromiter(map(len, items), np.int64, len(items)).tobytes())
        digest.update("".join(items).encode("utf-8", "surrogatepass"))
    else:
        for item in items:
            feed(digest, item)
    digest.update(b"]")


def data_changes(saved: dict, current: dict) -> list[str]:
    """What differs between two `data_fingerprint` results, in words, split by split."""
    changes = []
    for name in [*current, *(name for name in saved if name not in current)]:
        before, after = saved.get(name), current.get(name)
        if before == after:
            continue
        if before is None:
            changes.append(f"{name}: new")
        elif after is None:
            changes.append(f"{name}: gone")
        elif before.get("examples") != after.get("examples"):
            changes.append(
                f"{name}: {count_text(before.get('examples'))} → "
                f"{count_text(after.get('examples'))} examples"
            )
        else:
            changes.append(f"{name}: same size, different contents")
    return changes


def count_text(count) -> str:
    return f"{count:,}" if isinstance(count, int) else "?"


# Files and folders.


def foreign_contents(path: Path) -> list[Path]:
    """What ``path`` holds besides what a run writes there before its first epoch ends."""
    ours = (LOCK_FILE, RUN_LOCK_FILE, CONFIG_FILE, DATA_FILE, EPOCHS_FILE)
    return [
        child for child in path.iterdir()
        if child.name not in ours and not child.name.startswith(tuple(f".{n}." for n in ours))
        and not (child.is_dir() and re.fullmatch(r"phase-\d+", child.name))
    ]  # fmt: skip


def first_missing_folder(path: Path) -> Path:
    """The outermost folder of ``path`` that does not exist yet (``path`` itself at least)."""
    missing = path
    for parent in path.parents:
        if parent.exists():
            break
        missing = parent
    return missing


def remove_made_folders(path: Path, made_from: Path | None) -> None:
    """Remove the now empty folders above ``path`` that were made for it."""
    if made_from is None or made_from == path:
        return
    for parent in path.parents:
        try:
            parent.rmdir()
        except OSError:
            return  # not empty, or gone
        if parent == made_from:
            return


def read_json(path: Path, default):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return default


def write_json_atomically(path: Path, payload) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, path)


def remove_empty_directories(root: Path) -> None:
    """Remove ``root`` and the directories under it, wherever no file is left.

    Keras's ``BackupAndRestore`` backs up a non-chief worker into a temporary folder
    inside the run directory and deletes only that folder; on a filesystem of its own
    the worker would keep empty folders that a later run refuses to train over.
    """
    if not root.is_dir():
        return
    for directory, _, _ in os.walk(root, topdown=False):
        with contextlib.suppress(OSError):  # not empty: a file (the chief's) is kept
            os.rmdir(directory)
