"""``kerasformer train``: train a classifier, report its metrics, export it."""

from __future__ import annotations

import argparse

from kerasformer import registry
from kerasformer.cli._arguments import (
    DATASET_NAMES,
    MODEL_NAMES,
    TRAIN_TASK_NAMES,
    add_dataset_arguments,
    fraction,
    non_negative_int,
    positive_float,
    positive_int,
    rate,
    reader_default,
)
from kerasformer.cli.command import Command
from kerasformer.training.acceleration import STRATEGIES
from kerasformer.training.config import LR_SCHEDULES, default_setting

# Model options: (flag, type, what it sets). Unset ones keep the model's defaults,
# which --help reads from each model's builder.
TRANSFORMER_OPTIONS = (
    ("--vocab-size", positive_int, "vocabulary size"),
    ("--maxlen", positive_int, "longest text in tokens; longer ones are truncated"),
    ("--embed-dim", positive_int, "embedding size"),
    ("--num-heads", positive_int, "attention heads"),
    ("--ff-dim", positive_int, "feed-forward hidden size"),
    ("--key-dim", positive_int, "size per head (default embed-dim / num-heads)"),
    ("--dropout", rate, "dropout rate"),
    ("--num-layers", positive_int, "encoder and decoder blocks of sequence models"),
    ("--units", positive_int, "GRU size of the rnn translator, LSTM size of the rnn tagger"),
)
# Which model options each task's model takes (the others are mistakes), for one release.
OPTIONS_BY_MODEL = {
    (task.name, model.name): set(model.options)
    for task in registry.TASKS.values()
    for model in task.models
}


# TrainingConfig's settings the command line sets by the same name; unset ones keep
# TrainingConfig's defaults.
RUN_SETTINGS = (
    "data_dir", "epochs", "batch_size", "learning_rate", "recipe", "fine_tune_learning_rate",
    "frozen_epochs", "weight_decay", "clip_norm", "lr_schedule", "warmup_fraction",
    "seed", "deterministic", "strategy", "mixed_precision", "xla",
    "input_pipeline", "validation_fraction", "export_dir", "serving_version", "overwrite",
    "resume",
    "train_file", "validation_file", "test_file", "test_fraction", "tfds_data_dir",
    "early_stopping", "monitor", "average_last", "tensorboard", "tensorboard_update_freq",
)  # fmt: skip
# Options of a task's reader of your own files (see kerasformer.registry.TaskEntry).
DATA_OPTIONS = (
    "text_column", "label_column", "delimiter", "source_column", "target_column",
    "multi_label", "label_separator",
)  # fmt: skip
# Settings of a task's own that a command sets (distill's); see TrainingConfig.task_options.
TASK_SETTINGS = (
    "teacher", "temperature", "teacher_weight", "unlabelled_texts", "augmented_copies"
)  # fmt: skip


def defaulted(text: str, setting: str) -> str:
    """Help text ending in the setting's default, as TrainingConfig has it."""
    default = f"(default {default_setting(setting)})"
    return f"{text} {default}" if text else default


def with_model_defaults(text: str, flag: str) -> str:
    """Help text ending in each model's default for the option, from its builder."""
    option = flag[2:].replace("-", "_")
    found, takers = {}, set()
    for task in registry.TASKS.values():
        for model in task.models:
            if option not in model.options or model in takers:
                continue
            takers.add(model)  # distillation's student is classification's model
            value = registry.resolve(model.defaults).get(option) if model.defaults else None
            if value is not None:
                found[task.name if len(task.models) == 1 else f"{task.name} {model.name}"] = value
    if not found:
        return text
    return f"{text} (default {in_words(found, every_one=len(found) == len(takers))})"


def in_words(value_by_where: dict[str, object], every_one: bool = True) -> str:
    """``128 for question-answering, 384 for ner``; just ``128`` where the places are
    every one there is and all agree."""
    if every_one and len({str(value) for value in value_by_where.values()}) == 1:
        return str(next(iter(value_by_where.values())))
    return ", ".join(f"{value} for {where}" for where, value in value_by_where.items())


