"""``kerasformer train``: train a classifier, report its metrics, export it."""

from __future__ import annotations

import argparse

from kerasformer.cli._arguments import (
    MODEL_NAMES,
    add_dataset_arguments,
    fraction,
    non_negative_int,
    positive_float,
    positive_int,
    rate,
)

# Transformer options: (flag, type, help). Unset ones keep the model's defaults.
TRANSFORMER_OPTIONS = (
    ("--vocab-size", positive_int, "vocabulary size (default 20000)"),
    ("--maxlen", positive_int, "longest text in tokens; longer ones are truncated (default 256)"),
    ("--embed-dim", positive_int, "embedding size (default 32)"),
    ("--num-heads", positive_int, "attention heads (default 2)"),
    ("--ff-dim", positive_int, "feed-forward hidden size (default 32)"),
    ("--key-dim", positive_int, "size per head (default embed-dim / num-heads)"),
    ("--dropout", rate, "dropout rate (default 0.1)"),
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a classifier, print its metrics and export it",
        description="Train a classifier, print validation and test metrics, and export it "
        "as a SavedModel (raw strings in, probabilities out) with model.keras, history.json "
        "and metrics.json beside it.",
    )
    parser.add_argument("--model", choices=MODEL_NAMES, default="transformer")
    add_dataset_arguments(parser, default="bbc_news")
    parser.add_argument("--epochs", type=positive_int, default=10, help="(default 10)")
    parser.add_argument("--batch-size", type=positive_int, default=128)
    parser.add_argument("--learning-rate", type=positive_float, default=1e-3)
    parser.add_argument("--seed", type=non_negative_int, default=0, help="same seed, same metrics")
    parser.add_argument(
        "--validation-fraction",
        type=fraction,
        default=0.1,
        help="part of train held out for validation (default 0.1)",
    )
    parser.add_argument("--export-dir", help="where to export (default saved_models/DATASET-MODEL)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing export")
    group = parser.add_argument_group("transformer model")
    for flag, kind, text in TRANSFORMER_OPTIONS:
        group.add_argument(flag, type=kind, help=text)
    group.add_argument("--norm-first", action="store_true", help="pre-LN instead of post-LN")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from kerasformer.training import TrainingConfig, train

    config = TrainingConfig(
        model=args.model,
        dataset=args.dataset,
        data_dir=args.data_dir,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        seed=args.seed,
        validation_fraction=args.validation_fraction,
        export_dir=args.export_dir,
        overwrite=args.overwrite,
        model_options=model_options(args),
    )
    result = train(config)
    if result.interrupted:
        print("Training was interrupted; the model as trained so far is evaluated and exported.")
    rows = [
        (split, len(result.data.splits[split]), round(result.metrics[split]["accuracy"], 4))
        for split in ("validation", "test")
    ]
    print()
    print(tabulate(rows, headers=("split", "examples", "accuracy")))
    print(
        f"\nExported to {result.export_dir} (SavedModel, model.keras, history.json, metrics.json)."
    )
    return 0


def model_options(args: argparse.Namespace) -> dict:
    names = [flag[2:].replace("-", "_") for flag, _, _ in TRANSFORMER_OPTIONS]
    options = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    if args.norm_first:
        options["norm_first"] = True
    return options
