"""What each kind of training job reads, builds, measures and exports.

A task plugs into the one trainer (`kerasformer.training.trainer.train`): the data
loader, the model and its ``model.fit`` batches, the final metrics and the export.
Recipes, backups and resume, history and distribution are the trainer's, for every task.
Each task is made once from its entry in `kerasformer.registry.TASKS`.
"""

from __future__ import annotations

from kerasformer.errors import KerasformerError
from kerasformer.registry import TASKS as ENTRIES
from kerasformer.registry import resolve
from kerasformer.training.tasks.base import Task

TASKS: dict[str, Task] = {name: resolve(entry.task)(entry) for name, entry in ENTRIES.items()}


def task_named(name: str) -> Task:
    """The task the trainer asks, by its name in `kerasformer.registry.TASKS`."""
    if name not in TASKS:
        raise KerasformerError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}.")
    return TASKS[name]


__all__ = ["TASKS", "Task", "task_named"]
