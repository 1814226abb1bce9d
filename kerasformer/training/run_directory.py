"""Training that survives being killed: per-epoch backups in a run directory, ``--resume``.

While a run that exports to ``saved_models/NAME`` trains, ``saved_models/NAME.training/``
holds its configuration, a backup of the model and optimizer after every epoch (Keras's
``BackupAndRestore``, one folder per recipe phase) and the history so far. The same
command with ``--resume`` continues from the last completed epoch and ends with the
configured number of epochs; a successful export deletes the run directory.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from kerasformer.backend import keras
from kerasformer.errors import KerasformerError

CONFIG_FILE = "config.json"
EPOCHS_FILE = "epochs.json"
# A resumed run must be the same run: these settings may differ between the attempts.
MAY_DIFFER = frozenset({"overwrite", "resume"})


def run_directory_for(export_dir: Path) -> Path:
    return export_dir.parent / f"{export_dir.name}.training"


class RunDirectory:
    """The backups of one training run, and its history epoch by epoch.

    Args:
        path: The directory (see `run_directory_for`).
        config: The run's settings (``dataclasses.asdict`` of its ``TrainingConfig``).
        resume: Continue the run that ``path`` holds, instead of refusing to touch it.
        writer: Whether this process writes (in multi-worker training only the chief does).
    """

    def __init__(self, path: Path, config: dict, resume: bool, writer: bool = True):
        self.path = Path(path)
        kept = {key: value for key, value in config.items() if key not in MAY_DIFFER}
        self.config = json.loads(json.dumps(kept, default=str))  # compared with what was saved
        self.writer = writer
        self.epochs: list[dict] = []
        if (self.path / CONFIG_FILE).is_file():
            self._continue(resume)
        elif self.path.exists() and any(self.path.iterdir()):
            raise KerasformerError(
                f"{self.path} exists but holds no kerasformer training run; move it away "
                "so that training can keep its backups there."
            )
        elif self.writer:
            self.path.mkdir(parents=True, exist_ok=True)
            write_json_atomically(self.path / CONFIG_FILE, self.config)

    def _continue(self, resume: bool) -> None:
        saved = json.loads((self.path / CONFIG_FILE).read_text(encoding="utf-8"))
        epochs_file = self.path / EPOCHS_FILE
        if epochs_file.is_file():
            self.epochs = json.loads(epochs_file.read_text(encoding="utf-8"))
        progress = f"{len(self.epochs)} epoch(s) done"
        if not resume:
            raise KerasformerError(
                f"{self.path} holds an interrupted training run ({progress}); pass --resume "
                "to continue it, or delete that directory to start over."
            )
        changed = sorted(key for key in self.config.keys() | saved.keys()
                         if self.config.get(key) != saved.get(key))  # fmt: skip
        if changed:
            raise KerasformerError(
                f"--resume continues the run in {self.path}, which was started with other "
                f"settings ({', '.join(changed)}); use the same settings, or delete that "
                "directory to start over."
            )

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


def write_json_atomically(path: Path, payload) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, path)
