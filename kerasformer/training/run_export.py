"""What a finished run writes: the task's export, history, picture and metrics, all or nothing.

The export is staged and swapped in whole; if writing fails, the trained model is saved
somewhere writable and the error says where, so no training is lost.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from kerasformer.backend import keras
from kerasformer.errors import KerasformerError
from kerasformer.export.serving_layout import add_serving_version
from kerasformer.files.staged_directory import staged_directory
from kerasformer.training.run_settings import SETTINGS_FILE, run_settings

HISTORY_FILE = "history.json"
METRICS_FILE = "metrics.json"
# Which epochs the exported weights come from, when not simply the last.
ENDING_EPOCHS = ("best_epoch", "averaged_epochs")
HISTORY_PLOT_FILE = "history.png"


def export_trained(
    task, model, data, config, history, metrics, interrupted, export_dir, chief=True,
    data_summary: dict | None = None,
) -> None:  # fmt: skip
    """Write the export whole (model, history, picture, metrics) or keep the model elsewhere.

    ``data_summary`` (`kerasformer.datasets.data_summary`) is kept in the metrics as ``data``.

    Every worker of a multi-worker run writes (see `worker_export_dir`); only the
    chief's export is kept.
    """
    # Imported here: matplotlib costs every command, most of which draw nothing, a second.
    from kerasformer.plots import plot_training_history, save_figure

    with (
        worker_export_dir(export_dir, chief=chief) as written,
        kept_if_not_written(task.keras_model(model), written),
        staged_directory(written, task.export_kind, config.overwrite) as staging,
    ):
        task.write_export(model, data, staging)
        write_json(staging / SETTINGS_FILE, run_settings(config))
        if config.serving_version is not None:
            add_serving_version(staging, config.serving_version)
        write_json(staging / HISTORY_FILE, history)
        if history.get("loss"):  # nothing to draw when stopped inside the first epoch
            title = f"{data.name}: {config.model} ({config.resolved_recipe()})"
            save_figure(plot_training_history(history, title), staging / HISTORY_PLOT_FILE)
        write_json(
            staging / METRICS_FILE,
            {
                "config": task.record(config),
                "interrupted": interrupted,
                "sizes": data.sizes(),
                **{key: history[key] for key in ENDING_EPOCHS if key in history},
                **({"data": data_summary} if data_summary is not None else {}),
                **metrics,
            },
        )


@contextlib.contextmanager
def kept_if_not_written(model: keras.Model, export_dir: Path) -> Iterator[None]:
    """If writing the export fails, the trained model is saved elsewhere, and the error
    says where: no training is lost."""
    try:
        yield
    except Exception as error:
        kept = keep_model_somewhere(model)
        raise KerasformerError(
            f"could not export to {export_dir} ({describe_error(error)}); {kept}"
        ) from error


@contextlib.contextmanager
def worker_export_dir(export_dir: Path, *, chief: bool) -> Iterator[Path]:
    """Where this process writes the export: ``export_dir`` on the chief, scratch elsewhere.

    Every worker must save: saving reads the sync-on-read variables (such as a compiled
    model's metrics), and under ``MultiWorkerMirroredStrategy`` each such read is an
    all-reduce that waits for all workers. Only the chief's copy is kept; the others
    write into a temporary directory that is deleted however the export ends.
    """
    if chief:
        yield export_dir
        return
    scratch = Path(tempfile.mkdtemp(prefix="kerasformer-worker-export-"))
    try:
        yield scratch / export_dir.name
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def keep_model_somewhere(model: keras.Model) -> str:
    """Save the trained model where it can be written, and say where, for the error."""
    try:
        rescue = Path(tempfile.mkdtemp(prefix="kerasformer-trained-"))
        model.save(rescue / "model.keras")
    except Exception as error:
        return f"the trained model could not be kept either ({describe_error(error)})."
    return (
        f"the trained model is kept in {rescue / 'model.keras'} "
        "(load it with kerasformer.export.load_keras_model)."
    )


def describe_error(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__


def write_json(path: Path, payload) -> None:
    path.write_text(json.dumps(payload, indent=2, default=_json_default) + "\n", encoding="utf-8")


def _json_default(value):
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
