"""``kerasformer evaluate``: each kind of export measured by its own task's metrics.

A classifier's accuracy, per-class precision/recall/F1 and confusion matrix; a tagger's
entity scores on tokenised sentences and on raw text; a translator's BLEU and chrF; a
language model's perplexity under both protocols; a question answerer's SQuAD exact match
and F1 (with SQuAD 2.0's answerable / unanswerable parts)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from kerasformer.cli._arguments import (
    DATASETS_BY_TASK,
    add_dataset_arguments,
    add_model_argument,
    positive_int,
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
    "Evaluate an exported model on a dataset split or your own file. A classifier: "
    "accuracy, per-class precision, recall and F1, and the confusion matrix. A tagger "
    "(--dataset conll2003 or a CoNLL / JSON Lines --test-file): entity precision, recall "
    "and F1 by seqeval, overall and per type, on the file's words and on its sentences as "
    "raw text through the export's serving_default (what users get). A translator "
    "(--dataset spa_eng or a --test-file of pairs): sacrebleu's BLEU and chrF, cased and "
    "lower-cased, of its translations (--beam-width). A language model (--dataset "
    "wikitext2 or a --test-file of UTF-8 text): perplexity with windows read afresh and "
    "with windows sliding by half. A question answerer (--dataset squad or a SQuAD-format "
    "JSON --test-file): exact match and F1 by SQuAD's own scripts, and with unanswerable "
    "questions in the file, those of the questions with and without an answer."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    add_dataset_arguments(
        parser, default=None,
        names=tuple(
            name
            for task in ("classification", "ner", "translation", "language-model",
                         "question-answering")
            for name in DATASETS_BY_TASK[task]
        ),
    )  # fmt: skip
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
    pairs = parser.add_argument_group(
        "a translator",
        "--dataset spa_eng, or a --test-file of sentence pairs (TSV/CSV with a header, or "
        "JSON Lines)",
    )
    pairs.add_argument(
        "--source-column", metavar="COLUMN", help="the source sentence's column (default source)"
    )
    pairs.add_argument(
        "--target-column", metavar="COLUMN",
        help="the reference translation's column (default target)",
    )  # fmt: skip
    pairs.add_argument(
        "--beam-width", type=positive_int, metavar="N",
        help="translate with a beam of N (default 1: greedy, as train reports)",
    )  # fmt: skip
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
    from kerasformer.files.export_kind import (
        LANGUAGE_MODEL,
        QUESTION_ANSWERER,
        TAGGER,
        TRANSLATOR,
        export_kind,
    )
    from kerasformer.loading.exported_classifier import ExportedClassifier

    require_one_source(args)
    name = f"{args.dataset} {args.split}" if args.dataset else data_name(args.test_file)
    kind = export_kind(args.model)
    require_options_of_the_kind(args, kind)
    if kind is TAGGER:
        return evaluate_tagger(args, name)
    if kind is TRANSLATOR:
        return evaluate_translator(args, name)
    if kind is LANGUAGE_MODEL:
        return evaluate_language_model(args, name)
    if kind is QUESTION_ANSWERER:
        return evaluate_question_answerer(args, name)
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


# The kinds of export each kind-specific option is read for.
READ_FOR = {
    "text_column": ("classifier",),
    "label_column": ("classifier",),
    "confusion_matrix": ("classifier",),
    "delimiter": ("classifier", "translator"),  # a table's; a tagger reads CoNLL
    "source_column": ("translator",),
    "target_column": ("translator",),
    "beam_width": ("translator",),
}


def require_options_of_the_kind(args: argparse.Namespace, kind) -> None:
    """Refuse an option that the export's kind does not read, naming the kinds it is for
    (any other export is read as a classifier, whose loader says what it is)."""
    from kerasformer.errors import KerasformerError

    measured_apart = ("tagger", "translator", "language-model", "question answerer")
    name = kind.name if kind is not None and kind.name in measured_apart else "classifier"
    for option, kinds in READ_FOR.items():
        if getattr(args, option, None) is not None and name not in kinds:
            raise KerasformerError(
                f"--{option.replace('_', '-')} goes with a {' or a '.join(kinds)}; "
                f"{args.model} is {kind.noun if kind else 'not a kerasformer export'}."
            )


def evaluate_translator(args: argparse.Namespace, name: str) -> int:
    """A translator's BLEU and chrF, cased and lower-cased (`translator_metrics`)."""
    from kerasformer.datasets.pairs_from_files import read_pairs
    from kerasformer.datasets.spa_eng import load_spa_eng
    from kerasformer.training.translator_evaluation import translator_metrics

    def read_file():
        source, target = args.source_column or "source", args.target_column or "target"
        return read_pairs(args.test_file, source, target, args.delimiter)[2]

    part = chosen_examples(
        args, "a translator", "spa_eng", "a --test-file of sentence pairs", read_file,
        lambda: load_spa_eng(args.data_dir).splits[args.split],
    )  # fmt: skip
    metrics = translator_metrics(args.model, part, args.beam_width or 1)
    return report(args, metrics, format_translator_report(metrics, name))


def chosen_examples(args, noun: str, dataset: str, files: str, read_file, load_split):
    """The examples to evaluate on: the --test-file, or the split of the one dataset the
    export's kind reads; --output is checked first, so a refusal comes before any work."""
    from kerasformer.errors import KerasformerError

    if args.output:
        require_output_file(args.output, "--output", args.overwrite)
    if args.dataset is None:
        return read_file()
    if args.dataset == dataset:
        return load_split()
    raise KerasformerError(
        f"{args.model} is {noun}; evaluate it on --dataset {dataset} or {files}, not on "
        f"{args.dataset}."
    )