def tasks_in_words() -> str:
    return "; ".join(
        f"{name} (datasets {', '.join(entry.dataset_names)}; models {', '.join(entry.model_names)})"
        for name, entry in registry.TASKS.items()
        if name in TRAIN_TASK_NAMES
    )


def recipe_defaults_in_words() -> str:
    return in_words(
        {m.name: m.default_recipe for task in registry.TASKS.values() for m in task.models}
    )


def input_pipeline_defaults_in_words() -> str:
    return in_words(
        {
            m.name: m.default_input_pipeline
            for task in registry.TASKS.values()
            for m in task.models
            if m.input_pipelines
        }
    )


HELP = "train a model, print its metrics and export it"
DESCRIPTION = (
    "Train a classifier, a translator or a language model, print validation "
    "and test metrics, and export it as a SavedModel (raw strings in: probabilities, "
    "translations or continued text out) with model.keras, history.json and "
    "metrics.json beside it."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--task", choices=TRAIN_TASK_NAMES,
        help=f"{tasks_in_words()} (default {default_setting('task')})",
    )  # fmt: skip
    parser.add_argument(
        "--model", choices=MODEL_NAMES, help="(default: the task's first)",
    )  # fmt: skip
    parser.add_argument(
        "--recipe", choices=registry.RECIPE_NAMES,
        help=f"how to train (default: {recipe_defaults_in_words()})",
    )  # fmt: skip
    add_shared_arguments(parser)
    add_bert_arguments(parser.add_argument_group("bert model"))


def add_own_data_arguments(parser: argparse.ArgumentParser) -> None:
    from kerasformer.datasets.from_files import from_csv
    from kerasformer.datasets.pairs_from_files import from_sentence_pairs

    own = parser.add_argument_group(
        "your own data (instead of --dataset)",
        "classification: a CSV or TSV file with a header, a JSON Lines file, or a folder "
        "with one sub-folder of .txt files per class; translation: a TSV, CSV or JSON Lines "
        "file of sentence pairs; language-model: UTF-8 text files (or folders of .txt files)",
    )
    # (flag, metavar, help); each sets the TrainingConfig setting of its name (DATA_OPTIONS:
    # the task reader's option, its default the reader's).
    own_data_flags = (
        ("--train-file", "PATH", "the training examples"),
        ("--validation-file", "PATH",
         "validation examples (default: --validation-fraction of --train-file)"),
        ("--test-file", "PATH", "test examples (default: --test-fraction of --train-file)"),
        ("--text-column", "COLUMNS", "the text's column by name or 0-based index; several, "
         "comma-separated, are joined " + reader_default(from_csv, "text_column")),
        ("--label-column", "COLUMN",
         "the label's column " + reader_default(from_csv, "label_column")),
        ("--delimiter", "D", "the field separator of a CSV or TSV file (default: sniffed)"),
        ("--source-column", "COLUMN",
         "translation: the source sentence's column; its name is the language's "
         + reader_default(from_sentence_pairs, "source_column")),
        ("--target-column", "COLUMN", "translation: the translation's column "
         + reader_default(from_sentence_pairs, "target_column")),
    )  # fmt: skip
    for flag, metavar, text in own_data_flags:
        own.add_argument(flag, metavar=metavar, help=text)
    own.add_argument(
        "--multi-label", action="store_true", default=None,
        help="classification: each text has one or more labels, separated by "
        "--label-separator (a JSON list in JSON Lines); sigmoid outputs, a threshold "
        "chosen on validation, micro and macro F1",
    )  # fmt: skip
    own.add_argument(
        "--label-separator", metavar="S",
        help="what separates a multi-label text's labels "
        + reader_default(from_csv, "label_separator"),
    )  # fmt: skip
    own.add_argument(
        "--tfds-data-dir", metavar="DIR",
        help="with --dataset tfds:NAME: the folder it is prepared in (`tfds build NAME "
        "--data_dir DIR`; default TFDS's ~/tensorflow_datasets); --text-column and "
        "--label-column choose its features",
    )  # fmt: skip
    own.add_argument(
        "--test-fraction", type=fraction,
        help=defaulted("part of --train-file held out for testing", "test_fraction"),
    )  # fmt: skip


