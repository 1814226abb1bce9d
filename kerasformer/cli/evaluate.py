"""``kerasformer evaluate``: accuracy, per-class precision/recall/F1 and confusion matrix."""

from __future__ import annotations

import argparse
from pathlib import Path

from kerasformer.cli._arguments import (
    DATASETS_BY_TASK,
    add_dataset_arguments,
    add_model_argument,
)
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


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help=HELP, description=DESCRIPTION)
    add_model_argument(parser)
    add_dataset_arguments(
        parser, default=None, names=DATASETS_BY_TASK["classification"], required=True
    )
    parser.add_argument(
        "--split",
        choices=("train", "validation", "test"),
        default="test",
        help="which split to evaluate on (default test)",
    )
    parser.add_argument("--output", help="also write the metrics to this JSON file")
    parser.add_argument(
        "--confusion-matrix",
        metavar="PNG",
        help="where to draw the confusion matrix "
        "(default: MODEL/confusion_matrix-DATASET-SPLIT.png)",
    )
    add_overwrite_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from kerasformer.datasets import load_dataset
    from kerasformer.loading import ExportedClassifier
    from kerasformer.plots import plot_confusion_matrix
    from kerasformer.training import classification_metrics

    picture = args.confusion_matrix or (
        Path(args.model) / f"confusion_matrix-{args.dataset}-{args.split}.png"
    )
    if args.output:
        require_output_file(args.output, "--output", args.overwrite)
    require_output_file(picture, "--confusion-matrix", args.overwrite)
    classifier = ExportedClassifier(args.model)
    data = load_dataset(args.dataset, args.data_dir)
    require_same_classes(classifier.class_names, data.class_names, args.dataset)
    part = data.split(args.split)
    probabilities = classifier.predict_proba(list(part.texts))
    metrics = classification_metrics(part.labels, probabilities, data.class_names)
    print(format_report(metrics, f"{args.dataset} {args.split} ({len(part)} examples)"))
    if args.output:
        save_json(metrics, args.output, "--output", args.overwrite)
    figure = plot_confusion_matrix(
        metrics["confusion_matrix"], data.class_names, title=f"{args.dataset} {args.split}"
    )
    path = save_picture(figure, picture, "--confusion-matrix", args.overwrite)
    print(f"\nConfusion matrix drawn in {path}")
    return 0


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
