"""Knowledge distillation: a from-scratch classifier trained on a teacher export's probabilities.

The teacher is any classifier export (typically a fine-tuned BERT, served in batches);
it labels the training texts, the validation texts and optionally unlabelled texts of
the user's and perturbed copies of the training texts with its class probabilities once,
before training. The student is the
from-scratch transformer, trained through the same pipelines as a classifier with
`DistillationLoss` and exported as an ordinary classifier.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from kerasformer.datasets import LabeledTexts, TextClassificationData
from kerasformer.datasets.text_augmentation import augmented_copies
from kerasformer.errors import KerasformerError
from kerasformer.models import build_text_classifier
from kerasformer.training.distillation_loss import (
    NO_LABEL,
    DistillationLoss,
    LabelAccuracy,
    distillation_targets,
)
from kerasformer.training.fit_plan import FitPlan
from kerasformer.training.tasks.classification import ClassificationTask
from kerasformer.training.tasks.distillation_settings import DistillationSettings

# Texts per call of the teacher's SavedModel, and per step of the progress bar.
TEACHER_BATCH = 256


@dataclasses.dataclass(frozen=True)
class DistillationData(TextClassificationData):
    """Classification splits plus what the student learns from besides them.

    ``unlabelled`` holds the user's unlabelled texts, ``augmented`` perturbed copies of
    the training texts (both learn from the teacher alone, label -1); ``targets`` maps
    the name of each split the student fits on (``train``, ``validation``) to its texts
    and ``[label, teacher probabilities]`` rows, unlabelled and augmented texts included
    in ``train``.
    """

    unlabelled: tuple[str, ...] = ()
    augmented: tuple[str, ...] = ()
    targets: dict = dataclasses.field(default_factory=dict)


class DistillationTask(ClassificationTask):
    """A from-scratch classifier trained on a teacher export's probabilities."""

    settings_class = DistillationSettings

    def load_data(self, config) -> DistillationData:
        data = super().load_data(config)
        settings = self.settings(config)
        unlabelled = read_unlabelled_texts(settings.unlabelled_texts)
        augmented = augmented_copies(
            data.splits["train"].texts, settings.augmented_copies, seed=config.seed
        )
        return DistillationData(data.name, data.class_names, data.splits, unlabelled, augmented)

    def describe(self, data: DistillationData) -> str:
        extra = f"; {len(data.unlabelled)} unlabelled texts" if data.unlabelled else ""
        extra += f"; {len(data.augmented)} augmented copies" if data.augmented else ""
        return super().describe(data) + extra

    def build(self, config, data: DistillationData):
        settings = self.settings(config)
        teacher = load_teacher(settings.teacher, data.class_names)
        for split in ("train", "validation"):
            part = data.splits[split]
            extra = data.unlabelled + data.augmented if split == "train" else ()
            texts = np.concatenate([part.texts, np.array(extra, object)])
            labels = np.concatenate(
                [part.labels, np.full(len(texts) - len(part), NO_LABEL, part.labels.dtype)]
            )
            targets = distillation_targets(labels, teacher_probabilities(teacher, texts, split))
            data.targets[split] = LabeledTexts(texts, targets)
        student_texts = data.targets["train"].texts
        model = build_text_classifier(
            config.model, data.num_classes, student_texts, **config.model_options
        )
        plan = FitPlan.for_model(model, config.resolved_input_pipeline(), xla=config.xla)
        fit_on_targets = plan.make_batches

        def target_batches(part, batch_size, shuffle_seed):
            split = next(name for name, p in data.splits.items() if p is part)
            return fit_on_targets(data.targets[split], batch_size, shuffle_seed)

        plan = dataclasses.replace(
            plan,
            make_batches=target_batches,
            loss=DistillationLoss(settings.temperature, settings.teacher_weight),
            metrics=[LabelAccuracy()],
        )
        return model, plan


def load_teacher(teacher: str | Path, class_names: tuple[str, ...]):
    """The teacher export, which must know the same classes in the same order."""
    from kerasformer.loading.exported_classifier import ExportedClassifier

    exported = ExportedClassifier(teacher)
    if exported.threshold is not None:
        raise KerasformerError(
            f"the teacher {teacher} is a multi-label classifier; distillation learns one "
            "class per text from a teacher's probabilities, so give a single-label teacher."
        )
    if tuple(exported.class_names) != tuple(class_names):
        raise KerasformerError(
            f"the teacher {teacher} predicts {', '.join(exported.class_names)}, but the "
            f"dataset's classes are {', '.join(class_names)}; distil from a teacher trained "
            "on this dataset."
        )
    return exported


def teacher_probabilities(teacher, texts: np.ndarray, split: str) -> np.ndarray:
    """The teacher's probabilities for ``texts``, shortest texts first (less padding)."""
    order = np.argsort([len(text) for text in texts], kind="stable")
    rows = np.zeros((len(texts), len(teacher.class_names)), np.float32)
    steps = range(0, len(texts), TEACHER_BATCH)
    for start in tqdm(steps, desc=f"Teacher on {split}", unit=" batches", disable=None):
        chosen = order[start : start + TEACHER_BATCH]
        rows[chosen] = teacher.predict_proba([str(texts[i]) for i in chosen], TEACHER_BATCH)
    return rows


def read_unlabelled_texts(path: str | Path | None) -> tuple[str, ...]:
    """Non-empty lines of a UTF-8 text file, one text each."""
    if path is None:
        return ()
    path = Path(path)
    if not path.is_file():
        raise KerasformerError(
            f"--unlabelled {path} is not a file; give a UTF-8 text file with one text a line."
        )
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise KerasformerError(
            f"--unlabelled {path} is not UTF-8 text (byte {error.start}); save it as UTF-8."
        ) from None
    texts = tuple(line.strip() for line in lines if line.strip())
    if not texts:
        raise KerasformerError(f"--unlabelled {path} holds no text; put one text on each line.")
    return texts
