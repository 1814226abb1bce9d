"""``kerasformer train``: train a classifier, report its metrics, export it."""

from __future__ import annotations

import argparse

from kerasformer.cli._arguments import (
    DATASET_NAMES,
    DATASETS_BY_TASK,
    MODEL_NAMES,
    MODELS_BY_TASK,
    TRAIN_TASK_NAMES,
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
    ("--maxlen", positive_int, "longest text in tokens; longer ones are truncated (default 512)"),
    ("--embed-dim", positive_int, "embedding size (default 32)"),
    ("--num-heads", positive_int, "attention heads (default 2)"),
    ("--ff-dim", positive_int, "feed-forward hidden size (default 32)"),
    ("--key-dim", positive_int, "size per head (default embed-dim / num-heads)"),
    ("--dropout", rate, "dropout rate (default 0.1)"),
    ("--num-layers", positive_int, "encoder and decoder blocks of sequence models (default 2)"),
    ("--units", positive_int, "GRU size of the rnn translator (default 256)"),
)
# Which model options each task's model takes (the others are mistakes).
OPTIONS_BY_MODEL = {
    ("classification", "transformer"): {
        "vocab_size", "maxlen", "embed_dim", "num_heads", "ff_dim", "key_dim", "dropout",
        "norm_first", "position",
    },
    ("classification", "bert"): {"preprocess", "encoder", "dropout"},
    ("translation", "transformer"): {
        "vocab_size", "maxlen", "embed_dim", "num_heads", "ff_dim", "num_layers", "dropout",
        "norm_first", "position",
    },
    ("translation", "rnn"): {"vocab_size", "maxlen", "embed_dim", "units", "dropout"},
    ("language-model", "transformer"): {
        "maxlen", "embed_dim", "num_heads", "ff_dim", "num_layers", "dropout", "norm_first",
        "position",
    },
    ("question-answering", "bert"): {"preprocess", "encoder", "seq_length", "doc_stride"},
}  # fmt: skip
OPTIONS_BY_MODEL["distillation", "transformer"] = OPTIONS_BY_MODEL["classification", "transformer"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a model, print its metrics and export it",
        description="Train a classifier, a translator or a language model, print validation "
        "and test metrics, and export it as a SavedModel (raw strings in: probabilities, "
        "translations or continued text out) with model.keras, history.json and "
        "metrics.json beside it.",
    )
    parser.add_argument(
        "--task", choices=TRAIN_TASK_NAMES, default="classification",
        help="classification (datasets bbc_news, ag_news), translation (spa_eng; models "
        "transformer and rnn), language-model (wikitext2) or question-answering (squad; "
        "model bert) (default classification)",
    )  # fmt: skip
    parser.add_argument(
        "--model", choices=MODEL_NAMES, help="(default: the task's first: transformer, bert for "
        "question-answering)",
    )  # fmt: skip
    parser.add_argument(
        "--recipe",
        choices=("from-scratch", "frozen", "unfrozen", "frozen-then-unfrozen"),
        help="how to train (default: from-scratch for transformer, unfrozen for bert)",
    )
    add_shared_arguments(parser)
    add_bert_arguments(parser.add_argument_group("bert model"))
    parser.set_defaults(run=run)


def add_shared_arguments(
    parser: argparse.ArgumentParser, dataset_names: tuple[str, ...] = DATASET_NAMES
) -> None:
    """Data, training length, seeds, export, speed and transformer options (train, distill)."""
    add_dataset_arguments(parser, default=None, names=dataset_names)
    parser.add_argument("--epochs", type=positive_int, default=10, help="(default 10)")
    parser.add_argument("--batch-size", type=positive_int, default=128)
    parser.add_argument(
        "--learning-rate", type=positive_float, default=1e-3,
        help="Adam learning rate of from-scratch and frozen training (default 0.001)",
    )  # fmt: skip
    parser.add_argument("--seed", type=non_negative_int, default=0, help="same seed, same metrics")
    parser.add_argument(
        "--deterministic", action="store_true",
        help="also make TensorFlow ops deterministic (for GPUs; CPU runs repeat without it)",
    )  # fmt: skip
    parser.add_argument(
        "--validation-fraction",
        type=fraction,
        default=0.1,
        help="part of train held out for validation (default 0.1)",
    )
    parser.add_argument("--export-dir", help="where to export (default saved_models/DATASET-MODEL)")
    parser.add_argument(
        "--overwrite", action="store_true",
        help="replace an existing export (only a directory that kerasformer wrote)",
    )  # fmt: skip
    parser.add_argument(
        "--resume", action="store_true",
        help="continue an interrupted run from its last completed epoch (its backups are "
        "kept in EXPORT_DIR.training/ while it trains)",
    )  # fmt: skip
    speed = parser.add_argument_group("devices and speed")
    speed.add_argument(
        "--strategy", choices=("default", "one-device", "mirrored", "multi-worker"),
        default="default",
        help="tf.distribute strategy: mirrored uses every local GPU (or logical CPU); "
        "multi-worker reads TF_CONFIG (default: TensorFlow's own placement)",
    )  # fmt: skip
    speed.add_argument(
        "--mixed-precision", action="store_true",
        help="compute in float16 on GPU (with loss scaling) or bfloat16 on CPU",
    )  # fmt: skip
    speed.add_argument(
        "--xla", action="store_true",
        help="XLA-compile training; string preprocessing moves into the input pipeline",
    )  # fmt: skip
    speed.add_argument(
        "--input-pipeline", choices=("strings", "padded", "dynamic", "bucketed"),
        help="what model.fit reads: raw strings, or token ids (BERT: word pieces) made "
        "once and padded to maxlen (BERT: the preprocess model's sequence length), to each "
        "batch's longest text, or in batches of similar length (default: bucketed)",
    )  # fmt: skip
    group = parser.add_argument_group("transformer model")
    for flag, kind, text in TRANSFORMER_OPTIONS:
        group.add_argument(flag, type=kind, help=text)
    group.add_argument("--norm-first", action="store_true", help="pre-LN instead of post-LN")
    group.add_argument(
        "--position", choices=("learned", "sinusoidal", "rotary", "relative"),
        help="how the model knows word order (default learned)",
    )  # fmt: skip