def add_shared_arguments(
    parser: argparse.ArgumentParser, dataset_names: tuple[str, ...] = DATASET_NAMES
) -> None:
    """Data, training length, seeds, export, speed and transformer options (train, distill)."""
    parser.add_argument(
        "--config", metavar="FILE",
        help="train again with the settings of an export's config.json (or a JSON or YAML "
        "file of TrainingConfig settings); flags given beside it win",
    )  # fmt: skip
    add_dataset_arguments(parser, default=None, names=dataset_names)
    add_own_data_arguments(parser)
    parser.add_argument("--epochs", type=positive_int, help=defaulted("", "epochs"))
    parser.add_argument("--batch-size", type=positive_int, help=defaulted("", "batch_size"))
    parser.add_argument(
        "--learning-rate", type=positive_float,
        help=defaulted("Adam learning rate of from-scratch and frozen training", "learning_rate"),
    )  # fmt: skip
    parser.add_argument(
        "--weight-decay", type=rate,
        help=defaulted("AdamW's decoupled weight decay for from-scratch and frozen training; "
                       "0 is Adam", "weight_decay"),
    )  # fmt: skip
    parser.add_argument(
        "--clip-norm", type=positive_float,
        help="from-scratch and frozen training: clip the gradients' global norm to this "
        "(default: no clipping)",
    )  # fmt: skip
    parser.add_argument(
        "--lr-schedule", choices=LR_SCHEDULES,
        help=defaulted("from-scratch and frozen training's learning rate: constant, or a "
                       "linear warm-up over --warmup-fraction of the steps, then a cosine "
                       "decay to 0 (cosine) or 1/sqrt(step) decay (inverse_sqrt, as in the "
                       "transformer paper)", "lr_schedule"),
    )  # fmt: skip
    parser.add_argument(
        "--warmup-fraction", type=rate,
        help=defaulted("part of the steps that warm the learning rate up (cosine and "
                       "inverse_sqrt schedules, unfrozen BERT)", "warmup_fraction"),
    )  # fmt: skip
    parser.add_argument(
        "--seed", type=non_negative_int, help=defaulted("same seed, same metrics", "seed")
    )
    parser.add_argument(
        "--deterministic", action=argparse.BooleanOptionalAction, default=None,
        help="also make TensorFlow ops deterministic (for GPUs; CPU runs repeat without it)",
    )  # fmt: skip
    parser.add_argument(
        "--validation-fraction", type=fraction,
        help=defaulted("part of train held out for validation", "validation_fraction"),
    )  # fmt: skip
    parser.add_argument(
        "--export-dir",
        help="where to export (default saved_models/DATASET-MODEL, or TRAIN_FILE-MODEL)",
    )
    parser.add_argument(
        "--serving-version", type=positive_int, metavar="N",
        help="also lay the SavedModel out as TF Serving reads it, in EXPORT_DIR/N/ (linked, "
        "not copied): --model_base_path=EXPORT_DIR then serves it as version N",
    )  # fmt: skip
    parser.add_argument(
        "--overwrite", action="store_true", default=None,
        help="replace an existing export (only a directory that kerasformer wrote)",
    )  # fmt: skip
    parser.add_argument(
        "--resume", action="store_true", default=None,
        help="continue an interrupted run from its last completed epoch (its backups are "
        "kept in EXPORT_DIR.training/ while it trains)",
    )  # fmt: skip
    watch = parser.add_argument_group("watching training")
    watch.add_argument(
        "--early-stopping", type=positive_int, metavar="PATIENCE",
        help="stop after PATIENCE epochs without a better --monitor and keep the best "
        "epoch's weights (its number is in history.json and metrics.json)",
    )  # fmt: skip
    watch.add_argument(
        "--monitor", metavar="METRIC",
        help=defaulted("what --early-stopping watches, e.g. val_accuracy (higher is better "
                       "unless it is a loss or perplexity)", "monitor"),
    )  # fmt: skip
    watch.add_argument(
        "--average-last", type=positive_int, metavar="N",
        help="end with the mean weights of the last N epochs (with --early-stopping, the N "
        "ending at the best one), as the transformer paper averages its last checkpoints",
    )  # fmt: skip
    watch.add_argument(
        "--tensorboard", metavar="DIR",
        help="write loss, metrics, learning rate and the model graph for `tensorboard "
        "--logdir DIR`",
    )  # fmt: skip
    watch.add_argument(
        "--tensorboard-update-freq", type=positive_int, metavar="N",
        help="also write the training scalars every N batches (default: once per epoch)",
    )  # fmt: skip
    speed = parser.add_argument_group("devices and speed")
    speed.add_argument(
        "--strategy", choices=STRATEGIES,
        help="tf.distribute strategy: mirrored uses every local GPU (or logical CPU); "
        "multi-worker reads TF_CONFIG (default: TensorFlow's own placement)",
    )  # fmt: skip
    speed.add_argument(
        "--mixed-precision", action=argparse.BooleanOptionalAction, default=None,
        help="compute in float16 on GPU (with loss scaling) or bfloat16 on CPU",
    )  # fmt: skip
    speed.add_argument(
        "--xla", action=argparse.BooleanOptionalAction, default=None,
        help="XLA-compile training; string preprocessing moves into the input pipeline",
    )  # fmt: skip
    speed.add_argument(
        "--input-pipeline", choices=registry.INPUT_PIPELINES,
        help="what model.fit reads: raw strings, or token ids (BERT: word pieces) made "
        "once and padded to maxlen (BERT: the preprocess model's sequence length), to each "
        "batch's longest text, or in batches of similar length (default "
        f"{input_pipeline_defaults_in_words()})",
    )  # fmt: skip
    from kerasformer.models.defaults import CLASSIFIER_POSITIONS as POSITIONS
    from kerasformer.models.defaults import (
        DECODINGS,
        SHARED_SUBWORD_VOCAB_SIZE,
        SUBWORD_VOCAB_SIZE,
    )
    from kerasformer.models.defaults import TRANSLATION_VOCAB_SIZE as VOCAB_SIZE

    group = parser.add_argument_group("transformer model")
    for flag, kind, text in TRANSFORMER_OPTIONS:
        group.add_argument(flag, type=kind, help=with_model_defaults(text, flag))
    group.add_argument("--norm-first", action="store_true", help="pre-LN instead of post-LN")
    group.add_argument(
        "--tie-embeddings", action="store_true",
        help="language-model: the output layer is the transposed input embedding; "
        "translation (with --tokenizer sentencepiece): one subword vocabulary of both "
        f"languages ({SHARED_SUBWORD_VOCAB_SIZE} unless --vocab-size), whose one table "
        "embeds source and target and gives the logits",
    )  # fmt: skip
    group.add_argument(
        "--adaptive-cutoffs", type=positive_int, nargs="+", metavar="ID",
        help="language-model, with --tie-embeddings: the output is an adaptive softmax "
        "whose clusters start at these token ids (ids rank words by frequency from 2; e.g. "
        "2000 10000); its loss scores only each target's cluster, several times faster on "
        "a large vocabulary",
    )  # fmt: skip
    group.add_argument(
        "--tokenizer", choices=registry.TOKENIZERS,
        help="translation: lower-cased words, or SentencePiece subwords learnt from the "
        "training pairs, which keep case and spell rare words in pieces (default "
        f"{registry.TRANSLATION_DEFAULTS['tokenizer']}; --vocab-size: {VOCAB_SIZE} words or "
        f"{SUBWORD_VOCAB_SIZE} subwords a language)",
    )  # fmt: skip
    group.add_argument(
        "--label-smoothing", type=rate,
        help="translation: train against 1 - ε on the true token and ε spread over the "
        "vocabulary (0.1 in the transformer paper; default "
        f"{registry.TRANSLATION_DEFAULTS['label_smoothing']})",
    )  # fmt: skip
    group.add_argument(
        "--position", choices=tuple(POSITIONS),
        help=with_model_defaults("how the model knows word order", "--position"),
    )  # fmt: skip
    group.add_argument(
        "--decoding", choices=DECODINGS,
        help=with_model_defaults(
            "ner: tags by IOB2-constrained Viterbi or each word's best", "--decoding"
        ),
    )  # fmt: skip


