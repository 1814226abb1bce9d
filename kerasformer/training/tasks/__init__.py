"""What each kind of training job reads, builds, measures and exports.

A task plugs into the one trainer (`kerasformer.training.trainer.train`): the data
loader, the model and its ``model.fit`` batches, the final metrics and the export.
Recipes, backups and resume, history and distribution are the trainer's, for every task.
"""

from __future__ import annotations

from kerasformer.errors import KerasformerError
from kerasformer.training.tasks.classification import ClassificationTask
from kerasformer.training.tasks.distillation import DistillationTask
from kerasformer.training.tasks.language_modeling import LanguageModelingTask
from kerasformer.training.tasks.question_answering import QuestionAnsweringTask
from kerasformer.training.tasks.translation import TranslationTask

TASKS = {
    task.name: task
    for task in (
        ClassificationTask(),
        TranslationTask(),
        LanguageModelingTask(),
        QuestionAnsweringTask(),
        DistillationTask(),
    )
}


def task_named(name: str):
    if name not in TASKS:
        raise KerasformerError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}.")
    return TASKS[name]


__all__ = ["TASKS", "task_named"]