def add_bert_arguments(bert) -> None:
    bert.add_argument(
        "--preprocess", help="TF-Hub BERT preprocess handle: URL or directory (default: tfhub.dev)"
    )
    bert.add_argument("--encoder", help="TF-Hub BERT encoder handle: URL or directory")
    bert.add_argument(
        "--fine-tune-learning-rate", type=positive_float, default=3e-5,
        help="AdamW peak learning rate when the encoder trains (default 3e-5)",
    )  # fmt: skip
    bert.add_argument(
        "--seq-length", type=positive_int,
        help="question answering: tokens per window, question included (default 384)",
    )  # fmt: skip
    bert.add_argument(
        "--doc-stride", type=positive_int,
        help="question answering: context tokens between window starts (default 128)",
    )  # fmt: skip
    bert.add_argument(
        "--frozen-epochs", type=positive_int, default=1,
        help="head-only epochs before fine-tuning in frozen-then-unfrozen (default 1)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from kerasformer.training import TrainingConfig, train
    from kerasformer.training.trainer import HISTORY_FILE, HISTORY_PLOT_FILE, METRICS_FILE

    args.model = args.model or MODELS_BY_TASK[args.task][0]
    config = TrainingConfig(
        task=args.task,
        model=args.model,
        dataset=args.dataset or DATASETS_BY_TASK[args.task][0],
        data_dir=args.data_dir,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        recipe=args.recipe,
        fine_tune_learning_rate=args.fine_tune_learning_rate,
        frozen_epochs=args.frozen_epochs,
        seed=args.seed,
        deterministic=args.deterministic,
        strategy=args.strategy,
        mixed_precision=args.mixed_precision,
        xla=args.xla,
        input_pipeline=args.input_pipeline,
        validation_fraction=args.validation_fraction,
        export_dir=args.export_dir,
        overwrite=args.overwrite,
        resume=args.resume,
        model_options=model_options(args),
        **distillation_settings(args),
    )
    result = train(config)
    if result.interrupted:
        print("Training was interrupted; the model as trained so far is evaluated and exported.")
    from kerasformer.training.tasks import task_named

    names = task_named(args.task).headline_metrics
    rows = [
        (
            split,
            len(result.data.splits[split]),
            *(round(result.metrics[split][name], 4) for name in names),
        )
        for split in ("validation", "test")
    ]
    print()
    print(tabulate(rows, headers=("split", "examples", *names)))
    written = ["SavedModel", "model.keras", HISTORY_FILE, HISTORY_PLOT_FILE, METRICS_FILE]
    if not (result.export_dir / HISTORY_PLOT_FILE).exists():  # stopped inside the first epoch
        written.remove(HISTORY_PLOT_FILE)
    print(f"\nExported to {result.export_dir} ({', '.join(written)}).")
    return 0


def distillation_settings(args: argparse.Namespace) -> dict:
    """The `distill` command's settings; `train` has none of them."""
    names = ("teacher", "temperature", "teacher_weight", "unlabelled_texts", "augmented_copies")
    return {name: getattr(args, name) for name in names if hasattr(args, name)}


def model_options(args: argparse.Namespace) -> dict:
    """The options of the chosen model; another model's options are a mistake."""
    from kerasformer.errors import KerasformerError

    given = {
        flag[2:].replace("-", "_"): getattr(args, flag[2:].replace("-", "_"))
        for flag, _, _ in TRANSFORMER_OPTIONS
    }
    given.update(
        position=args.position, preprocess=args.preprocess, encoder=args.encoder,
        seq_length=args.seq_length, doc_stride=args.doc_stride,
    )  # fmt: skip
    given["norm_first"] = True if args.norm_first else None
    given = {name: value for name, value in given.items() if value not in (None, "")}
    allowed = OPTIONS_BY_MODEL.get((args.task, args.model))
    if allowed is None:
        raise KerasformerError(f"--model {args.model} does not fit --task {args.task}.")
    stray = sorted(set(given) - allowed)
    if stray:
        flags = ", ".join("--" + name.replace("_", "-") for name in stray)
        raise KerasformerError(
            f"{flags} do(es) not apply to --model {args.model} (--task {args.task})."
        )
    return given
