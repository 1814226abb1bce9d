"""``kerasformer evaluate``: accuracy, per-class precision/recall/F1 and confusion matrix."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from kerasformer.cli._arguments import (
    DATASETS_BY_TASK,
    add_dataset_arguments,
    add_model_argument,
    reader_default,
)
from kerasformer.cli.command import Command
from kerasformer.cli.outputs import (
    add_overwrite_argument,
    require_output_file,
    save_json,
    save_picture,
)

HELP = "measure an exported model on a dataset split"
DESCRIPTION = (
    "Evaluate an exported model on a dataset split: accuracy, per-class "
    "precision, recall and F1, and the confusion matrix."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    add_dataset_arguments(parser, default=None, names=DATASETS_BY_TASK["classification"])
    own = parser.add_argument_group(
        "your own labelled texts (instead of --dataset)",
        "a CSV or TSV file with a header, a JSON Lines file, or a folder of class folders, "
        "its labels among the model's classes",
    )
    own.add_argument("--test-file", metavar="PATH", help="the examples to evaluate on")
    from kerasformer.datasets.from_files import from_csv

    own.add_argument(
        "--text-column", metavar="COLUMNS",
        help="the text's column(s) " + reader_default(from_csv, "text_column"),
    )  # fmt: skip
    own.add_argument(
        "--label-column", metavar="COLUMN",
        help="the label's column " + reader_default(from_csv, "label_column"),
    )  # fmt: skip
    own.add_argument(
        "--delimiter", metavar="D", help="a CSV/TSV file's separator (default: sniffed)"
    )
    parser.add_argument(
        "--split",
        choices=("train", "validation", "test"),
        default="test",
        help="which split to evaluate on (default %(default)s)",
    )
    parser.add_argument("--output", help="also write the metrics to this JSON file")
    parser.add_argument(
        "--confusion-matrix",
        metavar="PNG",
        help="where to draw the confusion matrix "
        "(default: MODEL/confusion_matrix-DATASET-SPLIT.png)",
    )
    add_overwrite_argument(parser)


def run(args: argparse.Namespace) -> int:
    from kerasformer.datasets.from_files import data_name
    from kerasformer.loading.exported_classifier import ExportedClassifier

    require_one_source(args)
    name = f"{args.dataset} {args.split}" if args.dataset else data_name(args.test_file)
    picture = args.confusion_matrix or (
        Path(args.model) / f"confusion_matrix-{name.replace(' ', '-')}.png"
    )
    if args.output:
        require_output_file(args.output, "--output", args.overwrite)
    require_output_file(picture, "--confusion-matrix", args.overwrite)
    classifier = ExportedClassifier(args.model)
    if classifier.threshold is not None:
        from kerasformer.errors import KerasformerError

        raise KerasformerError(
            f"{args.model} is a multi-label classifier; evaluate measures classifiers of one "
            "class per text. Its micro and macro F1 on validation and test are in its "
            "metrics.json."
        )
    from kerasformer.datasets import load_dataset
    from kerasformer.datasets.from_files import read_labelled_file
    from kerasformer.plots import plot_confusion_matrix
    from kerasformer.training.evaluation import classification_metrics

    if args.dataset:
        data = load_dataset(args.dataset, args.data_dir)
        require_same_classes(classifier.class_names, data.class_names, args.dataset)
        part = data.split(args.split)
    else:
        part = read_labelled_file(
            args.test_file, classifier.class_names, f"the classes of {args.model}",
            text_column=args.text_column, label_column=args.label_column,
            delimiter=args.delimiter,
        )  # fmt: skip
    probabilities = classifier.predict_proba(list(part.texts))
    metrics = classification_metrics(part.labels, probabilities, classifier.class_names)
    print(format_report(metrics, f"{name} ({len(part)} examples)"))
    if args.output:
        save_json(metrics, args.output, "--output", args.overwrite)
    figure = plot_confusion_matrix(metrics["confusion_matrix"], classifier.class_names, title=name)
    path = save_picture(figure, picture, "--confusion-matrix", args.overwrite)
    print(f"\nConfusion matrix drawn in {path}")
    return 0


def require_one_source(args: argparse.Namespace) -> None:
    from kerasformer.errors import KerasformerError

    if (args.dataset is None) == (args.test_file is None):
        raise KerasformerError(
            "name the examples to evaluate on: --dataset NAME (with --split), or "
            "--test-file PATH with your own labelled texts; give one of them."
        )
    if args.test_file is None and (args.text_column or args.label_column or args.delimiter):
        raise KerasformerError("--text-column, --label-column and --delimiter go with --test-file.")
    if args.test_file is not None and not os.path.exists(args.test_file):
        raise KerasformerError(
            f"--test-file {args.test_file} does not exist; check the path (relative to "
            f"{os.getcwd()})."
        )
    if args.dataset is not None and args.dataset.startswith("tfds:"):
        raise KerasformerError(
            "evaluate reads kerasformer's named datasets or --test-file; for a TFDS dataset, "
            "look at the test metrics `kerasformer train --dataset tfds:NAME` printed."
        )


def require_same_classes(model_classes, data_classes, dataset: str) -> None:
    from kerasformer.errors import KerasformerError

    if tuple(model_classes) != tuple(data_classes):
        raise KerasformerError(
            f"the model predicts {', '.join(model_classes)} but {dataset} has classes "
            f"{', '.join(data_classes)}; evaluate it on the dataset it was trained for."
        )


def format_report(metrics: dict, title: str) -> str:
    from tabulate import tabulate

    names = list(metrics["per_class"])
    per_class = [
        (
            name,
            *(round(metrics["per_class"][name][key], 4) for key in ("precision", "recall", "f1")),
            metrics["per_class"][name]["support"],
        )
        for name in names
    ]
    confusion = [(name, *row) for name, row in zip(names, metrics["confusion_matrix"], strict=True)]
    return "\n\n".join(
        [
            f"{title}\naccuracy: {metrics['accuracy']:.4f}",
            tabulate(per_class, headers=("class", "precision", "recall", "f1", "support")),
            "confusion matrix (rows: true class, columns: predicted)\n"
            + tabulate(confusion, headers=("", *names)),
        ]
    )


COMMAND = Command("evaluate", HELP, DESCRIPTION, add_arguments, run)