def report(args, metrics: dict, text: str) -> int:
    """Print the report, and write the metrics to --output if given."""
    print(text)
    if args.output:
        save_json(metrics, args.output, "--output", args.overwrite)
    return 0


def format_translator_report(metrics: dict, title: str) -> str:
    decoding = "greedy" if metrics["beam_width"] == 1 else f"beam {metrics['beam_width']}"
    skipped = metrics["sentences_skipped"]
    return "\n".join([
        f"{title} ({metrics['sentences']} sentences, {decoding}"
        + (f"; {skipped} skipped: no word the model reads, or too long" if skipped else "")
        + ")",
        f"BLEU {metrics['bleu']:.2f}  chrF {metrics['chrf']:.2f}  (cased)",
        f"BLEU {metrics['bleu_lowercase']:.2f}  chrF {metrics['chrf_lowercase']:.2f}  "
        "(lower-cased)",
        f"{metrics['bleu_signature']}",
        f"{metrics['chrf_signature']}",
    ])  # fmt: skip


def evaluate_language_model(args: argparse.Namespace, name: str) -> int:
    """A language model's perplexity, both protocols (`language_model_metrics`)."""
    from kerasformer.datasets.corpus_from_files import corpus_lines
    from kerasformer.datasets.wikitext import line_tokens, load_wikitext2
    from kerasformer.training.language_model_evaluation import language_model_metrics

    tokens = chosen_examples(
        args, "a language model", "wikitext2", "a --test-file of UTF-8 text",
        lambda: line_tokens(corpus_lines(args.test_file)),
        lambda: load_wikitext2(args.data_dir).splits[args.split],
    )  # fmt: skip
    metrics = language_model_metrics(args.model, tokens)
    return report(args, metrics, format_language_model_report(metrics, name))


def format_language_model_report(metrics: dict, title: str) -> str:
    window, unknown = metrics["window"], metrics["unknown_tokens"]
    return "\n".join([
        f"{title} ({metrics['text_tokens']} tokens, {unknown} of them "
        f"({unknown / metrics['text_tokens']:.1%}) outside the vocabulary, read as [UNK])",
        f"perplexity {metrics['perplexity']:.2f}  (windows of {window} tokens, each read "
        f"afresh; {metrics['tokens']} tokens scored)",
        f"perplexity {metrics['strided_perplexity']:.2f}  (windows sliding by "
        f"{max(window // 2, 1)}: each token after the first window sees at least that many "
        "before it)",
        f"next-token accuracy {metrics['token_accuracy']:.4f}",
    ])  # fmt: skip


def evaluate_question_answerer(args: argparse.Namespace, name: str) -> int:
    """A question answerer's SQuAD scores (`question_answerer_metrics`)."""
    from kerasformer.datasets.questions_from_files import read_squad_json
    from kerasformer.datasets.squad import load_squad
    from kerasformer.training.question_answerer_evaluation import question_answerer_metrics

    part = chosen_examples(
        args, "a question answerer", "squad", "a SQuAD-format JSON --test-file",
        lambda: read_squad_json(args.test_file),
        lambda: load_squad(args.data_dir).splits[args.split],
    )  # fmt: skip
    metrics = question_answerer_metrics(args.model, part)
    return report(args, metrics, format_question_answerer_report(metrics, name))


def format_question_answerer_report(metrics: dict, title: str) -> str:
    lines = [
        f"{title} ({metrics['questions']} questions)",
        f"exact match {metrics['exact_match']:.2f}  F1 {metrics['f1']:.2f}",
    ]
    for prefix, part in (("has_answer_", "with an answer"), ("no_answer_", "without an answer")):
        if f"{prefix}questions" in metrics:
            lines.append(
                f"  {metrics[prefix + 'questions']} {part}: exact match "
                f"{metrics[prefix + 'exact_match']:.2f}  F1 {metrics[prefix + 'f1']:.2f}"
            )
    return "\n".join(lines)


def evaluate_tagger(args: argparse.Namespace, name: str) -> int:
    """A tagger's entity scores, on the file's words and on raw text (`tagger_metrics`)."""
    from kerasformer.datasets.tagged_sentences import load_conll2003, read_tagged_file
    from kerasformer.training.tagger_evaluation import tagger_metrics

    part = chosen_examples(
        args, "a tagger", "conll2003", "a CoNLL or JSON Lines --test-file",
        lambda: read_tagged_file(args.test_file)[0],
        lambda: load_conll2003(args.data_dir).splits[args.split],
    )  # fmt: skip
    metrics = tagger_metrics(args.model, part)
    return report(
        args, metrics, format_tagger_report(metrics, f"{name} ({metrics['sentences']} sentences)")
    )


def format_tagger_report(metrics: dict, title: str) -> str:
    from tabulate import tabulate

    rows = []
    for reading, key in (("the file's words", "token_level"), ("raw text", "raw_text")):
        scores = metrics[key]
        kinds = [("all", scores), *sorted(scores["per_type"].items())]
        rows += [
            (reading if i == 0 else "", kind, *(round(row[k], 4) for k in ("precision", "recall",
             "f1")), row["entities"])
            for i, (kind, row) in enumerate(kinds)
        ]  # fmt: skip
    table = tabulate(rows, headers=("read as", "type", "precision", "recall", "f1", "entities"))
    return f"{title}\n\n{table}"


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
