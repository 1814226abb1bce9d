"""``kerasformer predict``: one record per input text, in input order, with its status."""

from __future__ import annotations

import argparse

from kerasformer.cli._arguments import add_model_argument
from kerasformer.cli.command import Command
from kerasformer.cli.inputs import (
    EXIT_STATUS,
    InputText,
    add_input_arguments,
    print_records,
    read_inputs,
    records_for,
)
from kerasformer.litert.files import is_litert_model

DESCRIPTION = (
    """\
Classify texts with an exported model, or with its LiteRT model (MODEL.tflite, run
without TensorFlow). Each TEXT is one text; '-' (at most once) reads one text per line
from standard input at that place in the order, and --input-file one per line of a file,
after them. Every input, blank lines included, gets exactly one
record, in input order: two table lines, or with --json one JSON line whose "status" is
"ok", "warning" or "error" (with a "message").

A text with no word the model knows (empty, punctuation only, or only words and scripts
outside its vocabulary) still gets the model's guess, with status "warning". A text that
is not valid UTF-8 gets status "error"; the other texts are still classified. Each
warning and error is also one line on standard error.

"""
    + EXIT_STATUS
)
NO_KNOWN_WORDS = (
    "no word the model knows (empty, punctuation only, or only words outside its "
    "vocabulary), so its class is a guess; give text in the language the model was trained on"
)


HELP = "classify texts with an exported model"
LITERT_MODEL_HELP = (
    "directory written by `kerasformer train`, or a NAME.tflite file written by "
    "`kerasformer export-litert` (run by LiteRT, without TensorFlow)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser, LITERT_MODEL_HELP)
    add_input_arguments(parser, "TEXT", "text")


def run(args: argparse.Namespace) -> int:
    inputs = read_inputs(args.texts, args.input_file)
    if is_litert_model(args.model):  # LiteRT alone: no TensorFlow
        from kerasformer.litert.classifier import LiteRTClassifier

        classifier = LiteRTClassifier(args.model)
    else:
        from kerasformer.loading.exported_classifier import ExportedClassifier

        classifier = ExportedClassifier(args.model)
    records = classify_inputs(classifier, inputs)
    return print_records(inputs, records, args.json, table_entry)


def classify_inputs(classifier, inputs: list[InputText]) -> list[dict]:
    """One JSON-ready record per input; inputs with a problem are not sent to the model."""

    def classify(texts: list[str]) -> list[dict]:
        predictions = classifier.classify(texts)
        rows = zip(predictions.probabilities, predictions.known_tokens, strict=True)
        return [
            prediction_fields(classifier.class_names, *row, classifier.threshold) for row in rows
        ]

    return records_for(inputs, classify)


def prediction_fields(
    class_names, probabilities, known_tokens: int, threshold: float | None = None
) -> dict:
    """A text's record; a multi-label classifier's names every class over its threshold."""
    scores = dict(zip(class_names, (round(float(p), 4) for p in probabilities), strict=True))
    fields = {"status": "ok" if known_tokens else "warning"}
    if not known_tokens:
        fields["message"] = NO_KNOWN_WORDS
    fields["class"] = class_names[int(probabilities.argmax())]
    if threshold is not None:
        fields["labels"] = [name for name, p in zip(class_names, probabilities, strict=True)
                            if p > threshold]  # fmt: skip
    return fields | {"probabilities": scores, "known_tokens": int(known_tokens)}


def table_entry(record: dict) -> str:
    if record["status"] == "error":
        return f"{'ERROR':<14} {shorten(record['text'])}\n{'':<14} {record['message']}"
    ranked = "  ".join(
        f"{name} {p:.3f}"
        for name, p in sorted(record["probabilities"].items(), key=lambda kv: -kv[1])
    )
    guess = "  (a guess: no known words)" if record["status"] == "warning" else ""
    chosen = ",".join(record["labels"]) or "(none)" if "labels" in record else record["class"]
    return f"{chosen:<14} {shorten(record['text'])}\n{'':<14} {ranked}{guess}"


def shorten(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


COMMAND = Command(
    "predict",
    HELP,
    DESCRIPTION,
    add_arguments,
    run,
    formatter_class=argparse.RawDescriptionHelpFormatter,
)
