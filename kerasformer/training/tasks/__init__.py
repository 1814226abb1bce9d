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


def __getattr__(name: str):
    # TASKS is made on first use (PEP 562): each task imports its models and TensorFlow.
    if name == "TASKS":
        return all_tasks()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def all_tasks() -> dict[str, Task]:
    """Every task by name, each made once from its registry entry."""
    if "TASKS" not in globals():
        globals()["TASKS"] = {name: resolve(entry.task)(entry) for name, entry in ENTRIES.items()}
    return globals()["TASKS"]


def task_named(name: str) -> Task:
    """The task the trainer asks, by its name in `kerasformer.registry.TASKS`."""
    tasks = all_tasks()
    if name not in tasks:
        raise KerasformerError(f"unknown task {name!r}; choose one of: {', '.join(tasks)}.")
    return tasks[name]


__all__ = ["TASKS", "Task", "all_tasks", "task_named"]  # noqa: F822  (TASKS: __getattr__)