def add_bert_arguments(bert) -> None:
    from kerasformer.models.defaults import LONGEST_DEFAULT_STRIDE

    bert.add_argument(
        "--preprocess", help="TF-Hub BERT preprocess handle: URL or directory (default: tfhub.dev)"
    )
    bert.add_argument("--encoder", help="TF-Hub BERT encoder handle: URL or directory")
    bert.add_argument(
        "--fine-tune-learning-rate", type=positive_float,
        help=defaulted("AdamW peak learning rate when the encoder trains",
                       "fine_tune_learning_rate"),
    )  # fmt: skip
    bert.add_argument(
        "--seq-length", type=positive_int,
        help=with_model_defaults("question answering and ner: tokens per window, question "
                                 "and special tokens included", "--seq-length"),
    )  # fmt: skip
    bert.add_argument(
        "--doc-stride", type=positive_int,
        help="question answering: context tokens between window starts (default: half "
        f"the context a window holds, at most {LONGEST_DEFAULT_STRIDE}); ner: word pieces "
        "between the windows of a long sentence (default half a window)",
    )  # fmt: skip
    bert.add_argument(
        "--null-threshold", type=float, metavar="MARGIN",
        help="question answering: answer nothing when the no-answer score beats the best "
        "span's by more than MARGIN (default 0 for SQuAD 2.0 data with unanswerable "
        "questions; without it a v1.1 model always answers)",
    )  # fmt: skip
    bert.add_argument(
        "--frozen-epochs", type=positive_int,
        help=defaulted("head-only epochs before fine-tuning in frozen-then-unfrozen",
                       "frozen_epochs"),
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from kerasformer.training.config import TrainingConfig

    if args.train_file is not None and args.dataset is not None:
        from kerasformer.errors import KerasformerError

        raise KerasformerError(
            "--dataset and --train-file both name the training data; give one of them."
        )
    saved = saved_settings(args)
    saved_task = saved.pop("task", None)
    args.task = args.task or saved_task or default_setting("task")
    entry = registry.task_entry(args.task)
    saved_model = saved.pop("model", None) or entry.model_names[0]
    args.model = args.model or saved_model
    if args.model != saved_model or args.task != (saved_task or args.task):
        dropped = [name for name in ("model_options", "recipe", "input_pipeline")
                   if saved.pop(name, None)]  # another model's  # fmt: skip
        if dropped:
            print(
                f"note: --config {args.config} trained --task {saved_task or args.task} "
                f"--model {saved_model}; its {', '.join(dropped)} are left out for "
                f"--task {args.task} --model {args.model}, which take their own."
            )
    given = {name: getattr(args, name, None) for name in RUN_SETTINGS}
    given = {name: value for name, value in given.items() if value is not None}
    config = TrainingConfig(
        task=args.task,
        model=args.model,
        # None: TrainingConfig takes the task's first dataset, as the Python API does.
        dataset=args.dataset or saved.pop("dataset", None),
        model_options={**saved.pop("model_options", {}), **model_options(args)},
        task_options={**saved.pop("task_options", {}), **task_options(args)},
        data_options={**saved.pop("data_options", {}), **data_options(args)},
        **{**saved, **given},
    )
    if args.config:
        warn_of_changed_data(args.config, config)
    config.require_paths_exist()
    config.require_tensorboard_dir()
    # Only now, with every setting checked, TensorFlow and the task are imported.
    from tabulate import tabulate

    from kerasformer.training.run_settings import SETTINGS_FILE
    from kerasformer.training.tasks import task_named
    from kerasformer.training.trainer import HISTORY_FILE, HISTORY_PLOT_FILE, METRICS_FILE, train

    result = train(config)
    if result.interrupted:
        print("Training was interrupted; the model as trained so far is evaluated and exported.")
    names = task_named(args.task).reported_metrics(
        {split: result.metrics[split] for split in ("validation", "test")}
    )
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
    written = ["SavedModel", "model.keras", HISTORY_FILE, HISTORY_PLOT_FILE, METRICS_FILE,
               SETTINGS_FILE]  # fmt: skip
    if not (result.export_dir / HISTORY_PLOT_FILE).exists():  # stopped inside the first epoch
        written.remove(HISTORY_PLOT_FILE)
    if config.serving_version is not None:
        written.append(f"{config.serving_version}/ for TF Serving")
    print(f"\nExported to {result.export_dir} ({', '.join(written)}).")
    return 0


def saved_settings(args: argparse.Namespace) -> dict:
    """The settings of ``--config`` that the flags given do not replace."""
    if not getattr(args, "config", None):
        return {}
    import dataclasses

    from kerasformer.training.config import DISTILLATION_KEYWORDS, TrainingConfig
    from kerasformer.training.run_settings import (
        DATA_FILES,
        VERSION,
        read_run_settings,
        rebased_data_paths,
    )

    known = {field.name for field in dataclasses.fields(TrainingConfig)}
    saved = read_run_settings(args.config, known | set(DISTILLATION_KEYWORDS))
    if args.dataset is None and args.train_file is None:
        for note in rebased_data_paths(saved):
            print(f"note: --config {args.config}: {note}.")
    for name in (DATA_FILES, VERSION):
        saved.pop(name, None)
    if args.dataset is not None or args.train_file is not None:
        # The data named on the command line replaces the file's, with its options.
        for name in ("dataset", "data_dir", "train_file", "validation_file", "test_file",
                     "data_options", "tfds_data_dir"):  # fmt: skip
            saved.pop(name, None)
    return saved


def warn_of_changed_data(path: str, config) -> None:
    from kerasformer.training.run_settings import changed_data_files, read_run_settings

    for change in changed_data_files(read_run_settings(path), config):
        print(f"warning: {change}; this run will not repeat the one in {path}.")


def data_options(args: argparse.Namespace) -> dict:
    """The options of the task's reader of your own files (--text-column ...)."""
    return {
        name: value for name in DATA_OPTIONS if (value := getattr(args, name, None)) is not None
    }


def task_options(args: argparse.Namespace) -> dict:
    """The settings of the task's own (`distill`'s teacher ...); `train` has none."""
    return {
        name: value for name in TASK_SETTINGS if (value := getattr(args, name, None)) is not None
    }


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
        null_threshold=getattr(args, "null_threshold", None),
        decoding=getattr(args, "decoding", None), tokenizer=args.tokenizer,
        label_smoothing=args.label_smoothing,
    )  # fmt: skip
    given["norm_first"] = True if args.norm_first else None
    given["tie_embeddings"] = True if args.tie_embeddings else None
    given["adaptive_cutoffs"] = args.adaptive_cutoffs
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


COMMAND = Command("train", HELP, DESCRIPTION, add_arguments, run)
