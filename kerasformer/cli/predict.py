"""``kerasformer predict``: one record per input text, in input order, with its status."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass

from kerasformer.cli._arguments import add_model_argument
from kerasformer.errors import KerasformerError

STDIN = "-"
DESCRIPTION = """\
Classify texts with an exported model. Each TEXT is one text; '-' (at most once) reads
one text per line from standard input at that place in the order. Every input, blank
lines included, gets exactly one record, in input order: two table lines, or with --json
one JSON line whose "status" is "ok", "warning" or "error" (with a "message").

A text with no word the model knows (empty, punctuation only, or only words and scripts
outside its vocabulary) still gets the model's guess, with status "warning". A text that
is not valid UTF-8 gets status "error"; the other texts are still classified. Each
warning and error is also one line on standard error.

exit status: 0 every text classified (warnings allowed); 1 some texts could not be
classified; 2 nothing was classified (bad arguments, model or standard input)."""
NO_KNOWN_WORDS = (
    "no word the model knows (empty, punctuation only, or only words outside its "
    "vocabulary), so its class is a guess; give text in the language the model was trained on"
)


@dataclass(frozen=True)
class InputText:
    """One input as read: where it came from, its text, and why it cannot be classified."""

    where: str  # "text argument 2", "line 5 of standard input"
    text: str  # for display when `problem` is set (undecodable bytes shown as \\xNN)
    problem: str | None = None


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="classify texts with an exported model",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_argument(parser)
    parser.add_argument(
        "texts", metavar="TEXT", nargs="+", help=f"a text to classify, or '{STDIN}' for stdin"
    )
    parser.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from kerasformer.export import ExportedClassifier

    inputs = read_inputs(args.texts)
    classifier = ExportedClassifier(args.model)
    records = classify_inputs(classifier, inputs)
    for item, record in zip(inputs, records, strict=True):
        print(json.dumps(record) if args.json else table_entry(record))
        report_problem(item, record)
    return 1 if any(record["status"] == "error" for record in records) else 0


def read_inputs(arguments: list[str]) -> list[InputText]:
    """Every text in order, with standard input's lines where '-' stands."""
    if arguments.count(STDIN) > 1:
        raise KerasformerError(
            f"'{STDIN}' is given {arguments.count(STDIN)} times, but standard input can be "
            f"read only once; give '{STDIN}' once, where its lines belong among the texts."
        )
    inputs = []
    for position, argument in enumerate(arguments, start=1):
        if argument == STDIN:
            inputs += read_stdin_lines()
        else:
            # Python keeps undecodable bytes of argv as surrogate escapes; fsencode gives
            # the original bytes back, so arguments are checked like stdin lines.
            inputs.append(decode(os.fsencode(argument), f"text argument {position}"))
    return inputs


def read_stdin_lines() -> list[InputText]:
    lines = split_lines(read_stdin_bytes())
    if not lines:
        raise KerasformerError(
            f"'{STDIN}' reads texts from standard input, but it was empty; pipe one text "
            f"per line into it, or drop '{STDIN}'."
        )
    return [
        decode(line, f"line {number} of standard input")
        for number, line in enumerate(lines, start=1)
    ]


def read_stdin_bytes() -> bytes:
    # Bytes, so that one badly encoded line is reported alone instead of ending the read.
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # replaced by a text stream, e.g. in a notebook
        return sys.stdin.read().encode("utf-8", "surrogateescape")
    return stream.read()


def split_lines(data: bytes) -> list[bytes]:
    """One entry per line, blank lines kept; a final newline ends a line, not a new one."""
    if not data:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return [line.removesuffix(b"\r") for line in lines]


def decode(raw: bytes, where: str) -> InputText:
    try:
        return InputText(where, raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        return InputText(
            where,
            raw.decode("utf-8", "backslashreplace"),
            f"{where} is not valid UTF-8 (byte 0x{raw[error.start]:02x} at position "
            f"{error.start}); save the text as UTF-8",
        )


def classify_inputs(classifier, inputs: list[InputText]) -> list[dict]:
    """One JSON-ready record per input; inputs with a problem are not sent to the model."""
    readable = [item.text for item in inputs if item.problem is None]
    predictions = classifier.classify(readable)
    rows = zip(predictions.probabilities, predictions.known_tokens, strict=True)
    records = []
    for number, item in enumerate(inputs, start=1):
        record = {"input": number, "text": item.text}
        if item.problem is not None:
            record.update(status="error", message=item.problem)
        else:
            probabilities, known_tokens = next(rows)
            record.update(prediction_fields(classifier.class_names, probabilities, known_tokens))
        records.append(record)
    return records


def prediction_fields(class_names, probabilities, known_tokens: int) -> dict:
    scores = dict(zip(class_names, (round(float(p), 4) for p in probabilities), strict=True))
    fields = {"status": "ok" if known_tokens else "warning"}
    if not known_tokens:
        fields["message"] = NO_KNOWN_WORDS
    return fields | {
        "class": class_names[int(probabilities.argmax())],
        "probabilities": scores,
        "known_tokens": int(known_tokens),
    }


def table_entry(record: dict) -> str:
    if record["status"] == "error":
        return f"{'ERROR':<14} {shorten(record['text'])}\n{'':<14} {record['message']}"
    ranked = "  ".join(
        f"{name} {p:.3f}"
        for name, p in sorted(record["probabilities"].items(), key=lambda kv: -kv[1])
    )
    guess = "  (a guess: no known words)" if record["status"] == "warning" else ""
    return f"{record['class']:<14} {shorten(record['text'])}\n{'':<14} {ranked}{guess}"


def report_problem(item: InputText, record: dict) -> None:
    if record["status"] == "error":
        print(f"kerasformer: error: {record['message']}.", file=sys.stderr)
    elif record["status"] == "warning":
        print(f"kerasformer: warning: {item.where} has {record['message']}.", file=sys.stderr)


def shorten(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
