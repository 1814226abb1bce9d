"""``kerasformer distill``: a from-scratch classifier trained on a teacher's probabilities."""

from __future__ import annotations

from kerasformer.cli import train
from kerasformer.cli._arguments import DATASETS_BY_TASK, non_negative_int, positive_float, share


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "distill",
        help="train a fast from-scratch classifier on a teacher export's probabilities",
        description="Knowledge distillation: the teacher (any classifier export, e.g. a "
        "fine-tuned BERT) gives its class probabilities for the training and validation "
        "texts, for --unlabelled ones and for --augment copies; the from-scratch "
        "transformer learns from them, softened by --temperature, mixed with the true "
        "labels by --teacher-weight. The "
        "student is evaluated on the true labels and exported like `train`'s classifiers.",
    )
    parser.add_argument(
        "--teacher", required=True, metavar="EXPORT",
        help="export directory of a classifier trained on the same dataset",
    )  # fmt: skip
    parser.add_argument(
        "--temperature", type=positive_float, default=2.0,
        help="softens the teacher's and the student's probabilities (default 2)",
    )  # fmt: skip
    parser.add_argument(
        "--teacher-weight", type=share, default=0.5,
        help="share of the loss from the teacher, the rest from the labels (default 0.5)",
    )  # fmt: skip
    parser.add_argument(
        "--unlabelled", dest="unlabelled_texts", metavar="FILE",
        help="UTF-8 text file, one text a line: more texts for the teacher to label",
    )  # fmt: skip
    parser.add_argument(
        "--augment", dest="augmented_copies", type=non_negative_int, default=0, metavar="N",
        help="N perturbed copies of each training text (words dropped, n-grams) for the "
        "teacher to label (default 0)",
    )  # fmt: skip
    train.add_shared_arguments(parser, DATASETS_BY_TASK["distillation"])
    parser.set_defaults(
        run=train.run, task="distillation", model="transformer", recipe=None,
        preprocess=None, encoder=None, seq_length=None, doc_stride=None,
        fine_tune_learning_rate=3e-5, frozen_epochs=1,
    )  # fmt: skip
