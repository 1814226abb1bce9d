"""``kerasformer distill``: a from-scratch classifier trained on a teacher's probabilities."""

from __future__ import annotations

import argparse

from kerasformer.cli import train
from kerasformer.cli._arguments import non_negative_int, positive_float, share
from kerasformer.cli.command import Command
from kerasformer.registry import TASKS

DISTILLATION = TASKS["distillation"]


HELP = "train a fast from-scratch classifier on a teacher export's probabilities"
DESCRIPTION = (
    "Knowledge distillation: the teacher (any classifier export, e.g. a "
    "fine-tuned BERT) gives its class probabilities for the training and validation "
    "texts, for --unlabelled ones and for --augment copies; the from-scratch "
    "transformer learns from them, softened by --temperature, mixed with the true "
    "labels by --teacher-weight. The "
    "student is evaluated on the true labels and exported like `train`'s classifiers."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--teacher", required=True, metavar="EXPORT",
        help="export directory of a classifier trained on the same dataset",
    )  # fmt: skip
    parser.add_argument(
        "--temperature", type=positive_float,
        help=f"softens the teacher's and the student's probabilities {default('temperature')}",
    )  # fmt: skip
    parser.add_argument(
        "--teacher-weight", type=share,
        help="share of the loss from the teacher, the rest from the labels "
        + default("teacher_weight"),
    )  # fmt: skip
    parser.add_argument(
        "--unlabelled", dest="unlabelled_texts", metavar="FILE",
        help="UTF-8 text file, one text a line: more texts for the teacher to label",
    )  # fmt: skip
    parser.add_argument(
        "--augment", dest="augmented_copies", type=non_negative_int, metavar="N",
        help="N perturbed copies of each training text (words dropped, n-grams) for the "
        "teacher to label " + default("augmented_copies"),
    )  # fmt: skip
    train.add_shared_arguments(parser, DISTILLATION.dataset_names)
    # Distillation trains its registry entry's one model; BERT's flags are not offered.
    parser.set_defaults(
        task=DISTILLATION.name, model=None, recipe=None,
        preprocess=None, encoder=None, seq_length=None, doc_stride=None,
    )  # fmt: skip


def default(setting: str) -> str:
    """``(default X)`` with X as distillation's settings have it."""
    from kerasformer.training.tasks.distillation_settings import DistillationSettings

    return f"(default {getattr(DistillationSettings, setting)})"


def run(args: argparse.Namespace) -> int:
    from kerasformer.training.tasks.distillation_settings import DistillationSettings

    # The teacher is checked before `train` imports TensorFlow.
    DistillationSettings(teacher=args.teacher).require_teacher_export()
    return train.run(args)


COMMAND = Command("distill", HELP, DESCRIPTION, add_arguments, run)
